//! A tracepoint session: the `-e` selectors resolved against tracefs, the events opened on
//! the targets (one ring per CPU or thread), kernel filters set (or compiled into a
//! user-space filter when the kernel refuses one), and every record drained in time order
//! into the analyzer. Used by the live source and by `--no-tui` alike.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use anyhow::{Context, bail};

use crate::analyzers::text::WallClock;
use crate::live::snapshot::TIMELINE_SLICES;
use crate::model::Timeline;
use crate::sources::clock::monotonic_ns;
use crate::sources::perf_event::PerfEventError;
use crate::sources::perf_event::attr::{EventAttr, Wakeup};
use crate::sources::perf_event::reader::{Ordered, PerfEvents, RingOptions};
use crate::sources::perf_event::record::Record;
use crate::sources::perf_event::targets::Target;
use crate::sources::tracefs::{ResolvedEvent, Tracefs, parse_selectors, resolve};
use crate::store::{Recorder, SessionMeta};
use crate::symbols::host::kernel::KernelSymbols;
use crate::trace::event::EventIndex;
use crate::trace::expr::Filter;

use super::TIME_ORIGIN_META;
use super::analysis::Analysis;
use super::comms::CommCache;
use super::options::{AnalyzerKind, HostRunOptions, TraceOptions};
use super::targets::{SessionTargets, open_targets};

/// Counters of a session, for the status line and the closing summary.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceCounters {
    /// Tracepoint samples fed to the analyzer.
    pub events: u64,
    /// Records the kernel reported lost.
    pub lost: u64,
    /// Events a user-space filter dropped (filters the kernel refused).
    pub filtered: u64,
}

/// The default selectors of an analyzer when the user gives none.
fn default_events(analyzer: AnalyzerKind) -> Vec<String> {
    match analyzer {
        AnalyzerKind::Syscalls => vec!["raw_syscalls:sys_enter".into(), "raw_syscalls:sys_exit".into()],
        AnalyzerKind::Rundelay => vec![
            "sched:sched_wakeup*,sched:sched_switch".into(),
            "sched:sched_switch".into(),
        ],
        _ => Vec::new(),
    }
}

/// Resolve every `-e` text into its stage of events.
fn resolve_stages(tracefs: &Tracefs, texts: &[String]) -> anyhow::Result<Vec<Vec<ResolvedEvent>>> {
    texts
        .iter()
        .map(|text| {
            let specs = parse_selectors(text).map_err(|e| anyhow::anyhow!("{e}"))?;
            resolve(tracefs, &specs).map_err(|e| anyhow::anyhow!("{e}"))
        })
        .collect()
}

/// A running tracepoint session.
pub struct TraceSession {
    events: PerfEvents,
    analysis: Analysis,
    /// User-space filters by event index, for filters the kernel refused.
    filters: Vec<Option<Filter>>,
    pub comms: CommCache,
    targets: SessionTargets,
    pub counters: TraceCounters,
    /// CLOCK_REALTIME − CLOCK_MONOTONIC at the start, to print event times as wall time.
    realtime_offset_ns: i128,
    /// `--record`: every event the analyzer sees, as it sees it.
    recorder: Option<Recorder>,
    finished: bool,
    /// Records the last drain read (a big one means: do not sleep before the next).
    last_drain_records: u64,
    /// CLOCK_MONOTONIC when the events were enabled: where the views count seconds from.
    pub started_ns: u64,
    /// Events fed to the analyzer per time slice (the timeline view's bars).
    pub timeline: Timeline,
}

/// A drain this big means events arrive faster than poll(2) wake-ups can follow.
const BUSY_DRAIN_RECORDS: u64 = 16;

/// The session file's description of the analysis, so a replay rebuilds the same one.
fn trace_meta(
    trace: &TraceOptions,
    texts: &[String],
    stages: &[Vec<ResolvedEvent>],
    threads: bool,
    started_ns: u64,
) -> SessionMeta {
    let mut meta = SessionMeta::now("host-trace", trace.analyzer.name());
    meta.arch = Some(std::env::consts::ARCH.into());
    let sizes: Vec<usize> = stages.iter().map(Vec::len).collect();
    meta.extra = vec![
        ("trace.analyzer".into(), trace.analyzer.key().into()),
        (
            "trace.events".into(),
            serde_json::to_string(texts).unwrap_or_default(),
        ),
        (
            "trace.stage_sizes".into(),
            serde_json::to_string(&sizes).unwrap_or_default(),
        ),
        ("trace.perins".into(), trace.perins.to_string()),
        (TIME_ORIGIN_META.into(), started_ns.to_string()),
        (
            "trace.than_ns".into(),
            trace.than_ns.map(|t| t.to_string()).unwrap_or_default(),
        ),
        ("trace.key".into(), trace.key.clone().unwrap_or_default()),
        ("trace.cycle".into(), trace.cycle.to_string()),
        ("trace.only_comm".into(), trace.only_comm.to_string()),
        ("trace.threads".into(), threads.to_string()),
    ];
    meta
}

