//! The host subcommands — `top` (sampling, or key/value aggregation with `-e`), `profile`,
//! `syscalls`, `rundelay`, `multi-trace` — and what each runs: the TUI over a live host
//! source, or the `--no-tui` text output.

use anyhow::{Context, bail};
use clap::{Args, Subcommand};

use crate::app::launch::run_tui;
use crate::batch::host_trace::run_trace;
use crate::batch::report;
use crate::batch::session::run_headless;
use crate::live::export::ExportRequest;
use crate::live::host::options::{AnalyzerKind, HostRunOptions, SamplingOptions, TraceOptions};
use crate::live::host::sample_source::HostSampleSource;
use crate::live::host::trace_source::HostTraceSource;
use crate::model::Selection;
use crate::views::ViewKind;

use super::host::{HostArgs, ImplArg, MultiTraceArgs, SamplingArgs, TraceArgs};
use super::tui::TuiArgs;

#[derive(Subcommand)]
pub enum HostCommand {
    /// Live CPU profile of this machine (perf_event cpu-clock with call stacks): hotspots,
    /// flamegraph, per-CPU/per-thread panes. With -e: perf-prof's `top`, a key/value table
    /// of tracepoint fields (`-e 'sched:sched_stat_runtime//top-by=runtime/'`).
    Top(TopArgs),
    /// The same CPU sampling as `top` (perf-prof's name for it).
    Profile(ProfileArgs),
    /// Syscall latency per syscall (and per thread with --perins) from raw_syscalls.
    Syscalls(TraceCommandArgs),
    /// Scheduling delay: wakeup (or preemption) → running again, per task.
    Rundelay(TraceCommandArgs),
    /// Delay (or pairing) between events of consecutive -e stages, matched by key.
    MultiTrace(MultiTraceCommandArgs),
}

#[derive(Args)]
pub struct TopArgs {
    #[command(flatten)]
    pub host: HostArgs,
    #[command(flatten)]
    pub sampling: SamplingArgs,
    #[command(flatten)]
    pub trace: TraceArgs,
    /// With -e: aggregate by command name instead of key.
    #[arg(long)]
    pub only_comm: bool,
    #[command(flatten)]
    pub tui: TuiArgs,
}

#[derive(Args)]
pub struct ProfileArgs {
    #[command(flatten)]
    pub host: HostArgs,
    #[command(flatten)]
    pub sampling: SamplingArgs,
    #[command(flatten)]
    pub tui: TuiArgs,
}

#[derive(Args)]
pub struct TraceCommandArgs {
    #[command(flatten)]
    pub host: HostArgs,
    #[command(flatten)]
    pub trace: TraceArgs,
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
    pub multi: MultiTraceArgs,
    #[command(flatten)]
    pub tui: TuiArgs,
}

fn run_options(host: &HostArgs) -> anyhow::Result<HostRunOptions> {
    host.run_options().map_err(anyhow::Error::msg)
}

/// Run one host subcommand.
pub fn run(command: HostCommand) -> anyhow::Result<()> {
    match command {
        HostCommand::Top(a) if !a.trace.events.is_empty() => {
            let mut trace = a.trace.options(AnalyzerKind::Top);
            trace.only_comm = a.only_comm;
            run_trace_command(&a.host, &trace, &a.tui)
        }
        HostCommand::Top(a) => run_sampling(&a.host, &a.sampling, &a.tui),
        HostCommand::Profile(a) => run_sampling(&a.host, &a.sampling, &a.tui),
        HostCommand::Syscalls(a) => {
            run_trace_command(&a.host, &a.trace.options(AnalyzerKind::Syscalls), &a.tui)
        }
        HostCommand::Rundelay(a) => {
            run_trace_command(&a.host, &a.trace.options(AnalyzerKind::Rundelay), &a.tui)
        }
        HostCommand::MultiTrace(a) => {
            let analyzer = match a.multi.implementation {
                ImplArg::Delay => AnalyzerKind::MultiTraceDelay,
                ImplArg::Pair => AnalyzerKind::MultiTracePair,
            };
            let mut trace = a.trace.options(analyzer);
            trace.cycle = a.multi.cycle;
            run_trace_command(&a.host, &trace, &a.tui)
        }
    }
}

fn run_sampling(host: &HostArgs, sampling: &SamplingArgs, tui: &TuiArgs) -> anyhow::Result<()> {
    let run = run_options(host)?;
    let options: SamplingOptions = sampling.options().map_err(anyhow::Error::msg)?;
    let source = HostSampleSource::start(&run, &options)?;
    let export = ExportRequest {
        out_dir: run.out.clone(),
        // The same directory a replay of the recorded session (meta `arch`) writes to.
        arch: Some(std::env::consts::ARCH.into()),
    };
    if host.no_tui {
        if run.duration.is_none() && run.target.workload.is_empty() {
            eprintln!("perfscope: sampling until Ctrl-C (or give --duration S)");
        }
        let set = run_headless(Box::new(source), Selection::all(), &export, false)?;
        print!("{}", report::summary(&set, 20));
        return Ok(());
    }
    let config = tui.config(export, Selection::all())?;
    match run_tui(config, Box::new(source), "host")? {
        Some(Ok(dir)) => println!("perfscope: artifacts in {}", dir.display()),
        Some(Err(e)) => bail!("writing the artifacts failed: {e}"),
        None => {}
    }
    Ok(())
}

fn run_trace_command(host: &HostArgs, trace: &TraceOptions, tui: &TuiArgs) -> anyhow::Result<()> {
    let run = run_options(host)?;
    if host.no_tui {
        return run_trace(&run, trace);
    }
    let source = HostTraceSource::start(&run, trace)?;
    let export = ExportRequest {
        out_dir: run.out.clone(),
        // The same directory a replay of the recorded session (meta `arch`) writes to.
        arch: Some(std::env::consts::ARCH.into()),
    };
    let mut config = tui.config(export, Selection::all())?;
    if matches!(tui.view, ViewKind::Flamegraph) {
        // An analyzer has no stacks to draw: its distributions are what there is to see.
        config.initial_view = match trace.analyzer {
            AnalyzerKind::Top | AnalyzerKind::MultiTracePair => ViewKind::Table,
            _ => ViewKind::Histogram,
        };
    }
    run_tui(config, Box::new(source), trace.analyzer.name()).context("the terminal UI failed")?;
    Ok(())
}
