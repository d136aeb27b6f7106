//! Headless is the engine run to the end: a feed's updates go through the same engine as
//! in the TUI — the same slices, the same builder, the same export bridge — until the feed
//! finishes or a signal asks to stop; sinks watch the updates go by (the guest console on
//! stdout, perf-prof's interval tables) and the artifacts are written at the end.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use anyhow::Context;

use crate::engine::export::ExportRequest;
use crate::engine::{Engine, EngineOptions};
use crate::export::artifacts::ArtifactSet;
use crate::feeds::{Feed, FeedStatus, Update};
use crate::model::{Finding, Gap, Selection};
use crate::store::Recorder;

use super::progress::Progress;

/// How long an idle feed is left alone between polls.
const IDLE: Duration = Duration::from_millis(20);

/// Something that watches a headless run: it sees each batch before the engine applies
/// it, and the engine after.
pub trait Sink {
    /// A batch the engine is about to apply.
    fn updates(&mut self, _updates: &[Update]) {}

    /// The engine after a batch (or, with `finished`, after the last one).
    fn applied(&mut self, _engine: &Engine, _finished: bool) -> anyhow::Result<()> {
        Ok(())
    }

    /// SIGUSR2 (perf-prof dumps its state on it): show what this interval holds so far.
    fn dump(&mut self, _engine: &Engine) -> anyhow::Result<()> {
        Ok(())
    }
}

/// A flag raised by SIGINT, SIGTERM or SIGHUP: a headless run stops cleanly and still
/// writes what it recorded.
/// Installed once per process: a command calls it before its (maybe slow) start so a
/// signal during the start stops it cleanly too, and the run's loop reads the same flag.
/// The flag is the process's one (`crate::stop`): a wait on a FIFO or a pipe heeds it too.
pub fn stop_on_signals() -> anyhow::Result<Arc<AtomicBool>> {
    static INSTALLED: OnceLock<()> = OnceLock::new();
    let stop = crate::stop::flag();
    if INSTALLED.get().is_none() {
        for signal in [
            signal_hook::consts::SIGINT,
            signal_hook::consts::SIGTERM,
            signal_hook::consts::SIGHUP,
        ] {
            signal_hook::flag::register(signal, stop.clone()).context("cannot install signal handlers")?;
        }
        let _ = INSTALLED.set(());
    }
    Ok(stop.clone())
}

/// A flag raised by SIGUSR2. perf-prof's scripts (and its test harness) send it before
/// SIGINT to have the state dumped; its default action would kill the run.
/// Installed once per process, as [`stop_on_signals`].
pub fn dump_on_sigusr2() -> anyhow::Result<Arc<AtomicBool>> {
    static DUMP: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    if let Some(dump) = DUMP.get() {
        return Ok(dump.clone());
    }
    let dump = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register(signal_hook::consts::SIGUSR2, dump.clone())
        .context("cannot install the SIGUSR2 handler")?;
    Ok(DUMP.get_or_init(|| dump).clone())
}

/// What a headless run is asked to do.
pub struct Headless {
    pub selection: Selection,
    /// Write the artifact set at the end.
    pub export: Option<ExportRequest>,
    /// `--record`.
    pub recording: Option<Recorder>,
    /// Show a progress bar while a file is decoded (`what` it says).
    pub progress: Option<&'static str>,
}

/// How a headless run ended.
pub struct Outcome {
    pub engine: Engine,
    pub exported: Option<ArtifactSet>,
    /// The feed failed; what it had handed over is exported anyway.
    pub error: Option<String>,
    /// A signal ended the run.
    pub interrupted: bool,
}

