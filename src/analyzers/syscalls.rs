//! `syscalls`: raw_syscalls:sys_enter → sys_exit latency per syscall (and per thread with
//! `--perins`), as perf-prof's `--impl syscalls` computes it.
//!
//! An enter is kept per thread (the sample tid, which is `common_pid`); the next exit of
//! the same thread closes it when its `id` matches (a mismatch means an event was lost in
//! between: the pair is dropped, as perf-prof does). A newer enter of the same thread
//! replaces an older one. `sched:sched_process_free`, when opened, closes a pending enter
//! of the exiting task at the free time (an `exit(2)` never returns), read through its
//! 6.18 layout (`pid` at offset 12, where perf-prof's hard-coded struct reads garbage).

use rustc_hash::FxHashMap;

use super::latency::{LatencyStats, PairPrint, SlowPair, SlowPairQueue, is_error_return, refill_owned};
use super::{Analyzer, AnalyzerError};
use crate::model::analysis::{AnalysisRows, AnalysisSchema, LatencyKey, LatencyRows, SyscallsSchema};
use crate::trace::event::{EventIndex, EventLayout, FieldLayout, OwnedTraceEvent, TraceEvent};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyscallsConfig {
    /// One row per (thread, syscall) instead of per syscall.
    pub perins: bool,
    /// `--than`: count latencies above it and queue their enter/exit pairs.
    pub than_ns: Option<u64>,
    /// How many slow pairs to keep between two takes.
    pub slow_pair_capacity: usize,
}

impl Default for SyscallsConfig {
    fn default() -> Self {
        Self {
            perins: false,
            than_ns: None,
            slow_pair_capacity: 1024,
        }
    }
}

/// One row: `thread` is `Some` with `--perins`.
#[derive(Clone, Debug, PartialEq)]
pub struct SyscallRow {
    pub thread: Option<u32>,
    pub id: u64,
    pub stats: LatencyStats,
}

/// The syscalls table, rows in perf-prof's order: by thread (with `--perins`), then by
/// total time, largest first, then by syscall id.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SyscallTable {
    pub perins: bool,
    pub than_ns: Option<u64>,
    pub rows: Vec<SyscallRow>,
}

impl SyscallTable {
    /// Every call of `id` (all threads).
    pub fn calls_of(&self, id: u64) -> u64 {
        self.rows
            .iter()
            .filter(|r| r.id == id)
            .map(|r| r.stats.calls())
            .sum()
    }
}

struct Pending {
    time_ns: u64,
    id: u64,
    /// The enter event, kept only with `--than` (its buffer is reused per thread).
    event: Option<OwnedTraceEvent>,
}

pub struct SyscallsAnalyzer {
    config: SyscallsConfig,
    enter: EventIndex,
    exit: EventIndex,
    enter_id: FieldLayout,
    exit_id: FieldLayout,
    exit_ret: FieldLayout,
    process_free: Option<(EventIndex, FieldLayout)>,
    pending: FxHashMap<u32, Pending>,
    /// The rows since the last take.
    interval: FxHashMap<LatencyKey, LatencyStats>,
    slow: SlowPairQueue,
}

fn find<'a>(layouts: &'a [EventLayout], system: &str, name: &str) -> Option<(EventIndex, &'a EventLayout)> {
    layouts
        .iter()
        .enumerate()
        .find(|(_, l)| l.system == system && l.name == name)
        .map(|(i, l)| (EventIndex(i as u16), l))
}

fn field(layout: &EventLayout, name: &str) -> Result<FieldLayout, AnalyzerError> {
    layout
        .field(name)
        .cloned()
        .ok_or_else(|| AnalyzerError::missing_field(layout, name))
}

