//! A tracepoint analyzer (`syscalls`, `rundelay`, `multi-trace`, `top -e`) as a feed: the
//! session runs on its own reader thread, feeding the analyzer as records arrive, and hands
//! its typed rows (per cell of event time), thread names and lost counts to the engine
//! every few milliseconds.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TryRecvError, TrySendError, sync_channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::Context;

use crate::analyzers::options::TraceOptions;
use crate::feeds::{Feed, FeedStatus, Update};
use crate::model::{Finding, Gap, InputInfo};

use super::options::HostRunOptions;
use super::tracing::{TraceCounters, TraceSession};

const POLL: Duration = Duration::from_millis(100);

/// How often the reader hands its updates over, at most. A busy session drains its rings
/// thousands of times a second; a batch per drain filled the channel between two polls of
/// the engine, and the reader then waited for it while the rings overflowed.
const SEND_EVERY: Duration = Duration::from_millis(10);

/// Updates the engine has not taken yet, before the reader waits for it: a stalled engine
/// slows the reader (and the kernel counts what it loses) rather than queuing without end.
const MAX_UNSENT: usize = 65_536;

/// What the reader thread sends.
enum Batch {
    Updates(Vec<Update>, TraceCounters),
    /// The session ended; `Some` with the error that ended it.
    Done(Option<String>, TraceCounters),
}

/// The reader's side of the channel: updates gathered and sent every [`SEND_EVERY`], never
/// waiting for the engine unless [`MAX_UNSENT`] of them are pending.
struct Outbox {
    tx: SyncSender<Batch>,
    unsent: Vec<Update>,
    sent_at: Instant,
}

impl Outbox {
    fn new(tx: SyncSender<Batch>) -> Outbox {
        Outbox {
            tx,
            unsent: Vec::new(),
            sent_at: Instant::now(),
        }
    }

    /// Gather `updates`; send what is gathered when it is time. False once the engine
    /// is gone.
    fn offer(&mut self, updates: Vec<Update>, counters: TraceCounters) -> bool {
        self.unsent.extend(updates);
        if self.unsent.is_empty() || self.sent_at.elapsed() < SEND_EVERY {
            return true;
        }
        let must_wait = self.unsent.len() >= MAX_UNSENT;
        let batch = Batch::Updates(std::mem::take(&mut self.unsent), counters);
        let delivered = if must_wait {
            self.tx.send(batch).is_ok()
        } else {
            match self.tx.try_send(batch) {
                Ok(()) => true,
                // The engine is behind: keep them (the rings come first), try again soon.
                Err(TrySendError::Full(Batch::Updates(updates, _))) => {
                    self.unsent = updates;
                    return true;
                }
                Err(_) => false,
            }
        };
        self.sent_at = Instant::now();
        delivered
    }

    /// The last updates, then the end (waiting for the engine: nothing is read any more).
    fn close(mut self, updates: Vec<Update>, error: Option<String>, counters: TraceCounters) {
        self.unsent.extend(updates);
        let _ = self
            .tx
            .send(Batch::Updates(std::mem::take(&mut self.unsent), counters));
        let _ = self.tx.send(Batch::Done(error, counters));
    }
}

pub struct HostTraceFeed {
    batches: Receiver<Batch>,
    stop: Arc<AtomicBool>,
    /// Raised when the feed is dropped: the reading thread stops analyzing and ends.
    abandon: Arc<AtomicBool>,
    /// The session's start, handed over at the first poll.
    start: Vec<Update>,
    thread: Option<JoinHandle<()>>,
    counters: TraceCounters,
    done: bool,
}

