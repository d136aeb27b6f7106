//! The engine: the one owner of a session's model. It applies the feed's typed batches
//! (the only writer of model state), keeps them per time slice so memory is bounded, cuts
//! the slices at markers, resets and selected windows, builds the one [`Snapshot`] the
//! views draw, feeds the recording sink and answers exports — for live sessions on the
//! model thread ([`thread`]), for headless runs in the caller's loop.
//!
//! ```text
//! feed ──Update──▶ apply ──▶ ModelState (tables, slices, analysis, console, facts)
//!                    │                 │
//!                    ▼                 ├──▶ SnapshotBuilder ──▶ Snapshot ──▶ views
//!              recording sink          └──▶ export bridge   ──▶ artifacts
//! ```

pub mod apply;
pub mod build;
pub mod export;
pub mod heatmap;
pub mod offenders;
pub mod record;
pub mod slices;
pub mod snapshot;
pub mod state;
pub mod symbol_verdict;
pub mod thread;
pub mod verdict;

use std::time::Duration;

use crate::model::{Finding, Gap, PhaseMarkers, Selection, TimeWindow, Verdict};
use crate::store::Recorder;

pub use build::SnapshotBuilder;
pub use slices::TIMELINE_BINS;
pub use slices::{SlicePolicy, SliceStore};
pub use snapshot::{AnalysisView, LiveMode, Snapshot, SourceStats};
pub use state::{ModelState, Provenance};

use record::RecordingSink;

/// How an engine starts.
pub struct EngineOptions {
    pub policy: SlicePolicy,
    pub selection: Selection,
    pub mode: LiveMode,
    /// The refresh interval (the decay mode's unit of age).
    pub refresh: Duration,
    /// `--record`: the session file every update is also written to.
    pub recording: Option<Recorder>,
}

impl EngineOptions {
    /// A recorded input read to its end (report, `open --no-tui`).
    pub fn batch(selection: Selection) -> Self {
        Self {
            policy: SlicePolicy::BATCH,
            selection,
            mode: LiveMode::Accumulate,
            refresh: Duration::from_secs(1),
            recording: None,
        }
    }
}

impl EngineOptions {
    /// A run to the end without a terminal (report, `--no-tui`): a live source (`live`)
    /// holds its newest samples for the markers still to come; a recorded one needs no hold.
    pub fn headless(selection: Selection, live: bool) -> Self {
        Self {
            policy: if live {
                SlicePolicy::live_headless()
            } else {
                SlicePolicy::BATCH
            },
            ..Self::batch(selection)
        }
    }
}

/// The model of one session and everything that reads or writes it.
pub struct Engine {
    pub state: ModelState,
    pub builder: SnapshotBuilder,
    recording: Option<RecordingSink>,
    /// The markers as the feed last gave them (before cutting).
    markers_asked: PhaseMarkers,
}

impl Engine {
    pub fn new(options: EngineOptions) -> Self {
        let mut engine = Self {
            state: ModelState::new(options.policy),
            builder: SnapshotBuilder::new(Selection::all(), options.mode, options.refresh),
            recording: options.recording.map(RecordingSink::new),
            markers_asked: PhaseMarkers::default(),
        };
        engine.set_mode(options.mode);
        engine.set_selection(options.selection);
        engine
    }

    /// Whether a session file is being written (what the source still holds belongs in it).
    pub fn is_recording(&self) -> bool {
        self.recording.is_some()
    }

    /// The source will send nothing more: bin what is held, close the recording.
    pub fn finish(&mut self) {
        self.state.stats.finished = true;
        self.state.stats.samples_per_sec = 0.0;
        self.state.store.seal();
        if self.state.provenance.facts.symbols_mismatch.is_none()
            && let Some(why) = symbol_verdict::symbols_mismatch(&self.state)
        {
            self.state.provenance.facts.symbols_mismatch = Some(why.clone());
            self.state.stats.symbols_mismatch = Some(why.clone());
            self.state.provenance.warnings.push(why);
        }
        if let Some(mut sink) = self.recording.take() {
            // The file keeps the verdict (and what it did not store), so that a replay
            // says the same; a file without it was killed or is still being written.
            sink.flush(&self.state);
            if let Some((dropped, why)) = sink.shortfall() {
                self.state
                    .provenance
                    .note(Finding::new(Gap::NotRecorded, Some(dropped), why));
            }
            if let Err(e) = sink.finish(&self.verdict()) {
                self.state
                    .provenance
                    .note(Finding::new(Gap::NotRecorded, None, e));
            }
        }
        self.builder.invalidate();
    }

    /// The session's verdict as it stands: what the exit code, the reports, the status
    /// line and a recording say about its completeness.
    pub fn verdict(&self) -> Verdict {
        verdict::verdict(&self.state)
    }

