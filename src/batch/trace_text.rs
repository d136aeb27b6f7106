//! perf-prof's text for a tracepoint session run headless (`--no-tui`, or stdout not a
//! terminal): a sink of the engine that adds up the analysis rows of each `-i` interval
//! (or of the whole run) and prints them as perf-prof does — the `--than` offenders as raw
//! event lines first, then the table — with a lost-events note on stderr per interval.
//! `trace` ([`IntervalText::events_only`]) prints every event's raw line as it arrives
//! (the session's event copies) and no table, as perf-prof's trace.

use std::collections::VecDeque;
use std::io::Write;
use std::time::{Duration, Instant, SystemTime};

use crate::analyzers::latency::SlowPair;
pub use crate::analyzers::text::stack_lines;
use crate::analyzers::text::{self, TextStyle, WallClock};
use crate::engine::Engine;
use crate::feeds::RecordOnly;
use crate::feeds::Update;
use crate::model::analysis::{AnalysisRows, AnalysisSchema};
use crate::model::period_counts::PeriodCounts;
use crate::model::stack::StackId;
use crate::model::text::escape_controls;
use crate::sources::clock::monotonic_ns;
use crate::trace::event::OwnedTraceEvent;
use crate::trace::expr::BoundExpr;

use super::headless::Sink;