impl HostTraceFeed {
    /// Open the events (errors surface here, before any view starts) and start reading.
    pub fn start(run: &HostRunOptions, trace: &TraceOptions) -> anyhow::Result<HostTraceFeed> {
        let mut session = TraceSession::open(run, trace)?;
        let abandon = session.abandon.clone();
        // Said at the first poll, whatever the reading thread is busy with.
        let start = session.take_start();
        let stop = Arc::new(AtomicBool::new(false));
        // A deadline past what the clock can count is no deadline (the command line
        // bounds --duration; a library caller may not).
        let deadline = run.duration.and_then(|d| Instant::now().checked_add(d));
        // Bounded, as the reader's unsent updates are (see [`Outbox`]).
        let (tx, rx) = sync_channel(256);
        let stop_in = stop.clone();
        let realtime = run.ring.realtime;
        let thread = std::thread::Builder::new()
            .name("perfscope-tracer".into())
            .spawn(move || {
                crate::sources::prompt_wakeup::realtime_reader(realtime);
                let mut outbox = Outbox::new(tx);
                let error = loop {
                    if stop_in.load(Ordering::Relaxed) || deadline.is_some_and(|d| Instant::now() >= d) {
                        session.finish();
                        break session.take_failure().map(|e| format!("{e:#}"));
                    }
                    let running = match session.pump(POLL) {
                        Ok(running) => running,
                        Err(e) => break Some(format!("{e:#}")),
                    };
                    if let Some(e) = session.take_failure() {
                        break Some(format!("{e:#}"));
                    }
                    if !outbox.offer(session.take_updates(), session.counters) {
                        return;
                    }
                    if !running {
                        break None;
                    }
                };
                outbox.close(session.take_updates(), error, session.counters);
            })
            .context("cannot start the tracing thread")?;
        Ok(HostTraceFeed {
            batches: rx,
            start,
            abandon,
            stop,
            thread: Some(thread),
            counters: TraceCounters::default(),
            done: false,
        })
    }

    /// The session's counters as last reported.
    pub fn counters(&self) -> TraceCounters {
        self.counters
    }

    fn input(&self, end: String, clean: bool) -> Update {
        Update::Input(InputInfo {
            kind: "perf_event".into(),
            path: "tracepoints".into(),
            format: None,
            records: self.counters.events,
            bytes_read: 0,
            end,
            clean,
            bytes_lost: 0,
        })
    }
}

impl Feed for HostTraceFeed {
    fn poll(&mut self, out: &mut Vec<Update>) -> anyhow::Result<FeedStatus> {
        if self.done {
            return Ok(FeedStatus::Finished);
        }
        let mut progress = !self.start.is_empty();
        out.append(&mut self.start);
        loop {
            match self.batches.try_recv() {
                Ok(Batch::Updates(updates, counters)) => {
                    out.extend(updates);
                    self.counters = counters;
                    progress = true;
                }
                Ok(Batch::Done(error, counters)) => {
                    self.counters = counters;
                    if counters.filtered > 0 {
                        out.push(Update::Warning(format!(
                            "{} events were dropped by user-space filters",
                            counters.filtered
                        )));
                    }
                    match error {
                        Some(e) => {
                            out.push(Update::Finding(Finding::new(
                                Gap::SourceFailed,
                                None,
                                format!("tracing stopped: {e}"),
                            )));
                            out.push(self.input(format!("tracing stopped: {e}"), false));
                        }
                        None => out.push(self.input("session ended".into(), true)),
                    }
                    self.done = true;
                    return Ok(FeedStatus::Finished);
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    out.push(self.input("the tracing thread ended without a word".into(), false));
                    self.done = true;
                    return Ok(FeedStatus::Finished);
                }
            }
        }
        if progress {
            out.push(self.input("still tracing".into(), true));
            Ok(FeedStatus::Progress)
        } else {
            Ok(FeedStatus::Idle)
        }
    }

    fn stop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

impl Drop for HostTraceFeed {
    /// Whatever the thread still reads is no one's any more: it ends without analyzing it
    /// (closing the events and removing its probes), so a run ends within its grace.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.abandon.store(true, Ordering::Relaxed);
        while self.batches.try_recv().is_ok() {}
        if let Some(thread) = self.thread.take() {
            drop(std::mem::replace(&mut self.batches, sync_channel(1).1));
            let _ = thread.join();
        }
    }
}
