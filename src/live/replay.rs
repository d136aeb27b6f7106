//! A recorded session (`session.db`) as a model source: `perfscope open session.db` loads
//! it into the model once, so the views show what the live run showed.

use std::path::Path;

use crate::export::report::InputInfo;
use crate::export::stats::SourceFacts;
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
    state.stats.source = session.path.display().to_string();
    state.stats.lost = session.lost_total();
    state.stats.finished = true;
    // A recorded QEMU run keeps the plugin's summary as `plugin.*` meta.
    state.plugin_summary = session
        .meta
        .iter()
        .filter_map(|(k, v)| Some((k.strip_prefix("plugin.")?.to_string(), v.clone())))
        .collect();
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
