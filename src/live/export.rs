//! Export from the live view: the same artifact set `perfscope report` writes, of what the
//! views show — the reset point, the instance, the window and the focus applied.

use std::path::PathBuf;

use serde_json::json;

use crate::export::artifacts::{
    self, ArtifactOptions, ArtifactSet, ArtifactSource, FlamegraphKind, StackFormat,
};
use crate::model::{PhaseMarkers, WindowInfo};

use super::build::SnapshotBuilder;
use super::state::ModelState;

/// Where and how to export.
#[derive(Clone, Debug)]
pub struct ExportRequest {
    pub out_dir: PathBuf,
    /// Architecture directory under `perf/` (`unknown` when the source does not say).
    pub arch: Option<String>,
}

/// Write the artifact set of what `builder` selects in `state`.
pub fn export_view(
    state: &ModelState,
    builder: &SnapshotBuilder,
    request: &ExportRequest,
) -> anyhow::Result<ArtifactSet> {
    let base = builder.base_index;
    let instance = builder.selection.instance;
    let profile = state
        .profile
        .with_samples(|i, s| i >= base && instance.is_none_or(|id| id == s.instance));
    let window = builder.effective_window(&state.profile);
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
    let secs = |ns: Option<u64>| ns.map(|n| n as f64 / 1e9);
    // The run's own window facts (markers, timeouts) apply unless the view chose another.
    let window_info = match (&state.window, window.is_all()) {
        (Some(w), true) => w.clone(),
        _ => {
            let mut w = WindowInfo::from_seconds(secs(markers.start_ns), secs(markers.stop_ns));
            if !window.is_all() {
                w.method = "tui_selection".into();
            }
            w
        }
    };
    let mut warnings = state.warnings.clone();
    if let super::snapshot::LiveMode::Decay { factor } = builder.mode {
        warnings.push(format!(
            "the view was in decay mode (×{factor}); exported weights are undecayed sample counts"
        ));
    }
    if base > 0 {
        warnings.push(format!("{base} samples before the last reset were left out"));
    }
    let arch = request
        .arch
        .clone()
        .or_else(|| profile.info.arch.clone())
        .unwrap_or_else(|| "unknown".into());
    let options = ArtifactOptions {
        out_dir: request.out_dir.clone(),
        arch,
        format: StackFormat::All,
        flamegraph_kind: FlamegraphKind::Svg,
        focus: builder.selection.focus.clone(),
        markers,
        window: window_info,
        min_percent: 0.3,
        top: 80,
        parameters: json!({
            "exported_from": "tui",
            "mode": builder.mode.label(),
            "focus": builder.selection.focus.as_ref().map(|f| f.pattern().to_string()),
            "instance": instance.map(|id| state.profile.instance_info(id).label.clone()),
            "start_ns": markers.start_ns,
            "stop_ns": markers.stop_ns,
            "reset_samples_excluded": base,
        }),
        title: "perfscope Flame Graph".into(),
    };
    let source = ArtifactSource {
        profile: &profile,
        facts: &state.facts,
        input: state.input.clone(),
        plugin_summary: state.plugin_summary.clone(),
        warnings,
    };
    let mut set = artifacts::write_all(source, &options)?;
    for (name, bytes) in &state.extra_files {
        let path = set.layout.qperf_dir.join(name);
        std::fs::write(&path, bytes).map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
        set.files.push((name.clone(), path));
    }
    Ok(set)
}
