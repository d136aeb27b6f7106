//! The subcommands that read recorded inputs — `report`, `diff`, `open` and `sql` — their
//! arguments and what each runs: the artifact set of a qperf.bin, folded file or session;
//! a differential profile; the terminal UI (or `--no-tui` export) over a recorded or
//! followed input; SQL over a session file.

use std::path::PathBuf;

use anyhow::bail;
use clap::Args;

use crate::app::launch::run_tui;
use crate::batch::headless::{self, Headless, WaitingNotice};
use crate::batch::report::{ReportInput, ReportOptions};
use crate::batch::{diff, report};
use crate::engine::export::ExportRequest;
use crate::export::artifacts::markers_from_secs;
use crate::feeds::Feed;
use crate::feeds::file::{FileFeed, Input};
use crate::feeds::follow::FollowFeed;
use crate::feeds::replay::ReplayFeed;
use crate::feeds::symbol_options::OpenOptions;
use crate::model::Selection;
use crate::store::{self, SqlOutput};
use crate::symbols::guest_space::Boot;
use crate::views::ViewKind;

use super::exit::Outcome;
use super::recorded::{ArtifactArgs, SymbolArgs, WindowArgs, focus_of, is_session};
use super::tui::TuiArgs;

#[derive(Args)]
pub struct ReportArgs {
    /// The qperf.bin to analyse.
    #[arg(value_name = "QPERF_BIN", required_unless_present = "folded")]
    pub input: Option<PathBuf>,
    /// Analyse a folded-stacks file instead of a qperf.bin.
    #[arg(long, value_name = "FILE", conflicts_with = "input")]
    pub folded: Option<PathBuf>,
    #[command(flatten)]
    pub symbols: SymbolArgs,
    /// Output root: artifacts go to <DIR>/perf/<arch>/latest/.
    #[arg(long, short = 'o', value_name = "DIR")]
    pub out: PathBuf,
    /// Architecture name for the output path (default: from the ELF).
    #[arg(long, value_parser = parse_arch_name)]
    pub arch: Option<String>,
    #[command(flatten)]
    pub window: WindowArgs,
    #[command(flatten)]
    pub artifacts: ArtifactArgs,
}

#[derive(Args)]
pub struct DiffArgs {
    /// Baseline profile (folded file, or qperf.bin with --elf/--kallsyms).
    pub baseline: PathBuf,
    /// Comparison profile.
    pub compare: PathBuf,
    #[command(flatten)]
    pub symbols: SymbolArgs,
    /// Where diff.folded, diff.csv and flamegraph.diff.svg go.
    #[arg(long, short = 'o', value_name = "DIR", default_value = "perfscope-diff")]
    pub out: PathBuf,
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub top: usize,
}

#[derive(Args)]
pub struct OpenArgs {
    /// qperf.bin (needs --elf or --kallsyms), folded file, or a recorded session (.db).
    pub input: PathBuf,
    /// No terminal UI: load the input and write the artifact set to --out (as the export key does).
    #[arg(long)]
    pub no_tui: bool,
    #[command(flatten)]
    pub symbols: SymbolArgs,
    /// A console log to show in the console pane (followed as it grows with --follow).
    #[arg(long, value_name = "FILE")]
    pub console: Option<PathBuf>,
    /// Follow a qperf.bin that another QEMU is still writing (attach mode).
    #[arg(long)]
    pub follow: bool,
    #[command(flatten)]
    pub window: WindowArgs,
    /// Where the export key writes: <DIR>/perf/<arch>/latest/.
    #[arg(long, short = 'o', value_name = "DIR", default_value = "perfscope-out")]
    pub out: PathBuf,
    /// Architecture name for the export path (default: from the ELF).
    #[arg(long, value_parser = parse_arch_name)]
    pub arch: Option<String>,
    #[command(flatten)]
    pub artifacts: ArtifactArgs,
    #[command(flatten)]
    pub tui: TuiArgs,
}

// `perfscope sql FILE.db QUERY` (a recorded session), or with `-e`, perf-prof's live
// sql profiler: `perfscope sql -e EVENT,... -i MS --query 'SELECT ...'`.
#[derive(Args)]
pub struct SqlArgs {
    /// The session file (without -e).
    pub session: Option<PathBuf>,
    /// One or more `;`-separated queries over the session file. Tables: meta, instances,
    /// frames, stacks, stack_frames, samples, event_types, events, console, markers,
    /// symbols, lost; one view per event type (e.g. sched_switch); field(type, raw,
    /// 'name') decodes a field.
    pub query: Option<String>,
    /// Print CSV (a header line, then rows) instead of perf-prof's tables.
    #[arg(long)]
    pub csv: bool,
    /// Live (with -e): `;`-separated queries run over each interval's events; one table
    /// per event (its alias, else its name) with perf-prof's columns (`_pid, _tid, _time,
    /// _cpu, _period`, the common fields, the event's fields), and event_metadata.
    #[arg(long = "query", value_name = "SQL")]
    pub live_query: Option<String>,
    #[command(flatten)]
    pub host: super::host::HostArgs,
    #[command(flatten)]
    pub trace: super::host::TraceArgs,
    #[command(flatten)]
    pub tui: TuiArgs,
}

