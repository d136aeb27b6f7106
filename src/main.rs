//! The perfscope command line: parses arguments and hands them to the library.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Args, Parser, Subcommand, ValueEnum};

use perfscope::app::launch::run_tui;
use perfscope::batch::headless::{self, ConsoleEcho, Headless};
use perfscope::batch::report::{ReportInput, ReportOptions};
use perfscope::batch::{diff, report};
use perfscope::cli::host_commands::HostCommand;
use perfscope::cli::tui::TuiArgs;
use perfscope::engine::export::ExportRequest;
use perfscope::export::artifacts::{
    ArtifactOptions, DEFAULT_MIN_PERCENT, DEFAULT_TOP, FlamegraphKind, StackFormat, markers_from_secs,
};
use perfscope::feeds::Feed;
use perfscope::feeds::file::{FileFeed, Input, OpenOptions, SymbolSource, looks_folded};
use perfscope::feeds::follow::FollowFeed;
use perfscope::feeds::qemu_setup::{QemuRunOptions, start_qemu};
use perfscope::feeds::replay::ReplayFeed;
use perfscope::model::{Focus, Selection};
use perfscope::sources::qemu::Arch;
use perfscope::sources::qemu::plugin_args::{CallchainMode, SampleMode};
use perfscope::store::{Recorder, SessionMeta, SqlOutput, run_sql};
use perfscope::symbols::SymbolStyle;
use perfscope::views::ViewKind;

#[derive(Parser)]
#[command(
    name = "perfscope",
    version,
    about = "Live terminal-UI profiler for QEMU guest kernels and Linux hosts"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Write the full artifact set (folded, SVG, HTML, pprof, reports) for a recorded profile.
    Report(ReportArgs),
    /// Compare two profiles: top changed functions and a differential flamegraph.
    Diff(DiffArgs),
    /// Explore a recorded profile in the terminal UI (qperf.bin with --elf, or folded).
    Open(OpenArgs),
    /// Run a guest kernel in QEMU with the sampling plugin: live console, hotspots and
    /// flamegraph, the workload window between markers, and the full artifact set.
    Qemu(QemuArgs),
    /// Query a recorded session (`--record FILE.db`) with SQL; prints perf-prof's sql tables.
    Sql(SqlArgs),
    #[command(flatten)]
    Host(HostCommand),
}

#[derive(Args)]
struct SqlArgs {
    /// The session file.
    session: PathBuf,
    /// One or more `;`-separated queries. Tables: meta, instances, frames, stacks,
    /// stack_frames, samples, event_types, events, console, markers, symbols, lost; one
    /// view per event type (e.g. sched_switch); field(type, raw, 'name') decodes a field.
    query: String,
    /// Print CSV (a header line, then rows) instead of perf-prof's tables.
    #[arg(long)]
    csv: bool,
}