    /// Something the loop running the engine knows about the session's end: the source
    /// failed, was stopped before its end, or did not finish in time.
    pub fn note(&mut self, finding: Finding) {
        self.state.provenance.note(finding);
        self.builder.invalidate();
    }

    /// Look at `selection` from now on. Its window's bounds become cuts, snapped to a slice
    /// edge when an older slice already spans them; the snapshot shows the window as cut.
    pub fn set_selection(&mut self, mut selection: Selection) {
        let old = self.builder.selection.window;
        for bound in [old.start_ns, old.stop_ns].into_iter().flatten() {
            if !self.is_fixed_cut(bound) {
                self.state.store.release_cut(bound);
            }
        }
        selection.window = TimeWindow::new(
            selection.window.start_ns.map(|t| self.state.store.cut(t, false)),
            selection.window.stop_ns.map(|t| self.state.store.cut(t, false)),
        );
        self.builder.selection = selection;
        self.builder.invalidate();
    }

    pub fn set_mode(&mut self, mode: LiveMode) {
        self.builder.mode = mode;
        if let LiveMode::Sliding { seconds } = mode {
            let span = crate::model::units::seconds_to_ns(seconds);
            let recent = self.state.store.policy().recent_ns;
            if span > recent && recent > 0 {
                self.state.store.set_recent(span);
            }
        }
        self.builder.invalidate();
    }

    /// Count from now on (the recording keeps everything).
    pub fn reset(&mut self) {
        if let Some(old) = self.builder.reset_ns.take()
            && !self.is_fixed_cut(old)
        {
            self.state.store.release_cut(old);
        }
        let now = self.state.now_ns().unwrap_or(0);
        self.builder.reset_ns = Some(self.state.store.cut(now.saturating_add(1), true));
        self.builder.invalidate();
    }

    /// Markers are cuts that stay.
    fn is_fixed_cut(&self, t: u64) -> bool {
        self.state.markers.start_ns == Some(t) || self.state.markers.stop_ns == Some(t)
    }

    fn set_markers(&mut self, markers: PhaseMarkers) {
        if markers == self.markers_asked {
            return;
        }
        self.markers_asked = markers;
        let mut cut = PhaseMarkers::default();
        for (asked, into, name) in [
            (markers.start_ns, &mut cut.start_ns, "start"),
            (markers.stop_ns, &mut cut.stop_ns, "stop"),
        ] {
            let Some(t) = asked else { continue };
            let at = self.state.store.cut(t, false);
            if at != t {
                self.state.provenance.warnings.push(format!(
                    "the {name} marker at {:.6} s arrived after its slice was kept; the window uses {:.6} s",
                    t.saturating_sub(self.state.time_origin_ns) as f64 / 1e9,
                    at.saturating_sub(self.state.time_origin_ns) as f64 / 1e9,
                ));
            }
            *into = Some(at);
        }
        if cut != self.state.markers {
            self.state.markers = cut;
            self.builder.invalidate();
        }
    }

    /// The next snapshot.
    pub fn snapshot(&mut self) -> Snapshot {
        self.builder.build(&self.state)
    }
}

#[cfg(test)]
mod tests;

/// Engines built from samples in memory, for tests of the engine and of the views (which
/// then render what production builds).
#[cfg(test)]
pub(crate) mod testing {
    use super::*;
    use crate::feeds::Update;
    use crate::feeds::memory::updates_of;
    use crate::model::aggregate::Wants;
    use crate::model::sample_list::SampleList;

    /// A finished engine holding `list`.
    pub fn engine_of(list: &SampleList, policy: SlicePolicy) -> Engine {
        let mut engine = Engine::new(EngineOptions {
            policy,
            ..EngineOptions::batch(Selection::all())
        });
        engine.apply(updates_of(list));
        engine.finish();
        engine.builder.wants = Wants::ALL;
        engine
    }

    /// Everything of `list` selected, as the views get it (inverted trie and instances built).
    pub fn snapshot_of_list(list: &SampleList) -> Snapshot {
        engine_of(list, SlicePolicy::BATCH).snapshot()
    }

    /// `list` with `markers` cut and `selection` applied, as the views get it (the window
    /// known before the samples, so it cuts exactly, as `--start-sec`/`--stop-sec` do).
    pub fn snapshot_with(list: &SampleList, selection: Selection, markers: PhaseMarkers) -> Snapshot {
        let mut engine = Engine::new(EngineOptions::batch(selection));
        let mut updates = vec![Update::Markers(markers)];
        updates.extend(updates_of(list));
        engine.apply(updates);
        engine.finish();
        engine.builder.wants = Wants::ALL;
        engine.snapshot()
    }
}
