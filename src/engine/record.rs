//! The recording sink: every update the engine applies is also written to the session
//! file (`--record`) — one place, whatever the feed. The engine's stacks and instances are
//! mapped to session ids once, so a sample costs one channel send.

use crate::feeds::{RecordOnly, Update};
use crate::model::{Sample, Verdict};
use crate::store::{InstanceRef, Recorder, StackRef};

use super::state::ModelState;

/// A recorder plus the id maps and what has been written of the growing state.
pub struct RecordingSink {
    recorder: Recorder,
    stacks: Vec<Option<StackRef>>,
    instances: Vec<Option<InstanceRef>>,
    /// Console lines written so far.
    console_lines: usize,
    /// A console update arrived: write the lines it completed after it is applied.
    console_pending: bool,
    markers: crate::model::PhaseMarkers,
    lost: u64,
    frequency_written: Option<u64>,
    info_written: bool,
    /// Event types declared so far (an event of another type is refused by the store).
    event_types: usize,
}

impl RecordingSink {
    pub fn new(recorder: Recorder) -> Self {
        Self {
            recorder,
            stacks: Vec::new(),
            instances: Vec::new(),
            console_lines: 0,
            console_pending: false,
            markers: Default::default(),
            lost: 0,
            frequency_written: None,
            info_written: false,
            event_types: 0,
        }
    }

    /// Write what `update` adds; `state` is the model just before it is applied (the
    /// tables a sample points into are there already: they come in earlier updates).
    pub fn record(&mut self, update: &Update, state: &ModelState) {
        self.catch_up(state);
        match update {
            Update::Start(start) => {
                self.recorder.meta("source_kind", &start.kind);
                self.recorder.meta("target", &start.target);
                self.recorder
                    .meta("time_origin_ns", &start.time_origin_ns.to_string());
                if let Some(options) = &start.options {
                    self.recorder.meta("session_options", &options.to_string());
                }
            }
            Update::Samples(samples) => {
                for sample in samples {
                    self.sample(sample, state);
                }
            }
            Update::Console { .. } => self.console_pending = true,
            Update::Markers(markers) => {
                if markers.start_ns != self.markers.start_ns && markers.start_ns.is_some() {
                    self.recorder.marker(markers.start_ns, "start", "start marker");
                }
                if markers.stop_ns != self.markers.stop_ns && markers.stop_ns.is_some() {
                    self.recorder.marker(markers.stop_ns, "stop", "stop marker");
                }
                self.markers = *markers;
            }
            Update::Lost { total, time_ns } if *total > self.lost => {
                self.recorder.lost(*time_ns, None, total - self.lost);
                self.lost = *total;
            }
            Update::Callchain(facts) => self
                .recorder
                .meta("callchain_choice", &facts.to_json().to_string()),
            Update::PluginSummary(entries) => {
                for (k, v) in entries {
                    self.recorder.meta(&format!("plugin.{k}"), v);
                }
            }
            Update::Window(window) => self.recorder.meta("window_json", &window.to_json().to_string()),
            Update::Record(RecordOnly::EventTypes(types)) => {
                for t in types {
                    self.recorder
                        .event_type(t.index, &t.layout, t.alias.as_deref(), t.filter.as_deref());
                    self.event_types = self.event_types.max(usize::from(t.index.0) + 1);
                }
            }
            Update::Record(RecordOnly::Events(events)) => {
                for event in events {
                    if usize::from(event.event.0) < self.event_types {
                        let _ = self.recorder.event(&event.as_event());
                    }
                }
            }
            Update::Record(RecordOnly::Symbols(symbols)) => {
                for s in symbols {
                    self.recorder.symbol(&s.module, s.address, &s.name, s.offset);
                }
            }
            Update::Record(RecordOnly::Meta(rows)) => {
                for (k, v) in rows {
                    self.recorder.meta(k, v);
                }
            }
            _ => {}
        }
    }

    /// What changed in the state since the last update: completed console lines, the
    /// profile's description (the frequency may be learnt late).
    fn catch_up(&mut self, state: &ModelState) {
        if self.console_pending {
            self.console_pending = false;
            for (_, line) in state.console.lines_from(self.console_lines) {
                self.recorder.console_line(line.time_ns, &line.text);
            }
            self.console_lines = state.console.len();
        }
        let info = &state.tables.info;
        if !self.info_written && !info.source.is_empty() {
            self.info_written = true;
            self.recorder.meta("profile.source", &info.source);
            if let Some(arch) = &info.arch {
                self.recorder.meta("arch", arch);
            }
            if let Some(binary) = &info.binary {
                self.recorder.meta("profile.binary", binary);
            }
        }
        if info.frequency_hz != self.frequency_written
            && let Some(hz) = info.frequency_hz
        {
            self.recorder.meta("profile.frequency_hz", &hz.to_string());
            self.frequency_written = Some(hz);
        }
    }

    fn sample(&mut self, sample: &Sample, state: &ModelState) {
        let tables = &state.tables;
        let s = sample.stack.index();
        if s >= tables.stacks.len() || sample.instance.index() >= tables.instances().len() {
            return;
        }
        if self.stacks.len() <= s {
            self.stacks.resize(s + 1, None);
        }
        let stack = match self.stacks[s] {
            Some(r) => r,
            None => {
                let frames: Vec<_> = tables
                    .stack_frames(sample.stack)
                    .map(|f| {
                        self.recorder.frame(
                            tables.frames.name(f),
                            tables.frames.origin(f),
                            tables.frames.file(f),
                        )
                    })
                    .collect();
                let r = self.recorder.stack(&frames);
                self.stacks[s] = Some(r);
                r
            }
        };
        let i = sample.instance.index();
        if self.instances.len() <= i {
            self.instances.resize(i + 1, None);
        }
        let instance = match self.instances[i] {
            Some(r) => r,
            None => {
                let r = self.recorder.instance(tables.instance_info(sample.instance));
                self.instances[i] = Some(r);
                r
            }
        };
        self.recorder
            .sample(sample.time_ns, instance, sample.weight, stack, &sample.meta);
    }

    /// Write what the state holds beyond the updates (the console's last lines).
    pub fn flush(&mut self, state: &ModelState) {
        self.console_pending = true;
        self.catch_up(state);
    }

    /// Rows the file did not get so far (the writer fell behind, or stopped), and why.
    pub fn shortfall(&mut self) -> Option<(u64, String)> {
        let dropped = self.recorder.dropped();
        let path = self.recorder.path().display().to_string();
        match self.recorder.writer_failure() {
            Some(e) => Some((
                dropped,
                format!("the session file {path} could not be written: {e}"),
            )),
            None if dropped > 0 => Some((
                dropped,
                format!("rows the session file {path} did not get (its writer fell behind)"),
            )),
            None => None,
        }
    }

    /// Store the session's verdict (its last row: a file without it did not finish) and
    /// close the file; the error says what went wrong.
    pub fn finish(mut self, verdict: &Verdict) -> Result<(), String> {
        self.recorder.verdict(verdict);
        let path = self.recorder.path().display().to_string();
        self.recorder
            .finish()
            .map(|_| ())
            .map_err(|e| format!("the session file {path} is incomplete: {e}"))
    }
}
