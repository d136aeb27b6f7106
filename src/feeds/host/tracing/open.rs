//! Opening a tracepoint session: the selectors resolved and planned, the events opened on
//! the targets with their kernel filters (or user-space ones where the kernel refuses),
//! the analyzer built for their layouts, and what the session says of itself first.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, bail};
use rustc_hash::FxHashSet;

use crate::analyzers::options::{AnalyzerKind, TraceOptions};
use crate::analyzers::session::Analysis;
use crate::feeds::{EventFormat, RecordOnly, SessionStart, Update};
use crate::model::ProfileInfo;
use crate::model::threads::ThreadNames;
use crate::model::usage::UsageError;
use crate::model::verdict::SourceCounts;
use crate::sources::clock::monotonic_ns;
use crate::sources::perf_event::PerfEventError;
use crate::sources::perf_event::attr::{EventAttr, Wakeup};
use crate::sources::perf_event::attr::{EventKind, Sampling};
use crate::sources::perf_event::reader::{PerfEvents, RingOptions};
use crate::sources::perf_event::ring::page_size;
use crate::sources::perf_event::software::{SOFTWARE_SYSTEM, software_event_of};
use crate::sources::perf_event::targets::{Target, online_cpus};
use crate::sources::tracefs::{ResolvedEvent, Tracefs};
use crate::store::RecordedEventType;
use crate::symbols::host::RootFrame;
use crate::symbols::host::kernel::KernelSymbols;
use crate::trace::event::EventIndex;
use crate::trace::expr::Filter;

use super::plan::{default_events, resolve_stages, software_period, stacks_where_sampled};
use super::{RecordedTrace, TraceCounters, TraceSession};
use crate::feeds::host::event_lines::EventLines;
use crate::feeds::host::event_plan::{EventPlan, event_cpus, plan_events};
use crate::feeds::host::every_cpu_targets;
use crate::feeds::host::heatmap::HeatmapFiles;
use crate::feeds::host::missed_switch::MissedSwitches;
use crate::feeds::host::options::HostRunOptions;
use crate::feeds::host::options::SamplingOptions;
use crate::feeds::host::sample_resolver::SampleResolver;
use crate::feeds::host::targets::{names_attr, open_targets};

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
}
