//! A tracepoint session: the `-e` selectors resolved against tracefs, the events opened on
//! the targets (one ring per CPU or thread), kernel filters set (or compiled into a
//! user-space filter when the kernel refuses one), and every record drained in time order
//! into the analyzer, whose rows are handed over per cell of event time as typed updates
//! (with the thread names they need, the lost counts and, when recording, the events).

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use rustc_hash::FxHashSet;

use crate::analyzers::latency::PairPrint;
use crate::analyzers::options::{AnalyzerKind, TraceOptions};
use crate::analyzers::session::{Analysis, StackChoice};
use crate::feeds::{EventFormat, Offenders, RecordOnly, RowsUpdate, SessionStart, Update};
use crate::model::ProfileInfo;
use crate::model::analysis::{AnalysisRows, AnalysisSchema};
use crate::model::threads::ThreadNames;
use crate::model::usage::UsageError;
use crate::model::verdict::SourceCounts;
use crate::sources::clock::monotonic_ns;
use crate::sources::perf_event::PerfEventError;
use crate::sources::perf_event::attr::{EventAttr, Wakeup};
use crate::sources::perf_event::attr::{EventKind, Sampling};
use crate::sources::perf_event::reader::{Ordered, PerfEvents, RingOptions};
use crate::sources::perf_event::record::{ContextSwitch, Record};
use crate::sources::perf_event::ring::page_size;
use crate::sources::perf_event::software::{SOFTWARE_SYSTEM, software_event_of, software_layout};
use crate::sources::perf_event::targets::{Target, online_cpus};
use crate::sources::tracefs::{
    ResolveError, ResolvedEvent, Tracefs, UprobeGroup, bind_event, parse_selectors, resolve,
};
use crate::store::RecordedEventType;
use crate::symbols::host::RootFrame;
use crate::symbols::host::comms::read_proc_comm;
use crate::symbols::host::kernel::KernelSymbols;
use crate::trace::event::{EventIndex, EventLayout, OwnedTraceEvent};
use crate::trace::expr::Filter;

use super::event_lines::EventLines;
use super::event_plan::{EventPlan, event_cpus, plan_events};
use super::every_cpu_targets;
use super::heatmap::HeatmapFiles;
use super::missed_switch::MissedSwitches;
use super::offender_stacks::resolve_offender_stacks;
use super::options::HostRunOptions;
use super::options::SamplingOptions;
use super::probes::define_probes;
use super::raw::{RawItem, raw_item};
use super::sample_counters::SampleCounters;
use super::sample_resolver::SampleResolver;
use super::targets::{SessionTargets, names_attr, open_targets};

/// The analyzer's rows are handed over per this much event time: the finest a live window
/// or a reset cuts an analysis (a power of two of the engine's 1 ms slice grid).
pub const ROW_CELL_NS: u64 = 16_000_000;

/// Events copied for a recording are handed over in batches of at most this many.
const RECORD_BATCH: usize = 1 << 14;

/// Counters of a session, for the status line and the closing summary.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceCounters {
    /// Tracepoint samples fed to the analyzer.
    pub events: u64,
    /// Records the kernel reported lost.
    pub lost: u64,
    /// With `-N`: records the rings reported lost before the limit was reached.
    pub lost_before_limit: u64,
    /// Events a user-space filter dropped (filters the kernel refused).
    pub filtered: u64,
    /// Records left unread because the session was abandoned (see `TraceSession::abandon`).
    pub dropped: u64,
    /// Decode errors and throttles of the rings, and the events perfscope rebuilt.
    pub source: SourceCounts,
}

/// The default selectors of an analyzer when the user gives none.
fn default_events(analyzer: AnalyzerKind) -> Vec<String> {
    match analyzer {
        AnalyzerKind::Syscalls => vec!["raw_syscalls:sys_enter".into(), "raw_syscalls:sys_exit".into()],
        AnalyzerKind::Rundelay => vec![
            "sched:sched_wakeup*,sched:sched_switch".into(),
            "sched:sched_switch".into(),
        ],
        AnalyzerKind::PageFaults => vec!["exceptions:page_fault_user,exceptions:page_fault_kernel".into()],
        // perf's software events, each counted per CPU.
        AnalyzerKind::PercpuStat => vec![
            "software:cpu-clock,software:task-clock,software:page-faults,\
             software:context-switches,software:cpu-migrations"
                .into(),
        ],
        // One stage: the analyzer tells the events apart by name.
        AnalyzerKind::TaskState => {
            vec!["sched:sched_switch,sched:sched_wakeup,sched:sched_wakeup_new".into()]
        }
        AnalyzerKind::OnCpu => vec!["sched:sched_switch".into()],
        AnalyzerKind::KvmExit => vec!["kvm:kvm_exit".into(), "kvm:kvm_entry".into()],
        _ => Vec::new(),
    }
}

