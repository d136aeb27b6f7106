//! What a host session is asked to do, as plain data (the command line fills it in).

use std::path::PathBuf;
use std::time::Duration;

use crate::symbols::host::RootFrame;

/// Where events are collected: CPUs (the default: all online), or threads.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostTarget {
    /// `-C 0-3,5`; `None` = every online CPU.
    pub cpus: Option<String>,
    /// `-p PID,...`: every thread of these processes.
    pub pids: Option<String>,
    /// `-t TID,...`.
    pub tids: Option<String>,
    /// `--inherit`: the threads (or the workload) and every task they create afterwards.
    pub inherit: bool,
    /// A command to start and profile (`-- cmd args`); the session ends when it exits.
    pub workload: Vec<String>,
}

/// Ring buffer sizing, as perf-prof's `-m` and `--watermark`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct RingOptions {
    /// Data pages per ring (a power of two); `None` = the analyzer's default.
    pub pages: Option<usize>,
    /// Wake the reader when the ring is this full (percent); `None` = the default.
    pub watermark_percent: Option<u8>,
}

/// CPU sampling (`perfscope top` / `profile`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SamplingOptions {
    pub freq_hz: u64,
    /// Kernel + user call chains (`-g`); off = the sampled address only.
    pub callchain: bool,
    pub user_only: bool,
    pub kernel_only: bool,
    /// Drop perfscope's own samples.
    pub exclude_self: bool,
    /// The frame above each stack (perf top's `--sort comm,pid`).
    pub root: RootFrame,
}

/// Which analyzer a tracepoint session feeds.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum AnalyzerKind {
    Syscalls,
    Rundelay,
    MultiTraceDelay,
    MultiTracePair,
    Top,
}

impl AnalyzerKind {
    pub fn name(self) -> &'static str {
        match self {
            AnalyzerKind::Syscalls => "syscalls",
            AnalyzerKind::Rundelay => "rundelay",
            AnalyzerKind::MultiTraceDelay | AnalyzerKind::MultiTracePair => "multi-trace",
            AnalyzerKind::Top => "top",
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
        ]
        .into_iter()
        .find(|k| k.key() == key)
    }

    /// perf-prof's default ring size for the analyzer (pages).
    pub fn default_pages(self) -> usize {
        match self {
            AnalyzerKind::Top => 4,
            _ => 64,
        }
    }
}

/// A tracepoint session.
#[derive(Clone, Debug, PartialEq, Eq)]
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
}

/// Everything common to a host session.
#[derive(Clone, Debug, PartialEq)]
pub struct HostRunOptions {
    pub target: HostTarget,
    pub ring: RingOptions,
    /// Store everything into this SQLite session as it arrives.
    pub record: Option<PathBuf>,
    /// Stop after this long (scripts and CI); `None` = until interrupted or the workload exits.
    pub duration: Option<Duration>,
    /// Where the export key / the end of a batch run writes artifacts.
    pub out: PathBuf,
}
