//! What the engine owns: everything a session has told it, as model data. Only the engine
//! writes it (applying feeds' updates); views, exports and the recording see it through
//! snapshots and the export bridge.

use std::collections::VecDeque;
use std::sync::Arc;

use crate::analyzers::latency::SlowPair;
use crate::feeds::EventFormat;

use crate::model::analysis::AnalysisInfo;
use crate::model::selection::{Counted, SampleSource};
use crate::model::tables::ProfileTables;
use crate::model::threads::ThreadNames;
use crate::model::verdict::SourceCounts;
use crate::model::{
    ConsoleLog, Finding, InputInfo, PhaseMarkers, SourceFacts, TimeWindow, Verdict, WindowInfo,
};

use super::slices::{SlicePolicy, SliceStore};

/// Facts about the input, for the reports: what was read, how the run was cut, what the
/// source's own summary said, what went wrong.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Provenance {
    /// The kind the session started as (`qemu`, `host`, `host-trace`, `file`, …).
    pub source_kind: String,
    pub input: InputInfo,
    pub facts: SourceFacts,
    pub window: Option<WindowInfo>,
    /// The QEMU plugin's summary sidecar entries, when there is one.
    pub plugin_summary: Vec<(String, String)>,
    /// Warnings to carry into report.json and the status line.
    pub warnings: Vec<String>,
    /// Extra files of the run for the artifact directory (`qemu.time.txt`, …).
    pub extra_files: Vec<(String, Vec<u8>)>,
    /// Ways the session falls short that its source (or the engine's loop) said: typed
    /// findings of the verdict ([`super::verdict`] adds what the counts say).
    pub findings: Vec<Finding>,
    /// A replayed session's verdict, as its recording stored it.
    pub recorded_verdict: Option<Verdict>,
}

impl Provenance {
    /// Record a finding once (a source may say the same thing at every poll).
    pub fn note(&mut self, finding: Finding) {
        if !self.findings.contains(&finding) {
            self.findings.push(finding);
        }
    }
}

/// Counters for the status line.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SourceStats {
    /// What is being looked at: a path, "qemu riscv64", "host cpu-clock".
    pub source: String,
    /// Samples received so far (all of them, not only the selected).
    pub samples: u64,
    /// Recent sample arrival rate, smoothed; 0 once finished.
    pub samples_per_sec: f64,
    /// Tracepoint events fed to an analyzer (0 for samplers).
    pub events: u64,
    /// Records the kernel or the plugin reported lost.
    pub lost: u64,
    /// Records dropped on our side (bad records, full queues).
    pub dropped: u64,
    /// Decode errors, throttles, rebuilt events, corrupt rows the source counted.
    pub counts: SourceCounts,
    /// Time stamps past the sample clock's range, taken out of their records.
    pub bad_times: u64,
    /// No more data will come (a file fully read, QEMU exited).
    pub finished: bool,
    /// What the source waits for before the run goes on (the guest's shell prompt).
    pub waiting: Option<crate::feeds::Waiting>,
    /// The symbols do not match the samples (said once the session is finished).
    pub symbols_mismatch: Option<String>,
    /// `--call-graph dwarf`: what the user stack copies cost so far.
    pub stack_copies: Option<crate::model::stack_copies::StackCopies>,
    /// How the plugin's DWARF unwinds ended (known once its summary is read).
    pub unwind_stops: Option<crate::model::facts::UnwindStops>,
    /// A QEMU session's callchain and why it was chosen (said when the session starts).
    pub callchain: Option<crate::model::facts::CallchainFacts>,
    pub warnings: Vec<String>,
}

/// The model of one session.
#[derive(Clone, Debug)]
pub struct ModelState {
    pub tables: ProfileTables,
    /// Samples and analysis rows by time slice.
    pub store: SliceStore,
    /// The session's analyzer, when it runs one.
    pub analysis: Option<Arc<AnalysisInfo>>,
    pub threads: ThreadNames,
    pub console: ConsoleLog,
    /// Start / stop markers on the sample clock (as cut: on slice boundaries).
    pub markers: PhaseMarkers,
    /// Where the views count seconds from on the sample clock.
    pub time_origin_ns: u64,
    /// CLOCK_MONOTONIC − sample clock while the source runs live.
    pub live_clock_offset_ns: Option<i64>,
    pub provenance: Provenance,
    pub stats: SourceStats,
    /// The newest `--than` offenders (at most [`MAX_OFFENDERS`]) and how many went past.
    pub offenders: VecDeque<SlowPair>,
    pub offenders_dropped: u64,
    /// Pairs ever put in the queue: the newest pair's position + 1 (the printed list
    /// prints only the pairs past what it printed before).
    pub offenders_queued: u64,
    /// How the session's raw events print (the offenders' lines).
    pub event_format: Option<Arc<EventFormat>>,
}

/// Offenders kept for the views at most; older ones are counted, not kept.
pub const MAX_OFFENDERS: usize = 4096;

impl ModelState {
    pub fn new(policy: SlicePolicy) -> Self {
        Self {
            tables: ProfileTables::default(),
            store: SliceStore::new(policy),
            analysis: None,
            threads: ThreadNames::default(),
            console: ConsoleLog::new(),
            markers: PhaseMarkers::default(),
            time_origin_ns: 0,
            live_clock_offset_ns: None,
            provenance: Provenance::default(),
            stats: SourceStats::default(),
            offenders: VecDeque::new(),
            offenders_dropped: 0,
            offenders_queued: 0,
            event_format: None,
        }
    }

    /// "Now" on the sample clock: the live clock while the source runs, else the newest
    /// time seen.
    pub fn now_ns(&self) -> Option<u64> {
        let latest = self.store.latest_ns();
        match (self.live_clock_offset_ns, self.stats.finished) {
            (Some(offset), false) => {
                let now = i128::from(crate::sources::clock::monotonic_ns()) - i128::from(offset);
                let now = u64::try_from(now.max(0)).unwrap_or(0);
                Some(latest.map_or(now, |l| l.max(now)))
            }
            _ => latest,
        }
    }
}

impl SampleSource for ModelState {
    fn tables(&self) -> &ProfileTables {
        &self.tables
    }

    fn visit_counts(&self, window: &TimeWindow, visit: &mut dyn FnMut(Counted)) {
        self.store.visit(window, &mut |v| {
            visit(Counted {
                key: v.key,
                weight: v.weight,
                position: v.position,
                timed: v.end_ns.is_some(),
            })
        });
    }

    fn time_range_ns(&self) -> Option<(u64, u64)> {
        self.store.sample_time_range()
    }
}
