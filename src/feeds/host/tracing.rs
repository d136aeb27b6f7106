//! A tracepoint session: the `-e` selectors resolved against tracefs, the events opened on
//! the targets (one ring per CPU or thread), kernel filters set (or compiled into a
//! user-space filter when the kernel refuses one), and every record drained in time order
//! into the analyzer, whose rows are handed over per cell of event time as typed updates
//! (with the thread names they need, the lost counts and, when recording, the events).
//!
//! [`plan`] says which events to open, [`open`] opens them and builds the analyzer,
//! [`sink`] takes each drained record; this file runs the session: pump, drain, hand over.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rustc_hash::FxHashSet;

use crate::analyzers::latency::PairPrint;
use crate::analyzers::options::TraceOptions;
use crate::analyzers::session::{Analysis, StackChoice};
use crate::feeds::{Offenders, RowsUpdate, Update};
use crate::model::analysis::{AnalysisRows, AnalysisSchema};
use crate::model::threads::ThreadNames;
use crate::model::verdict::SourceCounts;
use crate::sources::clock::monotonic_ns;
use crate::sources::perf_event::reader::PerfEvents;
use crate::sources::tracefs::UprobeGroup;
use crate::symbols::host::comms::read_proc_comm;
use crate::trace::event::OwnedTraceEvent;
use crate::trace::expr::Filter;

use super::event_lines::EventLines;
use super::heatmap::HeatmapFiles;
use super::missed_switch::MissedSwitches;
use super::offender_stacks::resolve_offender_stacks;
use super::raw::RawItem;
use super::sample_resolver::SampleResolver;
use super::targets::SessionTargets;

mod open;
mod plan;
mod sink;

use sink::EventSink;

/// The analyzer's rows are handed over per this much event time: the finest a live window
/// or a reset cuts an analysis (a power of two of the engine's 1 ms slice grid).
pub const ROW_CELL_NS: u64 = 16_000_000;

/// Events copied for a recording are handed over in batches of at most this many.
const RECORD_BATCH: usize = 1 << 14;

/// Counters of a session, for the status line and the closing summary.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceCounters {
    /// Tracepoint samples fed to the analyzer.
    pub events: u64,
    /// Records the kernel reported lost.
    pub lost: u64,
    /// With `-N`: records the rings reported lost before the limit was reached.
    pub lost_before_limit: u64,
    /// Events a user-space filter dropped (filters the kernel refused).
    pub filtered: u64,
    /// Records left unread because the session was abandoned (see `TraceSession::abandon`).
    pub dropped: u64,
    /// Decode errors and throttles of the rings, and the events perfscope rebuilt.
    pub source: SourceCounts,
}

/// A running tracepoint session.
pub struct TraceSession {
    events: PerfEvents,
    analysis: Analysis,
    /// User-space filters by event index, for filters the kernel refused.
    filters: Vec<Option<Filter>>,
    /// Switches the kernel does not deliver, rebuilt from switch records (CPU rings only).
    missed_switches: Option<MissedSwitches>,
    /// multi-trace `--heatmap`: where each closed pair goes.
    heatmap: Option<HeatmapFiles>,
    /// What failed while reading (a heatmap file that cannot be written): the run ends
    /// with it.
    failure: Option<anyhow::Error>,
    targets: SessionTargets,
    pub counters: TraceCounters,
    /// Raised when whoever reads this session has given up waiting for it (a stopped run
    /// past its grace): events still to be fed are counted as dropped, not analyzed, so
    /// the session ends at once.
    pub abandon: Arc<std::sync::atomic::AtomicBool>,
    /// The source counts last handed over (only a change is news).
    said_counts: SourceCounts,
    finished: bool,
    /// `-N`: end after this many events past their filters.
    exit_after: Option<u64>,
    /// Records the last drain read (a big one means: do not sleep before the next).
    last_drain_records: u64,
    /// When the current cell's rows were last handed over ([`HAND_OVER_EVERY`]).
    handed_over_at: Instant,
    /// CLOCK_MONOTONIC when the events were enabled: where the views count seconds from.
    pub started_ns: u64,
    /// The cell of event time the analyzer's current rows belong to, and its events.
    cell: Option<u64>,
    cell_events: u64,
    /// Copy every event for the session file.
    recording: bool,
    recorded: Vec<OwnedTraceEvent>,
    /// Names known to have been handed over, and the ones learnt since.
    names: ThreadNames,
    named: FxHashSet<u32>,
    /// Events' callchains as samples (`-g`, `stack`): named and interned here.
    stacks: Option<SampleResolver>,
    /// `trace` in the TUI: events become console lines.
    event_lines: Option<EventLines>,
    /// Records for `stacks` since the last drain, in order.
    stack_items: Vec<RawItem>,
    /// Threads whose name was looked up in /proc at their first event.
    looked_up: FxHashSet<u32>,
    /// The thread [`EventSink::name_at_first_sight`] last saw.
    last_sighted: u32,
    /// Updates ready for the engine, in order.
    out: Vec<Update>,
    /// What the session says about itself, handed over first.
    start: Vec<Update>,
    /// The uprobes the selectors defined, removed on drop. Last: fields drop in order,
    /// and the kernel removes a probe only once no perf event is open on it.
    _probes: Option<UprobeGroup>,
}

