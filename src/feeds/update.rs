//! What a feed hands the engine: typed batches of model data. The engine is the only
//! writer of model state; a feed never sees it.

use std::sync::Arc;

use crate::analyzers::latency::SlowPair;
use crate::model::analysis::{AnalysisInfo, AnalysisRows};
use crate::model::sample::InstanceId;
use crate::model::stack::StackId;
use crate::model::stack_copies::StackCopies;
use crate::model::tables::TableDelta;
use crate::model::verdict::SourceCounts;
use crate::model::{Finding, InputInfo, PhaseMarkers, Sample, SourceFacts, Verdict, WindowInfo};
use crate::sources::tracefs::EventPrinter;
use crate::store::{RecordedEventType, SymbolRecord};
use crate::trace::event::{EventLayout, OwnedTraceEvent};
use crate::trace::expr::BoundExpr;

/// What a session is, said once when it starts.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SessionStart {
    /// What the status line calls the source: a path, "qemu riscv64", "host cpu-clock".
    pub label: String,
    /// The kind a session file records (`qemu`, `host`, `host-trace`, `file`).
    pub kind: String,
    /// What was profiled: the kernel image, the command, `system-wide`.
    pub target: String,
    /// Where the views count seconds from on the sample clock (a host session's start;
    /// 0 where the clock starts with the run).
    pub time_origin_ns: u64,
    /// The sample clock runs now: it is CLOCK_MONOTONIC minus this (so live windows and
    /// decay move on while no data arrives). `None` for recorded inputs.
    pub live_clock_offset_ns: Option<i64>,
    /// The session's options, typed, as JSON (a recording keeps them so a replay can
    /// rebuild the same analysis).
    pub options: Option<serde_json::Value>,
}

/// Rows an analyzer computed over a span of time.
#[derive(Clone, Debug, PartialEq)]
pub struct RowsUpdate {
    /// Where the span starts on the sample clock (`None`: untimed).
    pub time_ns: Option<u64>,
    pub rows: AnalysisRows,
    /// Events the analyzer was fed in the span.
    pub events: u64,
}

/// `--than` offenders: event pairs over the threshold, as the analyzer kept them.
#[derive(Clone, Debug, PartialEq)]
pub struct Offenders {
    pub pairs: Vec<SlowPair>,
    /// Pairs not kept because the analyzer's queue was full.
    pub dropped: u64,
}

/// How a tracepoint session's raw events print (the offenders' lines): the layouts of the
/// opened events and their compiled print fmts.
#[derive(Clone, Debug)]
pub struct EventFormat {
    pub layouts: Vec<EventLayout>,
    pub printer: EventPrinter,
    /// Each event's `exec=` (by event index): evaluated after `trace` prints the event.
    pub execs: Vec<Option<BoundExpr>>,
}

/// One sample as perf-prof's `profile` prints it: who, where, when, how much, and the
/// callchain its stack was made of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SampleLine {
    pub time_ns: u64,
    pub pid: u32,
    pub tid: u32,
    pub cpu: u32,
    /// The sample's period in the event's unit (ns for cpu-clock).
    pub period: u64,
    /// The thread's name when the sample was taken (empty: not known).
    pub comm: String,
    /// The instance the sample counts for (a CPU, or the thread when sampling threads).
    pub instance: InstanceId,
    pub stack: StackId,
    /// The raw addresses, leaf first, kernel then user (the sampled address alone
    /// without -g): `stack_lines` prints them beside the stack's frames.
    pub callchain: Vec<u64>,
}

/// What only a recording needs (the engine shows none of it).
#[derive(Clone, Debug, PartialEq)]
pub enum RecordOnly {
    /// The event types of a tracepoint session (layouts, aliases, filters).
    EventTypes(Vec<RecordedEventType>),
    /// Every event the analyzer saw, as it saw it.
    Events(Vec<OwnedTraceEvent>),
    /// Addresses named for the first time (the session's symbol table).
    Symbols(Vec<SymbolRecord>),
    /// More `meta` rows.
    Meta(Vec<(String, String)>),
}

/// The source waits for something before the run goes on (the guest's shell prompt, to
/// type the workload): what, for how long, and what the user can do about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Waiting {
    /// "shell prompt 'root@starry:' or 'starry:~# '".
    pub what: String,
    pub elapsed: std::time::Duration,
    /// "set --shell-prefix".
    pub hint: String,
}

impl Waiting {
    /// "waiting for shell prompt 'root@starry:' — 12 s; set --shell-prefix".
    pub fn text(&self) -> String {
        format!(
            "waiting for {} — {} s; {}",
            self.what,
            self.elapsed.as_secs(),
            self.hint
        )
    }
}

/// One typed batch.
#[derive(Clone, Debug)]
pub enum Update {
    Start(SessionStart),
    /// New interned frames, locations, stacks, instances (before the samples using them).
    Tables(TableDelta),
    Samples(Vec<Sample>),
    /// Each sample's own facts, after the `Samples` they belong to, when the session was
    /// asked for them (perf-prof's `profile` prints one line per sample); the engine keeps
    /// none of it.
    SampleLines(Vec<SampleLine>),
    /// The session runs an analyzer: what its rows mean.
    Analysis(Arc<AnalysisInfo>),
    Rows(RowsUpdate),
    Offenders(Offenders),
    /// How the session's raw events print.
    EventFormat(Arc<EventFormat>),
    /// A thread's name (a COMM record, an exec).
    ThreadName {
        tid: u32,
        name: String,
    },
    /// Console output as it arrived (the guest's serial console).
    Console {
        time_ns: Option<u64>,
        bytes: Vec<u8>,
    },
    Markers(PhaseMarkers),
    /// Records the source lost so far (a total), the latest at `time_ns`.
    Lost {
        total: u64,
        time_ns: Option<u64>,
    },
    /// Records dropped on our side so far (a total).
    Dropped {
        total: u64,
    },
    /// What the source counted beside its data so far (totals): decode errors,
    /// throttles, rebuilt events, corrupt rows.
    Counts(SourceCounts),
    /// A way the session falls short that the source knows of (it failed, was cut, two of
    /// its records disagree): a finding of the session's verdict.
    Finding(Finding),
    /// A replayed session's verdict as its recording stored it (a replay says the same).
    RecordedVerdict(Verdict),
    /// `--call-graph dwarf`: the user stack copies so far (totals, and the recent rate).
    StackCopies(StackCopies),
    /// What was read, for the reports.
    Input(InputInfo),
    Facts(SourceFacts),
    /// How the run was cut (markers, timeouts, stop method).
    Window(WindowInfo),
    /// The QEMU plugin's summary sidecar.
    PluginSummary(Vec<(String, String)>),
    /// A QEMU session's callchain and why it was chosen.
    Callchain(crate::model::facts::CallchainFacts),
    Warning(String),
    /// What the source waits for now (`None`: it waits no longer).
    Waiting(Option<Waiting>),
    /// A file of the run for the artifact directory (`qemu.time.txt`, the console log).
    ExtraFile {
        name: String,
        bytes: Vec<u8>,
    },
    Record(RecordOnly),
}

/// What a poll did.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FeedStatus {
    /// Nothing new.
    Idle,
    /// New updates were handed over.
    Progress,
    /// Nothing more will come.
    Finished,
}