#[derive(Args)]
struct QemuArgs {
    #[arg(long, value_enum, default_value_t = Arch::Riscv64, ignore_case = true)]
    arch: Arch,
    /// The kernel QEMU boots (an ELF, or a raw image with --elf for the symbols).
    #[arg(long, value_name = "ELF|IMAGE")]
    kernel: PathBuf,
    /// The ELF with symbols (default: --kernel when it is an ELF).
    #[arg(long, value_name = "ELF")]
    elf: Option<PathBuf>,
    /// The QEMU binary (default: qemu-system-<arch> on PATH).
    #[arg(long, value_name = "BINARY")]
    qemu: Option<PathBuf>,
    /// An extra QEMU argument (repeatable; values may start with '-').
    #[arg(long = "qemu-arg", value_name = "ARG", allow_hyphen_values = true)]
    qemu_args: Vec<String>,
    /// The plugin library (default: libperfscope_qemu_plugin.so beside perfscope or in target/).
    #[arg(long, value_name = "SO")]
    plugin: Option<PathBuf>,
    #[arg(long, value_name = "N")]
    smp: Option<u32>,
    /// Boot x86_64 through OVMF (found in $TGOS_OVMF_DIR or /usr/share/OVMF).
    #[arg(long)]
    uefi: bool,
    /// Samples per second per vCPU.
    #[arg(long, value_name = "HZ", default_value_t = 99)]
    freq: u32,
    #[arg(long, value_enum, default_value_t = SampleMode::Tb, ignore_case = true)]
    mode: SampleMode,
    #[arg(long, visible_alias = "perf-callchain", value_enum, default_value_t = CallchainMode::Leaf, ignore_case = true)]
    callchain: CallchainMode,
    #[arg(long, value_name = "N", default_value_t = 128)]
    max_depth: u32,
    /// Record the run (samples with their stacks, console lines, markers) into an SQLite
    /// session, replayed with `perfscope open FILE.db` and queried with `perfscope sql`.
    #[arg(long, value_name = "FILE.db")]
    record: Option<PathBuf>,
    /// Keep only kernel-text samples (firmware and user space are dropped and counted).
    #[arg(long)]
    kernel_filter: bool,
    #[arg(long, value_enum, default_value_t = StyleArg::Full, ignore_case = true)]
    symbol_style: StyleArg,
    /// Text of the guest shell prompt the init command waits for.
    #[arg(long, value_name = "S")]
    shell_prefix: Option<String>,
    /// Typed into the guest shell once the prompt is up.
    #[arg(long, visible_alias = "workload", value_name = "CMD")]
    shell_init_cmd: Option<String>,
    /// Console text that opens the workload window.
    #[arg(long, value_name = "M")]
    start_marker: Option<String>,
    /// Console text that closes the window and stops QEMU.
    #[arg(long, value_name = "M")]
    stop_marker: Option<String>,
    /// Stop QEMU this many seconds after the start marker if no stop marker came.
    #[arg(long, value_name = "S")]
    workload_timeout: Option<f64>,
    /// Stop QEMU after this many seconds in any case (0: no limit).
    #[arg(long, value_name = "S", default_value_t = 0.0)]
    timeout: f64,
    /// Show only stacks with a frame matching REGEX (also writes *.focus.* artifacts).
    #[arg(long, value_name = "REGEX")]
    focus: Option<String>,
    /// Write qemu.time.txt (always on; kept for xtask compatibility).
    #[arg(long)]
    host_time: bool,
    /// Count perf_event host counters of the QEMU process into qemu.perf.csv.
    #[arg(long)]
    host_perf: bool,
    /// Events for --host-perf (perf names, comma-separated).
    #[arg(long, value_name = "LIST", requires = "host_perf")]
    host_perf_events: Option<String>,
    /// Output root: artifacts go to <DIR>/perf/<arch>/latest/.
    #[arg(
        long,
        short = 'o',
        value_name = "DIR",
        default_value = "target/qperf/perfscope"
    )]
    out: PathBuf,
    /// Batch mode for scripts and CI: no terminal UI, console echoed to stdout.
    #[arg(long)]
    no_tui: bool,
    #[command(flatten)]
    artifacts: ArtifactArgs,
    #[command(flatten)]
    tui: TuiArgs,
}

#[derive(Args)]
struct OpenArgs {
    /// qperf.bin (needs --elf or --kallsyms), folded file, or a recorded session (.db).
    input: PathBuf,
    /// No terminal UI: load the input and write the artifact set to --out (as the export key does).
    #[arg(long)]
    no_tui: bool,
    #[command(flatten)]
    symbols: SymbolArgs,
    /// A console log to show in the console pane (followed as it grows with --follow).
    #[arg(long, value_name = "FILE")]
    console: Option<PathBuf>,
    /// Follow a qperf.bin that another QEMU is still writing (attach mode).
    #[arg(long)]
    follow: bool,
    #[command(flatten)]
    window: WindowArgs,
    /// Where the export key writes: <DIR>/perf/<arch>/latest/.
    #[arg(long, short = 'o', value_name = "DIR", default_value = "perfscope-out")]
    out: PathBuf,
    /// Architecture name for the export path (default: from the ELF).
    #[arg(long)]
    arch: Option<String>,
    #[command(flatten)]
    artifacts: ArtifactArgs,
    #[command(flatten)]
    tui: TuiArgs,
}

#[derive(Args)]
struct SymbolArgs {
    /// Kernel ELF with symbols (and DWARF, for lines and inline frames).
    #[arg(long, short = 'e', value_name = "ELF")]
    elf: Option<PathBuf>,
    /// A kallsyms file instead of an ELF (Linux guests).
    #[arg(long, value_name = "FILE", conflicts_with = "elf")]
    kallsyms: Option<PathBuf>,
    /// How much of each name to show.
    #[arg(long, value_enum, default_value_t = StyleArg::Full, ignore_case = true)]
    symbol_style: StyleArg,
    /// Keep only frames inside the kernel's text range (firmware and user addresses are dropped and counted).
    #[arg(long)]
    kernel_filter: bool,
}

