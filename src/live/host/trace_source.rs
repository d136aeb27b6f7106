//! A tracepoint analyzer (`syscalls`, `rundelay`, `multi-trace`, `top -e`) as a model
//! source: the session runs on its own reader thread, feeding the analyzer as records
//! arrive, and publishes the analyzer's cumulative distributions and tables a few times a
//! second for the latency and tables views.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use anyhow::Context;

use crate::analyzers::text::WallClock;
use crate::live::snapshot::{HistogramSeries, TextTable};
use crate::live::source::{Source, SourcePoll};
use crate::live::state::ModelState;
use crate::model::Timeline;

use super::options::{HostRunOptions, TraceOptions};
use super::trace_session::{TraceCounters, TraceSession};

const POLL: Duration = Duration::from_millis(100);
/// How often the reader renders the cumulative tables for the views.
const PUBLISH: Duration = Duration::from_millis(500);

#[derive(Default)]
struct Published {
    series: Vec<HistogramSeries>,
    tables: Vec<TextTable>,
    counters: TraceCounters,
    timeline: Option<Timeline>,
    fresh: bool,
    done: bool,
    error: Option<String>,
}

pub struct HostTraceSource {
    shared: Arc<Mutex<Published>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    label: String,
    started_ns: u64,
    done: bool,
}

fn publish(session: &TraceSession, shared: &Mutex<Published>) {
    let comm_of = |tid: u32| session.comms.name(tid);
    let series = session.analysis().series(&comm_of);
    let table = session
        .analysis()
        .table(&WallClock::local(SystemTime::now()), &comm_of);
    if let Ok(mut p) = shared.lock() {
        p.series = series;
        p.tables = vec![table];
        p.counters = session.counters;
        p.timeline = Some(session.timeline.clone());
        p.fresh = true;
    }
}

impl HostTraceSource {
    pub fn start(run: &HostRunOptions, trace: &TraceOptions) -> anyhow::Result<HostTraceSource> {
        let mut session = TraceSession::open(run, trace)?;
        let label = format!("host {}", trace.analyzer.name());
        let started_ns = session.started_ns;
        let shared = Arc::new(Mutex::new(Published::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let deadline = run.duration.map(|d| Instant::now() + d);
        let (shared_in, stop_in) = (shared.clone(), stop.clone());
        let thread = std::thread::Builder::new()
            .name("perfscope-tracer".into())
            .spawn(move || {
                let mut last = Instant::now();
                let error = loop {
                    if stop_in.load(Ordering::Relaxed) || deadline.is_some_and(|d| Instant::now() >= d) {
                        session.finish();
                        break None;
                    }
                    match session.pump(POLL) {
                        Ok(true) => {}
                        Ok(false) => break None,
                        Err(e) => break Some(format!("{e:#}")),
                    }
                    if last.elapsed() >= PUBLISH {
                        publish(&session, &shared_in);
                        last = Instant::now();
                    }
                };
                publish(&session, &shared_in);
                if let Ok(mut p) = shared_in.lock() {
                    p.done = true;
                    p.error = error;
                }
            })
            .context("cannot start the tracing thread")?;
        Ok(HostTraceSource {
            shared,
            stop,
            thread: Some(thread),
            label,
            started_ns,
            done: false,
        })
    }
}

impl Source for HostTraceSource {
    fn poll(&mut self, state: &mut ModelState) -> anyhow::Result<SourcePoll> {
        if self.done {
            return Ok(SourcePoll::Finished);
        }
        let Ok(mut p) = self.shared.lock() else {
            self.done = true;
            return Ok(SourcePoll::Finished);
        };
        if !p.fresh && !p.done {
            return Ok(SourcePoll::Idle);
        }
        p.fresh = false;
        state.histograms = std::mem::take(&mut p.series);
        state.tables = std::mem::take(&mut p.tables);
        state.stats.lost = p.counters.lost;
        state.stats.source = self.label.clone();
        state.stats.events = p.counters.events;
        state.time_origin_ns = self.started_ns;
        if let Some(timeline) = p.timeline.take() {
            state.event_timeline = Some(timeline);
        }
        if p.done {
            if let Some(e) = p.error.take() {
                state.warnings.push(format!("tracing stopped: {e}"));
            }
            state.stats.finished = true;
            self.done = true;
            return Ok(SourcePoll::Finished);
        }
        Ok(SourcePoll::Progress)
    }

    fn stop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

impl Drop for HostTraceSource {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
