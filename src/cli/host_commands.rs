//! The host subcommands — `top` (sampling, or key/value aggregation with `-e`), `profile`,
//! `syscalls`, `rundelay`, `multi-trace` — and what each runs: the TUI over a live host
//! source, or perf-prof's text output (`--no-tui`, `-o FILE`, or stdout not a terminal).
//! In text mode stdout carries the tables and stderr only errors and lost-event lines, so
//! perf-prof's scripts (and its test harness, which fails on any stderr line) carry over.

use anyhow::Context;
use clap::{Args, Subcommand};

use crate::analyzers::options::{AnalyzerKind, COUNTER_INTERVAL_MS, TraceOptions};
use crate::sources::perf_event::software::spell_software_selectors;

use super::event_commands::{self, ExprArgs, ListArgs, TraceEventsArgs};
use super::exit::{Outcome, UsageError};
use super::host::{
    HostArgs, ImplArg, KeyArg, LatencyArgs, LatencyWorkflowArgs, MultiTraceArgs, PerinsArg, SamplingArgs,
    ThanArg, TraceArgs,
};
use super::host_run::{prepare_output, run_sampling, run_trace_command};
use super::profile_command::ProfileArgs;
use super::tui::TuiArgs;

#[derive(Subcommand)]
#[command(defer = true)]
pub enum HostCommand {
    /// Live CPU profile of this machine (perf_event cpu-clock with call stacks): hotspots,
    /// flamegraph, per-CPU/per-thread panes. With -e: perf-prof's `top`, a key/value table
    /// of tracepoint fields (`-e 'sched:sched_stat_runtime//top-by=runtime/'`).
    Top(TopArgs),
    /// The same CPU sampling as `top` (perf-prof's name for it); as text (stdout not a
    /// terminal), perf-prof's profile: a line per sample, `--than PERCENT`,
    /// `-g --flame-graph FILE [-i MS]`.
    Profile(ProfileArgs),
    /// Syscall latency per syscall (and per thread with --perins) from raw_syscalls.
    Syscalls(LatencyCommandArgs),
    /// Scheduling delay: wakeup (or preemption) → running again, per task.
    Rundelay(RundelayCommandArgs),
    /// Delay (or pairing) between events of consecutive -e stages, matched by key.
    MultiTrace(MultiTraceCommandArgs),
    /// Print every event by its print fmt (perf-prof's trace); `trace -e EVENT help`
    /// lists the event's fields.
    Trace(TraceEventsArgs),
    /// The tracepoints and probes tracefs has, filtered by a regular expression.
    List(ListArgs),
    /// Compile an expression against an event's format and evaluate it on live events.
    Expr(ExprArgs),
    /// Count each -e event per interval (per --period columns), per CPU or thread with
    /// --perins: perf-prof's `stat` (`-e sched:sched_switch -i 1000`).
    Stat(PerInstanceCounterArgs),
    /// Count each -e event per --period, several periods per -i interval: perf-prof's
    /// `hrcount` (`-e sched:sched_switch --period 100ms -i 1000`).
    Hrcount(PerInstanceCounterArgs),
    /// Count perf's software events (cpu-clock, task-clock, page-faults,
    /// context-switches, cpu-migrations; or the -e events) per CPU per interval:
    /// perf-prof's `percpu-stat`.
    PercpuStat(CounterCommandArgs),
    /// Page faults per thread and 2 MiB address region, user/kernel and writes
    /// (exceptions:page_fault_user/kernel; -e to filter or add `stack`).
    PageFaults(TraceCommandArgs),
    /// Time tasks spend in each state (R S D T t I, RD = waiting for a CPU) from
    /// sched_switch and sched_wakeup, per thread with --perins.
    TaskState(TaskStateCommandArgs),
    /// Who ran where: per CPU, each task's run time, from sched_switch.
    Oncpu(OncpuCommandArgs),
    /// The distribution of a number the events carry: -e 'sys:name//num=EXPR/' (per CPU
    /// or thread with --perins).
    NumDist(LatencyCommandArgs),
    /// VM exit → entry latency per exit reason, from kvm:kvm_exit and kvm:kvm_entry
    /// (perf-prof's kvm-exit; run it on the host of the VMs).
    KvmExit(KvmExitCommandArgs),
    /// A per-CPU timer every --period (or -F HZ) counts the -e events of each period and
    /// lists the periods where {expression} holds (perf-prof's hrtimer):
    /// `hrtimer -e sched:sched_switch -C 0 --period 50ms 'sched_switch==0'`.
    Hrtimer(HrtimerCommandArgs),
    /// Predict soft and hard lockups from the kernel's watchdog (its hrtimer, its
    /// migration/N thread) checked -F times a second per CPU (perf-prof's watchdog).
    Watchdog(super::watchdog::WatchdogCommandArgs),
    /// Block request stage latencies of one device (-d /dev/vda): getrq → insert →
    /// issue → complete, as perf-prof's blktrace.
    Blktrace(BlktraceCommandArgs),
    /// Allocations never freed, by allocation stack (perf-prof's kmemleak):
    /// `kmemleak --alloc 'kmem:kmalloc//ptr=ptr/size=bytes_alloc/stack/' --free 'kmem:kfree//ptr=ptr/'`
    /// (or the same as two -e); uprobes work too (`uretprobe:BINARY:malloc//ptr=ret/`).
    Kmemleak(super::kmem::KmemleakCommandArgs),
    /// Bytes allocated and freed per stack (perf-prof's kmemprof):
    /// `kmemprof -e 'kmem:kmalloc//size=bytes_alloc/stack/' -e 'kmem:kfree//stack/' -k ptr`.
    Kmemprof(super::kmem::KmemprofCommandArgs),
    /// Nested events — function entry and exit, one `-e ENTRY,EXIT` per function
    /// (uprobe + uretprobe, sys_enter + sys_exit): who calls whom and each function's
    /// time, as perf-prof's nested-trace.
    NestedTrace(NestedTraceCommandArgs),
}

