//! perf-prof's `profile` as text (`--no-tui`, or stdout not a terminal): one line per
//! sample as it arrives — `<wall time> <comm %16s> <tid %6u> [<cpu %03d>] <sec>.<usec>:
//! profile: <period> <event>` — with its callchain under it (`-g`), or the stacks counted
//! into `--flame-graph`'s folded file instead (one section per `-i` interval). `--than
//! PERCENT` keeps only the samples of instances that busy ([`BusyFilter`]). A lost-events
//! note goes to stderr when records were lost.

use std::fmt::Write as _;
use std::io::Write;
use std::time::{Duration, Instant, SystemTime};

use crate::analyzers::text::{LocalClock, UNKNOWN_COMM, WallClock, push_stack_lines};
use crate::engine::Engine;
use crate::feeds::{SampleLine, Update};
use crate::model::text::escape_controls;
use crate::sources::clock::monotonic_ns;

use super::busy_filter::BusyFilter;
use super::folded_stacks::FoldedStacks;
use super::headless::Sink;
use super::trace_text::real_time;

/// What the profile text prints.
pub struct ProfileTextOptions {
    /// The sampled event's name, printed after the period ("cpu-clock").
    pub event_name: String,
    /// `-g`: each sample's callchain under its line (not with a flame graph).
    pub print_stacks: bool,
    /// `--than PERCENT` at `-F HZ`.
    pub busy: Option<BusyFilter>,
    /// `--flame-graph`: where the printed samples' stacks go.
    pub folded: Option<FoldedStacks>,
    /// `-i`: a flame graph section per interval.
    pub interval: Option<Duration>,
    /// No sample lines, only the folded stacks (perf-prof's `--flame-graph '' -i`).
    pub only_flame_graph: bool,
}

/// The sink printing a sampling session as perf-prof's profile.
pub struct ProfileText<W: Write> {
    out: W,
    options: ProfileTextOptions,
    /// Lines received since the last apply (their stacks are in the tables after it).
    pending: Vec<SampleLine>,
    next_section: Option<Instant>,
    reported_lost: u64,
    /// CLOCK_REALTIME − CLOCK_MONOTONIC, to print sample times as wall time.
    realtime_offset_ns: i128,
    clock: LocalClock,
    /// The text of one apply, reused.
    text: String,
}

impl<W: Write> ProfileText<W> {
    pub fn new(out: W, mut options: ProfileTextOptions) -> Self {
        let now = SystemTime::now();
        let real = now
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.as_nanos() as i128)
            .unwrap_or(0);
        let next_section = options.interval.map(|i| Instant::now() + i);
        // perf-prof stamps each interval's stacks with the interval's start; with only
        // the flame graph on stdout there is no stamp (its sections follow one another).
        if let Some(folded) = &mut options.folded
            && options.interval.is_some()
            && !options.only_flame_graph
        {
            folded.start_section(&WallClock::local(now));
        }
        Self {
            out,
            options,
            pending: Vec::new(),
            next_section,
            reported_lost: 0,
            realtime_offset_ns: real - i128::from(monotonic_ns()),
            clock: LocalClock::default(),
            text: String::new(),
        }
    }

    fn print_pending(&mut self, engine: &Engine) -> anyhow::Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let tables = &engine.state.tables;
        let text = &mut self.text;
        text.clear();
        for line in self.pending.drain(..) {
            if let Some(busy) = &mut self.options.busy
                && !busy.admit(line.instance, line.time_ns)
            {
                continue;
            }
            if !self.options.only_flame_graph {
                let wall = self.clock.at(real_time(self.realtime_offset_ns, line.time_ns));
                push_sample_line(text, &wall, &line, &self.options.event_name);
            }
            match &mut self.options.folded {
                Some(folded) => folded.add(line.stack, 1),
                None if self.options.print_stacks => {
                    push_stack_lines(text, tables, line.stack, &line.callchain)
                }
                None => {}
            }
        }
        self.out.write_all(text.as_bytes())?;
        self.out.flush()?;
        Ok(())
    }

    fn report_lost(&mut self, engine: &Engine) {
        let lost = engine.state.stats.lost;
        if lost > self.reported_lost {
            crate::stdio::say(&format!(
                "{}profile: lost {} events ({lost} total)",
                WallClock::local(SystemTime::now()).prefix(),
                lost - self.reported_lost
            ));
            self.reported_lost = lost;
        }
    }
}

/// The name printed for a sample of a task the kernel calls -1 (already reaped).
const EXITED_TASK: &str = "[exited]";

/// One sample's line (with its `\n`), appended to `out`.
fn push_sample_line(out: &mut String, wall: &WallClock, line: &SampleLine, event_name: &str) {
    let comm = if line.tid == u32::MAX {
        // The kernel reports pid/tid -1 for a task already reaped (its last samples
        // while it exits): it has no name left to find, but it is known to have exited.
        EXITED_TASK.into()
    } else if line.comm.is_empty() {
        UNKNOWN_COMM.into()
    } else {
        escape_controls(&line.comm)
    };
    let _ = writeln!(
        out,
        "{wall}{comm:>16} {:>6} [{:03}] {}.{:06}: profile: {} {event_name}",
        line.tid,
        line.cpu,
        line.time_ns / 1_000_000_000,
        line.time_ns % 1_000_000_000 / 1_000,
        line.period
    );
}

impl<W: Write> Sink for ProfileText<W> {
    fn updates(&mut self, updates: &[Update]) {
        for update in updates {
            if let Update::SampleLines(lines) = update {
                self.pending.extend(lines.iter().cloned());
            }
        }
    }

    fn applied(&mut self, engine: &Engine, finished: bool) -> anyhow::Result<()> {
        self.print_pending(engine)?;
        self.report_lost(engine);
        if let (Some(at), Some(interval)) = (self.next_section, self.options.interval)
            && Instant::now() >= at
            && !finished
        {
            self.next_section = Some(at + interval);
            if let Some(folded) = &mut self.options.folded {
                folded.write_section(engine)?;
                if !self.options.only_flame_graph {
                    folded.start_section(&WallClock::local(SystemTime::now()));
                }
            }
        }
        if finished && let Some(folded) = &mut self.options.folded {
            folded.finish(engine)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::sample::InstanceId;
    use crate::model::stack::StackId;

    #[test]
    fn a_sample_prints_as_perf_profs_profile_line() {
        let wall = WallClock {
            year: 2026,
            month: 12,
            day: 2,
            hour: 15,
            minute: 44,
            second: 46,
            microsecond: 885_899,
        };
        let line = SampleLine {
            time_ns: 2_393_706_283_123,
            pid: 17128,
            tid: 17128,
            cpu: 0,
            period: 1_002_646,
            comm: "sh".into(),
            instance: InstanceId(0),
            stack: StackId(0),
            callchain: Vec::new(),
        };
        // perf-prof's profile-than.txt, but for the event's name.
        let mut text = String::new();
        push_sample_line(&mut text, &wall, &line, "cpu-clock");
        assert_eq!(
            text,
            "2026-12-02 15:44:46.885899               sh  17128 [000] 2393.706283: profile: 1002646 cpu-clock\n"
        );
    }
}