/// Which samples count: a focus and the marker window.
#[derive(Args)]
struct WindowArgs {
    /// Focus on samples whose stack has a frame matching REGEX (report: extra *.focus.*
    /// artifacts; TUI: the initial focus, changed later with the focus key).
    #[arg(long, value_name = "REGEX")]
    focus: Option<String>,
    /// Main window start, seconds on the sample clock (samples before are "boot").
    #[arg(long, value_name = "S")]
    start_sec: Option<f64>,
    /// Main window end, seconds on the sample clock (samples from here on are "post").
    #[arg(long, value_name = "S")]
    stop_sec: Option<f64>,
}

#[derive(Args)]
struct ReportArgs {
    /// The qperf.bin to analyse.
    #[arg(value_name = "QPERF_BIN", required_unless_present = "folded")]
    input: Option<PathBuf>,
    /// Analyse a folded-stacks file instead of a qperf.bin.
    #[arg(long, value_name = "FILE", conflicts_with = "input")]
    folded: Option<PathBuf>,
    #[command(flatten)]
    symbols: SymbolArgs,
    /// Output root: artifacts go to <DIR>/perf/<arch>/latest/.
    #[arg(long, short = 'o', value_name = "DIR")]
    out: PathBuf,
    /// Architecture name for the output path (default: from the ELF).
    #[arg(long)]
    arch: Option<String>,
    #[command(flatten)]
    window: WindowArgs,
    #[command(flatten)]
    artifacts: ArtifactArgs,
}

/// Which artifacts to write and how: the same flags for every command that writes them.
#[derive(Args)]
struct ArtifactArgs {
    /// Stack formats to write (the reports are always written).
    #[arg(long, value_enum, default_value_t = FormatArg::All, ignore_case = true)]
    format: FormatArg,
    #[arg(long, value_enum, default_value_t = KindArg::Svg, ignore_case = true)]
    flamegraph_kind: KindArg,
    /// Do not prune narrow frames from the flamegraphs.
    #[arg(long)]
    no_truncate: bool,
    /// Flamegraph minimum frame width, percent of all samples.
    #[arg(long, value_name = "P", default_value_t = DEFAULT_MIN_PERCENT)]
    min_percent: f64,
    /// Rows in the hotspot tables.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_TOP)]
    top: usize,
}

impl ArtifactArgs {
    fn options(&self) -> anyhow::Result<ArtifactOptions> {
        if self.min_percent.is_nan() || self.min_percent < 0.0 {
            bail!("--min-percent must be 0 or more (got {})", self.min_percent);
        }
        if self.top == 0 {
            bail!("--top must be at least 1");
        }
        Ok(ArtifactOptions {
            format: match self.format {
                FormatArg::Folded => StackFormat::Folded,
                FormatArg::Svg => StackFormat::Svg,
                FormatArg::Pprof => StackFormat::Pprof,
                FormatArg::All => StackFormat::All,
            },
            flamegraph_kind: match self.flamegraph_kind {
                KindArg::Svg => FlamegraphKind::Svg,
                KindArg::Html => FlamegraphKind::Html,
                KindArg::Folded => FlamegraphKind::Folded,
            },
            min_percent: if self.no_truncate { 0.0 } else { self.min_percent },
            top: self.top,
            ..ArtifactOptions::default()
        })
    }
}

#[derive(Args)]
struct DiffArgs {
    /// Baseline profile (folded file, or qperf.bin with --elf/--kallsyms).
    baseline: PathBuf,
    /// Comparison profile.
    compare: PathBuf,
    #[command(flatten)]
    symbols: SymbolArgs,
    /// Where diff.folded, diff.csv and flamegraph.diff.svg go.
    #[arg(long, short = 'o', value_name = "DIR", default_value = "perfscope-diff")]
    out: PathBuf,
    #[arg(long, value_name = "N", default_value_t = 20)]
    top: usize,
}

#[derive(Copy, Clone, ValueEnum)]
enum StyleArg {
    Full,
    Short,
    Module,
}

#[derive(Copy, Clone, ValueEnum)]
enum FormatArg {
    Folded,
    Svg,
    Pprof,
    All,
}

#[derive(Copy, Clone, ValueEnum)]
enum KindArg {
    Svg,
    Html,
    Folded,
}

impl StyleArg {
    fn style(self) -> SymbolStyle {
        match self {
            StyleArg::Full => SymbolStyle::Full,
            StyleArg::Short => SymbolStyle::Short,
            StyleArg::Module => SymbolStyle::Module,
        }
    }
}

impl SymbolArgs {
    fn style(&self) -> SymbolStyle {
        match self.symbol_style {
            StyleArg::Full => SymbolStyle::Full,
            StyleArg::Short => SymbolStyle::Short,
            StyleArg::Module => SymbolStyle::Module,
        }
    }