/// nested-trace's `--impl`.
#[derive(Copy, Clone, Debug, clap::ValueEnum)]
pub enum NestedImplArg {
    /// Each function's time (entry => exit).
    Delay,
    /// The call tree.
    Call,
    /// The call tree with each function's time.
    CallDelay,
}

#[derive(Args)]
pub struct NestedTraceCommandArgs {
    #[command(flatten)]
    pub host: HostArgs,
    #[command(flatten)]
    pub trace: TraceArgs,
    #[command(flatten)]
    pub key: KeyArg,
    #[command(flatten)]
    pub than: ThanArg,
    /// What to report of the nested events.
    #[arg(long = "impl", value_enum, default_value_t = NestedImplArg::CallDelay, ignore_case = true)]
    pub implementation: NestedImplArg,
    #[command(flatten)]
    pub tui: TuiArgs,
}

#[derive(Args)]
pub struct KvmExitCommandArgs {
    #[command(flatten)]
    pub host: HostArgs,
    #[command(flatten)]
    pub trace: TraceArgs,
    #[command(flatten)]
    pub latency: LatencyArgs,
    /// An ftrace filter for kvm:kvm_exit (`exit_reason==48`).
    #[arg(long, value_name = "FILTER")]
    pub filter: Option<String>,
    #[command(flatten)]
    pub tui: TuiArgs,
}

impl KvmExitCommandArgs {
    fn options(&self) -> anyhow::Result<TraceOptions> {
        let mut trace = self.trace.options(AnalyzerKind::KvmExit);
        self.latency.apply(&mut trace);
        if !trace.events.is_empty() {
            crate::usage!("kvm-exit traces kvm:kvm_exit and kvm:kvm_entry itself: drop -e (use --filter)");
        }
        if let Some(filter) = &self.filter {
            // perf-prof applies --filter to kvm_exit only.
            trace.events = vec![format!("kvm:kvm_exit/{filter}/"), "kvm:kvm_entry".into()];
        }
        Ok(trace)
    }
}