impl TraceSession {
    pub fn open(run: &HostRunOptions, trace: &TraceOptions) -> anyhow::Result<TraceSession> {
        let tracefs = Tracefs::open()?;
        let texts = if trace.events.is_empty() {
            default_events(trace.analyzer)
        } else {
            trace.events.clone()
        };
        if texts.is_empty() {
            bail!(
                "{} needs events: give them with -e sys:name[/filter/attrs/]",
                trace.analyzer.name()
            );
        }
        if trace.analyzer == AnalyzerKind::Syscalls {
            let names: Vec<&str> = texts.iter().map(|t| t.split('/').next().unwrap_or(t)).collect();
            if names != ["raw_syscalls:sys_enter", "raw_syscalls:sys_exit"] {
                bail!(
                    "syscalls: use -e raw_syscalls:sys_enter -e raw_syscalls:sys_exit (filters and attributes allowed)"
                );
            }
        }
        let mut stages = resolve_stages(&tracefs, &texts)?;
        if trace.analyzer == AnalyzerKind::Syscalls
            && let Ok(free) = resolve_stages(&tracefs, &["sched:sched_process_free".to_string()])
        {
            // Reclaims the pending enter of a task that exits inside a syscall, as perf-prof.
            stages.extend(free);
        }
        let targets = open_targets(&run.target)?;
        let attrs: Vec<EventAttr> = stages
            .iter()
            .flatten()
            .enumerate()
            .map(|(index, event)| {
                let mut attr =
                    EventAttr::tracepoint(event.layout.id).with_wakeup(match run.ring.watermark_percent {
                        Some(w) => Wakeup::WatermarkPercent(u32::from(w)),
                        None => Wakeup::default(),
                    });
                if index == 0 {
                    // Names from COMM records: /proc no longer has a thread that exited
                    // before its table is printed (a short workload always has).
                    attr = attr.with_comm_records();
                }
                if event.spec.stack {
                    attr = attr
                        .with_callchain()
                        .with_max_stack(event.spec.max_stack.unwrap_or(127));
                }
                attr
            })
            .collect();
        let pages = run.ring.pages.unwrap_or(trace.analyzer.default_pages());
        let ring_targets: Vec<Target> = targets.targets.clone();
        let events = PerfEvents::open(&attrs, &ring_targets, RingOptions { data_pages: pages })?;
        let mut filters = Vec::new();
        for (index, event) in stages.iter().flatten().enumerate() {
            let mut user_filter = None;
            if let Some(filter) = &event.spec.filter {
                match events.set_filter(EventIndex(index as u16), filter) {
                    Ok(()) => {}
                    Err(PerfEventError::FilterRefused { .. }) => {
                        let compiled = Filter::compile(filter, &event.layout).map_err(|e| {
                            anyhow::anyhow!(
                                "{}: the kernel refused the filter '{filter}' and it does not compile in user space either: {e}",
                                event.layout.full_name()
                            )
                        })?;
                        eprintln!("{} filters '{filter}' in userspace", event.layout.full_name());
                        user_filter = Some(compiled);
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            filters.push(user_filter);
        }
        let mut analysis = Analysis::build(trace, &stages, targets.threads)?;
        if trace.than_ns.is_some() {
            // Raw event lines name `%pS` addresses from this boot's kallsyms (a replay,
            // maybe after a reboot, prints them in hex rather than guess).
            match KernelSymbols::load(Path::new("/proc/kallsyms")) {
                Ok(symbols) => {
                    analysis.name_kernel_addresses(Arc::new(move |a| symbols.name_with_offset(a)));
                }
                Err(e) => eprintln!("perfscope: kernel addresses print in hex: {e}"),
            }
        }
        // Read before the events are enabled: no event is older.
        let started_ns = monotonic_ns();
        let recorder = match &run.record {
            Some(path) => {
                let meta = trace_meta(trace, &texts, &stages, targets.threads, started_ns);
                let mut recorder =
                    Recorder::create(path, &meta).with_context(|| format!("--record {}", path.display()))?;
                for (index, event) in stages.iter().flatten().enumerate() {
                    recorder.event_type(
                        EventIndex(index as u16),
                        &event.layout,
                        event.spec.alias.as_deref(),
                        event.spec.filter.as_deref(),
                    );
                }
                Some(recorder)
            }
            None => None,
        };
        let mut session = TraceSession {
            events,
            analysis,
            filters,
            comms: CommCache::default(),
            targets,
            counters: TraceCounters::default(),
            realtime_offset_ns: realtime_offset_ns(),
            recorder,
            finished: false,
            last_drain_records: 0,
            started_ns,
            timeline: Timeline::growing_events(started_ns, TIMELINE_SLICES),
        };
        session.events.enable().context("cannot enable the events")?;
        session.targets.start_workload();
        Ok(session)
    }

    pub fn analysis(&self) -> &Analysis {
        &self.analysis
    }

    /// Wait up to `timeout` for data and feed whatever arrived to the analyzer, in time
    /// order. `false` once the session is over (its workload or every thread exited).
    pub fn pump(&mut self, timeout: Duration) -> anyhow::Result<bool> {
        if self.finished {
            return Ok(false);
        }
        // Asked before the drain: records a workload wrote before exiting are in the rings
        // by the time it has exited, so this drain still sees them.
        let exited = self.targets.workload_exited();
        // Under a storm (the last drain was big) the rings refill faster than a wake-up
        // arrives: drain again at once instead of sleeping until the watermark.
        let timeout = if self.last_drain_records >= BUSY_DRAIN_RECORDS {
            Duration::ZERO
        } else {
            timeout
        };
        let outcome = self.events.poll(timeout)?;
        self.drain(false);
        let over = outcome.all_hung_up || exited;
        if over {
            self.finish();
        }
        Ok(!over)
    }

    /// Feed everything the rings hold now, in time order, to the analyzer (and the
    /// session file); with `release_held`, also the records still held for ordering.
    fn drain(&mut self, release_held: bool) {
        let mut feed = Feed {
            analysis: &mut self.analysis,
            filters: &self.filters,
            counters: &mut self.counters,
            recorder: &mut self.recorder,
            comms: &self.comms,
            timeline: &mut self.timeline,
        };
        self.last_drain_records = self.events.drain_ordered(|item| feed.item(item));
        if release_held {
            self.events.flush_ordered(|item| feed.item(item));
        }
        self.counters.lost = self.events.lost(self.finished);
    }

    /// Read the rings a last time, release the records still held for ordering and
    /// close pending pairs.
    pub fn finish(&mut self) {
        if self.finished {
            return;
        }
        self.finished = true;
        let _ = self.events.disable();
        self.drain(true);
        self.analysis.finish();
        if let Some(warning) = self.recorder.take().and_then(Recorder::finish_with_warning) {
            eprintln!("perfscope: {warning}");
        }
    }

    /// The `-i` text of the interval that just ended.
    pub fn interval_text(&mut self) -> String {
        let offset = self.realtime_offset_ns;
        let comms = &self.comms;
        let comm_of = |tid: u32| comms.name(tid);
        let now = WallClock::local(SystemTime::now());
        self.analysis
            .interval_text(&now, &|t| wall_of(offset, t), &comm_of)
    }
}

/// Where each released record goes: the user-space filter, the analyzer, the timeline,
/// the session file; COMM records name threads. One path for drained and flushed records.
struct Feed<'a> {
    analysis: &'a mut Analysis,
    filters: &'a [Option<Filter>],
    counters: &'a mut TraceCounters,
    recorder: &'a mut Option<Recorder>,
    comms: &'a CommCache,
    timeline: &'a mut Timeline,
}

impl Feed<'_> {
    fn item(&mut self, item: Ordered<'_>) {
        match item {
            Ordered::Record(record) => {
                let Some(event) = record.trace_event() else {
                    learn_comm(self.comms, &record.record);
                    return;
                };
                if let Some(Some(filter)) = self.filters.get(usize::from(event.event.0))
                    && !filter.matches(&event)
                {
                    self.counters.filtered += 1;
                    return;
                }
                self.counters.events += 1;
                self.timeline.add(event.time_ns, 1, TIMELINE_SLICES);
                self.analysis.feed(&event);
                if let Some(r) = self.recorder {
                    let _ = r.event(&event);
                }
            }
            Ordered::Lost(range) => {
                self.analysis
                    .lost(range.start_ns, range.end_ns.unwrap_or(u64::MAX));
                if let Some(r) = self.recorder {
                    r.lost(Some(range.start_ns), None, range.count);
                }
            }
        }
    }
}

/// A COMM record's name (an exec, a rename) for the thread's table rows and event lines.
fn learn_comm(comms: &CommCache, record: &Record<'_>) {
    if let Record::Comm(c) = record {
        comms.learn(c.tid, &String::from_utf8_lossy(c.comm));
    }
}

fn realtime_offset_ns() -> i128 {
    let real = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i128)
        .unwrap_or(0);
    real - i128::from(monotonic_ns())
}

/// `time_ns` (CLOCK_MONOTONIC) on the local wall clock, given realtime − monotonic.
pub fn wall_of(offset_ns: i128, time_ns: u64) -> WallClock {
    let real = (i128::from(time_ns) + offset_ns).max(0) as u128;
    WallClock::local(SystemTime::UNIX_EPOCH + Duration::from_nanos(real as u64))
}