/// A drain this big means events arrive faster than poll(2) wake-ups can follow.
const BUSY_DRAIN_RECORDS: u64 = 16;

/// How often the rows of the cell under way are handed over: a busy session drains its
/// rings thousands of times a second, and a rows update per drain cost the reader, the
/// channel and the engine more than the events themselves (a finished cell's rows go at
/// once).
const HAND_OVER_EVERY: Duration = Duration::from_millis(10);

/// What a session file keeps of a tracepoint session, so a replay rebuilds the same
/// analysis: the options, the selectors as typed, how many events each stage resolved to,
/// and whether it ran on threads.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RecordedTrace {
    pub trace: TraceOptions,
    pub texts: Vec<String>,
    pub stage_sizes: Vec<usize>,
    pub threads: bool,
}

impl TraceSession {
    /// What made the session fail while it read, once.
    pub fn take_failure(&mut self) -> Option<anyhow::Error> {
        self.failure.take()
    }

    pub fn analysis(&self) -> &Analysis {
        &self.analysis
    }

    /// Wait up to `timeout` for data and feed whatever arrived to the analyzer, in time
    /// order. `false` once the session is over (its workload or every thread exited).
    pub fn pump(&mut self, timeout: Duration) -> anyhow::Result<bool> {
        if self.finished {
            return Ok(false);
        }
        // Asked before the drain: records a workload wrote before exiting are in the rings
        // by the time it has exited, so this drain still sees them.
        let exited = self.targets.workload_exited();
        // Under a storm (the last drain was big) the rings refill faster than a wake-up
        // arrives: drain again at once instead of sleeping until the watermark.
        let timeout = if self.last_drain_records >= BUSY_DRAIN_RECORDS {
            Duration::ZERO
        } else {
            timeout
        };
        let outcome = self.events.poll(timeout)?;
        self.drain(false);
        let reached_limit = self.exit_after.is_some_and(|n| self.counters.events >= n);
        let over = outcome.all_hung_up || exited || reached_limit;
        if over {
            self.finish();
        }
        Ok(!over)
    }