#[derive(Args)]
pub struct HrtimerCommandArgs {
    #[command(flatten)]
    pub host: HostArgs,
    #[command(flatten)]
    pub trace: TraceArgs,
    /// The timer's period (`50ms`, `1s`, plain ns).
    #[arg(long, value_name = "TIME", value_parser = crate::cli::units::parse_duration_ns)]
    pub period: Option<u64>,
    /// The timer's frequency (a period of 1 s / HZ).
    #[arg(short = 'F', long = "freq", value_name = "HZ", conflicts_with = "period")]
    pub freq: Option<u64>,
    /// Print where the kernel was when a kept period ended (the timer's kernel stack),
    /// and make those stacks the Flamegraph.
    #[arg(short = 'g', long = "call-graph")]
    pub call_graph: bool,
    /// Which periods to list: a C expression over the -e events' names (their alias=),
    /// each the period's count, and `period`, its real length in ns.
    #[arg(value_name = "EXPRESSION")]
    pub expression: Option<String>,
    #[command(flatten)]
    pub tui: TuiArgs,
}

/// How often hrtimer's text prints the periods it kept (perf-prof prints each as it
/// comes; this is as close as a per-interval printer gets without a print per tick).
const HRTIMER_PRINT_MS: u64 = 100;

impl HrtimerCommandArgs {
    fn options(&self) -> anyhow::Result<TraceOptions> {
        let host = &self.host;
        if host.pids.is_some() || host.tids.is_some() || !host.workload.is_empty() {
            crate::usage!("hrtimer attaches to CPUs only (-C), not to processes (-p, -t, a workload)");
        }
        let period_ns = match (self.period, self.freq) {
            (Some(p), _) => p.max(1),
            (None, Some(hz)) if hz > 0 => 1_000_000_000 / hz,
            _ => crate::usage!("hrtimer needs its timer's period: --period 50ms, or -F HZ"),
        };
        let mut trace = self.trace.options(AnalyzerKind::Hrtimer);
        trace.period_ns = Some(period_ns);
        trace.condition = self.expression.clone();
        trace.call_graph = self.call_graph;
        trace.interval = trace
            .interval
            .or(Some(std::time::Duration::from_millis(HRTIMER_PRINT_MS)));
        Ok(trace)
    }
}

#[derive(Args)]
pub struct BlktraceCommandArgs {
    #[command(flatten)]
    pub host: HostArgs,
    /// The block device: a disk (/dev/vda) or a partition (its sector range of the disk).
    #[arg(short = 'd', long = "device", value_name = "DEVICE")]
    pub device: std::path::PathBuf,
    /// Print (and reset) the table every MS milliseconds in --no-tui mode.
    #[arg(short = 'i', long = "interval", value_name = "MS")]
    pub interval: Option<u64>,
    /// Threshold (`10ms`, `500us`, plain ns): count stages above it and list their events.
    #[arg(long, value_name = "TIME", value_parser = crate::cli::units::parse_duration_ns)]
    pub than: Option<u64>,
    /// Accepted for perf-prof command lines: events are always merged in time order.
    #[arg(long)]
    pub order: bool,
    #[command(flatten)]
    pub tui: TuiArgs,
}

impl BlktraceCommandArgs {
    /// The four block events, filtered in the kernel to the device's requests.
    fn options(&self) -> anyhow::Result<TraceOptions> {
        // A request's stages are recorded in whatever task runs then (the submitter, an
        // interrupt, a kworker): only CPU-wide events see them all.
        if self.host.pids.is_some() || self.host.tids.is_some() || !self.host.workload.is_empty() {
            crate::usage!(
                "blktrace watches a device, not tasks: drop -p/-t and the workload \
                 (run the workload beside it; -C limits the CPUs)"
            );
        }
        let device = crate::sources::block_device::BlockDevice::resolve(&self.device)?;
        let args = super::host::TraceArgs {
            events: crate::analyzers::blktrace::selectors(&device.kernel_filter()),
            interval: self.interval,
            order: self.order,
        };
        let mut trace = args.options(AnalyzerKind::Blktrace);
        trace.than_ns = self.than;
        Ok(trace)
    }
}