/// Prints each interval's table to `out`.
pub struct IntervalText<W: Write> {
    out: W,
    interval: Option<Duration>,
    next_print: Option<Instant>,
    rows: Option<AnalysisRows>,
    offenders: Vec<SlowPair>,
    /// `trace`: print the events, not the table.
    events_only: bool,
    /// `expr`: the expression (text, compiled) printed after each event.
    evaluate: Option<(String, BoundExpr)>,
    /// The events to print at the next apply (`trace`).
    events: Vec<OwnedTraceEvent>,
    /// `-g`: the stacks of the events with a callchain, in their order (one sample each).
    stacks: VecDeque<StackId>,
    /// Print each event's stack under its line (not with `--flame-graph`).
    print_stacks: bool,
    /// Events since the start (top's title counts them all, as perf-prof).
    events_total: u64,
    reported_lost: u64,
    /// multi-trace `--only-than`: print an interval only when a latency passed this.
    only_than_ns: Option<u64>,
    /// kvm-exit's no-VM notice was printed (once per run).
    said_no_vm: bool,
    /// CLOCK_REALTIME − CLOCK_MONOTONIC, to print event times as wall time.
    realtime_offset_ns: i128,
    clock: text::LocalClock,
    /// sql: the widths each statement's columns reached so far.
    sql_widths: text::SqlWidths,
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
            events_only: false,
            evaluate: None,
            events: Vec::new(),
            stacks: VecDeque::new(),
            print_stacks: true,
            events_total: 0,
            reported_lost: 0,
            said_no_vm: false,
            only_than_ns: None,
            realtime_offset_ns: real - i128::from(monotonic_ns()),
            clock: text::LocalClock::default(),
            sql_widths: text::SqlWidths::default(),
        }
    }

    /// Print each event's raw line instead of the tables (perf-prof's `trace`); with
    /// `evaluate` (`expr`), each line is followed by `    TEXT = value`.
    pub fn events_only(mut self, evaluate: Option<(String, BoundExpr)>) -> Self {
        self.events_only = true;
        self.evaluate = evaluate;
        self
    }

    /// perf-prof's `--only-than`: an interval whose latencies all stay within `than_ns`
    /// prints nothing, and its rows carry into the next one.
    pub fn only_than(mut self, than_ns: u64) -> Self {
        self.only_than_ns = Some(than_ns);
        self
    }

    /// Leave the events' stacks out of the text (`--flame-graph` collects them instead).
    pub fn without_stacks(mut self) -> Self {
        self.print_stacks = false;
        self
    }

    /// The events received since the last apply, one raw line each.
    fn print_events(&mut self, engine: &Engine) -> anyhow::Result<()> {
        let state = &engine.state;
        let events = std::mem::take(&mut self.events);
        let Some(format) = &state.event_format else {
            return Ok(());
        };
        let comm_of = |tid: u32| state.threads.name(tid);
        let fields = |e: &crate::trace::event::TraceEvent<'_>, l: &crate::trace::event::EventLayout| {
            format.printer.fields_text(e, l)
        };
        let mut text = String::new();
        for owned in &events {
            let event = owned.as_event();
            if let Some(layout) = format.layouts.get(usize::from(event.event.0)) {
                text.push_str(&text::event_line(
                    &self.clock.at(real_time(self.realtime_offset_ns, event.time_ns)),
                    ' ',
                    &event,
                    layout,
                    &comm_of,
                    &fields,
                ));
                if !event.callchain.is_empty()
                    && let Some(stack) = self.stacks.pop_front()
                    && self.print_stacks
                {
                    text::push_stack_lines(&mut text, &state.tables, stack, event.callchain);
                }
                if let Some(Some(exec)) = format.execs.get(usize::from(event.event.0)) {
                    text.push_str(&exec_output(exec, &event));
                }
                if let Some((expr_text, expr)) = &self.evaluate {
                    let value = expr.eval(&event);
                    let value = value.map_or_else(
                        || "(none)".to_string(),
                        |v| escape_controls(&v.to_string()).into_owned(),
                    );
                    text.push_str(&format!("    {expr_text} = {value}\n"));
                }
            }
        }
        self.out.write_all(text.as_bytes())?;
        self.out.flush()?;
        Ok(())
    }

    /// Print what the interval holds (see [`PrintFor`]).
    fn print(&mut self, engine: &Engine, why: PrintFor) -> anyhow::Result<()> {
        if self.events_only {
            self.rows = None;
            self.print_events(engine)?;
            self.report_lost(engine, &WallClock::local(SystemTime::now()));
            return Ok(());
        }
        let state = &engine.state;
        let Some(info) = &state.analysis else {
            return Ok(());
        };
        let (rows, offenders) = if why == PrintFor::Dump {
            (self.rows.clone(), self.offenders.clone())
        } else {
            (self.rows.take(), std::mem::take(&mut self.offenders))
        };
        let mut rows = rows.unwrap_or_else(|| info.schema.empty_rows());
        if let Some(than) = self.only_than_ns
            && why != PrintFor::Dump
            && !any_latency_over(&rows, than)
        {
            self.rows = Some(rows);
            self.offenders = offenders;
            return Ok(());
        }
        if why == PrintFor::Interval {
            // stat/hrcount print whole periods: the one still running waits for the next
            // interval, as perf-prof prints a period once its counters were read.
            self.rows = hold_running_period(&info.schema, &mut rows, monotonic_ns());
        }
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
                Some(&|stack, callchain| stack_lines(&state.tables, stack, callchain)),
            ));
        }
        let now = WallClock::local(SystemTime::now());
        match (&info.schema, &rows) {
            // perf-prof's sql keeps each statement's column widths from one interval to
            // the next.
            (AnalysisSchema::Sql(schema), AnalysisRows::Sql(sql_rows)) => {
                text.push_str(&text::sql_text(schema, sql_rows, &now, &mut self.sql_widths))
            }
            _ => text.push_str(&text::analysis_text(
                info,
                &rows,
                &now,
                &state.threads,
                TextStyle {
                    event_clock_offset_ns: Some(self.realtime_offset_ns),
                    ..TextStyle::default()
                },
                Some(self.events_total),
            )),
        }
        if matches!(info.schema, AnalysisSchema::KvmExit(_)) && self.events_total == 0 && !self.said_no_vm {
            text.push_str(text::NO_VM_NOTICE);
            self.said_no_vm = true;
        }
        self.out.write_all(text.as_bytes())?;
        self.out.flush()?;
        self.report_lost(engine, &now);
        Ok(())
    }

    /// The lost-events note on stderr, when records were lost since the last one.
    fn report_lost(&mut self, engine: &Engine, now: &WallClock) {
        let state = &engine.state;
        let lost = state.stats.lost;
        if lost > self.reported_lost {
            let name = state.analysis.as_ref().map_or("", |a| a.name.as_str());
            crate::stdio::say(&format!(
                "{}{name}: lost {} events ({lost} total)",
                now.prefix(),
                lost - self.reported_lost
            ));
            self.reported_lost = lost;
        }
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
                Update::Samples(samples) if self.events_only => {
                    self.stacks.extend(samples.iter().map(|s| s.stack))
                }
                Update::Record(RecordOnly::Events(events)) if self.events_only => {
                    self.events.extend(events.iter().cloned())
                }
                _ => {}
            }
        }
    }

    fn applied(&mut self, engine: &Engine, finished: bool) -> anyhow::Result<()> {
        if self.events_only && !self.events.is_empty() {
            // perf-prof's trace prints each event as it is read, not per interval.
            self.print_events(engine)?;
        }
        if let (Some(at), Some(interval)) = (self.next_print, self.interval)
            && Instant::now() >= at
            && !finished
        {
            self.print(engine, PrintFor::Interval)?;
            self.next_print = Some(at + interval);
        }
        if finished {
            // perf-prof prints the last (partial) interval at exit too.
            self.print(engine, PrintFor::End)?;
        }
        Ok(())
    }

    fn dump(&mut self, engine: &Engine) -> anyhow::Result<()> {
        self.print(engine, PrintFor::Dump)
    }
}