/// `perfscope report`: the full artifact set of a qperf.bin, folded file or session.
pub fn run_report(a: ReportArgs) -> anyhow::Result<Outcome> {
    let input = match (a.folded.clone(), a.input.clone()) {
        (Some(path), _) => ReportInput::File(Input::Folded { path }),
        (None, Some(path)) if is_session(&path) => ReportInput::Session(path),
        (None, Some(path)) => ReportInput::File(a.symbols.input(path)),
        (None, None) => crate::usage!("give a qperf.bin, a session file or --folded FILE"),
    };
    let mut o = ReportOptions::new(input, a.out.clone());
    o.arch = a.arch.clone();
    o.symbol_style = a.symbols.style();
    o.kernel_filter = a.symbols.kernel_filter;
    o.user_elves = a.symbols.user_elves.clone();
    o.focus = a.window.focus.clone();
    o.start_sec = a.window.start_secs();
    o.stop_sec = a.window.stop_secs();
    o.no_truncate = a.artifacts.no_truncate;
    o.artifacts = a.artifacts.options()?;
    o.artifacts.min_percent = a.artifacts.min_percent;
    let set = report::run(&o)?;
    report::print_summary(&set, 10)?;
    Outcome::of_verdict(&set.verdict)
}

/// `perfscope diff`: the top changed functions and a differential flamegraph.
pub fn run_diff(a: DiffArgs) -> anyhow::Result<Outcome> {
    let o = diff::DiffOptions {
        baseline: a.symbols.input(a.baseline.clone()),
        compare: a.symbols.input(a.compare.clone()),
        out_dir: a.out.clone(),
        top: a.top,
        open: OpenOptions {
            style: a.symbols.style(),
            kernel_filter: a.symbols.kernel_filter,
            boot: Boot::Direct,
            user_elves: a.symbols.user_elves.clone(),
        },
    };
    let outcome = diff::run(&o)?;
    // Results on stdout, warnings on stderr (a script reading stdout gets only results).
    for w in &outcome.warnings {
        crate::stdio::say(&format!("warning: {w}"));
    }
    crate::stdio::print(&diff::summary(&outcome, o.top))?;
    // As complete as both profiles: each one's reasons, said for which.
    let mut reasons = Vec::new();
    for (side, verdict) in ["baseline", "comparison"].iter().zip(&outcome.verdicts) {
        if let Some(why) = verdict.failed() {
            bail!("{side}: {why}");
        }
        reasons.extend(verdict.reasons().into_iter().map(|r| format!("{side}: {r}")));
    }
    Ok(Outcome::from_reasons(reasons))
}