// stat and hrcount: the counters, per CPU or thread with --perins.
#[derive(Args)]
pub struct PerInstanceCounterArgs {
    #[command(flatten)]
    pub counter: CounterCommandArgs,
    #[command(flatten)]
    pub perins: PerinsArg,
}

impl PerInstanceCounterArgs {
    fn options(&self, analyzer: AnalyzerKind) -> TraceOptions {
        let mut trace = self.counter.options(analyzer);
        self.perins.apply(&mut trace);
        trace
    }
}

// percpu-stat's flags (it is per CPU anyway: no --perins), and the counters' common ones.
#[derive(Args)]
pub struct CounterCommandArgs {
    #[command(flatten)]
    pub host: HostArgs,
    #[command(flatten)]
    pub trace: TraceArgs,
    /// The counts' time resolution (`100ms`, `1s`, plain ns): one column per period of
    /// each -i interval (stat: default the interval; hrcount: a tenth of it).
    #[arg(long, value_name = "TIME", value_parser = crate::cli::units::parse_duration_ns)]
    pub period: Option<u64>,
    #[command(flatten)]
    pub tui: TuiArgs,
}

impl CounterCommandArgs {
    fn options(&self, analyzer: AnalyzerKind) -> TraceOptions {
        let mut trace = self.trace.options(analyzer);
        // `-e page-faults,cpu-clock`: perf's software events, as perf-prof takes them.
        trace.events = trace.events.iter().map(|e| spell_software_selectors(e)).collect();
        // perf-prof prints its counters every second unless told otherwise.
        trace.interval = trace
            .interval
            .or(Some(std::time::Duration::from_millis(COUNTER_INTERVAL_MS)));
        trace.period_ns = self.period;
        trace
    }
}

#[derive(Args)]
pub struct OncpuCommandArgs {
    #[command(flatten)]
    pub host: HostArgs,
    #[command(flatten)]
    pub trace: TraceArgs,
    /// One item per command name instead of per thread.
    #[arg(long)]
    pub only_comm: bool,
    /// Switches and the longest run next to each run time.
    #[arg(long)]
    pub detail: bool,
    #[command(flatten)]
    pub tui: TuiArgs,
}

#[derive(Args)]
pub struct TaskStateCommandArgs {
    #[command(flatten)]
    pub host: HostArgs,
    #[command(flatten)]
    pub trace: TraceArgs,
    #[command(flatten)]
    pub latency: LatencyArgs,
    /// Report interruptible sleeps (S) only (with -D: S and D).
    #[arg(short = 'S', long = "interruptible", overrides_with = "no_interruptible")]
    pub interruptible: bool,
    /// Undo -S (perf-prof's `no-` prefix: `task-state -i 1000 --no-interruptible`); the
    /// last of the two given wins.
    #[arg(long = "no-interruptible", overrides_with = "interruptible")]
    pub no_interruptible: bool,
    /// Report uninterruptible sleeps (D) only (with -S: S and D).
    #[arg(short = 'D', long = "uninterruptible")]
    pub uninterruptible: bool,
    /// Only tasks with these names (globs, comma-separated: 'java,python*').
    #[arg(long = "filter", value_name = "COMM,...")]
    pub filter: Option<String>,
    #[command(flatten)]
    pub tui: TuiArgs,
}

#[derive(Args)]
pub struct TopArgs {
    #[command(flatten)]
    pub host: HostArgs,
    #[command(flatten)]
    pub sampling: SamplingArgs,
    #[command(flatten)]
    pub trace: TraceArgs,
    #[command(flatten)]
    pub key: KeyArg,
    /// With -e: aggregate by command name instead of key.
    #[arg(long)]
    pub only_comm: bool,
    #[command(flatten)]
    pub tui: TuiArgs,
}

