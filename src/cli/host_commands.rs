//! The host subcommands — `top` (sampling, or key/value aggregation with `-e`), `profile`,
//! `syscalls`, `rundelay`, `multi-trace` — and what each runs: the TUI over a live host
//! source, or perf-prof's text output (`--no-tui`, `-o FILE`, or stdout not a terminal).
//! In text mode stdout carries the tables and stderr only errors and lost-event lines, so
//! perf-prof's scripts (and its test harness, which fails on any stderr line) carry over.

use anyhow::{Context, bail};
use clap::{Args, Subcommand};

use crate::analyzers::options::{AnalyzerKind, TraceOptions};
use crate::app::launch::run_tui;
use crate::batch::headless::{self, Headless};
use crate::batch::report;
use crate::batch::trace_text::IntervalText;
use crate::engine::export::ExportRequest;
use crate::feeds::host::options::{HostRunOptions, SamplingOptions};
use crate::feeds::host::sampling_feed::HostSampleFeed;
use crate::feeds::host::tracing_feed::HostTraceFeed;
use crate::model::Selection;
use crate::store::{Recorder, SessionMeta};
use crate::views::ViewKind;

use super::exit::Outcome;
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
pub fn run(command: HostCommand) -> anyhow::Result<Outcome> {
    let host = match &command {
        HostCommand::Top(a) => &a.host,
        HostCommand::Profile(a) => &a.host,
        HostCommand::Syscalls(a) | HostCommand::Rundelay(a) => &a.host,
        HostCommand::MultiTrace(a) => &a.host,
    };
    if let Some(path) = &host.output {
        super::output_file::redirect_output_to(path)?;
    }
    if host.text_output() {
        // Before the start (kallsyms, opening events can take seconds): perf-prof's scripts
        // send SIGUSR2 then SIGINT at any time, and neither may kill the run.
        headless::stop_on_signals()?;
        headless::dump_on_sigusr2()?;
    }
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

/// `--record FILE.db`: the session file, created before anything starts (a bad path fails
/// here, not after the run).
fn recorder(run: &HostRunOptions, force: bool, kind: &str) -> anyhow::Result<Option<Recorder>> {
    match &run.record {
        Some(path) => {
            let mut meta = SessionMeta::now(kind, &run.target.describe());
            meta.arch = Some(std::env::consts::ARCH.into());
            Ok(Some(
                Recorder::create_with(path, &meta, force)
                    .with_context(|| format!("--record {}", path.display()))?,
            ))
        }
        None => Ok(None),
    }
}

fn export_request(run: &HostRunOptions) -> ExportRequest {
    ExportRequest {
        // The same directory a replay of the recorded session (meta `arch`) writes to.
        arch: Some(std::env::consts::ARCH.into()),
        ..ExportRequest::new(run.out.clone())
    }
}

fn run_sampling(host: &HostArgs, sampling: &SamplingArgs, tui: &TuiArgs) -> anyhow::Result<Outcome> {
    let run = run_options(host)?;
    let options: SamplingOptions = sampling.options().map_err(anyhow::Error::msg)?;
    let recording = recorder(&run, host.force, "host")?;
    let feed = HostSampleFeed::start(&run, &options)?;
    let export = export_request(&run);
    if host.text_output() {
        let outcome = headless::run(
            Box::new(feed),
            Headless {
                selection: Selection::all(),
                export: Some(export),
                recording,
                progress: None,
            },
            &mut [],
        )?;
        if let Some(set) = &outcome.exported {
            report::print_summary(set, 20);
        }
        return Outcome::of_headless(&outcome);
    }
    let mut config = tui.config(export, Selection::all())?;
    config.recording = recording;
    if tui.view.is_none() {
        // As perf top: a system-wide flamegraph is unreadable in 80×24, the hottest
        // functions are not; the flamegraph is a key away.
        config.initial_view = ViewKind::Hotspots;
    }
    // Sampling has no analyzer (latency, tables) and no guest console.
    config.hidden_views = vec![ViewKind::Histogram, ViewKind::Table, ViewKind::Console];
    match run_tui(config, Box::new(feed), "host")? {
        Some(Ok(dir)) => println!("perfscope: artifacts in {}", dir.display()),
        Some(Err(e)) => bail!("writing the artifacts failed: {e}"),
        None => {}
    }
    Ok(Outcome::Clean)
}

fn run_trace_command(host: &HostArgs, trace: &TraceOptions, tui: &TuiArgs) -> anyhow::Result<Outcome> {
    let run = run_options(host)?;
    let recording = recorder(&run, host.force, "host-trace")?;
    let feed = HostTraceFeed::start(&run, trace)?;
    if host.text_output() {
        let mut text = IntervalText::new(std::io::stdout(), trace.interval);
        let outcome = headless::run(
            Box::new(feed),
            Headless {
                selection: Selection::all(),
                export: None,
                recording,
                progress: None,
            },
            &mut [&mut text],
        )?;
        // No closing summary: perf-prof's stderr has errors and lost-event lines only
        // (the lost events were said per interval; the exit code says the run lost some).
        return Outcome::of_headless(&outcome);
    }
    let mut config = tui.config(export_request(&run), Selection::all())?;
    config.recording = recording;
    if tui.view.is_none() {
        // An analyzer has no stacks to draw: its distributions are what there is to see.
        config.initial_view = match trace.analyzer {
            AnalyzerKind::Top | AnalyzerKind::MultiTracePair => ViewKind::Table,
            _ => ViewKind::Histogram,
        };
    }
    // Tracing has no guest console.
    config.hidden_views = vec![ViewKind::Console];
    run_tui(config, Box::new(feed), trace.analyzer.name()).context("the terminal UI failed")?;
    Ok(Outcome::Clean)
}