    fn source(&self) -> Option<SymbolSource> {
        match (&self.elf, &self.kallsyms) {
            (Some(elf), _) => Some(SymbolSource::Elf(elf.clone())),
            (None, Some(k)) => Some(SymbolSource::Kallsyms(k.clone())),
            (None, None) => None,
        }
    }

    /// A folded file, or a qperf.bin (which needs symbols).
    fn input(&self, path: PathBuf) -> anyhow::Result<Input> {
        if looks_folded(&path).with_context(|| format!("cannot read {}", path.display()))? {
            return Ok(Input::Folded { path });
        }
        match self.source() {
            Some(symbols) => Ok(Input::Qperf { path, symbols }),
            None => bail!(
                "{} is a qperf.bin: pass the kernel ELF with --elf (or a kallsyms file with --kallsyms)",
                path.display()
            ),
        }
    }
}

fn focus_of(text: Option<&str>) -> anyhow::Result<Option<Focus>> {
    text.map(Focus::new)
        .transpose()
        .context("--focus is not a valid regular expression")
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Report(a) => {
            let input = match (a.folded.clone(), a.input.clone()) {
                (Some(path), _) => ReportInput::File(Input::Folded { path }),
                (None, Some(path)) if is_session(&path) => ReportInput::Session(path),
                (None, Some(path)) => ReportInput::File(a.symbols.input(path)?),
                (None, None) => bail!("give a qperf.bin, a session file or --folded FILE"),
            };
            let mut o = ReportOptions::new(input, a.out.clone());
            o.arch = a.arch.clone();
            o.symbol_style = a.symbols.style();
            o.kernel_filter = a.symbols.kernel_filter;
            o.focus = a.window.focus.clone();
            o.start_sec = a.window.start_sec;
            o.stop_sec = a.window.stop_sec;
            o.no_truncate = a.artifacts.no_truncate;
            o.artifacts = a.artifacts.options()?;
            o.artifacts.min_percent = a.artifacts.min_percent;
            let set = report::run(&o)?;
            print!("{}", report::summary(&set, 10));
        }
        Command::Diff(a) => {
            let o = diff::DiffOptions {
                baseline: a.symbols.input(a.baseline.clone())?,
                compare: a.symbols.input(a.compare.clone())?,
                out_dir: a.out.clone(),
                top: a.top,
                open: OpenOptions {
                    style: a.symbols.style(),
                    kernel_filter: a.symbols.kernel_filter,
                },
            };
            let outcome = diff::run(&o)?;
            print!("{}", diff::summary(&outcome, o.top));
        }
        Command::Open(a) => run_open(a)?,
        Command::Qemu(a) => run_qemu(a)?,
        Command::Host(command) => perfscope::cli::host_commands::run(command)?,
        Command::Sql(a) => {
            let format = if a.csv { SqlOutput::Csv } else { SqlOutput::Table };
            run_sql(&a.session, &a.query, format, &mut std::io::stdout().lock())?;
        }
    }
    Ok(())
}

fn run_open(a: OpenArgs) -> anyhow::Result<()> {
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
            ReportInput::File(a.symbols.input(a.input.clone())?)
        };
        let mut o = ReportOptions::new(input, a.out.clone());
        o.arch = a.arch.clone();
        o.symbol_style = a.symbols.style();
        o.kernel_filter = a.symbols.kernel_filter;
        o.focus = a.window.focus.clone();
        o.start_sec = a.window.start_sec;
        o.stop_sec = a.window.stop_sec;
        o.no_truncate = a.artifacts.no_truncate;
        o.artifacts = export.artifacts.clone();
        o.artifacts.min_percent = a.artifacts.min_percent;
        o.console = a.console.clone();
        let set = report::run(&o)?;
        print!("{}", report::summary(&set, 10));
        return Ok(());
    }
    let markers = markers_from_secs(a.window.start_sec, a.window.stop_sec);
    // With markers the views open on the marker window, as the report's main window.
    let selection = Selection::window(markers.main_window()).with_focus(focus);
    let options = OpenOptions {
        style: a.symbols.style(),
        kernel_filter: a.symbols.kernel_filter,
    };
    let feed: Box<dyn Feed> = if is_session(&a.input) {
        Box::new(ReplayFeed::open(&a.input)?)
    } else if a.follow {
        // The file may not exist yet: it is a qperf.bin by definition here.
        let Some(symbols) = a.symbols.source() else {
            bail!("--follow needs the kernel ELF (--elf) or a kallsyms file (--kallsyms)");
        };
        Box::new(FollowFeed::new(
            a.input.clone(),
            symbols,
            options,
            a.console.clone(),
            markers,
        ))
    } else {
        let input = a.symbols.input(a.input.clone())?;
        Box::new(FileFeed::new(input, options, a.console.clone(), markers))
    };
    if a.no_tui {
        let outcome = headless::run(
            feed,
            Headless {
                selection,
                export: Some(export),
                recording: None,
                progress: None,
            },
            &mut [],
        )?;
        if let Some(set) = &outcome.exported {
            print!("{}", report::summary(set, 10));
        }
        if let Some(e) = outcome.error {
            bail!(e);
        }
        return Ok(());
    }
    let config = a.tui.config(export, selection)?;
    run_tui(config, feed, &a.input.display().to_string())?;
    Ok(())
}