/// A latency row whose largest value passed `than_ns`.
fn any_latency_over(rows: &AnalysisRows, than_ns: u64) -> bool {
    match rows {
        AnalysisRows::Latency(rows) => rows
            .rows
            .values()
            .any(|s| s.histogram.max().is_some_and(|max| max > than_ns)),
        _ => true,
    }
}

/// What an event's `exec=` prints: a string value (`printf(...)`) as it is, its control
/// characters escaped line by line (the event's data is whatever the traced program put
/// there); a number prints nothing (perf-prof runs it for its effect).
fn exec_output(exec: &BoundExpr, event: &crate::trace::event::TraceEvent<'_>) -> String {
    match exec.eval(event) {
        Some(crate::trace::expr::Value::Str(text)) => text
            .split('\n')
            .map(|line| escape_controls(line).into_owned())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Why the tables are printed.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum PrintFor {
    /// The interval ended: print it and start the next (a period still running waits for
    /// the next one).
    Interval,
    /// The run ended: print what is left.
    End,
    /// SIGUSR2: print the interval so far and leave it running.
    Dump,
}

/// Take the counts of the period running at `now_ns` (and later) out of `rows`: the rows
/// of the next interval. Other analyses keep all their rows.
fn hold_running_period(
    schema: &AnalysisSchema,
    rows: &mut AnalysisRows,
    now_ns: u64,
) -> Option<AnalysisRows> {
    let (AnalysisSchema::Periods(schema), AnalysisRows::Periods(counts)) = (schema, rows) else {
        return None;
    };
    let running = now_ns / schema.period_ns.max(1);
    let mut held = PeriodCounts::default();
    counts.counts.retain(|key, n| {
        if key.period >= running {
            held.add(*key, *n);
            false
        } else {
            true
        }
    });
    (!held.counts.is_empty()).then_some(AnalysisRows::Periods(held))
}

/// `time_ns` (CLOCK_MONOTONIC) on the local wall clock, given realtime − monotonic.
pub fn wall_of(offset_ns: i128, time_ns: u64) -> WallClock {
    WallClock::local(real_time(offset_ns, time_ns))
}

/// `time_ns` (CLOCK_MONOTONIC) as a CLOCK_REALTIME time, given realtime − monotonic.
pub fn real_time(offset_ns: i128, time_ns: u64) -> SystemTime {
    let real = (i128::from(time_ns) + offset_ns).max(0) as u128;
    SystemTime::UNIX_EPOCH + Duration::from_nanos(real as u64)
}

#[cfg(test)]
mod period_tests {
    use super::*;
    use crate::model::period_counts::{PeriodKey, PeriodSchema};

    #[test]
    fn the_running_period_waits_for_the_next_interval() {
        let schema = AnalysisSchema::Periods(PeriodSchema {
            events: vec!["e".into()],
            instance: None,
            period_ns: 100,
            columns: 5,
        });
        let mut counts = PeriodCounts::default();
        for (period, n) in [(3, 4), (4, 5), (5, 6)] {
            counts.add(
                PeriodKey {
                    instance: 0,
                    event: 0,
                    period,
                },
                n,
            );
        }
        let mut rows = AnalysisRows::Periods(counts);
        // At 450 ns period 4 runs: it and 5 (events read early) are held.
        let held = hold_running_period(&schema, &mut rows, 450);
        let AnalysisRows::Periods(printed) = &rows else {
            panic!()
        };
        assert_eq!(printed.counts.values().sum::<u64>(), 4);
        let Some(AnalysisRows::Periods(held)) = held else {
            panic!("{held:?}")
        };
        assert_eq!(held.counts.values().sum::<u64>(), 11);
        assert!(hold_running_period(&schema, &mut rows, 450).is_none());
    }
}