// page-faults: the events' own flags only.
#[derive(Args)]
pub struct TraceCommandArgs {
    #[command(flatten)]
    pub host: HostArgs,
    #[command(flatten)]
    pub trace: TraceArgs,
    #[command(flatten)]
    pub tui: TuiArgs,
}

// syscalls and num-dist: a distribution per key, per instance with --perins, --than.
#[derive(Args)]
pub struct LatencyCommandArgs {
    #[command(flatten)]
    pub host: HostArgs,
    #[command(flatten)]
    pub trace: TraceArgs,
    #[command(flatten)]
    pub latency: LatencyArgs,
    #[command(flatten)]
    pub tui: TuiArgs,
}

impl LatencyCommandArgs {
    fn options(&self, analyzer: AnalyzerKind) -> TraceOptions {
        let mut trace = self.trace.options(analyzer);
        self.latency.apply(&mut trace);
        trace
    }
}

#[derive(Args)]
pub struct RundelayCommandArgs {
    #[command(flatten)]
    pub host: HostArgs,
    #[command(flatten)]
    pub trace: TraceArgs,
    #[command(flatten)]
    pub latency: LatencyArgs,
    #[command(flatten)]
    pub workflow: LatencyWorkflowArgs,
    #[command(flatten)]
    pub tui: TuiArgs,
}

#[derive(Args)]
pub struct MultiTraceCommandArgs {
    #[command(flatten)]
    pub host: HostArgs,
    #[command(flatten)]
    pub trace: TraceArgs,
    #[command(flatten)]
    pub key: KeyArg,
    #[command(flatten)]
    pub latency: LatencyArgs,
    #[command(flatten)]
    pub multi: MultiTraceArgs,
    #[command(flatten)]
    pub tui: TuiArgs,
}

