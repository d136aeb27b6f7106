//! The model thread: polls the source, takes commands from the UI, and publishes a new
//! snapshot at each refresh when something changed. All heavy work (decoding, symbols,
//! tries) happens here, never on the UI thread.

use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::export::artifacts::ArtifactSet;
use crate::model::Selection;

use super::build::{SnapshotBuilder, Wants};
use super::export::{ExportRequest, export_view};
use super::snapshot::{LiveMode, Snapshot};
use super::source::{Source, SourcePoll};
use super::state::ModelState;

/// How often an idle live source is polled.
const POLL_INTERVAL: Duration = Duration::from_millis(20);

/// What the UI asks of the model thread.
#[derive(Clone, Debug)]
pub enum Command {
    Select(Selection),
    Mode(LiveMode),
    Freeze(bool),
    Reset,
    Wants(Wants),
    RefreshInterval(Duration),
    Export(ExportRequest),
    /// Bytes typed for the source (the guest console).
    Input(Vec<u8>),
    Shutdown,
}

/// What the model thread tells the UI.
#[derive(Debug)]
pub enum ModelEvent {
    Snapshot(Arc<Snapshot>),
    Exported(Result<ArtifactSet, String>),
    /// The source failed; what was recorded so far stays shown.
    SourceFailed(String),
}

/// The UI's end of the model thread.
pub struct ModelHandle {
    commands: Sender<Command>,
    thread: Option<JoinHandle<()>>,
}

impl ModelHandle {
    /// Send a command; a stopped model thread is not an error for the UI.
    pub fn send(&self, command: Command) {
        let _ = self.commands.send(command);
    }
}

