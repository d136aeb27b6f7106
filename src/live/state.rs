//! What sources fill and the model thread owns: the profile and everything around it that
//! views and exports need (console, markers, counters, latency histograms, input facts).

use crate::model::{ConsoleLog, InputInfo, PhaseMarkers, Profile, SourceFacts, Timeline, WindowInfo};

use super::snapshot::{HistogramSeries, SourceStats, TextTable};

/// The model of one session.
#[derive(Default)]
pub struct ModelState {
    pub profile: Profile,
    /// Facts about the input for the reports (format, records, filters).
    pub facts: SourceFacts,
    pub input: InputInfo,
    /// The plugin's summary sidecar entries, when there is one.
    pub plugin_summary: Vec<(String, String)>,
    /// Warnings to carry into report.json and the status line.
    pub warnings: Vec<String>,
    pub console: ConsoleLog,
    /// Start / stop markers on the sample clock.
    pub markers: PhaseMarkers,
    /// Where the views count seconds from on the sample clock: a host session's start
    /// (its samples carry CLOCK_MONOTONIC times, seconds since boot); 0 where the clock
    /// already starts with the run (the QEMU plugin's epoch, files).
    pub time_origin_ns: u64,
    /// Source counters (source name, lost, dropped, finished); samples and the rate are
    /// filled by the model thread.
    pub stats: SourceStats,
    pub histograms: Vec<HistogramSeries>,
    /// Events per time slice of an analyzer session (its profile has no samples to bin).
    pub event_timeline: Option<Timeline>,
    /// Analyzer tables, replaced whole by the source at each update.
    pub tables: Vec<TextTable>,
    /// How a run was cut (markers, timeouts, stop method), for window.json.
    pub window: Option<WindowInfo>,
    /// Extra files of the run for the qperf directory (`qemu.time.txt`, the console log…).
    pub extra_files: Vec<(String, Vec<u8>)>,
}
