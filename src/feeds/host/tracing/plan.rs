//! Which events a tracepoint session opens: the analyzer's default selectors, the `-e`
//! selectors resolved against tracefs (probes defined on the way), stacks sampled where
//! the analyzer reads them, and the period of perf's software events.

use crate::analyzers::options::{AnalyzerKind, TraceOptions};
use crate::model::usage::UsageError;
use crate::sources::perf_event::software::{SOFTWARE_SYSTEM, software_event_of, software_layout};
use crate::sources::tracefs::{
    ResolveError, ResolvedEvent, Tracefs, UprobeGroup, bind_event, parse_selectors, resolve,
};
use crate::trace::event::EventLayout;

use crate::feeds::host::probes::define_probes;

/// The default selectors of an analyzer when the user gives none.
pub(super) fn default_events(analyzer: AnalyzerKind) -> Vec<String> {
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
pub(super) fn stacks_where_sampled(trace: &TraceOptions, stages: &mut [Vec<ResolvedEvent>]) -> TraceOptions {
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
pub(super) fn software_period(trace: &TraceOptions, layout: &EventLayout, default: u64) -> u64 {
    match (trace.analyzer, trace.period_ns) {
        (AnalyzerKind::Hrtimer | AnalyzerKind::Watchdog, Some(period)) if layout.name == "cpu-clock" => {
            period.max(1)
        }
        _ => default,
    }
}

/// Resolve every `-e` text into its stage of events; the probes they name are defined in
/// `probes`.
pub(super) fn resolve_stages(
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
