//! Running a host session from its options: sampling or an analyzer, in the terminal UI
//! or as text, with the recording and the export asked for. Every host subcommand's
//! arguments end here (host_commands, event_commands, profile_command, recorded_commands
//! turn flags into options; this runs them).

use anyhow::{Context, bail};

use crate::analyzers::options::{AnalyzerKind, TraceOptions};
use crate::app::launch::run_tui;
use crate::batch::folded_stacks::FoldedStacks;
use crate::batch::headless::{self, Headless, Sink};
use crate::batch::report;
use crate::batch::trace_text::IntervalText;
use crate::engine::export::ExportRequest;
use crate::feeds::host::options::{HostRunOptions, SamplingOptions};
use crate::feeds::host::sampling_feed::HostSampleFeed;
use crate::feeds::host::tracing_feed::HostTraceFeed;
use crate::model::Selection;
use crate::store::{Recorder, SessionMeta};
use crate::trace::expr::BoundExpr;
use crate::views::ViewKind;

use super::exit::{Outcome, UsageError};
use super::host::{HostArgs, SamplingArgs};
use super::tui::TuiArgs;

pub(crate) fn run_options(host: &HostArgs) -> anyhow::Result<HostRunOptions> {
    host.run_options().map_err(|e| UsageError(e).into())
}

/// `-o FILE`, and in text mode the signals perf-prof's scripts send.
pub(crate) fn prepare_output(host: &HostArgs) -> anyhow::Result<()> {
    if let Some(path) = &host.output {
        super::output_file::redirect_output_to(path)?;
    }
    if host.text_output() {
        // Before the start (kallsyms, opening events can take seconds): perf-prof's
        // scripts send SIGUSR2 then SIGINT at any time, and neither may kill the run.
        headless::stop_on_signals()?;
        headless::dump_on_sigusr2()?;
    }
    Ok(())
}

/// `--record FILE.db`: the session file, created before anything starts (a bad path fails
/// here, not after the run).
pub(crate) fn recorder(run: &HostRunOptions, force: bool, kind: &str) -> anyhow::Result<Option<Recorder>> {
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

pub(crate) fn export_request(run: &HostRunOptions) -> ExportRequest {
    ExportRequest {
        // The same directory a replay of the recorded session (meta `arch`) writes to.
        arch: Some(std::env::consts::ARCH.into()),
        ..ExportRequest::new(run.out.clone())
    }
}

pub(crate) fn run_sampling(
    host: &HostArgs,
    sampling: &SamplingArgs,
    tui: &TuiArgs,
) -> anyhow::Result<Outcome> {
    tui.check()?;
    let run = run_options(host)?;
    let options: SamplingOptions = sampling.options().map_err(UsageError)?;
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
            report::print_summary(set, 20)?;
        }
        if let Some(copies) = &outcome.engine.state.stats.stack_copies {
            // What --call-graph dwarf cost: the copies' bytes through the rings, the
            // records lost, how whole the stacks came out.
            crate::stdio::print(&format!("{}\n", copies.summary_line()))?;
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
    let end = run_tui(config, Box::new(feed), "host")?;
    match &end.export {
        Some(Ok(dir)) => crate::stdio::print(&format!("perfscope: artifacts in {}\n", dir.display()))?,
        Some(Err(e)) => bail!("writing the artifacts failed: {e}"),
        None => {}
    }
    Outcome::of_verdict(&end.verdict)
}

/// A flag the analyzer would ignore is refused before anything starts.
fn refuse_unused_flags(trace: &TraceOptions) -> anyhow::Result<()> {
    let unused = trace.unused_flags();
    if unused.is_empty() {
        return Ok(());
    }
    Err(UsageError(format!("{} (drop it)", unused.join("; "))).into())
}

pub(crate) fn run_trace_command(
    host: &HostArgs,
    trace: &TraceOptions,
    tui: &TuiArgs,
) -> anyhow::Result<Outcome> {
    refuse_unused_flags(trace)?;
    tui.check()?;
    if host.text_output() {
        return run_trace_text(host, trace, None, None);
    }
    let run = run_options(host)?;
    let recording = recorder(&run, host.force, "host-trace")?;
    let feed = HostTraceFeed::start(&run, trace)?;
    let mut config = tui.config(export_request(&run), Selection::all())?;
    config.recording = recording;
    if tui.view.is_none() {
        // An analyzer has no stacks to draw: its distributions are what there is to see.
        config.initial_view = match trace.analyzer {
            // trace -g: the events' stacks are the session's samples.
            AnalyzerKind::Trace if trace.call_graph => ViewKind::Flamegraph,
            AnalyzerKind::Kmemleak | AnalyzerKind::Kmemprof => ViewKind::Table,
            AnalyzerKind::Trace => ViewKind::Console,
            AnalyzerKind::Top
            | AnalyzerKind::MultiTracePair
            | AnalyzerKind::Stat
            | AnalyzerKind::Hrcount
            | AnalyzerKind::PercpuStat
            | AnalyzerKind::PageFaults
            | AnalyzerKind::Hrtimer
            | AnalyzerKind::Watchdog
            | AnalyzerKind::OnCpu
            | AnalyzerKind::NestedTraceCall
            | AnalyzerKind::NestedTraceCallDelay
            | AnalyzerKind::Sql => ViewKind::Table,
            _ => ViewKind::Histogram,
        };
    }
    // Tracing has no guest console; trace's console is its event list.
    if trace.analyzer != AnalyzerKind::Trace {
        config.hidden_views = vec![ViewKind::Console];
    }
    let end = run_tui(config, Box::new(feed), trace.analyzer.name()).context("the terminal UI failed")?;
    if let Some(Err(e)) = &end.export {
        bail!("writing the artifacts failed: {e}");
    }
    Outcome::of_verdict(&end.verdict)
}

/// A tracepoint session printed as text: perf-prof's tables per interval, or (`trace`,
/// `expr`) every event's raw line — with `evaluate`, followed by that expression's value.
pub(crate) fn run_trace_text(
    host: &HostArgs,
    trace: &TraceOptions,
    evaluate: Option<(String, BoundExpr)>,
    folded: Option<&mut FoldedStacks>,
) -> anyhow::Result<Outcome> {
    refuse_unused_flags(trace)?;
    let run = run_options(host)?;
    let recording = recorder(&run, host.force, "host-trace")?;
    let feed = HostTraceFeed::start(&run, trace)?;
    let mut text = IntervalText::new(crate::stdio::out(), trace.interval);
    if trace.only_than
        && let Some(than) = trace.than_ns
    {
        text = text.only_than(than);
    }
    if trace.analyzer == AnalyzerKind::Trace {
        text = text.events_only(evaluate);
    }
    let mut sinks: Vec<&mut dyn Sink> = Vec::new();
    if let Some(folded) = folded {
        text = text.without_stacks();
        sinks.push(folded);
    }
    sinks.insert(0, &mut text);
    let outcome = headless::run(
        Box::new(feed),
        Headless {
            selection: Selection::all(),
            // The text is perf-prof's; `--out DIR` asks for the artifact set beside it.
            export: host.out.is_some().then(|| export_request(&run)),
            recording,
            progress: None,
        },
        &mut sinks,
    )?;
    // No closing summary: perf-prof's stderr has errors and lost-event lines only (the
    // lost events were said per interval; the exit code says the run lost some).
    Outcome::of_headless(&outcome)
}