    /// Feed everything the rings hold now, in time order, to the analyzer; with
    /// `release_held`, also the records still held for ordering. Then hand the rows of the
    /// current cell over (the engine adds the rest of the cell when it comes).
    fn drain(&mut self, release_held: bool) {
        let stack_choice = self.analysis.stack_choice();
        let mut sink = EventSink {
            abandon: &self.abandon,
            analysis: &mut self.analysis,
            filters: &self.filters,
            missed_switches: self.missed_switches.as_mut(),
            counters: &mut self.counters,
            exit_after: self.exit_after,
            cell: &mut self.cell,
            cell_events: &mut self.cell_events,
            recording: self.recording,
            recorded: &mut self.recorded,
            names: &mut self.names,
            stack_items: self.stacks.as_ref().map(|_| &mut self.stack_items),
            stack_choice,
            event_lines: self.event_lines.as_ref(),
            looked_up: &mut self.looked_up,
            last_sighted: &mut self.last_sighted,
            out: &mut self.out,
        };
        self.last_drain_records = self.events.drain_ordered(|item| sink.item(item));
        if release_held {
            self.events.flush_ordered(|item| sink.item(item));
        }
        if release_held || self.handed_over_at.elapsed() >= HAND_OVER_EVERY {
            sink.flush_rows();
            sink.flush_recorded();
            self.handed_over_at = Instant::now();
        }
        if let Some(files) = &mut self.heatmap {
            let points = self.analysis.take_heat();
            if let Err(e) = files.write(&points) {
                self.failure.get_or_insert(e);
                self.heatmap = None;
            }
        }
        if let Some(resolver) = &mut self.stacks {
            let mut samples = Vec::new();
            resolver.resolve(std::mem::take(&mut self.stack_items), &mut samples);
            resolver.tables.hand_over(samples, &mut self.out);
        }
        // Only a grown total is news (a drain a millisecond would otherwise queue
        // thousands of equal ones a second for the engine to ignore).
        let lost = self.lost_within_run();
        if lost > self.counters.lost {
            self.counters.lost = lost;
            self.out.push(Update::Lost {
                total: lost,
                time_ns: self.cell,
            });
        }
        let source = SourceCounts {
            rebuilt: self.counters.source.rebuilt,
            ..self.events.source_counts()
        };
        if source != self.said_counts {
            self.said_counts = source;
            self.out.push(Update::Counts(source));
        }
        self.counters.source = source;
    }

    /// Records the rings lost within the run. With `-N` the run is its first N events:
    /// once they are delivered, what the rings lose after them (the rest is dropped unseen
    /// anyway) is outside it; the LOST records read before, in time order, are its loss.
    fn lost_within_run(&mut self) -> u64 {
        if self.exit_after.is_some_and(|n| self.counters.events >= n) {
            self.counters.lost.max(self.counters.lost_before_limit)
        } else {
            self.events.lost(self.finished)
        }
    }

    /// Read the rings a last time, release the records still held for ordering and
    /// close pending pairs.
    pub fn finish(&mut self) {
        if self.finished {
            return;
        }
        self.finished = true;
        // Every event before this was delivered: the rings' CPUs are disabled one by one
        // after it, some maybe milliseconds later.
        let end_ns = monotonic_ns();
        let _ = self.events.disable();
        self.drain(true);
        self.analysis.finish(end_ns);
        if let Some(mut files) = self.heatmap.take() {
            // The pairs finishing closed, then every file flushed.
            let points = self.analysis.take_heat();
            if let Err(e) = files.write(&points).and_then(|()| files.finish().map(drop)) {
                self.failure.get_or_insert(e);
            }
        }
        // What closing pending pairs produced (pair counts) belongs to the last cell.
        let rows = self.analysis.take_rows();
        if !rows.is_empty() {
            self.push_rows(self.cell, rows, 0);
        }
    }

    /// What the session says about itself (its start, its analysis, its event types): the
    /// feed hands it over at once, before any event has been read.
    pub fn take_start(&mut self) -> Vec<Update> {
        std::mem::take(&mut self.start)
    }

