//! One analyzer of a tracepoint session, whichever it is, behind one face: events in,
//! typed rows out ([`Analysis::take_rows`]) with the schema that says what they mean
//! ([`Analysis::info`]). The analyzers themselves know nothing of sessions or views; this
//! is where the selectors' expressions (`key=`, `top-by=`, `comm=`, `printkey=`) become
//! their key sources. Live sessions and replays build it the same way.

use std::sync::Arc;

mod nested_and_sql;

use anyhow::{Context, bail};

use super::Analyzer;
use super::blktrace::BlktraceAnalyzer;
use super::chosen_tasks::TaskFilter;
use super::hrtimer::{HrtimerAnalyzer, HrtimerConfig, condition_vars};
use super::key::KeySource;
use super::kmemleak::KmemleakAnalyzer;
use super::kmemprof::KmemprofAnalyzer;
use super::kvm_exit::{KvmExitAnalyzer, KvmExitConfig};
use super::latency::SlowPair;
use super::mem_events::{MemEvent, MemRole, StackTable};
use super::multi_trace::{Implementation, Instance, MultiTraceAnalyzer, MultiTraceConfig, StageEvent};
use super::nested_trace::NestedTraceAnalyzer;
use super::num_dist::{NumDistAnalyzer, NumEvent, NumInstance};
use super::oncpu::OnCpuAnalyzer;
use super::options::{AnalyzerKind, TraceOptions};
use super::page_faults::PageFaultsAnalyzer;
use super::rundelay::{RundelayOptions, rundelay};
use super::sql::SqlAnalyzer;
use super::stat::{StatAnalyzer, StatConfig};
use super::syscalls::{SyscallsAnalyzer, SyscallsConfig};
use super::task_state::{TaskStateAnalyzer, TaskStateOptions};
use super::top::{TopAnalyzer, TopColumn, TopConfig, TopEvent};
use super::watchdog::WatchdogAnalyzer;
use crate::model::analysis::{AnalysisInfo, AnalysisRows, AnalysisSchema, KeyPrinter, OnCpuSchema};
use crate::model::period_counts::CountInstance;
use crate::model::units::ValueUnit;
use crate::sources::perf_event::software::software_event_of;
use crate::sources::tracefs::{EventPrinter, ResolvedEvent};
use crate::symbols::host::comms::read_proc_comm;
use crate::trace::event::{EventLayout, TraceEvent};
use crate::trace::expr::{BoundExpr, Expr};
use crate::trace::field_units::expr_unit;

/// How slow pairs are kept between two prints.
const SLOW_PAIRS: usize = 1024;

enum Kind {
    Syscalls(SyscallsAnalyzer),
    MultiTrace(MultiTraceAnalyzer),
    Top(TopAnalyzer),
    Stat(StatAnalyzer),
    PageFaults(PageFaultsAnalyzer),
    TaskState(TaskStateAnalyzer),
    OnCpu(OnCpuAnalyzer),
    Blktrace(BlktraceAnalyzer),
    NumDist(NumDistAnalyzer),
    KvmExit(KvmExitAnalyzer),
    Hrtimer(HrtimerAnalyzer),
    Watchdog(WatchdogAnalyzer),
    Kmemleak(KmemleakAnalyzer),
    Kmemprof(KmemprofAnalyzer),
    Nested(NestedTraceAnalyzer),
    Sql(SqlAnalyzer),
}

/// Which events' stacks become the session's profile.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum StackChoice {
    /// Every event's that carries one (`trace -g`, kmemleak's allocs).
    Every,
    /// The `--than`/`--lower` offenders' only (the multi-trace family): perf-prof prints
    /// those under the offending pairs; the events' own are left out.
    Offenders,
    /// Those the analyzer kept, as it feeds them ([`Analysis::took_stack`]): hrtimer's
    /// kept periods', watchdog's hard lockups'.
    Kept,
}

