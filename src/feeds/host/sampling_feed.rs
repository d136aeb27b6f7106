//! `perfscope top` / `profile` as a feed. Two threads along the road: the reader drains
//! the rings (never waiting on symbols), the resolver names and interns the addresses (a
//! first DWARF load can take a while) and hands over typed batches — new table entries,
//! then samples as ids — which the engine applies.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, TryRecvError, sync_channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::Context;

use crate::feeds::{Feed, FeedStatus, RecordOnly, SessionStart, Update};
use crate::model::verdict::SourceCounts;
use crate::model::{Finding, Gap, InputInfo, ProfileInfo};

use super::dwarf_stacks::{CopyRate, stack_copies};
use super::options::{HostRunOptions, SamplingOptions};
use super::raw::RawItem;
use super::sample_counters::SampleCounters;
use super::sample_resolver::SampleResolver;
use super::sampling::SampleSession;

/// How long the reader sleeps in poll(2) at most (also how soon it sees a stop).
const POLL: Duration = Duration::from_millis(100);

/// What the resolver thread sends.
enum Batch {
    Updates(Vec<Update>, SampleCounters),
    /// The session ended (duration, workload exit, error).
    Done(Option<String>),
}

pub struct HostSampleFeed {
    batches: Receiver<Batch>,
    stop: Arc<AtomicBool>,
    /// The ring reader: it owns the session (events, workload), so joining it on drop
    /// closes the events and stops the workload within one poll.
    reader: Option<JoinHandle<()>>,
    /// The resolver is never joined: it may be deep in a big file's DWARF, and what it
    /// still resolves has no reader once the feed is dropped. It ends at its next batch.
    resolver: Option<JoinHandle<()>>,
    start: Option<SessionStart>,
    /// What was opened: "cpu-clock", "cycles".
    event_name: String,
    records: u64,
    done: bool,
}

impl HostSampleFeed {
    /// Open the events (errors surface here, before any view starts) and start reading.
    pub fn start(run: &HostRunOptions, sampling: &SamplingOptions) -> anyhow::Result<HostSampleFeed> {
        let mut session = SampleSession::open(run, sampling)?;
        let label = format!("host {}", session.event_name);
        let event_name = session.event_name.clone();
        let started_ns = session.started_ns;
        let info = ProfileInfo {
            source: label.clone(),
            arch: Some(std::env::consts::ARCH.into()),
            binary: None,
            frequency_hz: Some(sampling.freq_hz),
        };
        let stop = Arc::new(AtomicBool::new(false));
        let threads = session.on_threads();
        // Raw batches may queue up while the resolver loads a big file's DWARF: the bound
        // is generous (each batch is one drain, ~100 ms of samples) so the reader keeps
        // draining the rings meanwhile; resolved batches are few and small.
        let (raw_tx, raw_rx) = sync_channel::<(Vec<RawItem>, SampleCounters, Option<Option<String>>)>(1024);
        let (tx, rx) = sync_channel(64);
        // A deadline past what the clock can count is no deadline (the command line
        // bounds --duration; a library caller may not).
        let deadline = run.duration.and_then(|d| Instant::now().checked_add(d));
        let stop_flag = stop.clone();
        let realtime = run.ring.realtime;
        let reader = std::thread::Builder::new()
            .name("perfscope-sampler".into())
            .spawn(move || {
                crate::sources::prompt_wakeup::realtime_reader(realtime);
                let reason = loop {
                    if stop_flag.load(Ordering::Relaxed) || deadline.is_some_and(|d| Instant::now() >= d) {
                        // What the rings and the time-order merge still hold is part of the run.
                        let mut items = Vec::new();
                        session.finish(&mut items);
                        let _ = raw_tx.send((items, session.counters, None));
                        break None;
                    }
                    let mut items = Vec::new();
                    match session.pump(POLL, &mut items) {
                        Ok(running) => {
                            if (!items.is_empty() || !running)
                                && raw_tx.send((items, session.counters, None)).is_err()
                            {
                                break None;
                            }
                            if !running {
                                break None;
                            }
                        }
                        Err(e) => break Some(format!("{e:#}")),
                    }
                };
                // try_send: a resolver that is far behind must not keep the session (and
                // the workload) alive; it then ends on the closed channel instead.
                let _ = raw_tx.try_send((Vec::new(), session.counters, Some(reason)));
            })
            .context("cannot start the sampling thread")?;
        // The kernel's symbols load (hundreds of ms) while the reader already drains the
        // rings: the events and the workload run from `open`, and with `--call-graph
        // dwarf` a ring fills in half a second.
        let mut resolver = match SampleResolver::new(sampling, threads, run.record.is_some(), info) {
            Ok(resolver) => resolver,
            Err(e) => {
                stop.store(true, Ordering::Relaxed);
                drop(raw_rx);
                let _ = reader.join();
                return Err(e);
            }
        };
        let stack_bytes = sampling.call_graph.stack_bytes().filter(|_| sampling.callchain);
        let thread = std::thread::Builder::new()
            .name("perfscope-resolver".into())
            .spawn(move || {
                let mut copy_rate = CopyRate::default();
                let mut said_counts = SourceCounts::default();
                for (items, counters, end) in raw_rx {
                    let mut samples = Vec::new();
                    resolver.resolve(items, &mut samples);
                    let mut updates = Vec::new();
                    let last_time = samples.last().and_then(|s| s.time_ns);
                    resolver.tables.hand_over(samples, &mut updates);
                    let lines = resolver.take_lines();
                    if !lines.is_empty() {
                        updates.push(Update::SampleLines(lines));
                    }
                    let learnt = resolver.take_learnt();
                    if !learnt.is_empty() {
                        updates.push(Update::Record(RecordOnly::Symbols(learnt)));
                    }
                    updates.push(Update::Lost {
                        total: counters.lost,
                        time_ns: last_time,
                    });
                    if counters.source != said_counts {
                        said_counts = counters.source;
                        updates.push(Update::Counts(said_counts));
                    }
                    if let Some(bytes) = stack_bytes {
                        let now = Instant::now();
                        let rate = copy_rate.note(now, counters.stack_bytes);
                        let elapsed_ns = crate::sources::clock::monotonic_ns().saturating_sub(started_ns);
                        let elapsed = Duration::from_nanos(elapsed_ns);
                        updates.push(Update::StackCopies(stack_copies(&counters, bytes, elapsed, rate)));
                    }
                    if tx.send(Batch::Updates(updates, counters)).is_err() {
                        break;
                    }
                    if let Some(reason) = end {
                        let _ = tx.send(Batch::Done(reason));
                        break;
                    }
                }
            })
            .context("cannot start the symbol resolver thread")?;
        let start = SessionStart {
            label: label.clone(),
            kind: "host".into(),
            target: run.target.describe(),
            time_origin_ns: started_ns,
            live_clock_offset_ns: Some(0),
            options: serde_json::to_value(sampling).ok(),
        };
        Ok(HostSampleFeed {
            batches: rx,
            stop,
            reader: Some(reader),
            resolver: Some(thread),
            start: Some(start),
            event_name,
            records: 0,
            done: false,
        })
    }
}