impl SyscallsAnalyzer {
    /// `layouts[i]` is the layout of `EventIndex(i)`. Needs raw_syscalls:sys_enter and
    /// sys_exit; uses sched:sched_process_free when present.
    pub fn new(layouts: &[EventLayout], config: SyscallsConfig) -> Result<Self, AnalyzerError> {
        let missing = |event: &str| AnalyzerError::MissingEvent {
            analyzer: "syscalls",
            event: event.to_string(),
        };
        let (enter, enter_layout) =
            find(layouts, "raw_syscalls", "sys_enter").ok_or_else(|| missing("raw_syscalls:sys_enter"))?;
        let (exit, exit_layout) =
            find(layouts, "raw_syscalls", "sys_exit").ok_or_else(|| missing("raw_syscalls:sys_exit"))?;
        let process_free = match find(layouts, "sched", "sched_process_free") {
            Some((index, layout)) => Some((index, field(layout, "pid")?)),
            None => None,
        };
        Ok(Self {
            enter,
            exit,
            enter_id: field(enter_layout, "id")?,
            exit_id: field(exit_layout, "id")?,
            exit_ret: field(exit_layout, "ret")?,
            process_free,
            pending: FxHashMap::default(),
            interval: FxHashMap::default(),
            slow: SlowPairQueue::new(config.slow_pair_capacity),
            config,
        })
    }

    /// The slow enter/exit pairs queued since the last call, and how many were dropped
    /// because the queue was full.
    /// `--than` is given: over-threshold pairs are kept.
    pub fn lists_offenders(&self) -> bool {
        self.config.than_ns.is_some()
    }

    pub fn take_slow_pairs(&mut self) -> (Vec<SlowPair>, u64) {
        self.slow.take()
    }

    /// Enters still waiting for their exit.
    pub fn pending_len(&self) -> usize {
        self.pending.values().filter(|p| p.time_ns != u64::MAX).count()
    }

    fn on_enter(&mut self, event: &TraceEvent<'_>) {
        let Some(id) = self.enter_id.read_u64(event.raw) else {
            return;
        };
        let keep_event = self.config.than_ns.is_some();
        let pending = self.pending.entry(event.tid).or_insert(Pending {
            time_ns: 0,
            id: 0,
            event: None,
        });
        pending.time_ns = event.time_ns;
        pending.id = id;
        if keep_event {
            match &mut pending.event {
                // Reuse the thread's buffer: one allocation per thread, not per call.
                Some(owned) => refill_owned(owned, event),
                None => pending.event = Some(OwnedTraceEvent::from_event(event)),
            }
        } else {
            pending.event = None;
        }
    }

    fn on_exit(&mut self, event: &TraceEvent<'_>) {
        if self.config.than_ns.is_none() {
            // Without `--than` an entry holds no buffer worth keeping: take it out (one
            // lookup, at a million calls a second), so threads that exit without a
            // sched_process_free leave nothing behind.
            if let Some(pending) = self.pending.remove(&event.tid) {
                self.count_call(event, pending.time_ns, pending.id);
            }
            return;
        }
        self.close_enter(event);
    }

    /// Count the call `event` exits, entered at `enter_ns` as syscall `enter_id`
    /// (`u64::MAX`: the thread has no open enter); its latency, or `None`.
    fn count_call(&mut self, event: &TraceEvent<'_>, enter_ns: u64, enter_id: u64) -> Option<u64> {
        if enter_ns == u64::MAX {
            return None; // already closed: this thread has no open enter
        }
        let id = self.exit_id.read_u64(event.raw)?;
        if id != enter_id || event.time_ns <= enter_ns {
            return None;
        }
        let latency = event.time_ns - enter_ns;
        let thread = if self.config.perins { event.tid } else { 0 };
        let stats = self.interval.entry(row_key(thread, id)).or_default();
        stats.record(latency, self.config.than_ns);
        if self.exit_ret.read_i64(event.raw).is_some_and(is_error_return) {
            stats.errors += 1;
        }
        Some(latency)
    }

    fn close_enter(&mut self, event: &TraceEvent<'_>) {
        let Some(pending) = self.pending.get_mut(&event.tid) else {
            return;
        };
        let (enter_ns, enter_id) = (pending.time_ns, pending.id);
        pending.time_ns = u64::MAX;
        let Some(latency) = self.count_call(event, enter_ns, enter_id) else {
            return;
        };
        if self.config.than_ns.is_none_or(|than| latency <= than) {
            return;
        }
        if !self.slow.has_room() {
            self.slow.note_dropped();
            return;
        }
        // The entry again (counting borrowed the analyzer): it keeps the enter's event.
        if let Some(first) = self.pending.get(&event.tid).and_then(|p| p.event.clone()) {
            self.slow
                .push(SlowPair::new(first, event, latency, PairPrint::TraceLines));
        }
    }