/// Run one host subcommand.
pub fn run(command: HostCommand) -> anyhow::Result<Outcome> {
    let host = match &command {
        HostCommand::Top(a) => Some(&a.host),
        HostCommand::Profile(a) => Some(&a.host),
        HostCommand::Syscalls(a) | HostCommand::NumDist(a) => Some(&a.host),
        HostCommand::PageFaults(a) => Some(&a.host),
        HostCommand::Rundelay(a) => Some(&a.host),
        HostCommand::MultiTrace(a) => Some(&a.host),
        HostCommand::Stat(a) | HostCommand::Hrcount(a) => Some(&a.counter.host),
        HostCommand::PercpuStat(a) => Some(&a.host),
        HostCommand::TaskState(a) => Some(&a.host),
        HostCommand::Oncpu(a) => Some(&a.host),
        HostCommand::KvmExit(a) => Some(&a.host),
        HostCommand::Hrtimer(a) => Some(&a.host),
        HostCommand::Watchdog(a) => Some(&a.host),
        HostCommand::Blktrace(a) => Some(&a.host),
        HostCommand::Kmemleak(a) => Some(&a.host),
        HostCommand::Kmemprof(a) => Some(&a.host),
        HostCommand::NestedTrace(a) => Some(&a.host),
        HostCommand::Trace(a) => Some(&a.host),
        HostCommand::Expr(a) => Some(&a.host),
        // Reads tracefs and prints; nothing runs.
        HostCommand::List(_) => None,
    };
    if let Some(host) = host {
        prepare_output(host)?;
    }
    match command {
        HostCommand::Top(a) if !a.trace.events.is_empty() => {
            let mut trace = a.trace.options(AnalyzerKind::Top);
            a.key.apply(&mut trace);
            trace.only_comm = a.only_comm;
            run_trace_command(&a.host, &trace, &a.tui)
        }
        HostCommand::Top(a) => {
            // Without -e, top samples stacks: the key/value table's flags mean nothing.
            let t = &a.trace;
            let given: Vec<&str> = [
                (a.key.key.is_some(), "-k"),
                (t.interval.is_some(), "-i"),
                (a.only_comm, "--only-comm"),
            ]
            .into_iter()
            .filter_map(|(set, flag)| set.then_some(flag))
            .collect();
            if !given.is_empty() {
                return Err(UsageError(format!(
                    "{} {} for top -e (a key/value table of tracepoint fields); sampling top \
                     (no -e) takes none: drop {}, or give -e EVENT",
                    given.join(", "),
                    if given.len() == 1 { "is" } else { "are" },
                    if given.len() == 1 { "it" } else { "them" },
                ))
                .into());
            }
            run_sampling(&a.host, &a.sampling, &a.tui)
        }
        HostCommand::Profile(a) => super::profile_command::run_profile(&a),
        HostCommand::Syscalls(a) => run_trace_command(&a.host, &a.options(AnalyzerKind::Syscalls), &a.tui),
        HostCommand::Rundelay(a) => {
            let mut trace = a.trace.options(AnalyzerKind::Rundelay);
            a.latency.apply(&mut trace);
            latency_workflow(&mut trace, &a.workflow)?;
            run_trace_command(&a.host, &trace, &a.tui)
        }
        HostCommand::MultiTrace(a) => {
            let analyzer = match a.multi.implementation {
                ImplArg::Delay => AnalyzerKind::MultiTraceDelay,
                ImplArg::Pair => AnalyzerKind::MultiTracePair,
            };
            let mut trace = a.trace.options(analyzer);
            a.key.apply(&mut trace);
            a.latency.apply(&mut trace);
            trace.cycle = a.multi.cycle;
            latency_workflow(&mut trace, &a.multi.latency)?;
            run_trace_command(&a.host, &trace, &a.tui)
        }
        HostCommand::Stat(a) => {
            run_trace_command(&a.counter.host, &a.options(AnalyzerKind::Stat), &a.counter.tui)
        }
        HostCommand::Hrcount(a) => {
            run_trace_command(&a.counter.host, &a.options(AnalyzerKind::Hrcount), &a.counter.tui)
        }
        HostCommand::PageFaults(a) => {
            run_trace_command(&a.host, &a.trace.options(AnalyzerKind::PageFaults), &a.tui)
        }
        HostCommand::PercpuStat(a) => {
            run_trace_command(&a.host, &a.options(AnalyzerKind::PercpuStat), &a.tui)
        }
        HostCommand::Trace(a) => event_commands::run_trace(a),
        HostCommand::List(a) => event_commands::run_list(a),
        HostCommand::Expr(a) => event_commands::run_expr(a),
        HostCommand::Oncpu(a) => {
            let mut trace = a.trace.options(AnalyzerKind::OnCpu);
            trace.only_comm = a.only_comm;
            trace.detail = a.detail;
            let mut host = a.host.clone();
            if host.workload.is_empty() && (host.pids.is_some() || host.tids.is_some()) {
                // Thread mode: a run starts at a switch recorded in another task's
                // context, so every CPU is watched for the chosen threads' runs.
                trace.only_tids = chosen_threads(host.pids.take(), host.tids.take())?;
            }
            run_trace_command(&host, &trace, &a.tui)
        }
        HostCommand::NumDist(a) => run_trace_command(&a.host, &a.options(AnalyzerKind::NumDist), &a.tui),
        HostCommand::KvmExit(a) => run_trace_command(&a.host, &a.options()?, &a.tui),
        HostCommand::Hrtimer(a) => run_trace_command(&a.host, &a.options()?, &a.tui),
        HostCommand::Kmemleak(a) => run_trace_command(&a.host, &a.options()?, &a.tui),
        HostCommand::Kmemprof(a) => run_trace_command(&a.host, &a.options()?, &a.tui),
        HostCommand::Watchdog(a) => {
            let (host, trace) = a.options()?;
            if host.text_output() && !super::watchdog::has_hardware_pmu() {
                // On stdout, as perf-prof's notices: its harness fails on any stderr line.
                crate::stdio::print(&format!("{}\n", super::watchdog::NO_PMU_NOTICE))?;
            }
            run_trace_command(&host, &trace, &a.tui)
        }
        HostCommand::Blktrace(a) => run_trace_command(&a.host, &a.options()?, &a.tui),
        HostCommand::NestedTrace(a) => {
            let analyzer = match a.implementation {
                NestedImplArg::Delay => AnalyzerKind::NestedTraceDelay,
                NestedImplArg::Call => AnalyzerKind::NestedTraceCall,
                NestedImplArg::CallDelay => AnalyzerKind::NestedTraceCallDelay,
            };
            let mut trace = a.trace.options(analyzer);
            a.key.apply(&mut trace);
            a.than.apply(&mut trace);
            run_trace_command(&a.host, &trace, &a.tui)
        }
        HostCommand::TaskState(a) => {
            let mut trace = a.trace.options(AnalyzerKind::TaskState);
            a.latency.apply(&mut trace);
            trace.interruptible = a.interruptible;
            trace.uninterruptible = a.uninterruptible;
            trace.only_comms = a
                .filter
                .iter()
                .flat_map(|f| f.split(','))
                .filter(|c| !c.is_empty())
                .map(str::to_string)
                .collect();
            let mut host = a.host.clone();
            if host.workload.is_empty() && (host.pids.is_some() || host.tids.is_some()) {
                // A task's switch-in and wakeup are recorded in another task's context:
                // watch every CPU and keep the chosen threads' states (as perf-prof).
                trace.only_tids = chosen_threads(host.pids.take(), host.tids.take())?;
            }
            run_trace_command(&host, &trace, &a.tui)
        }
    }
}