impl HostSampleFeed {
    /// The event sampled: "cpu-clock", "task-clock" or "cycles".
    pub fn event_name(&self) -> &str {
        &self.event_name
    }
}

impl Feed for HostSampleFeed {
    fn poll(&mut self, out: &mut Vec<Update>) -> anyhow::Result<FeedStatus> {
        if self.done {
            return Ok(FeedStatus::Finished);
        }
        let mut progress = false;
        if let Some(start) = self.start.take() {
            out.push(Update::Start(start));
            progress = true;
        }
        loop {
            match self.batches.try_recv() {
                Ok(Batch::Updates(updates, counters)) => {
                    out.extend(updates);
                    self.records = counters.samples;
                    progress = true;
                }
                Ok(Batch::Done(reason)) => {
                    let (end, clean) = match reason {
                        Some(reason) => {
                            out.push(Update::Finding(Finding::new(
                                Gap::SourceFailed,
                                None,
                                format!("sampling stopped: {reason}"),
                            )));
                            (format!("sampling stopped: {reason}"), false)
                        }
                        None => ("session ended".to_string(), true),
                    };
                    out.push(self.input(end, clean));
                    self.done = true;
                    return Ok(FeedStatus::Finished);
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    out.push(self.input("the sampling thread ended without a word".into(), false));
                    self.done = true;
                    return Ok(FeedStatus::Finished);
                }
            }
        }
        if progress {
            out.push(self.input("still sampling".into(), true));
        }
        Ok(if progress {
            FeedStatus::Progress
        } else {
            FeedStatus::Idle
        })
    }

    fn stop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

impl HostSampleFeed {
    /// What the reports say was read: every sample the rings delivered.
    fn input(&self, end: String, clean: bool) -> Update {
        Update::Input(InputInfo {
            kind: "perf_event".into(),
            path: "perf_event".into(),
            format: None,
            records: self.records,
            bytes_read: 0,
            end,
            clean,
            bytes_lost: 0,
        })
    }
}

impl Drop for HostSampleFeed {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Unblock a resolver waiting on a full channel, then let it finish.
        while self.batches.try_recv().is_ok() {}
        drop(std::mem::replace(&mut self.batches, sync_channel(1).1));
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
        drop(self.resolver.take());
    }
}
