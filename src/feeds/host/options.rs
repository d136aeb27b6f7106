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
    /// The threads (or the workload) and every task they create afterwards: `--inherit`,
    /// or a workload without `--no-inherit`.
    pub inherit: bool,
    /// A command to start and profile (`-- cmd args`); the session ends when it exits.
    pub workload: Vec<String>,
}

impl HostTarget {
    /// What a session file says was profiled: `system-wide`, `cpus 0-3`, `pids 12,13`,
    /// `tids 7`, or the workload's command line.
    pub fn describe(&self) -> String {
        if !self.workload.is_empty() {
            return self.workload.join(" ");
        }
        match (&self.pids, &self.tids, &self.cpus) {
            (Some(p), _, _) => format!("pids {p}"),
            (None, Some(t), _) => format!("tids {t}"),
            (None, None, Some(c)) => format!("cpus {c}"),
            (None, None, None) => "system-wide".into(),
        }
    }
}

/// Ring buffer sizing, as perf-prof's `-m` and `--watermark`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct RingOptions {
    /// Data pages per ring (a power of two); `None` = the analyzer's default.
    pub pages: Option<usize>,
    /// Wake the reader when the ring is this full (percent); `None` = the default.
    pub watermark_percent: Option<u8>,
    /// `--realtime`: the thread that reads the rings runs SCHED_FIFO.
    pub realtime: bool,
}

/// How the user part of a call chain is found (`--call-graph fp|dwarf[,SIZE]`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallGraph {
    /// The kernel walks the frame pointers (perf's `fp`, the default).
    #[default]
    FramePointer,
    /// Each sample carries the user registers and `stack_bytes` of user stack, unwound
    /// with the mapped files' call frame information (perf's `dwarf,SIZE`).
    Dwarf { stack_bytes: u32 },
}

impl CallGraph {
    /// The user stack copy per sample, for `dwarf`.
    pub fn stack_bytes(&self) -> Option<u32> {
        match self {
            CallGraph::FramePointer => None,
            CallGraph::Dwarf { stack_bytes } => Some(*stack_bytes),
        }
    }
}

/// CPU sampling (`perfscope top` / `profile`), as typed data (a recording keeps it).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SamplingOptions {
    pub freq_hz: u64,
    /// Kernel + user call chains (`-g`); off = the sampled address only.
    pub callchain: bool,
    /// How the user part of the chains is found (with `callchain`).
    #[serde(default)]
    pub call_graph: CallGraph,
    pub user_only: bool,
    pub kernel_only: bool,
    /// Drop perfscope's own samples.
    pub exclude_self: bool,
    /// `--inline`: user frames from DWARF too (inline chains), not only symbol tables.
    pub inline_frames: bool,
    /// The frame above each stack (perf top's `--sort comm,pid`).
    pub root: RootFrame,
    /// Hand over each sample's thread, CPU, period and raw callchain too
    /// ([`crate::feeds::Update::SampleLines`]): perf-prof's `profile` prints one line per
    /// sample. Off for the TUI, which only aggregates.
    #[serde(default)]
    pub sample_lines: bool,
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
    /// perf-prof's `-N`: end the session after this many events (tracepoint events past
    /// their filters, or samples); `None` = no limit.
    pub exit_after: Option<u64>,
}
