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
    TaskState,
    OnCpu,
    NumDist,
}

impl AnalyzerKind {
    pub fn name(self) -> &'static str {
        match self {
            AnalyzerKind::Syscalls => "syscalls",
            AnalyzerKind::Rundelay => "rundelay",
            AnalyzerKind::MultiTraceDelay | AnalyzerKind::MultiTracePair => "multi-trace",
            AnalyzerKind::Top => "top",
            AnalyzerKind::TaskState => "task-state",
            AnalyzerKind::OnCpu => "oncpu",
            AnalyzerKind::NumDist => "num-dist",
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
            AnalyzerKind::TaskState,
            AnalyzerKind::OnCpu,
            AnalyzerKind::NumDist,
        ]
        .into_iter()
        .find(|k| k.key() == key)
    }

    /// perf-prof's default ring size for the analyzer (pages).
    pub fn default_pages(self) -> usize {
        match self {
            AnalyzerKind::Top => 4,
            // perf-prof's task-state: 8 pages.
            AnalyzerKind::TaskState => 8,
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
    /// task-state `-S`: report interruptible sleeps (only sleeps with this or `-D`).
    #[serde(default)]
    pub interruptible: bool,
    /// task-state `-D`: report uninterruptible sleeps.
    #[serde(default)]
    pub uninterruptible: bool,
    /// task-state `-p`/`-t`: only these threads (the events are still CPU-wide).
    #[serde(default)]
    pub only_tids: Vec<u32>,
    /// task-state `--filter`: only tasks whose name matches one of these globs.
    #[serde(default)]
    pub only_comms: Vec<String>,
    /// task-state: the tasks `only_tids` fork are watched too (a workload's children).
    #[serde(default)]
    pub follow_forks: bool,
    /// oncpu `--detail`: switches and the longest run too.
    #[serde(default)]
    pub detail: bool,
}
