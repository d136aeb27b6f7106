//! What a tracepoint analysis is asked to do, as plain data (the command line fills it
//! in; a session file keeps it).

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Which analyzer a tracepoint session feeds.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum AnalyzerKind {
    Syscalls,
    Rundelay,
    MultiTraceDelay,
    MultiTracePair,
    Top,
    /// perf-prof's `trace`: every event printed by its print fmt; the rows count the
    /// events per thread and event (top's table), so the views have a table to show.
    Trace,
}

impl AnalyzerKind {
    pub fn name(self) -> &'static str {
        match self {
            AnalyzerKind::Syscalls => "syscalls",
            AnalyzerKind::Rundelay => "rundelay",
            AnalyzerKind::MultiTraceDelay | AnalyzerKind::MultiTracePair => "multi-trace",
            AnalyzerKind::Top => "top",
            AnalyzerKind::Trace => "trace",
        }
    }

    /// A stable name for session files (`multi-trace-pair` is not `multi-trace`).
    pub fn key(self) -> &'static str {
        match self {
            AnalyzerKind::MultiTracePair => "multi-trace-pair",
            other => other.name(),
        }
    }

    pub fn from_key(key: &str) -> Option<AnalyzerKind> {
        [
            AnalyzerKind::Syscalls,
            AnalyzerKind::Rundelay,
            AnalyzerKind::MultiTraceDelay,
            AnalyzerKind::MultiTracePair,
            AnalyzerKind::Top,
            AnalyzerKind::Trace,
        ]
        .into_iter()
        .find(|k| k.key() == key)
    }

    /// perf-prof's default ring size for the analyzer (pages).
    pub fn default_pages(self) -> usize {
        match self {
            AnalyzerKind::Top => 4,
            // perf-prof's trace uses 2; every event is copied out, so a wider ring loses
            // fewer of them between two drains.
            AnalyzerKind::Trace => 16,
            _ => 64,
        }
    }
}

/// A tracepoint session's analysis, as typed data (a recording keeps it as JSON so a
/// replay rebuilds the same analysis).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceOptions {
    pub analyzer: AnalyzerKind,
    /// One selector text per `-e` (a stage for multi-trace).
    pub events: Vec<String>,
    /// `-k`: the default key expression for events without `key=`.
    pub key: Option<String>,
    /// `-i`: print and reset the text table this often; `None` = only at the end.
    pub interval: Option<Duration>,
    pub perins: bool,
    pub than_ns: Option<u64>,
    /// multi-trace `--cycle`: the last stage pairs back with the first.
    pub cycle: bool,
    /// top `--only-comm`: aggregate by name instead of key.
    pub only_comm: bool,
    /// `-g`: every event samples its callchain (as the `stack` attribute does for one);
    /// the stacks become the session's samples (flamegraph, folded export).
    #[serde(default)]
    pub call_graph: bool,
    /// `trace` in the TUI: each event's raw line goes to the console log (the event list).
    #[serde(default)]
    pub event_lines: bool,
}
