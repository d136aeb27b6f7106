//! `nested-trace`: nested events — function entry and exit (uprobe + uretprobe,
//! sys_enter + sys_exit, softirq_entry + softirq_exit) — as perf-prof's nested-trace
//! reports them: who calls whom (`--impl call`), and with each function's time
//! (`call-delay`, the default), or each function's time alone (`delay`).
//!
//! Each `-e ENTRY,EXIT` is one function. Per key (`key=`/`-k`, else the instance: the CPU,
//! or the thread when attached to threads) the entries still waiting for their exit form
//! a stack, as perf-prof's backup tree ordered newest first: an entry is called by the
//! newest pending entry of its key (or is a root when none is pending) and is pushed; an
//! exit closes the newest pending entry *of its own function* (only that one is removed,
//! as perf-prof's) and its time is entry → exit.
//!
//! The rows are call edges and per-function times ([`CallRows`]); the tree perf-prof prints
//! is built from them when shown ([`call_table`]).

mod table;

pub use table::{CallLine, CallTable, call_table, nested_delay_table};

use rustc_hash::FxHashMap;

use super::key::KeySource;
use super::latency::{PairPrint, SlowPair, SlowPairQueue};
use super::multi_trace::Instance;
use super::{Analyzer, AnalyzerError};
use crate::model::analysis::{AnalysisRows, AnalysisSchema, CallReport, CallSchema};
use crate::model::call_rows::{CallRows, Caller};
use crate::trace::event::{EventLayout, OwnedTraceEvent, TraceEvent};

/// Entries kept pending per key: deeper nesting (or exits that never come, a lost
/// uretprobe) drops the oldest rather than growing without bound.
const MAX_PENDING_PER_KEY: usize = 256;

/// One `-e ENTRY,EXIT`: a function.
pub struct NestedFunction {
    /// Index of the entry event among the opened events.
    pub entry: usize,
    pub exit: usize,
    pub entry_key: Option<KeySource>,
    pub exit_key: Option<KeySource>,
    /// The entry's alias, else its name (what the table prints).
    pub name: String,
    pub exit_name: String,
}

pub struct NestedConfig {
    pub functions: Vec<NestedFunction>,
    pub instance: Instance,
    pub report: CallReport,
    /// `--than`: function times above it are listed (entry and exit raw lines).
    pub than_ns: Option<u64>,
    pub slow_pair_capacity: usize,
}

/// What an opened event is to the analyzer.
#[derive(Copy, Clone)]
enum Role {
    Entry(u32),
    Exit(u32),
}

struct Frame {
    function: u32,
    time_ns: u64,
    /// The entry, kept for `--than`.
    event: Option<OwnedTraceEvent>,
}

pub struct NestedTraceAnalyzer {
    roles: Vec<Option<Role>>,
    keys: Vec<Option<KeySource>>,
    instance: Instance,
    report: CallReport,
    functions: Vec<String>,
    exits: Vec<String>,
    than_ns: Option<u64>,
    pending: FxHashMap<u64, Vec<Frame>>,
    rows: CallRows,
    slow: SlowPairQueue,
}

impl NestedTraceAnalyzer {
    pub fn new(layouts: &[EventLayout], config: NestedConfig) -> Result<Self, AnalyzerError> {
        if config.functions.is_empty() {
            return Err(AnalyzerError::Config(
                "nested-trace needs a function: `-e ENTRY,EXIT` (e.g. `-e irq:softirq_entry,irq:softirq_exit`)"
                    .into(),
            ));
        }
        let mut roles = vec![None; layouts.len()];
        let mut keys: Vec<Option<KeySource>> = (0..layouts.len()).map(|_| None).collect();
        let mut functions = Vec::new();
        let mut exits = Vec::new();
        for (i, f) in config.functions.into_iter().enumerate() {
            for (index, role, key) in [
                (f.entry, Role::Entry(i as u32), f.entry_key),
                (f.exit, Role::Exit(i as u32), f.exit_key),
            ] {
                let slot = roles.get_mut(index).ok_or_else(|| {
                    AnalyzerError::Config(format!(
                        "function {} names event #{index} but only {} events are open",
                        i + 1,
                        layouts.len()
                    ))
                })?;
                if slot.is_some() {
                    return Err(AnalyzerError::Config(format!(
                        "event #{index} is the entry or exit of two functions: give each -e its own events"
                    )));
                }
                *slot = Some(role);
                keys[index] = key;
            }
            functions.push(f.name);
            exits.push(f.exit_name);
        }
        Ok(Self {
            roles,
            keys,
            instance: config.instance,
            report: config.report,
            functions,
            exits,
            than_ns: config.than_ns,
            pending: FxHashMap::default(),
            rows: CallRows::default(),
            slow: SlowPairQueue::new(config.slow_pair_capacity),
        })
    }

