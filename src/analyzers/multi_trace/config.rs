//! How a multi-trace analyzer is set up: the stages, the part each opened event plays,
//! the key, and the options perf-prof's multi-trace takes.

use crate::analyzers::key::KeySource;
use crate::trace::event::{EventIndex, FieldLayout, TraceEvent};

/// What is computed per pair.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Implementation {
    /// Latency distributions (`--impl delay`, the default).
    Delay,
    /// Matched / unmatched counts (`--impl pair`).
    Pair,
}

/// The default key of an event without `key=`: what the events are attached to.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Instance {
    Cpu,
    Thread,
}

/// A userspace predicate on an event (a filter the kernel did not apply).
pub type EventFilter = Box<dyn Fn(&TraceEvent<'_>) -> bool + Send>;

/// One part an opened event plays in a stage.
pub struct StageEvent {
    pub event: EventIndex,
    /// `key=`; `None` = the instance.
    pub key: Option<KeySource>,
    /// `role=`: bit 0 may be a first event, bit 1 may be a second; `None` = both.
    pub role: Option<KeySource>,
    /// Only events it accepts play this part.
    pub filter: Option<EventFilter>,
    /// `untraced`: opened for context only, never paired.
    pub untraced: bool,
    /// `alias=`: the name in table columns (else the event name).
    pub alias: Option<String>,
}

impl StageEvent {
    pub fn new(event: EventIndex) -> Self {
        Self {
            event,
            key: None,
            role: None,
            filter: None,
            untraced: false,
            alias: None,
        }
    }

    pub fn key(mut self, key: KeySource) -> Self {
        self.key = Some(key);
        self
    }

    pub fn filter(mut self, filter: EventFilter) -> Self {
        self.filter = Some(filter);
        self
    }

    pub fn alias(mut self, alias: impl Into<String>) -> Self {
        self.alias = Some(alias.into());
        self
    }
}

/// Wakeups of a task that is already running are not the start of a run delay (the task
/// never waited; pairing it with its next switch-in would report a delay that did not
/// happen). Knowing what runs where takes an unfiltered `sched_switch`.
pub struct UnnecessaryWakeup {
    /// The wakeup events and their `pid` field.
    pub wakeups: Vec<(EventIndex, FieldLayout)>,
    /// An unfiltered sched_switch and its `next_pid` field.
    pub switch: EventIndex,
    pub next_pid: FieldLayout,
}

pub struct MultiTraceConfig {
    pub stages: Vec<Vec<StageEvent>>,
    pub implementation: Implementation,
    pub instance: Instance,
    /// One row per key (instance) and pair.
    pub perins: bool,
    /// The last stage also pairs with the first.
    pub cycle: bool,
    pub than_ns: Option<u64>,
    /// `--lower`: pairs closer than this are offenders too.
    pub lower_ns: Option<u64>,
    /// `--heatmap`: keep every pair's (end time, latency) for the heatmap files.
    pub heatmap: bool,
    /// `--detail`: list the events between the two of each listed pair.
    pub detail: Option<super::DetailFilter>,
    pub slow_pair_capacity: usize,
    /// The `--perins` key column header: the key expression text (the column is then at
    /// least 6 wide, as perf-prof makes it); `None` = `CPU` or `THREAD` from the instance.
    pub key_header: Option<String>,
    /// Keys are pids: print a `comm` column next to them (rundelay).
    pub comm_column: bool,
    pub unnecessary_wakeup: Option<UnnecessaryWakeup>,
}

impl MultiTraceConfig {
    pub fn new(stages: Vec<Vec<StageEvent>>) -> Self {
        Self {
            stages,
            implementation: Implementation::Delay,
            instance: Instance::Cpu,
            perins: false,
            cycle: false,
            than_ns: None,
            lower_ns: None,
            heatmap: false,
            detail: None,
            slow_pair_capacity: 1024,
            key_header: None,
            comm_column: false,
            unnecessary_wakeup: None,
        }
    }
}
