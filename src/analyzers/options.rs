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
    /// perf-prof's `stat`: event counts per interval (per `--period`).
    Stat,
    /// perf-prof's `hrcount`: event counts per `--period`, several periods per interval.
    Hrcount,
    /// perf-prof's `percpu-stat`: software event counts per CPU per interval.
    PercpuStat,
    /// Page faults per thread and address region.
    PageFaults,
    /// perf-prof's `trace`: every event printed by its print fmt; the rows count the
    /// events per thread and event (top's table), so the views have a table to show.
    Trace,
    TaskState,
    OnCpu,
    NumDist,
    /// perf-prof's `kvm-exit`: VM exit → entry latency per exit reason.
    KvmExit,
    /// perf-prof's `hrtimer`: a per-CPU timer's periods whose event counts meet a condition.
    Hrtimer,
    /// perf-prof's `watchdog`: soft and hard lockups predicted from the kernel's watchdog.
    Watchdog,
    /// perf-prof's `blktrace`: block request stage latencies of one device.
    Blktrace,
    /// perf-prof's `kmemleak`: allocations never freed, by allocation stack.
    Kmemleak,
    /// perf-prof's `kmemprof`: bytes allocated and freed, by stack.
    Kmemprof,
    /// perf-prof's `nested-trace --impl call-delay` (its default): the call tree of nested
    /// entry/exit events with each function's time.
    NestedTraceCallDelay,
    /// `nested-trace --impl call`: the call tree only.
    NestedTraceCall,
    /// `nested-trace --impl delay`: each function's entry → exit time.
    NestedTraceDelay,
    /// perf-prof's live `sql`: the events in SQL tables, `--query` run every interval.
    Sql,
}

impl AnalyzerKind {
    /// Every analyzer (the command line's flag sets are checked against each).
    pub const ALL: [AnalyzerKind; 23] = [
        AnalyzerKind::Syscalls,
        AnalyzerKind::Rundelay,
        AnalyzerKind::MultiTraceDelay,
        AnalyzerKind::MultiTracePair,
        AnalyzerKind::Top,
        AnalyzerKind::Stat,
        AnalyzerKind::Hrcount,
        AnalyzerKind::PercpuStat,
        AnalyzerKind::PageFaults,
        AnalyzerKind::Trace,
        AnalyzerKind::TaskState,
        AnalyzerKind::OnCpu,
        AnalyzerKind::NumDist,
        AnalyzerKind::KvmExit,
        AnalyzerKind::Hrtimer,
        AnalyzerKind::Watchdog,
        AnalyzerKind::Blktrace,
        AnalyzerKind::Kmemleak,
        AnalyzerKind::Kmemprof,
        AnalyzerKind::NestedTraceCallDelay,
        AnalyzerKind::NestedTraceCall,
        AnalyzerKind::NestedTraceDelay,
        AnalyzerKind::Sql,
    ];

    /// Whether `-k` (the default key of events without `key=`) means anything to it.
    pub fn uses_key(self) -> bool {
        use AnalyzerKind::*;
        matches!(
            self,
            MultiTraceDelay
                | MultiTracePair
                | Top
                | Trace
                | Kmemleak
                | Kmemprof
                | NestedTraceCallDelay
                | NestedTraceCall
                | NestedTraceDelay
        )
    }

    /// Whether `--perins` splits its statistics (percpu-stat is per CPU anyway).
    pub fn uses_perins(self) -> bool {
        use AnalyzerKind::*;
        matches!(
            self,
            Syscalls
                | Rundelay
                | MultiTraceDelay
                | MultiTracePair
                | Stat
                | Hrcount
                | TaskState
                | NumDist
                | KvmExit
        )
    }

    /// Whether `--than` has latencies (ages, num-dist's values) to hold against.
    pub fn uses_than(self) -> bool {
        use AnalyzerKind::*;
        matches!(
            self,
            Syscalls
                | NumDist
                | Rundelay
                | MultiTraceDelay
                | MultiTracePair
                | TaskState
                | KvmExit
                | Blktrace
                | Kmemleak
                | NestedTraceCallDelay
                | NestedTraceCall
                | NestedTraceDelay
        )
    }

