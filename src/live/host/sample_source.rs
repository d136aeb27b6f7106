//! `perfscope top` / `profile` as a model source. Three threads along the road: the
//! reader drains the rings (never waiting on symbols), the resolver names the addresses
//! (a first DWARF load can take a while), and the model thread interns the named stacks
//! into the profile.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, TryRecvError, sync_channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::Context;

use crate::live::source::{Source, SourcePoll};
use crate::live::state::ModelState;
use crate::model::{InputInfo, Sample, SampleMeta};
use crate::store::{Recorder, SessionMeta, SessionTap};

use super::TIME_ORIGIN_META;
use super::options::{HostRunOptions, SamplingOptions};
use super::sample_session::{
    HostSample, LearntSymbol, RawItem, SampleCounters, SampleResolver, SampleSession,
};

/// How long the reader sleeps in poll(2) at most (also how soon it sees a stop).
const POLL: Duration = Duration::from_millis(100);

/// What the reader thread sends.
enum Batch {
    Samples(Vec<HostSample>, Vec<LearntSymbol>, SampleCounters),
    /// The session ended (duration, workload exit, error).
    Done(Option<String>),
}

pub struct HostSampleSource {
    batches: Receiver<Batch>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    label: String,
    frequency_hz: u64,
    started_ns: u64,
    record: Option<SessionTap>,
    done: bool,
}

impl HostSampleSource {
    /// Open the events (errors surface here, before any view starts) and start reading.
    pub fn start(run: &HostRunOptions, sampling: &SamplingOptions) -> anyhow::Result<HostSampleSource> {
        let mut session = SampleSession::open(run, sampling)?;
        let label = format!("host {}", session.event_name);
        let started_ns = session.started_ns;
        let record = match &run.record {
            Some(path) => {
                let mut meta = SessionMeta::now("host", &label);
                meta.arch = Some(std::env::consts::ARCH.into());
                meta.extra.push((TIME_ORIGIN_META.into(), started_ns.to_string()));
                Some(SessionTap::new(
                    Recorder::create(path, &meta).with_context(|| format!("--record {}", path.display()))?,
                ))
            }
            None => None,
        };
        let stop = Arc::new(AtomicBool::new(false));
        let mut resolver = SampleResolver::new(sampling, session.on_threads(), run.record.is_some())?;
        // Raw batches may queue up while the resolver loads a big file's DWARF: the bound
        // is generous (each batch is one drain, ~100 ms of samples) so the reader keeps
        // draining the rings meanwhile; resolved batches are few and small.
        let (raw_tx, raw_rx) = sync_channel::<(Vec<RawItem>, SampleCounters, Option<Option<String>>)>(1024);
        let (tx, rx) = sync_channel(64);
        let deadline = run.duration.map(|d| Instant::now() + d);
        let stop_flag = stop.clone();
        let reader = std::thread::Builder::new()
            .name("perfscope-sampler".into())
            .spawn(move || {
                let reason = loop {
                    if stop_flag.load(Ordering::Relaxed) || deadline.is_some_and(|d| Instant::now() >= d) {
                        session.stop();
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
                let _ = raw_tx.send((Vec::new(), session.counters, Some(reason)));
            })
            .context("cannot start the sampling thread")?;
        let thread = std::thread::Builder::new()
            .name("perfscope-resolver".into())
            .spawn(move || {
                for (items, counters, end) in raw_rx {
                    let mut samples = Vec::new();
                    resolver.resolve(items, &mut samples);
                    if tx
                        .send(Batch::Samples(samples, resolver.take_learnt(), counters))
                        .is_err()
                    {
                        break;
                    }
                    if let Some(reason) = end {
                        let _ = tx.send(Batch::Done(reason));
                        break;
                    }
                }
                let _ = reader.join();
            })
            .context("cannot start the symbol resolver thread")?;
        Ok(HostSampleSource {
            batches: rx,
            stop,
            thread: Some(thread),
            label,
            frequency_hz: sampling.freq_hz,
            started_ns,
            record,
            done: false,
        })
    }

    fn finish_record(&mut self, state: &mut ModelState) {
        if let Some(warning) = self.record.take().and_then(SessionTap::finish_with_warning) {
            state.warnings.push(warning);
        }
    }
}

/// Intern one resolved sample into the profile.
pub fn push_host_sample(state: &mut ModelState, sample: &HostSample) {
    let instance = state.profile.instance(sample.instance.clone());
    let stack = state.profile.intern_named_stack(&sample.frames);
    state.profile.push_sample(Sample {
        time_ns: Some(sample.time_ns),
        instance,
        // One per sample, as perf top counts: percentages are shares of samples.
        weight: 1,
        stack,
        meta: SampleMeta {
            raw_depth: sample.frames.len().min(usize::from(u16::MAX)) as u16,
            flags: SampleMeta::HAS_PC | SampleMeta::HAS_CPU,
            callchain: crate::model::Callchain::FramePointer,
        },
    });
}

impl Source for HostSampleSource {
    fn poll(&mut self, state: &mut ModelState) -> anyhow::Result<SourcePoll> {
        if self.done {
            return Ok(SourcePoll::Finished);
        }
        if state.stats.source.is_empty() {
            state.stats.source = self.label.clone();
            state.profile.info.source = self.label.clone();
            state.profile.info.frequency_hz = Some(self.frequency_hz);
            state.time_origin_ns = self.started_ns;
            // What the reports say was read; "clean" only once the session has ended well.
            state.input = InputInfo {
                kind: "perf_event".into(),
                path: self.label.clone(),
                end: "still sampling".into(),
                ..InputInfo::default()
            };
        }
        let mut progress = false;
        loop {
            match self.batches.try_recv() {
                Ok(Batch::Samples(samples, symbols, counters)) => {
                    for sample in &samples {
                        push_host_sample(state, sample);
                    }
                    if let Some(tap) = &mut self.record {
                        for s in &symbols {
                            tap.recorder().symbol(&s.module, s.address, &s.name, s.offset);
                        }
                    }
                    state.stats.lost = counters.lost;
                    state.input.records = counters.samples;
                    progress = true;
                }
                Ok(Batch::Done(reason)) => {
                    match reason {
                        Some(reason) => {
                            state.input.end = format!("sampling stopped: {reason}");
                            state.warnings.push(format!("sampling stopped: {reason}"));
                        }
                        None => {
                            state.input.end = "session ended".into();
                            state.input.clean = true;
                        }
                    }
                    self.done = true;
                    break;
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    state.input.end = "the sampling thread ended without a word".into();
                    self.done = true;
                    break;
                }
            }
        }
        if let Some(tap) = &mut self.record {
            tap.record(&state.profile, &state.console, &state.markers, state.stats.lost);
        }
        if self.done {
            self.finish_record(state);
            state.stats.finished = true;
            return Ok(SourcePoll::Finished);
        }
        Ok(if progress {
            SourcePoll::Progress
        } else {
            SourcePoll::Idle
        })
    }

    fn stop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

impl Drop for HostSampleSource {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Unblock a reader waiting on a full channel, then let it finish.
        while self.batches.try_recv().is_ok() {}
        if let Some(thread) = self.thread.take() {
            drop(std::mem::replace(&mut self.batches, sync_channel(1).1));
            let _ = thread.join();
        }
    }
}