/// Run `feed` to its end through an engine, with `sinks` watching; then export.
pub fn run(
    mut feed: Box<dyn Feed>,
    options: Headless,
    sinks: &mut [&mut dyn Sink],
) -> anyhow::Result<Outcome> {
    let stop = stop_on_signals()?;
    let dump = dump_on_sigusr2()?;
    let mut engine = Engine::new(EngineOptions {
        recording: options.recording,
        ..EngineOptions::headless(options.selection, feed.is_live())
    });
    let mut progress: Option<Progress> = None;
    let mut stopping: Option<Instant> = None;
    let mut error = None;
    let mut updates = Vec::new();
    loop {
        if dump.swap(false, Ordering::Relaxed) {
            for sink in sinks.iter_mut() {
                sink.dump(&engine)?;
            }
        }
        if stop.load(Ordering::Relaxed) && stopping.is_none() {
            // Silently: stderr is for errors and lost events (what was recorded is still
            // written, and the exit code says whether anything is missing).
            stopping = Some(Instant::now());
            feed.stop();
        }
        let status = feed.poll(&mut updates);
        if !updates.is_empty() {
            for sink in sinks.iter_mut() {
                sink.updates(&updates);
            }
            engine.apply(std::mem::take(&mut updates));
        }
        // Every turn, updates or not: a sink's clock (an interval's table, a folded
        // section) must not wait for the source to say something.
        for sink in sinks.iter_mut() {
            sink.applied(&engine, false)?;
        }
        if let (Some(what), Some((done, total))) = (options.progress, feed.progress()) {
            progress
                .get_or_insert_with(|| Progress::new(what, total))
                .update(done);
        }
        // Busy or idle: a source still handing over past its grace is left (a signal ends
        // the run within about 2 s, whatever the source holds).
        let grace = feed.stop_grace();
        if matches!(status, Ok(FeedStatus::Progress | FeedStatus::Idle))
            && stopping.is_some_and(|t| t.elapsed() > grace)
        {
            engine.note(Finding::stopped_late(grace));
            break;
        }
        match status {
            Ok(FeedStatus::Finished) => break,
            Ok(FeedStatus::Progress) => {}
            Ok(FeedStatus::Idle) => std::thread::sleep(IDLE),
            Err(e) => {
                // Keep what was recorded: export it with the reason.
                let text = format!("{e:#}");
                engine.note(Finding::new(Gap::SourceFailed, None, text.clone()));
                error = Some(text);
                break;
            }
        }
    }
    drop(progress);
    if stopping.is_some() && feed.is_recorded() && error.is_none() {
        // A recorded input ends where it ends; a signal before that cut it short.
        engine.note(Finding::new(
            Gap::Interrupted,
            None,
            "a signal stopped the run before the input was read to its end",
        ));
    }
    engine.finish();
    for sink in sinks.iter_mut() {
        sink.applied(&engine, true)?;
    }
    // A source that failed before handing anything over has nothing to export (the
    // verdict says so: exit 1).
    let exported = match &options.export {
        Some(request) => engine.export_at_end(request).transpose()?,
        None => None,
    };
    Ok(Outcome {
        engine,
        exported,
        error,
        interrupted: stopping.is_some(),
    })
}

/// Say on stderr what the source waits for (the guest's shell prompt): after 2 s, then
/// every 10 s, so a run that waits in silence says why and what to set.
#[derive(Default)]
pub struct WaitingNotice {
    told_at_secs: Option<u64>,
}

impl Sink for WaitingNotice {
    fn updates(&mut self, updates: &[Update]) {
        for update in updates {
            if let Update::Waiting(Some(w)) = update {
                let secs = w.elapsed.as_secs();
                let due = match self.told_at_secs {
                    None => secs >= 2,
                    Some(told) => secs >= told + 10,
                };
                if due {
                    self.told_at_secs = Some(secs);
                    crate::stdio::say(&format!("perfscope: {}", w.text()));
                }
            }
        }
    }
}

/// Echo the guest console to stdout as lines complete (the reference harness does).
#[derive(Default)]
pub struct ConsoleEcho {
    printed: usize,
}

impl Sink for ConsoleEcho {
    fn applied(&mut self, engine: &Engine, _finished: bool) -> anyhow::Result<()> {
        let console = &engine.state.console;
        if console.len() > self.printed {
            let mut text = String::new();
            for (_, line) in console.lines_from(self.printed) {
                // A guest's console may print anything; the terminal gets it as text.
                text.push_str(&crate::model::text::escape_controls(&line.text));
                text.push('\n');
            }
            crate::stdio::print(&text)?;
            self.printed = console.len();
        }
        Ok(())
    }
}
