//! Record a live session as its model grows: new samples (through a [`ProfileTap`]), new
//! completed console lines, marker changes and lost-count increases. A live source calls
//! [`SessionTap::record`] after each poll with the model it just filled — one line of
//! hook, whatever the source.

use crate::model::{ConsoleLog, PhaseMarkers, Profile};

use super::error::StoreError;
use super::profile_tap::ProfileTap;
use super::recorder::{RecordSummary, Recorder};

/// A recorder plus how far each part of the model has been recorded.
pub struct SessionTap {
    recorder: Recorder,
    profile: ProfileTap,
    console_lines: usize,
    markers: PhaseMarkers,
    lost: u64,
}

impl SessionTap {
    pub fn new(recorder: Recorder) -> Self {
        Self {
            recorder,
            profile: ProfileTap::new(),
            console_lines: 0,
            markers: PhaseMarkers::default(),
            lost: 0,
        }
    }

    pub fn recorder(&mut self) -> &mut Recorder {
        &mut self.recorder
    }

    /// Record what is new in the model since the last call.
    pub fn record(
        &mut self,
        profile: &Profile,
        console: &ConsoleLog,
        markers: &PhaseMarkers,
        lost_total: u64,
    ) {
        self.profile.record_new(&mut self.recorder, profile);
        for line in console.lines().get(self.console_lines..).unwrap_or_default() {
            self.recorder.console_line(line.time_ns, &line.text);
        }
        self.console_lines = console.lines().len();
        if markers.start_ns != self.markers.start_ns && markers.start_ns.is_some() {
            self.recorder.marker(markers.start_ns, "start", "start marker");
        }
        if markers.stop_ns != self.markers.stop_ns && markers.stop_ns.is_some() {
            self.recorder.marker(markers.stop_ns, "stop", "stop marker");
        }
        self.markers = *markers;
        if lost_total > self.lost {
            let last = profile.samples().last().and_then(|s| s.time_ns);
            self.recorder.lost(last, None, lost_total - self.lost);
            self.lost = lost_total;
        }
    }

    /// Keep `entries` in `meta` as `PREFIX + key` (a plugin's summary: `plugin.`).
    pub fn record_meta(&mut self, prefix: &str, entries: &[(String, String)]) {
        for (k, v) in entries {
            self.recorder.meta(&format!("{prefix}{k}"), v);
        }
    }

    pub fn finish(self) -> Result<RecordSummary, StoreError> {
        self.recorder.finish()
    }

    /// See [`Recorder::finish_with_warning`].
    pub fn finish_with_warning(self) -> Option<String> {
        self.recorder.finish_with_warning()
    }
}