/// `perfscope open`: the terminal UI over a recorded (or followed) input; with `--no-tui`,
/// its artifact set.
pub fn run_open(a: OpenArgs) -> anyhow::Result<Outcome> {
    a.tui.check()?;
    let focus = focus_of(a.window.focus.as_deref())?;
    let export = ExportRequest {
        out_dir: a.out.clone(),
        arch: a.arch.clone(),
        artifacts: a.artifacts.options()?,
    };
    if a.no_tui && !a.follow {
        // A recorded input to its end: what `perfscope report` does, with the same flags.
        let input = if is_session(&a.input) {
            ReportInput::Session(a.input.clone())
        } else {
            ReportInput::File(a.symbols.input(a.input.clone()))
        };
        let mut o = ReportOptions::new(input, a.out.clone());
        o.arch = a.arch.clone();
        o.symbol_style = a.symbols.style();
        o.kernel_filter = a.symbols.kernel_filter;
        o.focus = a.window.focus.clone();
        o.start_sec = a.window.start_secs();
        o.stop_sec = a.window.stop_secs();
        o.no_truncate = a.artifacts.no_truncate;
        o.artifacts = export.artifacts.clone();
        o.artifacts.min_percent = a.artifacts.min_percent;
        o.console = a.console.clone();
        let set = report::run(&o)?;
        report::print_summary(&set, 10)?;
        return Outcome::of_verdict(&set.verdict);
    }
    let markers = markers_from_secs(a.window.start_secs(), a.window.stop_secs());
    // With markers the views open on the marker window, as the report's main window.
    let selection = Selection::window(markers.main_window()).with_focus(focus);
    let options = OpenOptions {
        style: a.symbols.style(),
        kernel_filter: a.symbols.kernel_filter,
        boot: Boot::Direct,
        user_elves: a.symbols.user_elves.clone(),
    };
    let feed: Box<dyn Feed> = if is_session(&a.input) {
        Box::new(ReplayFeed::open(&a.input)?)
    } else if a.follow {
        // The file may not exist yet: it is a qperf.bin by definition here.
        let Some(symbols) = a.symbols.source() else {
            crate::usage!("--follow needs the kernel ELF (--elf) or a kallsyms file (--kallsyms)");
        };
        // The file may not be there yet (the QEMU run starts after); its directory must.
        let dir = a
            .input
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(std::path::Path::new("."));
        if !dir.is_dir() {
            anyhow::bail!(
                "--follow {}: there is no directory {} for it to appear in",
                a.input.display(),
                dir.display()
            );
        }
        Box::new(FollowFeed::new(
            a.input.clone(),
            symbols,
            options,
            a.console.clone(),
            markers,
        ))
    } else {
        let input = a.symbols.input(a.input.clone());
        Box::new(FileFeed::open(input, options, a.console.clone(), markers)?)
    };
    if a.no_tui {
        // A followed file that is not there yet is waited for, and said on stderr.
        let mut waiting = WaitingNotice::default();
        let outcome = headless::run(
            feed,
            Headless {
                selection,
                export: Some(export),
                recording: None,
                progress: None,
            },
            &mut [&mut waiting],
        )?;
        if let Some(set) = &outcome.exported {
            report::print_summary(set, 10)?;
        }
        return Outcome::of_headless(&outcome);
    }
    let mut config = a.tui.config(export, selection)?;
    if !is_session(&a.input) {
        // A profile file has no analyzer (latency, tables), and a console only if given.
        config.hidden_views = vec![ViewKind::Histogram, ViewKind::Table];
        if a.console.is_none() {
            config.hidden_views.push(ViewKind::Console);
        }
    }
    let end = run_tui(config, feed, &a.input.display().to_string())?;
    if let Some(Err(e)) = &end.export {
        bail!("writing the artifacts failed: {e}");
    }
    Outcome::of_verdict(&end.verdict)
}

/// `perfscope sql`: the queries' results on stdout, as tables or CSV.
pub fn run_sql(a: SqlArgs) -> anyhow::Result<Outcome> {
    if !a.trace.events.is_empty() {
        return run_live_sql(a);
    }
    let (Some(session), Some(query)) = (&a.session, &a.query) else {
        crate::usage!(
            "sql: give a session and a query (`perfscope sql FILE.db 'SELECT ...'`), \
             or events to query live (`perfscope sql -e EVENT -i 1000 --query 'SELECT ...'`)"
        );
    };
    if a.live_query.is_some() {
        crate::usage!(
            "sql: --query is for live events (-e); a session's query is the argument after FILE.db"
        );
    }
    let format = if a.csv { SqlOutput::Csv } else { SqlOutput::Table };
    store::run_sql(session, query, format, &mut crate::stdio::out())?;
    Ok(Outcome::Clean)
}

/// perf-prof's live sql: the -e events into per-interval tables, --query printed each -i.
fn run_live_sql(a: SqlArgs) -> anyhow::Result<Outcome> {
    if a.session.is_some() || a.query.is_some() {
        crate::usage!(
            "sql -e queries live events: drop the FILE/QUERY arguments and give --query 'SELECT ...'"
        );
    }
    if a.csv {
        crate::usage!("sql -e prints perf-prof's tables: --csv is for session files");
    }
    let Some(query) = a.live_query.clone() else {
        crate::usage!("sql -e needs --query 'SELECT ...' (one table per event, named after it)");
    };
    let mut trace = a.trace.options(crate::analyzers::options::AnalyzerKind::Sql);
    trace.query = Some(query);
    super::host_run::prepare_output(&a.host)?;
    super::host_run::run_trace_command(&a.host, &trace, &a.tui)
}

/// `--arch` becomes a directory under `perf/`: a plain name, never a path.
fn parse_arch_name(text: &str) -> Result<String, String> {
    crate::export::layout::OutputLayout::new(std::path::Path::new("."), text)
        .map(|_| text.to_string())
        .map_err(|e| e.to_string())
}