    /// The updates ready since the last call, thread names before the rows naming them.
    pub fn take_updates(&mut self) -> Vec<Update> {
        let mut out = std::mem::take(&mut self.start);
        let (mut pairs, dropped) = self.analysis.take_slow_pairs();
        if let Some(resolver) = &mut self.stacks
            && self.analysis.stack_choice() == StackChoice::Offenders
            && !pairs.is_empty()
        {
            // Side-band records first (a user frame's mapping), then the offenders' stacks;
            // their samples and tables go out before the offenders that name them.
            let mut samples = Vec::new();
            resolver.resolve(std::mem::take(&mut self.stack_items), &mut samples);
            resolve_offender_stacks(resolver, &mut pairs, &mut samples);
            resolver.tables.hand_over(samples, &mut self.out);
        }
        let ready = std::mem::take(&mut self.out);
        let schema = self.analysis_schema();
        let mut tids: Vec<u32> = ready
            .iter()
            .filter_map(|u| match u {
                Update::Rows(rows) => Some(tids_named_by(&schema, &rows.rows)),
                _ => None,
            })
            .flatten()
            .collect();
        // The `--than` offenders' raw lines name the threads of both events (and of the
        // `--detail` events between them); task-state's headline names the task, which
        // neither event's context may be (a wakeup runs in the waker's).
        tids.extend(pairs.iter().flat_map(|p| {
            let headline = match p.print {
                PairPrint::TaskState { pid, .. } => Some(pid),
                _ => None,
            };
            [p.first.tid, p.second.tid]
                .into_iter()
                .chain(p.detail.iter().map(|e| e.tid))
                .chain(headline)
        }));
        self.name_threads(tids, &mut out);
        out.extend(ready);
        if !pairs.is_empty() || dropped > 0 {
            out.push(Update::Offenders(Offenders { pairs, dropped }));
        }
        out
    }

    fn push_rows(&mut self, time_ns: Option<u64>, rows: AnalysisRows, events: u64) {
        self.out.push(Update::Rows(RowsUpdate {
            time_ns,
            rows,
            events,
        }));
    }

    /// The threads the rows and offenders name (a `--perins` thread, a comm column's key,
    /// a pid key of `top`, a raw event line's thread), named once — from what records and
    /// the start's /proc scan said, else from /proc now. A thread nothing names yet is tried
    /// again with the next rows (a COMM record may come later).
    fn name_threads(&mut self, tids: Vec<u32>, out: &mut Vec<Update>) {
        for tid in tids {
            if self.named.contains(&tid) {
                continue;
            }
            let name = match self.names.name(tid) {
                Some(name) => Some(name),
                None => read_proc_comm(tid, tid),
            };
            if let Some(name) = name {
                if self.named.len() >= crate::model::threads::MAX_THREADS {
                    self.named.clear();
                }
                self.named.insert(tid);
                out.push(Update::ThreadName { tid, name });
            }
        }
    }

    fn analysis_schema(&self) -> AnalysisSchema {
        self.analysis.info().schema
    }
}

/// The thread ids a table of `rows` prints names for.
fn tids_named_by(schema: &AnalysisSchema, rows: &AnalysisRows) -> Vec<u32> {
    let tid = |n: u64| u32::try_from(n).ok();
    match (schema, rows) {
        (AnalysisSchema::Syscalls(s), AnalysisRows::Latency(r)) if s.perins => {
            r.rows.keys().filter_map(|k| tid(k.instance)).collect()
        }
        (AnalysisSchema::OnCpu(_), AnalysisRows::Latency(r)) => {
            r.rows.keys().filter_map(|k| tid(k.series)).collect()
        }
        (AnalysisSchema::TaskState(s), AnalysisRows::Latency(r)) if s.perins => {
            r.rows.keys().filter_map(|k| tid(k.instance)).collect()
        }
        (AnalysisSchema::Delay(s), AnalysisRows::Latency(r)) if s.comm_column && s.key_header.is_some() => {
            r.rows.keys().filter_map(|k| tid(k.instance)).collect()
        }
        (AnalysisSchema::Top(s), AnalysisRows::Top(r)) if s.comm_from_pid => r
            .rows
            .keys()
            .filter_map(|k| match k {
                crate::model::analysis::TopKey::Key(key) => tid(*key),
                crate::model::analysis::TopKey::Comm(_) => None,
            })
            .collect(),
        (AnalysisSchema::Faults, AnalysisRows::Faults(r)) => r.cells.keys().map(|k| k.tid).collect(),
        _ => Vec::new(),
    }
}
