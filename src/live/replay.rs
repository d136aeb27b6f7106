//! A recorded session (`session.db`) as a model source: `perfscope open session.db` loads
//! it into the model once, so the views show what the live run showed.

use std::path::Path;

use crate::model::{InputInfo, SourceFacts, WindowInfo};
use crate::store::{RecordedSession, StoreError, open_session};

use super::source::{Source, SourcePoll};
use super::state::ModelState;

/// A session file, read when it is opened (so a bad file fails before any view or
/// export starts) and moved into the model on the first poll.
pub struct ReplaySource {
    session: Option<RecordedSession>,
}

impl ReplaySource {
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        Ok(Self {
            session: Some(open_session(path)?),
        })
    }
}

/// Move a read session into the model state.
pub fn load_into(session: RecordedSession, state: &mut ModelState) {
    let samples = session.profile.samples();
    let range = session.profile.time_range_ns();
    state.facts = SourceFacts {
        raw_records: samples.len() as u64,
        total_frames: samples.iter().map(|s| u64::from(s.meta.raw_depth)).sum(),
        first_sample_ns: range.map(|r| r.0),
        last_sample_ns: range.map(|r| r.1),
        ..SourceFacts::default()
    };
    let bytes = std::fs::metadata(&session.path).map(|m| m.len()).unwrap_or(0);
    state.input = InputInfo {
        kind: "session".into(),
        path: session.path.display().to_string(),
        format: Some(format!("v{}", crate::store::schema::SCHEMA_VERSION)),
        records: samples.len() as u64,
        bytes_read: bytes,
        end: "recorded session".into(),
        clean: true,
        bytes_lost: 0,
    };
    state.markers = session.phase_markers();
    state.time_origin_ns = session
        .meta
        .get(super::host::TIME_ORIGIN_META)
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    state.stats.source = session.path.display().to_string();
    state.stats.lost = session.lost_total();
    state.stats.finished = true;
    // A recorded QEMU run keeps the plugin's summary as `plugin.*` meta.
    state.plugin_summary = session
        .meta
        .iter()
        .filter_map(|(k, v)| Some((k.strip_prefix("plugin.")?.to_string(), v.clone())))
        .collect();
    state.window = session.meta.get("window_json").and_then(|j| window_from_json(j));
    // A host tracepoint session: run its analysis again over the recorded events.
    match crate::live::host::replay::replay_trace(&session) {
        Ok(Some(replayed)) => {
            state.histograms = replayed.series;
            state.tables = replayed.tables;
            state.stats.events = replayed.events as u64;
            state.event_timeline = Some(replayed.timeline);
        }
        Ok(None) => {}
        Err(e) => state
            .warnings
            .push(format!("the recorded analysis could not be replayed: {e:#}")),
    }
    state.console = session.console;
    state.profile = session.profile;
}

impl Source for ReplaySource {
    fn poll(&mut self, state: &mut ModelState) -> anyhow::Result<SourcePoll> {
        if let Some(session) = self.session.take() {
            load_into(session, state);
        }
        Ok(SourcePoll::Finished)
    }
}

/// The run's window facts as `WindowInfo::to_json` wrote them into `meta.window_json`.
fn window_from_json(text: &str) -> Option<WindowInfo> {
    let v: serde_json::Value = serde_json::from_str(text).ok()?;
    let text = |k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_string);
    let number = |k: &str| v.get(k).and_then(|x| x.as_f64());
    let count = |k: &str| v.get(k).and_then(|x| x.as_u64());
    let flag = |k: &str| v.get(k).and_then(|x| x.as_bool()).unwrap_or(false);
    Some(WindowInfo {
        enabled: flag("enabled"),
        start_marker: text("start_marker"),
        stop_marker: text("stop_marker"),
        start_time: number("start_time"),
        stop_time: number("stop_time"),
        workload_timeout: number("workload_timeout"),
        truncated_by_timeout: flag("truncated_by_timeout"),
        stop_requested: flag("stop_requested"),
        stop_method: text("stop_method"),
        warnings: v
            .get("warnings")?
            .as_array()?
            .iter()
            .filter_map(|w| w.as_str().map(str::to_string))
            .collect(),
        method: text("method").unwrap_or_default(),
        boot_samples_excluded: count("boot_samples_excluded"),
        post_window_samples_excluded: count("post_window_samples_excluded"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_facts_round_trip_through_their_json() {
        let w = WindowInfo {
            enabled: true,
            start_marker: Some("BENCH_START".into()),
            stop_marker: None,
            start_time: Some(1.25),
            stop_time: Some(3.5),
            workload_timeout: Some(10.0),
            truncated_by_timeout: true,
            stop_requested: true,
            stop_method: Some("qmp_quit".into()),
            warnings: vec!["late".into()],
            method: "elapsed_ns_window".into(),
            boot_samples_excluded: Some(4),
            post_window_samples_excluded: None,
        };
        assert_eq!(window_from_json(&w.to_json().to_string()), Some(w));
        assert_eq!(window_from_json("[]"), None);
    }
}