/// A session file: named `.db`, or an SQLite file by its header.
fn is_session(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "db")
        || perfscope::store::schema::is_sqlite_file(path).unwrap_or(false)
}

fn seconds(flag: &str, s: f64) -> anyhow::Result<Duration> {
    if !s.is_finite() || s < 0.0 {
        bail!("{flag} must be a non-negative number of seconds (got {s})");
    }
    Ok(Duration::from_secs_f64(s))
}

fn run_qemu(a: QemuArgs) -> anyhow::Result<()> {
    let focus = focus_of(a.focus.as_deref())?;
    let options = QemuRunOptions {
        arch: a.arch,
        kernel: a.kernel.clone(),
        elf: a.elf.clone(),
        qemu: a.qemu.clone(),
        qemu_args: a.qemu_args.clone(),
        plugin: a.plugin.clone(),
        smp: a.smp,
        uefi: a.uefi,
        freq_hz: a.freq,
        mode: a.mode,
        callchain: a.callchain,
        max_depth: a.max_depth,
        kernel_filter: a.kernel_filter,
        symbol_style: a.symbol_style.style(),
        shell_prefix: a.shell_prefix.clone(),
        init_cmd: a.shell_init_cmd.clone(),
        start_marker: a.start_marker.clone(),
        stop_marker: a.stop_marker.clone(),
        workload_timeout: a
            .workload_timeout
            .map(|s| seconds("--workload-timeout", s))
            .transpose()?,
        timeout: Some(seconds("--timeout", a.timeout)?).filter(|d| !d.is_zero()),
        host_perf: a.host_perf,
        host_perf_events: a.host_perf_events.clone(),
        out: a.out.clone(),
    };
    let export = ExportRequest {
        out_dir: a.out.clone(),
        arch: Some(a.arch.name().to_string()),
        artifacts: a.artifacts.options()?,
    };
    let recording = match &a.record {
        Some(path) => {
            let mut meta = SessionMeta::now("qemu", &a.kernel.display().to_string());
            meta.arch = Some(a.arch.name().to_string());
            Some(Recorder::create(path, &meta).with_context(|| format!("--record {}", path.display()))?)
        }
        None => None,
    };
    let feed = start_qemu(&options)?;
    let work_dir = export.out_dir.join("perf").join(a.arch.name()).join("latest");
    if a.no_tui {
        let mut echo = ConsoleEcho::default();
        let outcome = headless::run(
            Box::new(feed),
            Headless {
                selection: Selection::all().with_focus(focus),
                export: Some(export),
                recording,
                progress: None,
            },
            &mut [&mut echo],
        )?;
        if let Some(set) = &outcome.exported {
            print!("{}", report::summary(set, 10));
        }
        if let Some(e) = outcome.error {
            bail!(e);
        }
        return Ok(());
    }
    let mut config = a.tui.config(export.clone(), Selection::all().with_focus(focus))?;
    config.export_on_finish = Some(export);
    config.recording = recording;
    if matches!(a.tui.view, ViewKind::Flamegraph) {
        // Booting is what there is to see first; 2 shows the flamegraph.
        config.initial_view = ViewKind::Console;
    }
    match run_tui(config, Box::new(feed), &format!("qemu {}", a.arch.name()))? {
        Some(Ok(dir)) => println!("perfscope qemu: artifacts in {}", dir.display()),
        Some(Err(e)) => bail!("writing the artifacts to {} failed: {e}", work_dir.display()),
        None => println!("perfscope qemu: no artifacts written"),
    }
    Ok(())
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("perfscope: {e:#}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        // clap checks unique names, valid defaults and conflicts only when asked.
        super::Cli::command().debug_assert();
    }
}