/// `-g` samples the stacks perf-prof's analyzer samples, not every event's: kmemleak's
/// alloc events' (a free's stack says nothing of a leak, and sampling it on every kfree
/// overruns the rings), the timer's of hrtimer (its `-e` events are only counted) and of
/// watchdog (the tick that checks for a hard lockup), each the session's last software
/// event.
fn stacks_where_sampled(trace: &TraceOptions, stages: &mut [Vec<ResolvedEvent>]) -> TraceOptions {
    let mut trace = trace.clone();
    if !trace.call_graph {
        return trace;
    }
    let sampled: Option<&mut [ResolvedEvent]> = match trace.analyzer {
        AnalyzerKind::Kmemleak => stages.first_mut().map(Vec::as_mut_slice),
        AnalyzerKind::Hrtimer | AnalyzerKind::Watchdog => stages
            .iter_mut()
            .flatten()
            .rfind(|e| software_event_of(&e.layout).is_some())
            .map(std::slice::from_mut),
        _ => None,
    };
    if let Some(events) = sampled {
        trace.call_graph = false;
        for event in events {
            event.spec.stack = true;
        }
    }
    trace
}

/// A software event's sampling period: hrtimer's timer ticks every `--period`, watchdog's
/// every 1 s / `-F`.
fn software_period(trace: &TraceOptions, layout: &EventLayout, default: u64) -> u64 {
    match (trace.analyzer, trace.period_ns) {
        (AnalyzerKind::Hrtimer | AnalyzerKind::Watchdog, Some(period)) if layout.name == "cpu-clock" => {
            period.max(1)
        }
        _ => default,
    }
}

/// Resolve every `-e` text into its stage of events; the probes they name are defined in
/// `probes`.
fn resolve_stages(
    tracefs: &Tracefs,
    texts: &[String],
    probes: &mut Option<UprobeGroup>,
) -> anyhow::Result<Vec<Vec<ResolvedEvent>>> {
    texts
        .iter()
        .map(|text| {
            // A selector that does not parse is the command line's fault: exit 2.
            let mut specs = parse_selectors(text).map_err(UsageError::of)?;
            define_probes(tracefs, &mut specs, probes)?;
            let mut events = Vec::new();
            for spec in specs {
                // `software:page-faults` is a perf software event, not a tracefs one.
                let software = (spec.system == SOFTWARE_SYSTEM)
                    .then(|| software_layout(&spec.name))
                    .flatten();
                match software {
                    Some(layout) => {
                        events.push(bind_event(spec, layout).map_err(|e| anyhow::anyhow!("{e}"))?)
                    }
                    None => {
                        events.extend(resolve(tracefs, &[spec]).map_err(ResolveError::into_command_error)?)
                    }
                }
            }
            Ok(events)
        })
        .collect()
}

/// A running tracepoint session.
pub struct TraceSession {
    events: PerfEvents,
    analysis: Analysis,
    /// User-space filters by event index, for filters the kernel refused.
    filters: Vec<Option<Filter>>,
    /// Switches the kernel does not deliver, rebuilt from switch records (CPU rings only).
    missed_switches: Option<MissedSwitches>,
    /// multi-trace `--heatmap`: where each closed pair goes.
    heatmap: Option<HeatmapFiles>,
    /// What failed while reading (a heatmap file that cannot be written): the run ends
    /// with it.
    failure: Option<anyhow::Error>,
    targets: SessionTargets,
    pub counters: TraceCounters,
    /// Raised when whoever reads this session has given up waiting for it (a stopped run
    /// past its grace): events still to be fed are counted as dropped, not analyzed, so
    /// the session ends at once.
    pub abandon: Arc<std::sync::atomic::AtomicBool>,
    /// The source counts last handed over (only a change is news).
    said_counts: SourceCounts,
    finished: bool,
    /// `-N`: end after this many events past their filters.
    exit_after: Option<u64>,
    /// Records the last drain read (a big one means: do not sleep before the next).
    last_drain_records: u64,
    /// When the current cell's rows were last handed over ([`HAND_OVER_EVERY`]).
    handed_over_at: Instant,
    /// CLOCK_MONOTONIC when the events were enabled: where the views count seconds from.
    pub started_ns: u64,
    /// The cell of event time the analyzer's current rows belong to, and its events.
    cell: Option<u64>,
    cell_events: u64,
    /// Copy every event for the session file.
    recording: bool,
    recorded: Vec<OwnedTraceEvent>,
    /// Names known to have been handed over, and the ones learnt since.
    names: ThreadNames,
    named: FxHashSet<u32>,
    /// Events' callchains as samples (`-g`, `stack`): named and interned here.
    stacks: Option<SampleResolver>,
    /// `trace` in the TUI: events become console lines.
    event_lines: Option<EventLines>,
    /// Records for `stacks` since the last drain, in order.
    stack_items: Vec<RawItem>,
    /// Threads whose name was looked up in /proc at their first event.
    looked_up: FxHashSet<u32>,
    /// The thread [`EventSink::name_at_first_sight`] last saw.
    last_sighted: u32,
    /// Updates ready for the engine, in order.
    out: Vec<Update>,
    /// What the session says about itself, handed over first.
    start: Vec<Update>,
    /// The uprobes the selectors defined, removed on drop. Last: fields drop in order,
    /// and the kernel removes a probe only once no perf event is open on it.
    _probes: Option<UprobeGroup>,
}

/// A drain this big means events arrive faster than poll(2) wake-ups can follow.
const BUSY_DRAIN_RECORDS: u64 = 16;

/// How often the rows of the cell under way are handed over: a busy session drains its
/// rings thousands of times a second, and a rows update per drain cost the reader, the
/// channel and the engine more than the events themselves (a finished cell's rows go at
/// once).
const HAND_OVER_EVERY: Duration = Duration::from_millis(10);

