//! The export bridge: the same artifact set `perfscope report` writes, of what the views
//! show — the reset point, the instance, the window, the focus, the analysis — for every
//! kind of session.

use std::path::PathBuf;

use anyhow::Context;
use serde_json::json;

use crate::export::artifacts::{self, ArtifactOptions, ArtifactSet, ArtifactSource, ArtifactTarget};
use crate::export::offenders::OffenderSource;
use crate::model::analysis::AnalysisSnapshot;
use crate::model::{PhaseMarkers, Target, WindowInfo};

use super::Engine;
use super::snapshot::LiveMode;

/// Where and how to export.
#[derive(Clone, Debug)]
pub struct ExportRequest {
    pub out_dir: PathBuf,
    /// Architecture directory under `perf/` (`unknown` when the source does not say).
    pub arch: Option<String>,
    /// Formats, limits, title (`--format`, `--min-percent`, `--top`, …).
    pub artifacts: ArtifactOptions,
}

impl ExportRequest {
    /// The default artifact set into `out_dir`.
    pub fn new(out_dir: PathBuf) -> Self {
        Self {
            out_dir,
            arch: None,
            artifacts: ArtifactOptions::default(),
        }
    }
}

impl Engine {
    /// The export a session writes when it ends (headless or in the TUI, after a clean end,
    /// a stop or a failed source alike): what was recorded is written with its verdict,
    /// unless the source failed before handing anything over — then there is nothing to
    /// write and the verdict says so (exit 1).
    pub fn export_at_end(&self, request: &ExportRequest) -> Option<anyhow::Result<ArtifactSet>> {
        self.verdict().failed().is_none().then(|| self.export(request))
    }

    /// Write the artifact set of what the views select right now.
    pub fn export(&self, request: &ExportRequest) -> anyhow::Result<ArtifactSet> {
        let state = &self.state;
        let builder = &self.builder;
        let window = builder.effective_window(state);
        // A window chosen in the view replaces the source's markers; otherwise the markers
        // cut boot / workload / post as the batch report does.
        let markers = if window.is_all() {
            state.markers
        } else {
            PhaseMarkers {
                start_ns: window.start_ns,
                stop_ns: window.stop_ns,
            }
        };
        let secs = |ns: Option<u64>| ns.map(|n| n.saturating_sub(state.time_origin_ns) as f64 / 1e9);
        // The run's own window facts (markers, timeout, how QEMU was stopped) always go
        // along; a window the view chose (other than the markers' own) replaces only the
        // times, and says so.
        let own_window = window.is_all()
            || (window.start_ns == state.markers.start_ns && window.stop_ns == state.markers.stop_ns);
        let window_info = match (&state.provenance.window, own_window) {
            (Some(w), true) => w.clone(),
            (run, _) => {
                let mut w = run.clone().unwrap_or_default();
                let chosen = WindowInfo::from_seconds(secs(markers.start_ns), secs(markers.stop_ns));
                w.enabled |= chosen.enabled;
                w.start_time = chosen.start_time;
                w.stop_time = chosen.stop_time;
                w.method = if own_window {
                    chosen.method
                } else {
                    "tui_selection".into()
                };
                w
            }
        };
        let mut warnings = state.provenance.warnings.clone();
        if let LiveMode::Decay { factor } = builder.mode {
            warnings.push(format!(
                "the view was in decay mode (×{factor}); exported weights are undecayed counts"
            ));
        }
        if let Some(reset) = builder.reset_ns {
            warnings.push(format!(
                "only data after the reset at {:.3} s is exported",
                reset.saturating_sub(state.time_origin_ns) as f64 / 1e9
            ));
        }
        let instance = builder.selection.instance;
        let arch = request
            .arch
            .clone()
            .or_else(|| state.tables.info.arch.clone())
            .unwrap_or_else(|| "unknown".into());
        let mut options = request.artifacts.clone();
        if options.focus.is_none() {
            options.focus = builder.selection.focus.clone();
        }
        let mut parameters = json!({
            "exported_from": "live",
            "live_mode": builder.mode.label(),
            "focus": options.focus.as_ref().map(|f| f.pattern().to_string()),
            "instance": instance.map(|id| state.tables.instance_info(id).label.clone()),
            "start_ns": markers.start_ns,
            "stop_ns": markers.stop_ns,
            "reset_ns": builder.reset_ns,
        });
        if let (Some(extra), Some(map)) = (options.parameters.as_object(), parameters.as_object_mut()) {
            for (k, v) in extra {
                map.insert(k.clone(), v.clone());
            }
        }
        options.parameters = parameters;
        // The analysis of the same selection (the window and reset apply to it as to samples).
        let analysis = state.analysis.as_ref().map(|info| {
            let (rows, events) = builder.analysis_in(state, &window);
            AnalysisSnapshot {
                info: info.clone(),
                rows,
                events,
            }
        });
        // What the Tables view's offender pane and the Latency view's heatmap show: the
        // offenders of the whole session (the pane lists them all), the heatmap of the window.
        let offenders = state
            .analysis
            .as_ref()
            .filter(|_| !state.offenders.is_empty() || state.offenders_dropped > 0)
            .map(|_| OffenderSource {
                pairs: &state.offenders,
                dropped: state.offenders_dropped,
                layouts: state.event_format.as_ref().map_or(&[], |f| f.layouts.as_slice()),
                printer: state.event_format.as_ref().map(|f| &f.printer),
                live_clock_offset_ns: state.live_clock_offset_ns,
            });
        let heatmap = super::heatmap::latency_heatmap(state, &window);
        // Facts a live source does not keep itself: what arrived, and when.
        let mut facts = state.provenance.facts.clone();
        facts.unwind_stops = state.stats.unwind_stops;
        facts.callchain = state.stats.callchain.clone();
        if facts.raw_records == 0 {
            facts.raw_records = state.stats.samples;
        }
        if facts.first_sample_ns.is_none()
            && let Some((first, last)) = state.store.sample_time_range()
        {
            facts.first_sample_ns = Some(first);
            facts.last_sample_ns = Some(last);
        }
        let source = ArtifactSource {
            samples: state,
            instance,
            facts: &facts,
            input: state.provenance.input.clone(),
            plugin_summary: state.provenance.plugin_summary.clone(),
            warnings,
            analysis,
            offenders,
            heatmap,
            threads: &state.threads,
            extra_files: &state.provenance.extra_files,
            target: Target::of(&state.provenance.source_kind, &state.provenance.input.kind),
            verdict: self.verdict(),
        };
        let target = ArtifactTarget {
            out_dir: &request.out_dir,
            arch: &arch,
            markers,
            window: window_info,
        };
        artifacts::write_all(source, &options, target)
            .with_context(|| format!("cannot export to {}", request.out_dir.display()))
    }
}