/// perf-prof's latency workflow flags (`--lower`, `--heatmap`, `--only-than`, `--detail`)
/// into the options of a pairing analyzer (multi-trace, rundelay).
fn latency_workflow(trace: &mut TraceOptions, args: &LatencyWorkflowArgs) -> anyhow::Result<()> {
    trace.lower_ns = args.lower;
    trace.heatmap = args.heatmap.clone();
    if let Some(than) = args.only_than {
        trace.than_ns = Some(than);
        trace.only_than = true;
    }
    if let Some(list) = &args.detail {
        if trace.than_ns.is_none() && trace.lower_ns.is_none() {
            crate::usage!(
                "--detail lists the events inside the pairs --than, --only-than or --lower lists: give one"
            );
        }
        trace.pair_detail =
            Some(crate::analyzers::multi_trace::DetailFilter::parse(list).map_err(UsageError)?);
    }
    Ok(())
}

/// The threads `-p PIDS` (every thread of each, now) and `-t TIDS` name.
fn chosen_threads(pids: Option<String>, tids: Option<String>) -> anyhow::Result<Vec<u32>> {
    use crate::sources::perf_event::targets::{Target, parse_id_list, resolve_targets};
    let ids = |text: Option<String>, flag: &str| -> anyhow::Result<Vec<u32>> {
        match text {
            Some(t) => parse_id_list(&t).with_context(|| format!("{flag} {t}")),
            None => Ok(Vec::new()),
        }
    };
    let targets = resolve_targets(None, &ids(pids, "-p")?, &ids(tids, "-t")?)?;
    Ok(targets
        .into_iter()
        .filter_map(|t| match t {
            Target::Thread(tid) => Some(tid),
            _ => None,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Probe {
        #[command(flatten)]
        task_state: TaskStateCommandArgs,
    }

    fn sleeps(args: &[&str]) -> (bool, bool) {
        let p = Probe::try_parse_from(std::iter::once("task-state").chain(args.iter().copied()))
            .unwrap_or_else(|e| panic!("{args:?}: {e}"));
        (p.task_state.interruptible, p.task_state.uninterruptible)
    }

    #[test]
    fn task_state_takes_perf_profs_no_interruptible() {
        assert_eq!(sleeps(&["-i", "1000", "--no-interruptible"]), (false, false));
        assert_eq!(sleeps(&["-S", "--no-interruptible"]), (false, false));
        assert_eq!(sleeps(&["--no-interruptible", "-S"]), (true, false));
        assert_eq!(sleeps(&["-SD", "--no-interruptible"]), (false, true));
        assert_eq!(sleeps(&["-S"]), (true, false));
    }
}