/// A running analyzer with the layouts of the events it was built over.
pub struct Analysis {
    kind: Kind,
    layouts: Vec<EventLayout>,
    /// The events' print fmts, compiled once, for the `--than` raw lines.
    printer: EventPrinter,
    name: &'static str,
    /// `printkey=`: how `top` prints its keys.
    printkey: Option<BoundExpr>,
    /// Each event's `exec=`, by event index.
    execs: Vec<Option<BoundExpr>>,
}

/// An expression as a key source: integers only, negative → 0 as perf-prof's keys.
fn number_of(expr: BoundExpr) -> KeySource {
    KeySource::Custom(Box::new(move |event: &TraceEvent<'_>| {
        expr.eval_int(event).map(|v| v.max(0) as u64)
    }))
}

impl Analysis {
    /// Build the analyzer `options` names over the resolved events (`stages[i]` = the
    /// events of the i-th `-e`, in the order they were opened). `threads`: the session is
    /// attached to threads (the default key is then the thread, else the CPU).
    pub fn build(
        options: &TraceOptions,
        stages: &[Vec<ResolvedEvent>],
        threads: bool,
    ) -> anyhow::Result<Analysis> {
        let events: Vec<&ResolvedEvent> = stages.iter().flatten().collect();
        let layouts: Vec<EventLayout> = events.iter().map(|e| e.layout.clone()).collect();
        let mut printkey = None;
        let kind = match options.analyzer {
            AnalyzerKind::Syscalls => Kind::Syscalls(SyscallsAnalyzer::new(
                &layouts,
                SyscallsConfig {
                    perins: options.perins,
                    than_ns: options.than_ns,
                    slow_pair_capacity: SLOW_PAIRS,
                },
            )?),
            AnalyzerKind::Rundelay => Kind::MultiTrace(rundelay(
                &layouts,
                &RundelayOptions {
                    perins: options.perins,
                    than_ns: options.than_ns,
                    lower_ns: options.lower_ns,
                    heatmap: options.heatmap.is_some(),
                    detail: options.pair_detail,
                    slow_pair_capacity: SLOW_PAIRS,
                    skip_unnecessary_wakeups: true,
                },
            )?),
            AnalyzerKind::MultiTraceDelay | AnalyzerKind::MultiTracePair => {
                Kind::MultiTrace(multi_trace(options, stages, &layouts, threads)?)
            }
            AnalyzerKind::Top | AnalyzerKind::Trace => {
                let (config, key_printer) = top_config(options, &events)?;
                printkey = key_printer;
                Kind::Top(TopAnalyzer::new(config)?)
            }
            AnalyzerKind::PageFaults => Kind::PageFaults(PageFaultsAnalyzer::new(&layouts)?),
            AnalyzerKind::Stat | AnalyzerKind::Hrcount | AnalyzerKind::PercpuStat => {
                let (period_ns, columns) = options.counter_periods();
                let instance = if options.analyzer == AnalyzerKind::PercpuStat {
                    // Per CPU whatever the session is attached to: it is the point.
                    Some(CountInstance::Cpu)
                } else {
                    options.perins.then_some(if threads {
                        CountInstance::Thread
                    } else {
                        CountInstance::Cpu
                    })
                };
                Kind::Stat(StatAnalyzer::new(StatConfig {
                    events: events
                        .iter()
                        .map(|e| match (&e.spec.alias, software_event_of(&e.layout)) {
                            (Some(alias), _) => alias.clone(),
                            // perf's own name: `page-faults`, `cpu-clock`.
                            (None, Some(_)) => e.layout.name.clone(),
                            (None, None) => e.layout.full_name(),
                        })
                        .collect(),
                    // A software event's record stands for its sampling period (ns of clock).
                    weights: events
                        .iter()
                        .map(|e| software_event_of(&e.layout).map_or(1, |sw| sw.period))
                        .collect(),
                    instance,
                    period_ns,
                    columns,
                }))
            }
            AnalyzerKind::TaskState => Kind::TaskState(TaskStateAnalyzer::new(
                &layouts,
                TaskStateOptions {
                    perins: options.perins,
                    than_ns: options.than_ns,
                    sleeping: options.interruptible,
                    disk_sleep: options.uninterruptible,
                    slow_pair_capacity: SLOW_PAIRS,
                    only: (!options.only_tids.is_empty() || !options.only_comms.is_empty()).then(|| {
                        TaskFilter {
                            tids: options.only_tids.iter().copied().collect(),
                            comm_globs: options.only_comms.clone(),
                            follow_forks: options.follow_forks,
                        }
                    }),
                },
            )?),
            AnalyzerKind::OnCpu => {
                let threads = !options.only_tids.is_empty();
                let analyzer = OnCpuAnalyzer::new(
                    &layouts,
                    OnCpuSchema {
                        only_comm: options.only_comm,
                        detail: options.detail,
                        threads,
                    },
                )?;
                Kind::OnCpu(match threads {
                    true => analyzer.keeping(TaskFilter {
                        tids: options.only_tids.iter().copied().collect(),
                        comm_globs: Vec::new(),
                        follow_forks: options.follow_forks,
                    }),
                    false => analyzer,
                })
            }
            AnalyzerKind::NumDist => Kind::NumDist(num_dist(options, &events, threads)?),
            AnalyzerKind::KvmExit => Kind::KvmExit(KvmExitAnalyzer::new(
                &layouts,
                KvmExitConfig {
                    threads,
                    perins: options.perins,
                    than_ns: options.than_ns,
                    slow_pair_capacity: SLOW_PAIRS,
                },
            )?),
            AnalyzerKind::Hrtimer => Kind::Hrtimer(hrtimer(options, &events, stack_table(options, stages))?),
            AnalyzerKind::Watchdog => {
                let Some(params) = options.watchdog.clone() else {
                    bail!("watchdog: the session has no watchdog parameters (threshold, timer)");
                };
                Kind::Watchdog(WatchdogAnalyzer::new(
                    &layouts,
                    params,
                    stack_table(options, stages),
                )?)
            }
            AnalyzerKind::Blktrace => {
                Kind::Blktrace(BlktraceAnalyzer::new(&layouts, options.than_ns, SLOW_PAIRS)?)
            }
            AnalyzerKind::Kmemleak => Kind::Kmemleak(KmemleakAnalyzer::new(
                mem_events(options, stages)?,
                stack_table(options, stages),
                options.than_ns,
            )?),
            AnalyzerKind::Kmemprof => Kind::Kmemprof(KmemprofAnalyzer::new(
                mem_events(options, stages)?,
                stack_table(options, stages),
            )?),
            AnalyzerKind::NestedTraceCallDelay
            | AnalyzerKind::NestedTraceCall
            | AnalyzerKind::NestedTraceDelay => Kind::Nested(nested_and_sql::nested_trace(
                options, stages, &layouts, threads, SLOW_PAIRS,
            )?),
            AnalyzerKind::Sql => Kind::Sql(nested_and_sql::sql(options, &events, &layouts)?),
        };
        Ok(Analysis {
            kind,
            printer: EventPrinter::new(&layouts),
            layouts,
            name: options.analyzer.name(),
            printkey,
            execs: events.iter().map(|e| e.attrs.exec.clone()).collect(),
        })
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Name the kernel addresses raw event lines print with `%pS`/`%ps` (hex without).
    pub fn name_kernel_addresses(&mut self, lookup: std::sync::Arc<crate::trace::expr::Symbolizer>) {
        self.printer = std::mem::take(&mut self.printer).with_symbolizer(lookup);
    }

    pub fn layouts(&self) -> &[EventLayout] {
        &self.layouts
    }

    pub fn feed(&mut self, event: &TraceEvent<'_>) {
        match &mut self.kind {
            Kind::Syscalls(a) => a.feed(event),
            Kind::MultiTrace(a) => a.feed(event),
            Kind::Top(a) => a.feed(event),
            Kind::Stat(a) => a.feed(event),
            Kind::PageFaults(a) => a.feed(event),
            Kind::TaskState(a) => a.feed(event),
            Kind::OnCpu(a) => a.feed(event),
            Kind::Blktrace(a) => a.feed(event),
            Kind::NumDist(a) => a.feed(event),
            Kind::KvmExit(a) => a.feed(event),
            Kind::Hrtimer(a) => a.feed(event),
            Kind::Watchdog(a) => a.feed(event),
            Kind::Kmemleak(a) => a.feed(event),
            Kind::Kmemprof(a) => a.feed(event),
            Kind::Nested(a) => a.feed(event),
            Kind::Sql(a) => a.feed(event),
        }
    }

    pub fn lost(&mut self, from_ns: u64, to_ns: u64) {
        match &mut self.kind {
            Kind::Syscalls(a) => a.lost(from_ns, to_ns),
            Kind::MultiTrace(a) => a.lost(from_ns, to_ns),
            Kind::Top(a) => a.lost(from_ns, to_ns),
            Kind::Stat(a) => a.lost(from_ns, to_ns),
            Kind::PageFaults(a) => a.lost(from_ns, to_ns),
            Kind::TaskState(a) => a.lost(from_ns, to_ns),
            Kind::OnCpu(a) => a.lost(from_ns, to_ns),
            Kind::Blktrace(a) => a.lost(from_ns, to_ns),
            Kind::NumDist(a) => a.lost(from_ns, to_ns),
            Kind::KvmExit(a) => a.lost(from_ns, to_ns),
            Kind::Hrtimer(a) => a.lost(from_ns, to_ns),
            Kind::Watchdog(a) => a.lost(from_ns, to_ns),
            Kind::Kmemleak(a) => a.lost(from_ns, to_ns),
            Kind::Kmemprof(a) => a.lost(from_ns, to_ns),
            Kind::Nested(a) => a.lost(from_ns, to_ns),
            Kind::Sql(a) => a.lost(from_ns, to_ns),
        }
    }

    /// The events were enabled at `at_ns` (oncpu credits runs from there).
    pub fn begin(&mut self, at_ns: u64) {
        match &mut self.kind {
            Kind::OnCpu(a) => a.begin(at_ns),
            Kind::Hrtimer(a) => a.begin(at_ns),
            _ => {}
        }
    }

    /// The end of the session at `end_ns` (event clock; every event before it was fed):
    /// flush pending state (multi-trace's unpaired events, oncpu's running tasks,
    /// kmemleak's allocations too young to be leaks).
    pub fn finish(&mut self, end_ns: u64) {
        match &mut self.kind {
            Kind::MultiTrace(a) => a.finish(),
            Kind::OnCpu(a) => a.finish(end_ns),
            Kind::Kmemleak(a) => a.finish(end_ns),
            Kind::Kmemprof(a) => a.finish(),
            _ => {}
        }
    }

    /// The `--than` offenders queued since the last call, and how many were dropped
    /// because the queue was full.
    /// multi-trace `--heatmap`: the pairs closed since the last call.
    pub fn take_heat(&mut self) -> Vec<crate::analyzers::multi_trace::HeatPoint> {
        match &mut self.kind {
            Kind::MultiTrace(a) => a.take_heat(),
            _ => Vec::new(),
        }
    }

    /// multi-trace: each pair's (start, end) event names, by pair index.
    pub fn pair_names(&self) -> Vec<(String, String)> {
        match &self.kind {
            Kind::MultiTrace(a) => a.pair_names(),
            _ => Vec::new(),
        }
    }

    /// Which events' stacks become the session's profile (samples for the Flamegraph).
    pub fn stack_choice(&self) -> StackChoice {
        match &self.kind {
            Kind::MultiTrace(a) if a.lists_offenders() => StackChoice::Offenders,
            Kind::Syscalls(a) if a.lists_offenders() => StackChoice::Offenders,
            Kind::Hrtimer(_) | Kind::Watchdog(_) => StackChoice::Kept,
            _ => StackChoice::Every,
        }
    }

    /// With [`StackChoice::Kept`]: whether the event just fed keeps its stack.
    pub fn took_stack(&mut self) -> bool {
        match &mut self.kind {
            Kind::Hrtimer(a) => a.took_stack(),
            Kind::Watchdog(a) => a.took_stack(),
            _ => false,
        }
    }

    pub fn take_slow_pairs(&mut self) -> (Vec<SlowPair>, u64) {
        match &mut self.kind {
            Kind::Syscalls(a) => a.take_slow_pairs(),
            Kind::MultiTrace(a) => a.take_slow_pairs(),
            Kind::TaskState(a) => a.take_slow_pairs(),
            Kind::Blktrace(a) => a.take_slow_pairs(),
            Kind::KvmExit(a) => a.take_slow_pairs(),
            Kind::Nested(a) => a.take_slow_pairs(),
            Kind::NumDist(a) => a.take_slow_pairs(),
            Kind::Top(_)
            | Kind::Stat(_)
            | Kind::PageFaults(_)
            | Kind::OnCpu(_)
            | Kind::Hrtimer(_)
            | Kind::Watchdog(_)
            | Kind::Kmemleak(_)
            | Kind::Kmemprof(_)
            | Kind::Sql(_) => (Vec::new(), 0),
        }
    }

    /// The rows since the last call; a new interval starts.
    pub fn take_rows(&mut self) -> AnalysisRows {
        match &mut self.kind {
            Kind::Syscalls(a) => a.take_rows(),
            Kind::MultiTrace(a) => a.take_rows(),
            Kind::Top(a) => a.take_rows(),
            Kind::Stat(a) => a.take_rows(),
            Kind::PageFaults(a) => a.take_rows(),
            Kind::TaskState(a) => a.take_rows(),
            Kind::OnCpu(a) => a.take_rows(),
            Kind::Blktrace(a) => a.take_rows(),
            Kind::NumDist(a) => a.take_rows(),
            Kind::KvmExit(a) => a.take_rows(),
            Kind::Hrtimer(a) => a.take_rows(),
            Kind::Watchdog(a) => a.take_rows(),
            Kind::Kmemleak(a) => a.take_rows(),
            Kind::Kmemprof(a) => a.take_rows(),
            Kind::Nested(a) => a.take_rows(),
            Kind::Sql(a) => a.take_rows(),
        }
    }

    /// Which analyzer this is and what its rows mean.
    pub fn info(&self) -> AnalysisInfo {
        let mut schema = match &self.kind {
            Kind::Syscalls(a) => a.schema(),
            Kind::MultiTrace(a) => a.schema(),
            Kind::Top(a) => a.schema(),
            Kind::Stat(a) => a.schema(),
            Kind::PageFaults(a) => a.schema(),
            Kind::TaskState(a) => a.schema(),
            Kind::OnCpu(a) => a.schema(),
            Kind::Blktrace(a) => a.schema(),
            Kind::NumDist(a) => a.schema(),
            Kind::KvmExit(a) => a.schema(),
            Kind::Hrtimer(a) => a.schema(),
            Kind::Watchdog(a) => a.schema(),
            Kind::Kmemleak(a) => a.schema(),
            Kind::Kmemprof(a) => a.schema(),
            Kind::Nested(a) => a.schema(),
            Kind::Sql(a) => a.schema(),
        };
        if let (AnalysisSchema::Top(top), Some(printkey)) = (&mut schema, &self.printkey) {
            let printkey = printkey.clone();
            top.printkey = Some(KeyPrinter(Arc::new(move |key: u64| {
                printkey
                    .eval_vars(&[key as i64])
                    .and_then(|v| {
                        v.as_str()
                            .map(str::to_string)
                            .or_else(|| v.as_int().map(|i| i.to_string()))
                    })
                    .unwrap_or_else(|| key.to_string())
            })));
        }
        AnalysisInfo {
            name: self.name.to_string(),
            schema,
        }
    }

    /// The events' print fmts (the `--than` raw lines).
    pub fn printer(&self) -> &EventPrinter {
        &self.printer
    }

    /// Each event's `exec=` expression, by event index.
    pub fn execs(&self) -> &[Option<BoundExpr>] {
        &self.execs
    }
}

/// hrtimer: the counted events are all but the last, the session's `software:cpu-clock`
/// timer (appended by the session after the `-e` events); `stacks` names its callchains.
fn hrtimer(
    options: &TraceOptions,
    events: &[&ResolvedEvent],
    stacks: StackTable,
) -> anyhow::Result<HrtimerAnalyzer> {
    let Some((clock, counted)) = events.split_last() else {
        bail!("hrtimer: no timer event (software:cpu-clock) in the session");
    };
    if software_event_of(&clock.layout).is_none() {
        bail!("hrtimer: the last event must be its timer, software:cpu-clock");
    }
    let names: Vec<String> = counted
        .iter()
        .map(|e| e.spec.alias.clone().unwrap_or_else(|| e.layout.name.clone()))
        .collect();
    let condition = match &options.condition {
        Some(text) => {
            let bound = Expr::parse(text)
                .and_then(|e| e.bind_vars(&condition_vars(&names)))
                .map_err(|e| anyhow::anyhow!("hrtimer {{expression}} '{text}': {e}"))?;
            Some((text.clone(), bound))
        }
        None if !counted.is_empty() => {
            // perf-prof: " {expression} needs to be specified."
            bail!("hrtimer: -e events need an {{expression}}, e.g. 'sched_switch==0'");
        }
        None => None,
    };
    let (period_ns, _) = options.counter_periods();
    Ok(HrtimerAnalyzer::new(
        HrtimerConfig {
            clock: crate::trace::event::EventIndex(counted.len() as u16),
            events: names,
            condition,
            period_ns: options.period_ns.unwrap_or(period_ns),
        },
        stacks,
    ))
}

/// kmemleak/kmemprof: the first stage allocates, the second frees. `ptr=` defaults to the
/// `ptr` field and an alloc event's `size=` to `bytes_alloc` (when the event has them);
/// kmemprof's `key=`, else `-k`, stands for `ptr=` as in perf-prof's multi-trace.
fn mem_events(options: &TraceOptions, stages: &[Vec<ResolvedEvent>]) -> anyhow::Result<Vec<MemEvent>> {
    let analyzer = options.analyzer.name();
    if stages.len() != 2 {
        bail!(
            "{analyzer} needs alloc and free events: --alloc 'kmem:kmalloc//ptr=ptr/size=bytes_alloc/stack/' \
             --free 'kmem:kfree//ptr=ptr/' (or -e ALLOC -e FREE); got {} stage(s)",
            stages.len()
        );
    }
    let default_key = options.default_key()?;
    let field = |event: &ResolvedEvent, name: &str| -> Option<BoundExpr> {
        event.layout.field(name)?;
        Expr::parse(name).ok()?.bind(&event.layout).ok()
    };
    let mut events = Vec::new();
    for (stage, role) in stages.iter().zip([MemRole::Alloc, MemRole::Free]) {
        for event in stage {
            let name = event.layout.full_name();
            let key = match (&event.attrs.key, &default_key) {
                (Some(key), _) if options.analyzer == AnalyzerKind::Kmemprof => Some(key.clone()),
                (None, Some(expr)) if options.analyzer == AnalyzerKind::Kmemprof => Some(
                    expr.bind(&event.layout)
                        .with_context(|| format!("-k {} on {name}", expr.text()))?,
                ),
                _ => None,
            };
            let Some(ptr) = event.attrs.ptr.clone().or(key).or_else(|| field(event, "ptr")) else {
                bail!(
                    "{analyzer}: {name}//ptr=?/ ptr attribute is not set and the event has no `ptr` field: \
                     give the address, e.g. -e '{name}//ptr=FIELD/'"
                );
            };
            let size = match role {
                MemRole::Alloc => event.attrs.size.clone().or_else(|| field(event, "bytes_alloc")),
                MemRole::Free => None,
            };
            events.push(MemEvent {
                role,
                name: event.spec.alias.clone().unwrap_or(name),
                ptr,
                size,
            });
        }
    }
    Ok(events)
}

/// Stacks named through the host's symbols when some event samples them.
fn stack_table(options: &TraceOptions, stages: &[Vec<ResolvedEvent>]) -> StackTable {
    let stacks = options.call_graph || stages.iter().flatten().any(|e| e.spec.stack);
    if !stacks {
        return StackTable::new(None);
    }
    // Without a symbolizer the frames print as addresses.
    let names = crate::symbols::host::stack_names::StackNames::new();
    StackTable::new(names.map(|mut names| {
        Box::new(move |pid: u32, chain: &[u64]| names.name(pid, chain)) as super::mem_events::StackNamer
    }))
}

/// num-dist over every event's `num=` (perf-prof refuses an event without one).
fn num_dist(
    options: &TraceOptions,
    events: &[&ResolvedEvent],
    threads: bool,
) -> anyhow::Result<NumDistAnalyzer> {
    let mut nums = Vec::new();
    for event in events {
        let Some(num) = event.attrs.num.clone() else {
            crate::usage!(
                "num-dist: {} has no num=EXPR: give each event one (-e '{}//num=FIELD/'), \
                 or use multi-trace for events without a number",
                event.layout.full_name(),
                event.layout.full_name()
            );
        };
        let unit = event
            .spec
            .num
            .as_ref()
            .map_or(ValueUnit::Number, |n| expr_unit(&event.layout, n.expr.text()));
        nums.push(NumEvent {
            name: event.spec.display_name().to_string(),
            num,
            unit,
        });
    }
    let instance = options.perins.then_some(if threads {
        NumInstance::Thread
    } else {
        NumInstance::Cpu
    });
    Ok(NumDistAnalyzer::new(nums, instance, options.than_ns, SLOW_PAIRS)?)
}

/// `-k EXPR` bound to one event's layout, or its own `key=`.
pub(super) fn key_of(event: &ResolvedEvent, default_key: Option<&Expr>) -> anyhow::Result<Option<KeySource>> {
    if let Some(key) = &event.attrs.key {
        return Ok(Some(number_of(key.clone())));
    }
    match default_key {
        Some(expr) => {
            let bound = expr
                .bind(&event.layout)
                .with_context(|| format!("-k {} on {}", expr.text(), event.layout.full_name()))?;
            Ok(Some(number_of(bound)))
        }
        None => Ok(None),
    }
}

fn multi_trace(
    options: &TraceOptions,
    stages: &[Vec<ResolvedEvent>],
    layouts: &[EventLayout],
    threads: bool,
) -> anyhow::Result<MultiTraceAnalyzer> {
    if stages.len() < 2 {
        bail!("multi-trace needs two stages at least: `-e EVENT1 -e EVENT2`");
    }
    let default_key = options.default_key()?;
    let mut index = 0u16;
    let mut config_stages = Vec::new();
    let mut key_text = options.key.clone();
    for stage in stages {
        let mut events = Vec::new();
        for event in stage {
            let mut part = StageEvent::new(crate::trace::event::EventIndex(index));
            index += 1;
            if let Some(key) = key_of(event, default_key.as_ref())? {
                part = part.key(key);
            }
            if key_text.is_none() {
                key_text = event.spec.key.as_ref().map(|k| k.expr.text().to_string());
            }
            if let Some(role) = &event.attrs.role {
                part.role = Some(number_of(role.clone()));
            }
            part.untraced = event.spec.untraced;
            if let Some(alias) = &event.spec.alias {
                part = part.alias(alias.clone());
            }
            events.push(part);
        }
        config_stages.push(events);
    }
    let mut config = MultiTraceConfig::new(config_stages);
    config.implementation = match options.analyzer {
        AnalyzerKind::MultiTracePair => Implementation::Pair,
        _ => Implementation::Delay,
    };
    config.instance = if threads { Instance::Thread } else { Instance::Cpu };
    config.perins = options.perins;
    config.cycle = options.cycle;
    config.than_ns = options.than_ns;
    config.lower_ns = options.lower_ns;
    config.heatmap = options.heatmap.is_some();
    config.detail = options.pair_detail;
    config.slow_pair_capacity = SLOW_PAIRS;
    config.key_header = key_text;
    Ok(MultiTraceAnalyzer::new(layouts, config)?)
}

fn top_config(
    options: &TraceOptions,
    events: &[&ResolvedEvent],
) -> anyhow::Result<(TopConfig, Option<BoundExpr>)> {
    let default_key = options.default_key()?;
    let mut top_events = Vec::new();
    let mut key_text = options.key.clone();
    let mut comm_text = None;
    let mut printkey = None;
    for (i, event) in events.iter().enumerate() {
        let spec = &event.spec;
        let mut columns = Vec::new();
        for (expr, attr) in event.attrs.top_by.iter().zip(&spec.top_by) {
            let header = if columns.is_empty() {
                spec.alias.clone()
            } else {
                None
            };
            let header = header.unwrap_or_else(|| attr.expr.text().to_string());
            columns.push(TopColumn::sum(&header, number_of(expr.clone()), true));
        }
        for (expr, attr) in event.attrs.top_add.iter().zip(&spec.top_add) {
            let header = if columns.is_empty() {
                spec.alias.clone()
            } else {
                None
            };
            let header = header.unwrap_or_else(|| attr.expr.text().to_string());
            columns.push(TopColumn::sum(&header, number_of(expr.clone()), false));
        }
        if columns.is_empty() {
            columns.push(TopColumn::count(spec.display_name()));
        }
        if key_text.is_none() {
            key_text = spec.key.as_ref().map(|k| k.expr.text().to_string());
        }
        if comm_text.is_none() {
            comm_text = spec.comm.as_ref().map(|c| c.expr.text().to_string());
        }
        if printkey.is_none() {
            printkey = event.attrs.printkey.clone();
        }
        let comm = event.attrs.comm.clone().map(|expr| {
            Box::new(move |e: &TraceEvent<'_>| {
                expr.eval(e).map(|v| match v.as_str() {
                    Some(s) => s.to_string(),
                    None => v.as_int().map(|i| i.to_string()).unwrap_or_default(),
                })
            }) as crate::analyzers::top::CommSource
        });
        top_events.push(TopEvent {
            event: crate::trace::event::EventIndex(i as u16),
            key: key_of(event, default_key.as_ref())?,
            comm,
            columns,
        });
    }
    let config = TopConfig {
        events: top_events,
        key_text,
        comm_text,
        only_comm: options.only_comm,
        // A pid key is a thread id: its name is the thread's own — from the names of the
        // threads there at the start (one that exits mid-run keeps its name), else /proc
        // once, remembered (not a /proc read per event).
        pid_comm: Some({
            let mut known = crate::model::threads::ThreadNames::new();
            crate::symbols::host::comms::scan_proc_comms(&mut known);
            let known = std::sync::Mutex::new(known);
            Box::new(move |tid| {
                let mut known = known.lock().unwrap_or_else(|e| e.into_inner());
                if let Some(name) = known.name(tid) {
                    return Some(name);
                }
                let name = read_proc_comm(tid, tid)?;
                known.set(tid, &name);
                Some(name)
            })
        }),
    };
    Ok((config, printkey))
}
