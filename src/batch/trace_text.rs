//! perf-prof's text for a tracepoint session run headless (`--no-tui`, or stdout not a
//! terminal): a sink of the engine that adds up the analysis rows of each `-i` interval
//! (or of the whole run) and prints them as perf-prof does — the `--than` offenders as raw
//! event lines first, then the table — with a lost-events note on stderr per interval.

use std::io::Write;
use std::time::{Duration, Instant, SystemTime};

use crate::analyzers::latency::SlowPair;
use crate::analyzers::text::{self, TextStyle, WallClock};
use crate::engine::Engine;
use crate::feeds::Update;
use crate::model::analysis::AnalysisRows;
use crate::sources::clock::monotonic_ns;

use super::headless::Sink;

/// Prints each interval's table to `out`.
pub struct IntervalText<W: Write> {
    out: W,
    interval: Option<Duration>,
    next_print: Option<Instant>,
    rows: Option<AnalysisRows>,
    offenders: Vec<SlowPair>,
    /// Events since the start (top's title counts them all, as perf-prof).
    events_total: u64,
    reported_lost: u64,
    /// CLOCK_REALTIME − CLOCK_MONOTONIC, to print event times as wall time.
    realtime_offset_ns: i128,
}

impl<W: Write> IntervalText<W> {
    pub fn new(out: W, interval: Option<Duration>) -> Self {
        let real = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.as_nanos() as i128)
            .unwrap_or(0);
        Self {
            out,
            interval,
            next_print: interval.map(|i| Instant::now() + i),
            rows: None,
            offenders: Vec::new(),
            events_total: 0,
            reported_lost: 0,
            realtime_offset_ns: real - i128::from(monotonic_ns()),
        }
    }

    /// Print what the interval holds; `reset` starts the next interval (a SIGUSR2 dump
    /// leaves the interval running).
    fn print(&mut self, engine: &Engine, reset: bool) -> anyhow::Result<()> {
        let state = &engine.state;
        let Some(info) = &state.analysis else {
            return Ok(());
        };
        let (rows, offenders) = if reset {
            (self.rows.take(), std::mem::take(&mut self.offenders))
        } else {
            (self.rows.clone(), self.offenders.clone())
        };
        let rows = rows.unwrap_or_else(|| info.schema.empty_rows());
        let comm_of = |tid: u32| state.threads.name(tid);
        let mut text = String::new();
        if let Some(format) = &state.event_format {
            let offset = self.realtime_offset_ns;
            let fields = |e: &crate::trace::event::TraceEvent<'_>, l: &crate::trace::event::EventLayout| {
                format.printer.fields_text(e, l)
            };
            text.push_str(&text::slow_pair_lines(
                &offenders,
                &format.layouts,
                &|t| wall_of(offset, t),
                &comm_of,
                &fields,
            ));
        }
        let now = WallClock::local(SystemTime::now());
        text.push_str(&text::analysis_text(
            info,
            &rows,
            &now,
            &state.threads,
            TextStyle::default(),
            Some(self.events_total),
        ));
        self.out.write_all(text.as_bytes())?;
        self.out.flush()?;
        let lost = state.stats.lost;
        if lost > self.reported_lost {
            eprintln!(
                "{}{}: lost {} events ({lost} total)",
                now.prefix(),
                info.name,
                lost - self.reported_lost
            );
            self.reported_lost = lost;
        }
        Ok(())
    }
}

impl<W: Write> Sink for IntervalText<W> {
    fn updates(&mut self, updates: &[Update]) {
        for update in updates {
            match update {
                Update::Rows(r) => {
                    self.events_total += r.events;
                    match &mut self.rows {
                        Some(rows) => rows.merge(&r.rows),
                        None => self.rows = Some(r.rows.clone()),
                    }
                }
                Update::Offenders(o) => self.offenders.extend(o.pairs.iter().cloned()),
                _ => {}
            }
        }
    }

    fn applied(&mut self, engine: &Engine, finished: bool) -> anyhow::Result<()> {
        if let (Some(at), Some(interval)) = (self.next_print, self.interval)
            && Instant::now() >= at
            && !finished
        {
            self.print(engine, true)?;
            self.next_print = Some(at + interval);
        }
        if finished {
            // perf-prof prints the last (partial) interval at exit too.
            self.print(engine, true)?;
        }
        Ok(())
    }

    fn dump(&mut self, engine: &Engine) -> anyhow::Result<()> {
        self.print(engine, false)
    }
}

/// `time_ns` (CLOCK_MONOTONIC) on the local wall clock, given realtime − monotonic.
pub fn wall_of(offset_ns: i128, time_ns: u64) -> WallClock {
    let real = (i128::from(time_ns) + offset_ns).max(0) as u128;
    WallClock::local(SystemTime::UNIX_EPOCH + Duration::from_nanos(real as u64))
}