impl Drop for ModelHandle {
    fn drop(&mut self) {
        let _ = self.commands.send(Command::Shutdown);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Start options.
#[derive(Clone, Debug)]
pub struct ModelOptions {
    pub selection: Selection,
    pub mode: LiveMode,
    pub refresh: Duration,
    /// Write the artifacts when the source finishes (a QEMU run), or at shutdown after
    /// stopping the source.
    pub export_on_finish: Option<ExportRequest>,
}

/// Start the model thread over `source`; `emit` delivers its events to the UI.
pub fn spawn(
    source: Box<dyn Source>,
    options: ModelOptions,
    emit: impl Fn(ModelEvent) + Send + 'static,
) -> ModelHandle {
    let (commands, inbox) = channel();
    let thread = std::thread::Builder::new()
        .name("perfscope-model".into())
        .spawn(move || {
            let mut model = Model::new(source, options);
            model.run(&inbox, &emit);
        })
        .expect("spawn the model thread");
    ModelHandle {
        commands,
        thread: Some(thread),
    }
}

struct Model {
    source: Box<dyn Source>,
    source_done: bool,
    state: ModelState,
    builder: SnapshotBuilder,
    refresh: Duration,
    frozen: bool,
    /// Something changed since the last published snapshot.
    dirty: bool,
    last_publish: Option<Instant>,
    rate_mark: (Instant, usize),
    export_on_finish: Option<ExportRequest>,
}

impl Model {
    fn new(source: Box<dyn Source>, options: ModelOptions) -> Self {
        Self {
            source,
            source_done: false,
            state: ModelState::default(),
            builder: SnapshotBuilder::new(options.selection, options.mode),
            refresh: options.refresh,
            frozen: false,
            dirty: true,
            last_publish: None,
            rate_mark: (Instant::now(), 0),
            export_on_finish: options.export_on_finish,
        }
    }

    fn run(&mut self, inbox: &Receiver<Command>, emit: &dyn Fn(ModelEvent)) {
        loop {
            if !self.source_done {
                match self.source.poll(&mut self.state) {
                    Ok(SourcePoll::Idle) => {}
                    Ok(SourcePoll::Progress) => self.dirty = true,
                    Ok(SourcePoll::Finished) => {
                        self.source_done = true;
                        self.state.stats.finished = true;
                        self.dirty = true;
                        self.export_once(emit);
                    }
                    Err(e) => {
                        self.source_done = true;
                        self.state.stats.finished = true;
                        self.state.warnings.push(format!("source stopped: {e:#}"));
                        self.dirty = true;
                        emit(ModelEvent::SourceFailed(format!("{e:#}")));
                    }
                }
            }
            let due = self
                .last_publish
                .is_none_or(|t| t.elapsed() >= self.refresh || self.source_done && self.dirty);
            // Decay changes the picture at every refresh even without new samples.
            let decaying = matches!(self.builder.mode, LiveMode::Decay { .. }) && !self.source_done;
            if due && (self.dirty || decaying) && !self.frozen {
                self.publish(emit);
            }
            let wait = if self.source_done {
                Duration::from_secs(3600)
            } else {
                POLL_INTERVAL
            };
            let command = match inbox.recv_timeout(wait) {
                Ok(c) => c,
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => break,
            };
            if !self.apply(command, emit) {
                break;
            }
            // Commands come in bursts (keys held down): take them all before rebuilding.
            let mut shutdown = false;
            while let Ok(c) = inbox.try_recv() {
                if !self.apply(c, emit) {
                    shutdown = true;
                    break;
                }
            }
            if shutdown {
                break;
            }
        }
        self.shut_down(emit);
    }

    /// Stop the source, let it deliver what it still has (a QEMU run flushes at exit),
    /// and write the artifacts if this session should.
    fn shut_down(&mut self, emit: &dyn Fn(ModelEvent)) {
        self.source.stop();
        let deadline = Instant::now() + Duration::from_secs(20);
        while !self.source_done && Instant::now() < deadline {
            match self.source.poll(&mut self.state) {
                Ok(SourcePoll::Finished) | Err(_) => self.source_done = true,
                Ok(_) => std::thread::sleep(POLL_INTERVAL),
            }
        }
        self.export_once(emit);
    }

    fn export_once(&mut self, emit: &dyn Fn(ModelEvent)) {
        if let Some(request) = self.export_on_finish.take() {
            let result = export_view(&self.state, &self.builder, &request).map_err(|e| format!("{e:#}"));
            emit(ModelEvent::Exported(result));
        }
    }

    /// Apply one command; `false` ends the thread.
    fn apply(&mut self, command: Command, emit: &dyn Fn(ModelEvent)) -> bool {
        match command {
            Command::Select(selection) => {
                self.builder.set_selection(selection);
                self.force_refresh();
            }
            Command::Mode(mode) => {
                self.builder.set_mode(mode);
                self.force_refresh();
            }
            Command::Freeze(frozen) => {
                self.frozen = frozen;
                self.force_refresh();
            }
            Command::Reset => {
                self.builder.reset(self.state.profile.samples().len());
                self.force_refresh();
            }
            Command::Wants(wants) => {
                if wants != self.builder.wants {
                    self.builder.wants = wants;
                    self.force_refresh();
                }
            }
            Command::RefreshInterval(d) => self.refresh = d.max(Duration::from_millis(50)),
            Command::Export(request) => {
                let result = export_view(&self.state, &self.builder, &request).map_err(|e| format!("{e:#}"));
                emit(ModelEvent::Exported(result));
            }
            Command::Input(bytes) => self.source.send_input(&bytes),
            Command::Shutdown => return false,
        }
        true
    }

    /// Publish at the next loop turn, whatever the refresh interval says.
    fn force_refresh(&mut self) {
        self.dirty = true;
        self.last_publish = None;
    }

    fn publish(&mut self, emit: &dyn Fn(ModelEvent)) {
        let samples = self.state.profile.samples().len();
        let (since, before) = self.rate_mark;
        let elapsed = since.elapsed().as_secs_f64();
        if elapsed > 0.0 && !self.source_done {
            self.state.stats.samples_per_sec = (samples - before.min(samples)) as f64 / elapsed;
        } else if self.source_done {
            self.state.stats.samples_per_sec = 0.0;
        }
        self.rate_mark = (Instant::now(), samples);
        let snapshot = self.builder.build(&self.state);
        self.dirty = false;
        self.last_publish = Some(Instant::now());
        emit(ModelEvent::Snapshot(Arc::new(snapshot)));
    }
}
