//! The model thread of a live session: polls the feed, applies its updates, takes commands
//! from the UI, and publishes a new snapshot at each refresh when something changed. All
//! heavy work (tries, merges) happens here, never on the UI thread.

use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::export::artifacts::ArtifactSet;
use crate::feeds::{Feed, FeedStatus};
use crate::model::aggregate::Wants;
use crate::model::{Finding, Gap, Selection, Verdict};

use super::export::ExportRequest;
use super::snapshot::{LiveMode, Snapshot};
use super::{Engine, EngineOptions};

/// How often an idle live feed is polled.
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
    /// The feed failed; what was recorded so far stays shown.
    SourceFailed(String),
    /// The model thread has shut down: the session's final verdict (the exit code).
    Finished(Verdict),
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
pub struct ModelOptions {
    pub engine: EngineOptions,
    /// Write the artifacts when the feed finishes (a QEMU run), or at shutdown after
    /// stopping the feed.
    pub export_on_finish: Option<ExportRequest>,
}

/// Start the model thread over `feed`; `emit` delivers its events to the UI.
pub fn spawn(
    feed: Box<dyn Feed>,
    options: ModelOptions,
    emit: impl Fn(ModelEvent) + Send + 'static,
) -> std::io::Result<ModelHandle> {
    let (commands, inbox) = channel();
    let thread = std::thread::Builder::new()
        .name("perfscope-model".into())
        .spawn(move || {
            let mut model = ModelThread::new(feed, options);
            model.run(&inbox, &emit);
        })?;
    Ok(ModelHandle {
        commands,
        thread: Some(thread),
    })
}

/// Samples per second over about the last second, for the status line.
#[derive(Default)]
struct Rate {
    mark: Option<(Instant, u64)>,
    smoothed: f64,
}

impl Rate {
    fn update(&mut self, samples: u64) -> f64 {
        let now = Instant::now();
        match self.mark {
            None => self.mark = Some((now, samples)),
            Some((since, before)) => {
                let elapsed = since.elapsed().as_secs_f64();
                if elapsed >= 1.0 {
                    self.smoothed = samples.saturating_sub(before) as f64 / elapsed;
                    self.mark = Some((now, samples));
                }
            }
        }
        self.smoothed
    }
}

struct ModelThread {
    feed: Box<dyn Feed>,
    feed_done: bool,
    engine: Engine,
    refresh: Duration,
    frozen: bool,
    /// Something changed since the last published snapshot.
    dirty: bool,
    last_publish: Option<Instant>,
    rate: Rate,
    export_on_finish: Option<ExportRequest>,
    updates: Vec<crate::feeds::Update>,
}

impl ModelThread {
    fn new(feed: Box<dyn Feed>, options: ModelOptions) -> Self {
        Self {
            feed,
            feed_done: false,
            refresh: options.engine.refresh,
            engine: Engine::new(options.engine),
            frozen: false,
            dirty: true,
            last_publish: None,
            rate: Rate::default(),
            export_on_finish: options.export_on_finish,
            updates: Vec::new(),
        }
    }

    /// Poll the feed once and apply what it handed over.
    fn poll_feed(&mut self, emit: &dyn Fn(ModelEvent)) {
        let status = self.feed.poll(&mut self.updates);
        if !self.updates.is_empty() {
            self.engine.apply(std::mem::take(&mut self.updates));
            self.dirty = true;
        }
        match status {
            Ok(FeedStatus::Idle | FeedStatus::Progress) => {}
            Ok(FeedStatus::Finished) => {
                self.feed_done = true;
                self.engine.finish();
                self.dirty = true;
                self.export_once(emit);
            }
            Err(e) => {
                self.feed_done = true;
                self.engine
                    .note(Finding::new(Gap::SourceFailed, None, format!("{e:#}")));
                self.engine.finish();
                self.dirty = true;
                emit(ModelEvent::SourceFailed(format!("{e:#}")));
            }
        }
    }

    fn run(&mut self, inbox: &Receiver<Command>, emit: &dyn Fn(ModelEvent)) {
        loop {
            if !self.feed_done {
                self.poll_feed(emit);
            }
            let due = self
                .last_publish
                .is_none_or(|t| t.elapsed() >= self.refresh || self.feed_done && self.dirty);
            // Decay and sliding windows change the picture as time passes, data or not.
            let moving = !matches!(self.engine.builder.mode, LiveMode::Accumulate) && !self.feed_done;
            if due && (self.dirty || moving) && !self.frozen {
                self.publish(emit);
            }
            let wait = if self.feed_done {
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

    /// Stop the feed, let it deliver what it still has (a QEMU run flushes at exit) when
    /// something keeps it (an export, a recording), write the artifacts if this session
    /// should, and tell the UI the final verdict.
    fn shut_down(&mut self, emit: &dyn Fn(ModelEvent)) {
        self.feed.stop();
        // Without an export or a recording nothing keeps what the source still holds: do
        // not wait for it, so quitting a live session is immediate.
        if self.export_on_finish.is_some() || self.engine.is_recording() {
            let grace = self.feed.stop_grace();
            let deadline = Instant::now() + grace;
            while !self.feed_done && Instant::now() < deadline {
                self.poll_feed(emit);
                if !self.feed_done {
                    std::thread::sleep(POLL_INTERVAL);
                }
            }
            if !self.feed_done {
                self.engine.note(Finding::stopped_late(grace));
                self.engine.finish();
            }
            self.export_once(emit);
        }
        if !self.feed_done && self.feed.is_recorded() {
            self.engine.note(Finding::new(
                Gap::Interrupted,
                None,
                "the session was quit before its input was read to its end",
            ));
        }
        emit(ModelEvent::Finished(self.engine.verdict()));
    }

    fn export_once(&mut self, emit: &dyn Fn(ModelEvent)) {
        if let Some(request) = self.export_on_finish.take()
            && let Some(result) = self.engine.export_at_end(&request)
        {
            emit(ModelEvent::Exported(result.map_err(|e| format!("{e:#}"))));
        }
    }

    /// Apply one command; `false` ends the thread.
    fn apply(&mut self, command: Command, emit: &dyn Fn(ModelEvent)) -> bool {
        match command {
            Command::Select(selection) => {
                self.engine.set_selection(selection);
                self.force_refresh();
            }
            Command::Mode(mode) => {
                self.engine.set_mode(mode);
                self.force_refresh();
            }
            Command::Freeze(frozen) => {
                self.frozen = frozen;
                self.force_refresh();
            }
            Command::Reset => {
                self.engine.reset();
                self.force_refresh();
            }
            Command::Wants(wants) => {
                if wants != self.engine.builder.wants {
                    self.engine.builder.wants = wants;
                    self.force_refresh();
                }
            }
            Command::RefreshInterval(d) => {
                self.refresh = d.max(Duration::from_millis(50));
                self.engine.builder.refresh = self.refresh;
            }
            Command::Export(request) => {
                let result = self.engine.export(&request).map_err(|e| format!("{e:#}"));
                emit(ModelEvent::Exported(result));
            }
            Command::Input(bytes) => self.feed.send_input(&bytes),
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
        let rate = self.rate.update(self.engine.state.stats.samples);
        self.engine.state.stats.samples_per_sec = if self.feed_done { 0.0 } else { rate };
        let snapshot = self.engine.snapshot();
        self.dirty = false;
        self.last_publish = Some(Instant::now());
        emit(ModelEvent::Snapshot(Arc::new(snapshot)));
    }
}