/// What a session file keeps of a tracepoint session, so a replay rebuilds the same
/// analysis: the options, the selectors as typed, how many events each stage resolved to,
/// and whether it ran on threads.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RecordedTrace {
    pub trace: TraceOptions,
    pub texts: Vec<String>,
    pub stage_sizes: Vec<usize>,
    pub threads: bool,
}

impl TraceSession {
    pub fn open(run: &HostRunOptions, trace: &TraceOptions) -> anyhow::Result<TraceSession> {
        let tracefs = Tracefs::open()?;
        let mut texts = if trace.events.is_empty() {
            default_events(trace.analyzer)
        } else {
            trace.events.clone()
        };
        if trace.analyzer == AnalyzerKind::KvmExit && !tracefs.has_event("kvm", "kvm_exit") {
            // perf-prof fails its init here too; say why and what to do.
            bail!(
                "kvm-exit: tracefs has no kvm:kvm_exit event: the kvm module is not loaded \
                 (`modprobe kvm_intel` or `modprobe kvm_amd` on a host that runs VMs)"
            );
        }
        if trace.analyzer == AnalyzerKind::Hrtimer {
            // The timer that cuts each CPU's time into periods, after the counted events
            // (the analyzer finds it last).
            texts.push(format!("{SOFTWARE_SYSTEM}:cpu-clock"));
        }
        if texts.is_empty() {
            bail!(
                "{} needs events: give them with -e sys:name[/filter/attrs/]",
                trace.analyzer.name()
            );
        }
        if trace.analyzer == AnalyzerKind::Syscalls {
            let names: Vec<&str> = texts.iter().map(|t| t.split('/').next().unwrap_or(t)).collect();
            if names != ["raw_syscalls:sys_enter", "raw_syscalls:sys_exit"] {
                crate::usage!(
                    "syscalls: use -e raw_syscalls:sys_enter -e raw_syscalls:sys_exit (filters and attributes allowed)"
                );
            }
        }
        let texts = every_cpu_targets::events(trace, &run.target, texts);
        // Declared before the events: every way out of here (an error, a panic) closes
        // them first, and only then can the probes be removed.
        let mut probes = None;
        let mut stages = resolve_stages(&tracefs, &texts, &mut probes)?;
        if trace.analyzer == AnalyzerKind::Syscalls
            && let Ok(free) = resolve_stages(&tracefs, &["sched:sched_process_free".to_string()], &mut probes)
        {
            // Reclaims the pending enter of a task that exits inside a syscall, as perf-prof.
            stages.extend(free);
        }
        let mut targets = open_targets(&run.target)?;
        let trace = &every_cpu_targets::on_every_cpu(trace, &run.target, &mut targets)?;
        let trace = &stacks_where_sampled(trace, &mut stages);
        // The analyzer, with its own checks of its events (num-dist's num=, multi-trace's
        // stages), before a single event is opened: `num-dist -e '*:*'` said its missing
        // num= only after opening 2,305 tracepoints. Built again below only when the kernel
        // refused some events (the indices move).
        let events_asked = stages.iter().map(Vec::len).sum::<usize>();
        let analysis = Analysis::build(trace, &stages, targets.threads)?;
        let attr_of = |event: &ResolvedEvent| {
            let attr = match software_event_of(&event.layout) {
                // The same sample fields as a tracepoint's (an empty raw record), so every
                // event of the session reads alike.
                Some(sw) => EventAttr::new(
                    EventKind::Software { config: sw.config },
                    Sampling::Period(software_period(trace, &event.layout, sw.period)),
                )
                .with_sample(
                    perf_event_open_sys::bindings::PERF_SAMPLE_RAW
                        | perf_event_open_sys::bindings::PERF_SAMPLE_PERIOD,
                ),
                None => EventAttr::tracepoint(event.layout.id),
            };
            let mut attr = attr.with_wakeup(match run.ring.watermark_percent {
                Some(w) => Wakeup::WatermarkPercent(u32::from(w)),
                None => Wakeup::default(),
            });
            if event.spec.stack || trace.call_graph {
                attr = attr
                    .with_callchain()
                    .with_max_stack(event.spec.max_stack.unwrap_or(127));
                // The timers, as perf-prof's: where the kernel was when they fired.
                attr.exclude_callchain_user =
                    matches!(trace.analyzer, AnalyzerKind::Hrtimer | AnalyzerKind::Watchdog);
            }
            attr
        };
        let stacks = trace.call_graph || stages.iter().flatten().any(|e| e.spec.stack);
        let pages = run.ring.pages.unwrap_or(trace.analyzer.default_pages());
        let probe = *targets.targets.first().context("no targets to open events on")?;
        let plan = plan_events(stages, probe, pages * page_size(), attr_of)?;
        if let Some(warning) = plan.warning() {
            crate::stdio::say(&warning.to_string());
        }
        let EventPlan {
            stages,
            probes: mut _open_until_the_events_are,
            ..
        } = plan;
        if probes.is_some() {
            // Its uprobes are removed once the events close: close them here first.
            _open_until_the_events_are.close_here();
        }
        // One sched_switch event per CPU ring carries the switch records the switches the
        // kernel does not deliver are rebuilt from (missed_switch.rs); threads' rings
        // have none.
        let cpu_rings = targets.targets.iter().all(|t| t.cpu().is_some());
        let switch_records = cpu_rings
            .then(|| {
                stages
                    .iter()
                    .flatten()
                    .position(|e| e.layout.system == "sched" && e.layout.name == "sched_switch")
            })
            .flatten();
        // CPU-wide rings (not threads, not inheriting threads on CPUs): the names come
        // from a carrier on every online CPU (`names_attr`).
        let cpu_wide = targets.targets.iter().all(|t| matches!(t, Target::Cpu(_)));
        let attrs: Vec<EventAttr> = stages
            .iter()
            .flatten()
            .enumerate()
            .map(|(index, event)| {
                let mut attr = attr_of(event);
                if switch_records == Some(index) {
                    attr = attr.with_context_switch();
                }
                if index == 0 && stacks {
                    // Names and mappings (COMM, MMAP2, FORK, EXIT) to name user frames.
                    attr.with_task_records()
                } else if index == 0 && !cpu_wide {
                    // Names from COMM records: /proc no longer has a thread that exited
                    // before its table is printed (a short workload always has).
                    attr.with_comm_records()
                } else {
                    attr
                }
            })
            .collect();
        let cpus = event_cpus(&stages, &targets.targets)?;
        let traced = attrs.len();
        let mut attrs = attrs;
        let mut ring_targets: Vec<Target> = targets.targets.clone();
        if cpu_wide {
            // Names come from every online CPU, whatever -C or cpus= say: a thread forked
            // or exec'd on a CPU outside them and seen on one inside (a wakeup, a switch
            // to it, a syscall after a migration) would have no name once it exits.
            attrs.push(names_attr(run));
            for cpu in online_cpus()? {
                if !ring_targets.contains(&Target::Cpu(cpu)) {
                    ring_targets.push(Target::Cpu(cpu));
                }
            }
        }
        let mut events = PerfEvents::open_where(
            &attrs,
            &ring_targets,
            RingOptions { data_pages: pages },
            |event, target| {
                if event >= traced {
                    return true;
                }
                if !targets.targets.contains(&target) {
                    return false;
                }
                match (&cpus[event], target.cpu()) {
                    (Some(cpus), Some(cpu)) => cpus.contains(&cpu),
                    _ => true,
                }
            },
            // The names carrier's records are few, but a flood of traced events (every
            // wakeup's stack in 2 pages) would overflow a shared ring and lose them too.
            |event| event >= traced,
        )?;
        if probes.is_some() {
            // Its uprobes are removed once the events close: close them here first.
            events.close_here();
        }
        if !stacks {
            // No callchain to resolve: the analyzer wants only each sample's trace event.
            events.deliver_samples_as_events();
        }
        let mut filters = Vec::new();
        for (index, event) in stages.iter().flatten().enumerate() {
            let mut user_filter = None;
            if let Some(filter) = &event.spec.filter {
                match events.set_filter(EventIndex(index as u16), filter) {
                    Ok(()) => {}
                    Err(PerfEventError::FilterRefused { .. }) => {
                        // A filter neither compiles is the command line's: a usage error.
                        let compiled = Filter::compile(filter, &event.layout).map_err(|e| {
                            UsageError(format!(
                                "{}: the kernel refused the filter '{filter}' and it does not compile in user space either: {e}",
                                event.layout.full_name()
                            ))
                        })?;
                        // On stdout, as perf-prof: a notice, not an error (its harness
                        // fails a run on any stderr line, and `pid<prio` tests trigger it).
                        crate::stdio::print(&format!(
                            "{} filters '{filter}' in userspace\n",
                            event.layout.full_name()
                        ))?;
                        user_filter = Some(compiled);
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            filters.push(user_filter);
        }
        let missed_switches = match switch_records {
            Some(_) => MissedSwitches::new(stages.iter().flatten().enumerate().map(|(index, event)| {
                // A filter the kernel applies to the real events; one it refused is
                // applied in user space to every event, rebuilt ones included.
                let kernel_filter = event.spec.filter.as_deref().filter(|_| filters[index].is_none());
                (EventIndex(index as u16), &event.layout, kernel_filter)
            }))?,
            None => None,
        };
        let mut analysis = if stages.iter().map(Vec::len).sum::<usize>() == events_asked {
            analysis
        } else {
            Analysis::build(trace, &stages, targets.threads)?
        };
        let heatmap = trace
            .heatmap
            .as_deref()
            .map(|prefix| HeatmapFiles::create(prefix, &analysis.pair_names()))
            .transpose()?;
        if trace.than_ns.is_some() || trace.analyzer == AnalyzerKind::Trace {
            // Raw event lines name `%pS` addresses from this boot's kallsyms (a replay,
            // maybe after a reboot, prints them in hex rather than guess).
            match KernelSymbols::load(Path::new("/proc/kallsyms")) {
                Ok(symbols) => {
                    analysis.name_kernel_addresses(Arc::new(move |a| symbols.name_with_offset(a)));
                }
                Err(e) => crate::stdio::say(&format!("perfscope: kernel addresses print in hex: {e}")),
            }
        }
        // Read before the events are enabled: no event is older.
        let started_ns = monotonic_ns();
        // `trace` as text prints every event: the copies a recording keeps are what it
        // prints (in the TUI the events go to the console log instead).
        let recording = run.record.is_some() || (trace.analyzer == AnalyzerKind::Trace && !trace.event_lines);
        let info = analysis.info();
        let mut start = vec![
            Update::Start(SessionStart {
                label: format!("host {}", trace.analyzer.name()),
                kind: "host-trace".into(),
                target: run.target.describe(),
                time_origin_ns: started_ns,
                live_clock_offset_ns: Some(0),
                options: serde_json::to_value(RecordedTrace {
                    trace: trace.clone(),
                    texts: texts.clone(),
                    stage_sizes: stages.iter().map(Vec::len).collect(),
                    threads: targets.threads,
                })
                .ok(),
            }),
            Update::Analysis(Arc::new(info)),
            Update::EventFormat(Arc::new(EventFormat {
                layouts: analysis.layouts().to_vec(),
                printer: analysis.printer().clone(),
                execs: analysis.execs().to_vec(),
            })),
        ];
        if recording {
            start.push(Update::Record(RecordOnly::EventTypes(
                stages
                    .iter()
                    .flatten()
                    .enumerate()
                    .map(|(index, event)| RecordedEventType {
                        index: EventIndex(index as u16),
                        alias: event.spec.alias.clone(),
                        filter: event.spec.filter.clone(),
                        layout: event.layout.clone(),
                    })
                    .collect(),
            )));
        }
        let targets_threads = targets.threads;
        let mut session = TraceSession {
            events,
            analysis,
            filters,
            missed_switches,
            heatmap,
            failure: None,
            targets,
            counters: TraceCounters::default(),
            abandon: Arc::default(),
            said_counts: SourceCounts::default(),
            finished: false,
            exit_after: run.exit_after,
            last_drain_records: 0,
            handed_over_at: Instant::now(),
            started_ns,
            cell: None,
            cell_events: 0,
            recording,
            recorded: Vec::new(),
            names: ThreadNames::default(),
            named: FxHashSet::default(),
            stacks: if stacks {
                Some(SampleResolver::new(
                    // Kernel and user frames, no root frame: the event's own stack.
                    &SamplingOptions {
                        freq_hz: 0,
                        callchain: true,
                        call_graph: Default::default(),
                        user_only: false,
                        kernel_only: false,
                        exclude_self: false,
                        // Symbol tables, as perf-prof names the events' stacks.
                        inline_frames: false,
                        // Folded stacks start with the comm, as perf-prof's.
                        root: RootFrame::Comm,
                        sample_lines: false,
                    },
                    targets_threads,
                    false,
                    ProfileInfo {
                        source: format!("host {}", trace.analyzer.name()),
                        arch: Some(std::env::consts::ARCH.into()),
                        binary: None,
                        frequency_hz: None,
                    },
                )?)
            } else {
                None
            },
            stack_items: Vec::new(),
            event_lines: None,
            looked_up: FxHashSet::default(),
            last_sighted: 0,
            out: Vec::new(),
            start,
            _probes: probes,
        };
        // Names of the threads already there, before any event: one that makes its last
        // syscalls and exits between two reads of the ring is gone from /proc by then.
        crate::symbols::host::comms::scan_proc_comms(&mut session.names);
        if let Some(resolver) = &mut session.stacks {
            // Naming a stack may load a file's symbols: a stopped session skips the rest.
            resolver.abandon_on(session.abandon.clone());
        }
        if trace.event_lines {
            session.event_lines = Some(EventLines::new(&session.analysis));
        }
        session.events.enable().context("cannot enable the events")?;
        // And after: a thread born between the first scan and the enable has no FORK
        // record, so only a second look names it (it printed `<...>` now and then).
        crate::symbols::host::comms::scan_proc_comms(&mut session.names);
        // Every CPU runs its task by now (oncpu credits the first run on a CPU from here).
        session.analysis.begin(monotonic_ns());
        session.targets.start_workload();
        Ok(session)
    }

    /// What made the session fail while it read, once.
    pub fn take_failure(&mut self) -> Option<anyhow::Error> {
        self.failure.take()
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
        let reached_limit = self.exit_after.is_some_and(|n| self.counters.events >= n);
        let over = outcome.all_hung_up || exited || reached_limit;
        if over {
            self.finish();
        }
        Ok(!over)
    }

    /// Feed everything the rings hold now, in time order, to the analyzer; with
    /// `release_held`, also the records still held for ordering. Then hand the rows of the
    /// current cell over (the engine adds the rest of the cell when it comes).
    fn drain(&mut self, release_held: bool) {
        let stack_choice = self.analysis.stack_choice();
        let mut sink = EventSink {
            abandon: &self.abandon,
            analysis: &mut self.analysis,
            filters: &self.filters,
            missed_switches: self.missed_switches.as_mut(),
            counters: &mut self.counters,
            exit_after: self.exit_after,
            cell: &mut self.cell,
            cell_events: &mut self.cell_events,
            recording: self.recording,
            recorded: &mut self.recorded,
            names: &mut self.names,
            stack_items: self.stacks.as_ref().map(|_| &mut self.stack_items),
            stack_choice,
            event_lines: self.event_lines.as_ref(),
            looked_up: &mut self.looked_up,
            last_sighted: &mut self.last_sighted,
            out: &mut self.out,
        };
        self.last_drain_records = self.events.drain_ordered(|item| sink.item(item));
        if release_held {
            self.events.flush_ordered(|item| sink.item(item));
        }
        if release_held || self.handed_over_at.elapsed() >= HAND_OVER_EVERY {
            sink.flush_rows();
            sink.flush_recorded();
            self.handed_over_at = Instant::now();
        }
        if let Some(files) = &mut self.heatmap {
            let points = self.analysis.take_heat();
            if let Err(e) = files.write(&points) {
                self.failure.get_or_insert(e);
                self.heatmap = None;
            }
        }
        if let Some(resolver) = &mut self.stacks {
            let mut samples = Vec::new();
            resolver.resolve(std::mem::take(&mut self.stack_items), &mut samples);
            resolver.tables.hand_over(samples, &mut self.out);
        }
        // Only a grown total is news (a drain a millisecond would otherwise queue
        // thousands of equal ones a second for the engine to ignore).
        let lost = self.lost_within_run();
        if lost > self.counters.lost {
            self.counters.lost = lost;
            self.out.push(Update::Lost {
                total: lost,
                time_ns: self.cell,
            });
        }
        let source = SourceCounts {
            rebuilt: self.counters.source.rebuilt,
            ..self.events.source_counts()
        };
        if source != self.said_counts {
            self.said_counts = source;
            self.out.push(Update::Counts(source));
        }
        self.counters.source = source;
    }

    /// Records the rings lost within the run. With `-N` the run is its first N events:
    /// once they are delivered, what the rings lose after them (the rest is dropped unseen
    /// anyway) is outside it; the LOST records read before, in time order, are its loss.
    fn lost_within_run(&mut self) -> u64 {
        if self.exit_after.is_some_and(|n| self.counters.events >= n) {
            self.counters.lost.max(self.counters.lost_before_limit)
        } else {
            self.events.lost(self.finished)
        }
    }

    /// Read the rings a last time, release the records still held for ordering and
    /// close pending pairs.
    pub fn finish(&mut self) {
        if self.finished {
            return;
        }
        self.finished = true;
        // Every event before this was delivered: the rings' CPUs are disabled one by one
        // after it, some maybe milliseconds later.
        let end_ns = monotonic_ns();
        let _ = self.events.disable();
        self.drain(true);
        self.analysis.finish(end_ns);
        if let Some(mut files) = self.heatmap.take() {
            // The pairs finishing closed, then every file flushed.
            let points = self.analysis.take_heat();
            if let Err(e) = files.write(&points).and_then(|()| files.finish().map(drop)) {
                self.failure.get_or_insert(e);
            }
        }
        // What closing pending pairs produced (pair counts) belongs to the last cell.
        let rows = self.analysis.take_rows();
        if !rows.is_empty() {
            self.push_rows(self.cell, rows, 0);
        }
    }

    /// What the session says about itself (its start, its analysis, its event types): the
    /// feed hands it over at once, before any event has been read.
    pub fn take_start(&mut self) -> Vec<Update> {
        std::mem::take(&mut self.start)
    }

    /// The updates ready since the last call, thread names before the rows naming them.
    pub fn take_updates(&mut self) -> Vec<Update> {
        let mut out = std::mem::take(&mut self.start);
        let (mut pairs, dropped) = self.analysis.take_slow_pairs();
        if let Some(resolver) = &mut self.stacks
            && self.analysis.stack_choice() == StackChoice::Offenders
            && !pairs.is_empty()
        {
            // Side-band records first (a user frame's mapping), then the offenders' stacks;
            // their samples and tables go out before the offenders that name them.
            let mut samples = Vec::new();
            resolver.resolve(std::mem::take(&mut self.stack_items), &mut samples);
            resolve_offender_stacks(resolver, &mut pairs, &mut samples);
            resolver.tables.hand_over(samples, &mut self.out);
        }
        let ready = std::mem::take(&mut self.out);
        let schema = self.analysis_schema();
        let mut tids: Vec<u32> = ready
            .iter()
            .filter_map(|u| match u {
                Update::Rows(rows) => Some(tids_named_by(&schema, &rows.rows)),
                _ => None,
            })
            .flatten()
            .collect();
        // The `--than` offenders' raw lines name the threads of both events (and of the
        // `--detail` events between them); task-state's headline names the task, which
        // neither event's context may be (a wakeup runs in the waker's).
        tids.extend(pairs.iter().flat_map(|p| {
            let headline = match p.print {
                PairPrint::TaskState { pid, .. } => Some(pid),
                _ => None,
            };
            [p.first.tid, p.second.tid]
                .into_iter()
                .chain(p.detail.iter().map(|e| e.tid))
                .chain(headline)
        }));
        self.name_threads(tids, &mut out);
        out.extend(ready);
        if !pairs.is_empty() || dropped > 0 {
            out.push(Update::Offenders(Offenders { pairs, dropped }));
        }
        out
    }

    fn push_rows(&mut self, time_ns: Option<u64>, rows: AnalysisRows, events: u64) {
        self.out.push(Update::Rows(RowsUpdate {
            time_ns,
            rows,
            events,
        }));
    }

    /// The threads the rows and offenders name (a `--perins` thread, a comm column's key,
    /// a pid key of `top`, a raw event line's thread), named once — from what records and
    /// the start's /proc scan said, else from /proc now. A thread nothing names yet is tried
    /// again with the next rows (a COMM record may come later).
    fn name_threads(&mut self, tids: Vec<u32>, out: &mut Vec<Update>) {
        for tid in tids {
            if self.named.contains(&tid) {
                continue;
            }
            let name = match self.names.name(tid) {
                Some(name) => Some(name),
                None => read_proc_comm(tid, tid),
            };
            if let Some(name) = name {
                if self.named.len() >= crate::model::threads::MAX_THREADS {
                    self.named.clear();
                }
                self.named.insert(tid);
                out.push(Update::ThreadName { tid, name });
            }
        }
    }

    fn analysis_schema(&self) -> AnalysisSchema {
        self.analysis.info().schema
    }
}

/// The thread ids a table of `rows` prints names for.
fn tids_named_by(schema: &AnalysisSchema, rows: &AnalysisRows) -> Vec<u32> {
    let tid = |n: u64| u32::try_from(n).ok();
    match (schema, rows) {
        (AnalysisSchema::Syscalls(s), AnalysisRows::Latency(r)) if s.perins => {
            r.rows.keys().filter_map(|k| tid(k.instance)).collect()
        }
        (AnalysisSchema::OnCpu(_), AnalysisRows::Latency(r)) => {
            r.rows.keys().filter_map(|k| tid(k.series)).collect()
        }
        (AnalysisSchema::TaskState(s), AnalysisRows::Latency(r)) if s.perins => {
            r.rows.keys().filter_map(|k| tid(k.instance)).collect()
        }
        (AnalysisSchema::Delay(s), AnalysisRows::Latency(r)) if s.comm_column && s.key_header.is_some() => {
            r.rows.keys().filter_map(|k| tid(k.instance)).collect()
        }
        (AnalysisSchema::Top(s), AnalysisRows::Top(r)) if s.comm_from_pid => r
            .rows
            .keys()
            .filter_map(|k| match k {
                crate::model::analysis::TopKey::Key(key) => tid(*key),
                crate::model::analysis::TopKey::Comm(_) => None,
            })
            .collect(),
        (AnalysisSchema::Faults, AnalysisRows::Faults(r)) => r.cells.keys().map(|k| k.tid).collect(),
        _ => Vec::new(),
    }
}

/// Where each released record goes: the user-space filter, the analyzer, the recording;
/// COMM records name threads; a new cell of event time hands the analyzer's rows over.
struct EventSink<'a> {
    /// See [`TraceSession::abandon`].
    abandon: &'a std::sync::atomic::AtomicBool,
    analysis: &'a mut Analysis,
    filters: &'a [Option<Filter>],
    missed_switches: Option<&'a mut MissedSwitches>,
    counters: &'a mut TraceCounters,
    exit_after: Option<u64>,
    cell: &'a mut Option<u64>,
    cell_events: &'a mut u64,
    recording: bool,
    recorded: &'a mut Vec<OwnedTraceEvent>,
    names: &'a mut ThreadNames,
    /// Where the callchains and side-band records go when events have stacks.
    stack_items: Option<&'a mut Vec<RawItem>>,
    /// Which stacks become samples: with `Offenders` (`take_updates` resolves them) the
    /// events' own samples are left out, with `Kept` they wait for the analyzer's word;
    /// side-band records are kept.
    stack_choice: StackChoice,
    event_lines: Option<&'a EventLines>,
    looked_up: &'a mut FxHashSet<u32>,
    last_sighted: &'a mut u32,
    out: &'a mut Vec<Update>,
}

impl EventSink<'_> {
    /// `-N COUNT` events were delivered: the rest are dropped unseen, as perf-prof's
    /// (the rings may hold more by the time the count is reached).
    fn reached_limit(&self) -> bool {
        self.exit_after.is_some_and(|n| self.counters.events >= n)
    }

    fn item(&mut self, item: Ordered<'_>) {
        if self.abandon.load(std::sync::atomic::Ordering::Relaxed) {
            self.counters.dropped += 1;
            return;
        }
        match item {
            Ordered::Record(record) => {
                if self.reached_limit() && matches!(record.record, Record::Sample(_) | Record::Switch(_)) {
                    return;
                }
                if let Record::Switch(switch) = record.record {
                    self.switched(&switch);
                    return;
                }
                if let Some(items) = &mut self.stack_items {
                    let with_stack = match record.record {
                        Record::Sample(s) => {
                            self.stack_choice == StackChoice::Every
                                && !s.callchain.as_words().unwrap_or(&[]).is_empty()
                                && self
                                    .filters
                                    .get(record.event.map_or(usize::MAX, |e| usize::from(e.0)))
                                    .and_then(Option::as_ref)
                                    .is_none_or(|f| record.trace_event().is_some_and(|e| f.matches(&e)))
                        }
                        _ => true,
                    };
                    if with_stack {
                        raw_item(record.record, &mut SampleCounters::default(), false, 0, items);
                    }
                }
                let Some(event) = record.trace_event() else {
                    match &record.record {
                        Record::Comm(c) => {
                            let name = String::from_utf8_lossy(c.comm).into_owned();
                            self.name(c.tid, name);
                        }
                        // A new task goes by its parent's name until it execs (a COMM
                        // record then renames it): perf-prof names the threads of a
                        // `dd`-style burst, which are gone before their table prints.
                        Record::Fork(f) if f.tid != f.ptid || f.pid != f.ppid => {
                            let name = self
                                .names
                                .name(f.ptid)
                                .or_else(|| read_proc_comm(f.pid, f.tid))
                                .or_else(|| read_proc_comm(f.ppid, f.ptid));
                            if let Some(name) = name {
                                self.name(f.tid, name);
                            }
                        }
                        _ => {}
                    }
                    return;
                };
                self.event(event);
                if self.stack_choice == StackChoice::Kept
                    && self.analysis.took_stack()
                    && let Some(items) = &mut self.stack_items
                {
                    raw_item(record.record, &mut SampleCounters::default(), false, 0, items);
                }
            }
            Ordered::Event(event) => {
                if !self.reached_limit() {
                    self.event(event);
                }
            }
            Ordered::Lost(range) => {
                if !self.reached_limit() {
                    self.counters.lost_before_limit += range.count;
                }
                self.analysis
                    .lost(range.start_ns, range.end_ns.unwrap_or(u64::MAX));
            }
        }
    }

    /// A traced event as the rings delivered it.
    fn event(&mut self, event: crate::trace::event::TraceEvent<'_>) {
        if let Some(missed) = self.missed_switches.as_deref_mut() {
            missed.saw(&event);
        }
        self.deliver(event);
    }

    /// A switch record: a switch-in stands for the sched_switch the kernel did not
    /// deliver (missed_switch.rs); a switch-out says how the task left.
    fn switched(&mut self, switch: &ContextSwitch) {
        let id = switch.sample_id;
        let (Some(time_ns), Some(cpu), Some(pid), Some(tid)) = (id.time, id.cpu, id.pid, id.tid) else {
            return;
        };
        let Some(missed) = self.missed_switches.as_deref_mut() else {
            return;
        };
        if switch.out {
            missed.switched_out(cpu, (pid, tid), switch.preempted);
            return;
        }
        let prev = (switch.other_pid, switch.other_tid);
        self.name_at_first_sight(pid, tid);
        let names = &*self.names;
        let Some(missed) = self.missed_switches.as_deref_mut() else {
            return;
        };
        let Some(rebuilt) = missed.rebuild(time_ns, cpu, prev, (pid, tid), || {
            (names.name(prev.1), names.name(tid))
        }) else {
            return;
        };
        let targets: Vec<EventIndex> = missed.targets(&rebuilt).collect();
        for index in targets {
            self.deliver(rebuilt.event(index));
        }
    }

    /// One event, real or rebuilt: through its user-space filter into the analyzer, the
    /// console lines and the recording.
    fn deliver(&mut self, mut event: crate::trace::event::TraceEvent<'_>) {
        if event.tid == u32::MAX {
            // The kernel reports pid/tid -1 for a task whose pid is already gone
            // (its last sched_switch, prev_state=X); the trace entry's common_pid
            // still says who it was.
            if let Some(b) = event.raw.get(4..8) {
                let tid = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                (event.pid, event.tid) = (tid, tid);
            }
        }
        self.name_at_first_sight(event.pid, event.tid);
        if let Some(Some(filter)) = self.filters.get(usize::from(event.event.0))
            && !filter.matches(&event)
        {
            self.counters.filtered += 1;
            return;
        }
        if self.reached_limit() {
            return;
        }
        let cell = event.time_ns - event.time_ns % ROW_CELL_NS;
        if self.cell.is_some_and(|c| c != cell) {
            self.flush_rows();
        }
        *self.cell = Some(cell);
        *self.cell_events += 1;
        self.counters.events += 1;
        if event.rebuilt {
            self.counters.source.rebuilt += 1;
        }
        self.analysis.feed(&event);
        if let Some(lines) = self.event_lines
            && let Some(line) = lines.line(&event, self.names)
        {
            self.out.push(line);
        }
        if self.recording {
            self.recorded.push(OwnedTraceEvent::from_event(&event));
            if self.recorded.len() >= RECORD_BATCH {
                self.flush_recorded();
            }
        }
    }

    fn name(&mut self, tid: u32, name: String) {
        self.names.set(tid, &name);
        self.out.push(Update::ThreadName { tid, name });
    }

    /// A thread that was there before the session (no FORK or COMM record names it) is
    /// named from /proc at its first event, while it still runs: by the time its table
    /// prints it may have exited. Once per thread, bounded as the name table.
    fn name_at_first_sight(&mut self, pid: u32, tid: u32) {
        // Events come in runs of one thread's: the last one asked about is known.
        if tid == *self.last_sighted {
            return;
        }
        *self.last_sighted = tid;
        if tid == 0 || self.names.contains(tid) || self.looked_up.contains(&tid) {
            return;
        }
        if self.looked_up.len() >= crate::model::threads::MAX_THREADS {
            self.looked_up.clear();
        }
        self.looked_up.insert(tid);
        // A thread already gone (its FORK record lost with a full ring) goes by its
        // process's name rather than `<...>`.
        if let Some(name) = read_proc_comm(pid, tid).or_else(|| self.names.name(pid)) {
            self.name(tid, name);
        }
    }

    /// The current cell's rows, handed over.
    fn flush_rows(&mut self) {
        let rows = self.analysis.take_rows();
        let events = std::mem::take(self.cell_events);
        if rows.is_empty() && events == 0 {
            return;
        }
        self.out.push(Update::Rows(RowsUpdate {
            time_ns: *self.cell,
            rows,
            events,
        }));
    }

    fn flush_recorded(&mut self) {
        if !self.recorded.is_empty() {
            self.out
                .push(Update::Record(RecordOnly::Events(std::mem::take(self.recorded))));
        }
    }
}