    /// The `--than` functions queued since the last call, and how many were dropped.
    pub fn take_slow_pairs(&mut self) -> (Vec<SlowPair>, u64) {
        self.slow.take()
    }

    /// Entries waiting for their exit, all keys together.
    pub fn pending_len(&self) -> usize {
        self.pending.values().map(Vec::len).sum()
    }

    fn call_schema(&self) -> CallSchema {
        CallSchema {
            functions: self.functions.clone(),
            exits: self.exits.clone(),
            report: self.report,
            than_ns: self.than_ns,
        }
    }

    fn enter(&mut self, key: u64, function: u32, event: &TraceEvent<'_>) {
        let kept = self.than_ns.is_some().then(|| OwnedTraceEvent::from_event(event));
        let stack = self.pending.entry(key).or_default();
        if self.report != CallReport::Times {
            let caller = stack
                .last()
                .map_or(Caller::Root, |f| Caller::Function(f.function));
            *self.rows.edges.entry((caller, function)).or_default() += 1;
        }
        if stack.len() >= MAX_PENDING_PER_KEY {
            stack.remove(0);
        }
        stack.push(Frame {
            function,
            time_ns: event.time_ns,
            event: kept,
        });
    }

    fn exit(&mut self, key: u64, function: u32, event: &TraceEvent<'_>) {
        let Some(stack) = self.pending.get_mut(&key) else {
            return;
        };
        let Some(at) = stack.iter().rposition(|f| f.function == function) else {
            return;
        };
        let frame = stack.remove(at);
        if stack.is_empty() {
            self.pending.remove(&key);
        }
        // perf-prof closes only an older entry (records of one key may come out of
        // order across CPUs).
        if frame.time_ns >= event.time_ns || self.report == CallReport::Calls {
            return;
        }
        let latency = event.time_ns - frame.time_ns;
        self.rows
            .times
            .entry(function)
            .or_default()
            .record(latency, self.than_ns);
        if self.than_ns.is_some_and(|than| latency > than) {
            match frame.event {
                Some(first) if self.slow.has_room() => {
                    self.slow
                        .push(SlowPair::new(first, event, latency, PairPrint::TraceLines))
                }
                _ => self.slow.note_dropped(),
            }
        }
    }
}

impl Analyzer for NestedTraceAnalyzer {
    type Table = CallTable;

    fn feed(&mut self, event: &TraceEvent<'_>) {
        let index = usize::from(event.event.0);
        let Some(Some(role)) = self.roles.get(index).copied() else {
            return;
        };
        let key = match &self.keys[index] {
            Some(source) => source.read(event),
            None => Some(match self.instance {
                Instance::Cpu => u64::from(event.cpu),
                Instance::Thread => u64::from(event.tid),
            }),
        };
        let Some(key) = key else { return };
        match role {
            Role::Entry(f) => self.enter(key, f, event),
            Role::Exit(f) => self.exit(key, f, event),
        }
    }

    fn lost(&mut self, _from_ns: u64, _to_ns: u64) {
        // Any pending entry may have lost its exit, and a later exit would close the
        // wrong one: start over, as perf-prof drops its backups.
        self.pending.clear();
    }

    fn take_rows(&mut self) -> AnalysisRows {
        AnalysisRows::Calls(std::mem::take(&mut self.rows))
    }

    fn rows(&self) -> AnalysisRows {
        AnalysisRows::Calls(self.rows.clone())
    }

    fn schema(&self) -> AnalysisSchema {
        AnalysisSchema::Calls(self.call_schema())
    }

    fn tabulate(&self, rows: &AnalysisRows) -> CallTable {
        match rows {
            AnalysisRows::Calls(rows) => call_table(&self.call_schema(), rows),
            _ => call_table(&self.call_schema(), &CallRows::default()),
        }
    }
}

#[cfg(test)]
mod tests;
