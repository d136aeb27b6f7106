//! A snapshot: everything the views draw, derived from the model at one moment, immutable
//! and shared (`Arc`) so the UI thread draws it while the engine builds the next.

use std::sync::Arc;

use crate::model::aggregate::InstanceSlice;
use crate::model::analysis::AnalysisInfo;
use crate::model::present::{AnalysisTable, LatencySeries};
use crate::model::{
    ConsoleLog, FrameTable, Hotspots, InstanceId, PhaseMarkers, Selection, StackTrie, Timeline, Verdict,
};

pub use super::state::SourceStats;

/// The live display mode, applied to samples and analyses alike.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum LiveMode {
    /// Everything since the start (or the last reset).
    Accumulate,
    /// Only the last `seconds`.
    Sliding { seconds: f64 },
    /// Older data weighs `factor` less per refresh interval of age (perf top uses 7/8).
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

/// An analysis as the views show it, for the snapshot's selection.
#[derive(Clone, Debug)]
pub struct AnalysisView {
    pub info: Arc<AnalysisInfo>,
    /// Events the analyzer was fed in the selection.
    pub events: u64,
    /// One distribution per latency row (the Latency view).
    pub series: Vec<LatencySeries>,
    /// The table as perf-prof prints it, row by row with sortable cells (the Tables view).
    pub table: AnalysisTable,
    /// The `--than` offenders as perf-prof prints them (the Tables view's `o` list).
    pub offenders: Arc<super::offenders::OffenderLines>,
    /// Latencies over time (the Latency view's heatmap); `None` unless a latency analysis
    /// has timed rows in the selection.
    pub heatmap: Option<Arc<crate::model::heatmap::LatencyHeatmap>>,
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
    /// Every instance of the session (for cycling one full-screen).
    pub instance_labels: Arc<Vec<(InstanceId, String)>>,
    /// The session's analysis for the selection; `None` for sampling sessions.
    pub analysis: Option<Arc<AnalysisView>>,
    pub console: Arc<ConsoleLog>,
    /// What the snapshot selects (window — as cut on slice boundaries — focus, instance).
    pub selection: Selection,
    pub markers: PhaseMarkers,
    /// Sample-clock time shown as 0 s.
    pub time_origin_ns: u64,
    pub mode: LiveMode,
    pub stats: SourceStats,
    /// The session's verdict as it stands (the status line's account of what is missing).
    pub verdict: Verdict,
}

impl Snapshot {
    /// Nothing yet: what the views show while a source starts.
    pub fn empty(source: &str) -> Snapshot {
        Snapshot {
            generation: 0,
            frames: Arc::new(FrameTable::default()),
            trie: Arc::new(StackTrie::new()),
            inverted: None,
            hotspots: Arc::new(Hotspots::default()),
            timeline: None,
            instances: Arc::new(Vec::new()),
            instance_labels: Arc::new(Vec::new()),
            analysis: None,
            console: Arc::new(ConsoleLog::new()),
            selection: Selection::all(),
            markers: PhaseMarkers::default(),
            time_origin_ns: 0,
            mode: LiveMode::Accumulate,
            stats: SourceStats {
                source: source.to_string(),
                ..SourceStats::default()
            },
            verdict: Verdict::default(),
        }
    }
}
