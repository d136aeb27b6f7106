//! A snapshot: everything the views draw, derived from the model at one moment, immutable
//! and shared (`Arc`) so the UI thread draws it while the model thread builds the next.

use std::sync::Arc;

use crate::model::hotspots::Hotspots;
use crate::model::{
    ConsoleLog, FrameTable, InstanceId, LatencyHistogram, PhaseMarkers, Profile, Selection, StackTrie,
    Timeline, TrieOrder, split_by_instance,
};

/// How many slices the timeline keeps (views re-bin to their width).
pub const TIMELINE_SLICES: usize = 2048;

/// One instance's share of the selection (per-instance panes).
#[derive(Clone, Debug)]
pub struct InstanceSlice {
    pub id: InstanceId,
    /// "cpu 3", "vcpu 0", "1234 nginx".
    pub label: String,
    pub trie: Arc<StackTrie>,
    pub hotspots: Arc<Hotspots>,
}

/// A named latency distribution, optionally of one instance (`--perins`).
#[derive(Clone, Debug)]
pub struct HistogramSeries {
    /// What is measured: "read(0)", "rundelay nginx".
    pub name: String,
    pub instance: Option<String>,
    pub histogram: LatencyHistogram,
    /// Exact counters the analyzer keeps beside the distribution, shown after the
    /// percentiles: ("total", "1.2s"), ("err", "17"), ("than", "3 (2%)").
    pub extra: Vec<(String, String)>,
}

/// An analyzer's table as its text output prints it (perf-prof's layout): a title, the
/// header lines (column names, dashes) and one line per row.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TextTable {
    /// "syscalls", "sched_wakeup => sched_switch", "top sched:sched_stat_runtime".
    pub title: String,
    pub header: Vec<String>,
    pub rows: Vec<String>,
}

/// Counters of the source for the status line.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SourceStats {
    /// What is being looked at: a path, "qemu riscv64", "host cpu-clock".
    pub source: String,
    /// Samples received so far (all of them, not only the selected).
    pub samples: u64,
    /// Recent arrival rate; 0 for a finished file.
    pub samples_per_sec: f64,
    /// Tracepoint events fed to an analyzer (host tracing sessions; 0 for samplers).
    pub events: u64,
    /// Records the kernel or the plugin reported lost.
    pub lost: u64,
    /// Samples dropped on our side (bad records, full queues).
    pub dropped: u64,
    /// No more data will come (a file fully read, QEMU exited).
    pub finished: bool,
    pub warnings: Vec<String>,
}

/// The live display mode (the model thread applies it when building a snapshot).
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum LiveMode {
    /// Everything since the start (or the last reset).
    Accumulate,
    /// Only the last `seconds` of samples.
    Sliding { seconds: f64 },
    /// Every refresh multiplies older weights by `factor` (perf top uses 7/8).
    Decay { factor: f64 },
}

impl LiveMode {
    pub fn label(&self) -> String {
        match self {
            LiveMode::Accumulate => "accumulate".into(),
            LiveMode::Sliding { seconds } => format!("sliding {seconds}s"),
            LiveMode::Decay { factor } => format!("decay ×{factor}"),
        }
    }
}

/// Everything the views draw.
#[derive(Clone, Debug)]
pub struct Snapshot {
    /// Increases with every published snapshot.
    pub generation: u64,
    pub frames: Arc<FrameTable>,
    /// The selection, root first.
    pub trie: Arc<StackTrie>,
    /// The selection, leaf first — built only while a view asks for it (it costs as much
    /// as the forward trie); `None` means "not built yet".
    pub inverted: Option<Arc<StackTrie>>,
    pub hotspots: Arc<Hotspots>,
    /// The whole run (not only the window), `None` without timestamps.
    pub timeline: Option<Arc<Timeline>>,
    /// Per-instance split of the selection; empty until a view asks for it.
    pub instances: Arc<Vec<InstanceSlice>>,
    /// Every instance of the profile (for cycling one full-screen), cheap to keep.
    pub instance_labels: Arc<Vec<(InstanceId, String)>>,
    pub histograms: Arc<Vec<HistogramSeries>>,
    /// Analyzer tables (host tracepoint sources); empty for sampling sources.
    pub tables: Arc<Vec<TextTable>>,
    pub console: Arc<ConsoleLog>,
    /// What the snapshot selects (window, focus, instance).
    pub selection: Selection,
    pub markers: PhaseMarkers,
    /// Sample-clock time shown as 0 s ([`ModelState::time_origin_ns`]).
    pub time_origin_ns: u64,
    pub mode: LiveMode,
    pub stats: SourceStats,
}

impl Snapshot {
    /// Everything at once from a finished profile (tests, benchmarks, `open` of a file).
    pub fn from_profile(profile: &Profile, selection: Selection, markers: PhaseMarkers) -> Snapshot {
        let matcher = selection.matcher(profile);
        let mut per_stack = vec![0u64; profile.stacks.len()];
        for sample in matcher.samples(profile) {
            per_stack[sample.stack.index()] += sample.weight;
        }
        let trie = StackTrie::from_stack_weights(profile, &per_stack, TrieOrder::RootFirst);
        let inverted = StackTrie::from_stack_weights(profile, &per_stack, TrieOrder::LeafFirst);
        let hotspots = Hotspots::from_trie(&trie, &profile.frames);
        Snapshot {
            generation: 1,
            frames: Arc::new(profile.frames.clone()),
            trie: Arc::new(trie),
            inverted: Some(Arc::new(inverted)),
            hotspots: Arc::new(hotspots),
            timeline: Timeline::build(profile, TIMELINE_SLICES, markers).map(Arc::new),
            instances: Arc::new(instance_slices(profile, &selection)),
            instance_labels: Arc::new(instance_labels(profile)),
            histograms: Arc::new(Vec::new()),
            tables: Arc::new(Vec::new()),
            console: Arc::new(ConsoleLog::new()),
            selection,
            markers,
            time_origin_ns: 0,
            mode: LiveMode::Accumulate,
            stats: SourceStats {
                source: profile.info.source.clone(),
                samples: profile.samples().len() as u64,
                finished: true,
                ..SourceStats::default()
            },
        }
    }
}

impl Snapshot {
    /// Nothing yet: what the views show while a source starts.
    pub fn empty(source: &str) -> Snapshot {
        let mut s = Snapshot::from_profile(&Profile::default(), Selection::all(), PhaseMarkers::default());
        s.generation = 0;
        s.stats.source = source.to_string();
        s.stats.finished = false;
        s
    }
}

/// Every instance with its label, in id order.
pub fn instance_labels(profile: &Profile) -> Vec<(InstanceId, String)> {
    profile
        .instances()
        .iter()
        .enumerate()
        .map(|(i, inst)| (InstanceId(i as u32), inst.label.clone()))
        .collect()
}

/// The per-instance split of a selection with labels and hotspots.
pub fn instance_slices(profile: &Profile, selection: &Selection) -> Vec<InstanceSlice> {
    slices_of(profile, split_by_instance(profile, selection))
}

/// Labels and hotspots for a per-instance split.
pub fn slices_of(profile: &Profile, split: Vec<(InstanceId, StackTrie)>) -> Vec<InstanceSlice> {
    split
        .into_iter()
        .map(|(id, trie)| {
            let hotspots = Hotspots::from_trie(&trie, &profile.frames);
            InstanceSlice {
                id,
                label: profile.instance_info(id).label.clone(),
                trie: Arc::new(trie),
                hotspots: Arc::new(hotspots),
            }
        })
        .collect()
}
