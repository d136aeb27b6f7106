//! Sources as the model thread sees them: something polled for new data that it moves
//! into the [`ModelState`]. A live source (QEMU, perf_event) reads on its own threads and
//! hands over what arrived; a file source loads once.

use std::path::PathBuf;

use anyhow::Context;

use crate::ingest::open::{Input, OpenOptions, open};
use crate::model::PhaseMarkers;

use super::state::ModelState;

/// What a poll did.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SourcePoll {
    /// Nothing new.
    Idle,
    /// New data was added.
    Progress,
    /// Nothing more will come.
    Finished,
}

/// A source of model data, polled by the model thread.
pub trait Source: Send {
    /// Move whatever arrived since the last poll into `state`.
    fn poll(&mut self, state: &mut ModelState) -> anyhow::Result<SourcePoll>;

    /// Bytes the user typed for the source (the guest console); ignored by default.
    fn send_input(&mut self, _bytes: &[u8]) {}

    /// The session ends: stop what runs (QEMU, perf events).
    fn stop(&mut self) {}
}

/// A recorded file (qperf.bin + ELF, folded), optionally with a console log beside it.
pub struct FileSource {
    input: Input,
    options: OpenOptions,
    console: Option<PathBuf>,
    markers: PhaseMarkers,
    done: bool,
}

impl FileSource {
    pub fn new(input: Input, options: OpenOptions, console: Option<PathBuf>, markers: PhaseMarkers) -> Self {
        Self {
            input,
            options,
            console,
            markers,
            done: false,
        }
    }
}

impl Source for FileSource {
    fn poll(&mut self, state: &mut ModelState) -> anyhow::Result<SourcePoll> {
        if self.done {
            return Ok(SourcePoll::Finished);
        }
        self.done = true;
        let opened = open(&self.input, &self.options, &mut |_, _| {})?;
        state.profile = opened.profile;
        state.facts = opened.facts;
        state.input = opened.input;
        state.plugin_summary = opened.plugin_summary.map(|s| s.entries).unwrap_or_default();
        state.warnings = opened.warnings;
        state.markers = self.markers;
        state.stats.source = state.input.path.clone();
        state.stats.finished = true;
        if let Some(path) = &self.console {
            let text =
                std::fs::read(path).with_context(|| format!("cannot read console log {}", path.display()))?;
            state.console.push_bytes(None, &text);
        }
        Ok(SourcePoll::Finished)
    }
}