    fn on_process_free(&mut self, event: &TraceEvent<'_>, pid: u64) {
        let Ok(pid) = u32::try_from(pid) else {
            return;
        };
        let Some(pending) = self.pending.remove(&pid) else {
            return;
        };
        if pending.time_ns == u64::MAX || event.time_ns <= pending.time_ns {
            return;
        }
        // The task exited inside the syscall: its latency runs up to the free.
        let latency = event.time_ns - pending.time_ns;
        let thread = if self.config.perins { pid } else { 0 };
        self.interval
            .entry(row_key(thread, pending.id))
            .or_default()
            .record(latency, self.config.than_ns);
        if self.config.than_ns.is_some_and(|than| latency > than) {
            if let (true, Some(first)) = (self.slow.has_room(), pending.event) {
                self.slow
                    .push(SlowPair::new(first, event, latency, PairPrint::TraceLines));
            } else {
                self.slow.note_dropped();
            }
        }
    }

    fn schema_of(&self) -> SyscallsSchema {
        SyscallsSchema {
            perins: self.config.perins,
            than_ns: self.config.than_ns,
        }
    }
}

fn row_key(thread: u32, id: u64) -> LatencyKey {
    LatencyKey {
        instance: u64::from(thread),
        series: id,
    }
}

/// The table of `rows`, in perf-prof's order: by thread (with `--perins`), then by total
/// time, largest first, then by syscall id.
pub fn syscall_table(schema: &SyscallsSchema, rows: &LatencyRows) -> SyscallTable {
    let mut table: Vec<SyscallRow> = rows
        .rows
        .iter()
        .map(|(key, stats)| SyscallRow {
            thread: schema
                .perins
                .then(|| u32::try_from(key.instance).unwrap_or(u32::MAX)),
            id: key.series,
            stats: stats.clone(),
        })
        .collect();
    table.sort_by(|a, b| {
        a.thread
            .cmp(&b.thread)
            .then(b.stats.total_ns().cmp(&a.stats.total_ns()))
            .then(a.id.cmp(&b.id))
    });
    SyscallTable {
        perins: schema.perins,
        than_ns: schema.than_ns,
        rows: table,
    }
}

impl Analyzer for SyscallsAnalyzer {
    type Table = SyscallTable;

    fn feed(&mut self, event: &TraceEvent<'_>) {
        if event.event == self.exit {
            self.on_exit(event);
        } else if event.event == self.enter {
            self.on_enter(event);
        } else if let Some(pid) = self
            .process_free
            .as_ref()
            .filter(|(index, _)| *index == event.event)
            .and_then(|(_, pid)| pid.read_u64(event.raw))
        {
            self.on_process_free(event, pid);
        }
    }

    fn lost(&mut self, _from_ns: u64, to_ns: u64) {
        // An enter from before the end of the hole may have lost its exit.
        // Closed entries stay: they only hold the thread's reusable buffer.
        self.pending
            .retain(|_, p| p.time_ns == u64::MAX || p.time_ns >= to_ns);
    }

    fn take_rows(&mut self) -> AnalysisRows {
        AnalysisRows::Latency(LatencyRows {
            rows: std::mem::take(&mut self.interval),
        })
    }

    fn rows(&self) -> AnalysisRows {
        AnalysisRows::Latency(LatencyRows {
            rows: self.interval.clone(),
        })
    }

    fn schema(&self) -> AnalysisSchema {
        AnalysisSchema::Syscalls(self.schema_of())
    }

    fn tabulate(&self, rows: &AnalysisRows) -> SyscallTable {
        match rows {
            AnalysisRows::Latency(rows) => syscall_table(&self.schema_of(), rows),
            _ => syscall_table(&self.schema_of(), &LatencyRows::default()),
        }
    }
}

#[cfg(test)]
mod tests;