    pub fn name(self) -> &'static str {
        match self {
            AnalyzerKind::Syscalls => "syscalls",
            AnalyzerKind::Rundelay => "rundelay",
            AnalyzerKind::MultiTraceDelay | AnalyzerKind::MultiTracePair => "multi-trace",
            AnalyzerKind::Top => "top",
            AnalyzerKind::Stat => "stat",
            AnalyzerKind::Hrcount => "hrcount",
            AnalyzerKind::PercpuStat => "percpu-stat",
            AnalyzerKind::PageFaults => "page-faults",
            AnalyzerKind::Trace => "trace",
            AnalyzerKind::TaskState => "task-state",
            AnalyzerKind::OnCpu => "oncpu",
            AnalyzerKind::NumDist => "num-dist",
            AnalyzerKind::KvmExit => "kvm-exit",
            AnalyzerKind::Hrtimer => "hrtimer",
            AnalyzerKind::Watchdog => "watchdog",
            AnalyzerKind::Blktrace => "blktrace",
            AnalyzerKind::Kmemleak => "kmemleak",
            AnalyzerKind::Kmemprof => "kmemprof",
            AnalyzerKind::NestedTraceCallDelay
            | AnalyzerKind::NestedTraceCall
            | AnalyzerKind::NestedTraceDelay => "nested-trace",
            AnalyzerKind::Sql => "sql",
        }
    }

    /// A stable name for session files (`multi-trace-pair` is not `multi-trace`).
    pub fn key(self) -> &'static str {
        match self {
            AnalyzerKind::MultiTracePair => "multi-trace-pair",
            AnalyzerKind::NestedTraceCall => "nested-trace-call",
            AnalyzerKind::NestedTraceDelay => "nested-trace-delay",
            other => other.name(),
        }
    }

    pub fn from_key(key: &str) -> Option<AnalyzerKind> {
        Self::ALL.into_iter().find(|k| k.key() == key)
    }

    /// perf-prof's default ring size for the analyzer (pages).
    pub fn default_pages(self) -> usize {
        match self {
            // stat/hrcount: every event is a record here (perf-prof reads counters), and
            // page faults come in bursts of thousands: the tracing analyzers' 64.
            AnalyzerKind::Top => 4,
            // perf-prof's trace uses 2; every event is copied out, so a wider ring loses
            // fewer of them between two drains.
            AnalyzerKind::Trace => 16,
            // perf-prof's task-state: 8 pages. (hrtimer takes the 64 of the rest, not
            // perf-prof's 2: its events are records here, and a burst must fit.)
            AnalyzerKind::TaskState => 8,
            // The rest, blktrace and sql included (perf-prof gives them 8): three or four events per
            // request at up to 100k requests a second — 8 pages lost events behind the TUI here.
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
    /// multi-trace `--lower`: pairs closer than this are listed too.
    #[serde(default)]
    pub lower_ns: Option<u64>,
    /// multi-trace `--only-than`: an interval's table prints only when a latency passed
    /// `than_ns`; until then its rows keep adding up.
    #[serde(default)]
    pub only_than: bool,
    /// multi-trace `--detail[=LIST]`: the events between each listed pair's two.
    #[serde(default)]
    pub pair_detail: Option<crate::analyzers::multi_trace::DetailFilter>,
    /// multi-trace `--heatmap FILE`: each pair's `<end time> <latency>` lines go to
    /// `FILE-<start>-<end>.lat` (perf-prof's file, for trace2heatmap.pl).
    #[serde(default)]
    pub heatmap: Option<String>,
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
    /// `-g`: every event samples its callchain (as the `stack` attribute does for one);
    /// the stacks become the session's samples (flamegraph, folded export).
    #[serde(default)]
    pub call_graph: bool,
    /// `trace` in the TUI: each event's raw line goes to the console log (the event list).
    #[serde(default)]
    pub event_lines: bool,
    /// stat/hrcount `--period`: the counts' time resolution (ns); `None` = the interval
    /// (stat) or a tenth of it (hrcount).
    #[serde(default)]
    pub period_ns: Option<u64>,
    /// hrtimer's `{expression}`: which timer periods are kept.
    #[serde(default)]
    pub condition: Option<String>,
    /// watchdog: what the session found of the kernel's watchdog.
    #[serde(default)]
    pub watchdog: Option<crate::analyzers::watchdog::WatchdogParams>,
    /// sql `--query`: `;`-separated statements run over each interval's events.
    #[serde(default)]
    pub query: Option<String>,
}

/// perf-prof's default `-i` for the periodic counters (ms).
pub const COUNTER_INTERVAL_MS: u64 = 1000;

impl TraceOptions {
    /// The shared tracepoint flags given that this analyzer does not use (`-k`,
    /// `--perins`, `--than`), each with why: a flag is honoured or refused, never ignored.
    pub fn unused_flags(&self) -> Vec<String> {
        let a = self.analyzer;
        let name = a.name();
        let mut out = Vec::new();
        if self.key.is_some() && !a.uses_key() {
            out.push(format!(
                "{name} keys its events itself: -k is not one of its options"
            ));
        }
        if self.perins && !a.uses_perins() {
            out.push(format!(
                "{name} has no per-instance split: --perins is not one of its options"
            ));
        }
        if self.than_ns.is_some() && !a.uses_than() {
            out.push(format!(
                "{name} has no latency to hold against --than: it is not one of its options"
            ));
        }
        out
    }

    /// `-k`: the key of events without their own `key=`, parsed (an error names `-k`).
    pub fn default_key(&self) -> anyhow::Result<Option<crate::trace::expr::Expr>> {
        self.key
            .as_deref()
            .map(crate::trace::expr::Expr::parse)
            .transpose()
            .map_err(|e| anyhow::anyhow!("-k: {e}"))
    }

    /// `analyzer` over `events` with every option at its default (off, none, empty).
    pub fn new(analyzer: AnalyzerKind, events: Vec<String>) -> Self {
        TraceOptions {
            analyzer,
            events,
            key: None,
            interval: None,
            perins: false,
            than_ns: None,
            lower_ns: None,
            heatmap: None,
            only_than: false,
            pair_detail: None,
            cycle: false,
            only_comm: false,
            interruptible: false,
            uninterruptible: false,
            only_tids: Vec::new(),
            only_comms: Vec::new(),
            follow_forks: false,
            detail: false,
            call_graph: false,
            event_lines: false,
            period_ns: None,
            condition: None,
            watchdog: None,
            query: None,
        }
    }

    /// stat/hrcount: the counting period and the periods per printed interval.
    pub fn counter_periods(&self) -> (u64, usize) {
        let interval_ns = self
            .interval
            .map_or(COUNTER_INTERVAL_MS * 1_000_000, |i| i.as_nanos() as u64)
            .max(1);
        let default = match self.analyzer {
            AnalyzerKind::Hrcount => interval_ns / 10,
            _ => interval_ns,
        };
        let period_ns = self.period_ns.unwrap_or(default).clamp(1, interval_ns);
        (period_ns, (interval_ns / period_ns).max(1) as usize)
    }
}
