//! `perfscope report`: a recorded input (qperf.bin, folded file, session file) run through
//! the engine to its end, and the full artifact set written.

use std::path::PathBuf;

use anyhow::bail;
use serde_json::json;

use crate::engine::export::ExportRequest;
use crate::export::artifacts::{ArtifactOptions, ArtifactSet, markers_from_secs};
use crate::feeds::Feed;
use crate::feeds::file::{FileFeed, Input};
use crate::feeds::replay::ReplayFeed;
use crate::feeds::symbol_options::OpenOptions;
use crate::model::{Focus, Selection};
use crate::stdio::{self, OutputError};
use crate::symbols::SymbolStyle;
use crate::symbols::guest_space::Boot;

use super::headless::{self, Headless};

/// What to read.
#[derive(Clone, Debug)]
pub enum ReportInput {
    File(Input),
    /// A recorded session (`--record FILE.db`).
    Session(PathBuf),
}

/// Options of `perfscope report` (and `open --no-tui`): the input, the window, and the
/// artifact flags every input kind honours.
#[derive(Clone, Debug)]
pub struct ReportOptions {
    pub input: ReportInput,
    pub out_dir: PathBuf,
    pub arch: Option<String>,
    pub symbol_style: SymbolStyle,
    pub kernel_filter: bool,
    /// Guest user programs that name user-space samples (`--user-elf`).
    pub user_elves: Vec<PathBuf>,
    pub focus: Option<String>,
    pub start_sec: Option<f64>,
    pub stop_sec: Option<f64>,
    pub no_truncate: bool,
    pub artifacts: ArtifactOptions,
    /// A console log to show with the input (kept in the session as it is).
    pub console: Option<PathBuf>,
}

impl ReportOptions {
    pub fn new(input: ReportInput, out_dir: PathBuf) -> Self {
        Self {
            input,
            out_dir,
            arch: None,
            symbol_style: SymbolStyle::Full,
            kernel_filter: false,
            user_elves: Vec::new(),
            focus: None,
            start_sec: None,
            stop_sec: None,
            no_truncate: false,
            artifacts: ArtifactOptions::default(),
            console: None,
        }
    }

    fn validate(&self) -> anyhow::Result<Option<Focus>> {
        let a = &self.artifacts;
        if a.min_percent.is_nan() || a.min_percent < 0.0 {
            crate::usage!("--min-percent must be 0 or more (got {})", a.min_percent);
        }
        for (name, v) in [("--start-sec", self.start_sec), ("--stop-sec", self.stop_sec)] {
            if let Some(v) = v
                && (!v.is_finite() || v < 0.0)
            {
                crate::usage!("{name} must be a non-negative number of seconds (got {v})");
            }
        }
        if let (Some(a), Some(b)) = (self.start_sec, self.stop_sec)
            && a >= b
        {
            crate::usage!("--start-sec ({a}) must be less than --stop-sec ({b})");
        }
        if a.top == 0 {
            crate::usage!("--top must be at least 1");
        }
        self.focus.as_deref().map(Focus::new).transpose().map_err(|e| {
            crate::model::usage::UsageError(format!("--focus is not a valid regular expression: {e:#}"))
                .into()
        })
    }
}

/// Run the report; returns what was written.
pub fn run(options: &ReportOptions) -> anyhow::Result<ArtifactSet> {
    let focus = options.validate()?;
    let markers = markers_from_secs(options.start_sec, options.stop_sec);
    let feed: Box<dyn Feed> = match &options.input {
        ReportInput::File(input) => Box::new(FileFeed::open(
            input.clone(),
            OpenOptions {
                style: options.symbol_style,
                kernel_filter: options.kernel_filter,
                boot: Boot::Direct,
                user_elves: options.user_elves.clone(),
            },
            options.console.clone(),
            markers,
        )?),
        ReportInput::Session(path) => Box::new(ReplayFeed::open(path)?),
    };
    let mut artifacts = options.artifacts.clone();
    if options.no_truncate {
        artifacts.min_percent = 0.0;
    }
    artifacts.focus = focus.clone();
    artifacts.parameters = json!({
        "format": format!("{:?}", artifacts.format).to_lowercase(),
        "flamegraph_kind": format!("{:?}", artifacts.flamegraph_kind).to_lowercase(),
        "symbol_style": options.symbol_style.name(),
        "focus": options.focus,
        "start_sec": options.start_sec,
        "stop_sec": options.stop_sec,
        "kernel_filter": options.kernel_filter,
        "user_elves": options.user_elves,
        "no_truncate": options.no_truncate,
        "min_percent": options.artifacts.min_percent,
        "top": artifacts.top,
    });
    // A session file's own markers cut the phases; --start-sec/--stop-sec choose the
    // window the views (and the main artifacts) look at.
    let selection = match &options.input {
        ReportInput::Session(_) => Selection::window(markers.main_window()),
        ReportInput::File(_) => Selection::all(),
    };
    let outcome = headless::run(
        feed,
        Headless {
            selection,
            export: Some(ExportRequest {
                out_dir: options.out_dir.clone(),
                arch: options.arch.clone(),
                artifacts,
            }),
            recording: None,
            progress: Some("decoding"),
        },
        &mut [],
    )?;
    match (outcome.exported, outcome.error) {
        (Some(set), _) => Ok(set),
        (None, Some(e)) => Err(anyhow::anyhow!(e)),
        (None, None) => bail!("nothing to report"),
    }
}

/// What `perfscope report` says when it is done: the results on stdout, the warnings on
/// stderr (a script reading stdout gets only results). Stdout that refuses them (a full
/// disk, a closed pipe) is the error.
pub fn print_summary(set: &ArtifactSet, top: usize) -> Result<(), OutputError> {
    for w in &set.warnings {
        stdio::say(&format!(
            "warning: {}",
            crate::model::text::escape_controls_keeping_lines(w)
        ));
    }
    stdio::print(&summary(set, top))
}

/// The results `perfscope report` prints when it is done (warnings apart).
pub fn summary(set: &ArtifactSet, top: usize) -> String {
    let mut out = format!(
        "perfscope report: {} samples, result {}\n",
        set.total_samples,
        set.result()
    );
    if !set.top_functions.is_empty() {
        out.push_str(&format!(
            "\n{:>8} {:>7} {:>8} {:>7}  function\n",
            "self", "self%", "total", "total%"
        ));
        for f in set.top_functions.iter().take(top) {
            out.push_str(&format!(
                "{:>8} {:>6.2}% {:>8} {:>6.2}%  {}\n",
                f.self_weight,
                f.self_percent,
                f.total_weight,
                f.total_percent,
                crate::model::text::escape_controls(&f.name)
            ));
        }
    }
    out.push_str("\nartifacts:\n");
    for (label, path) in &set.files {
        out.push_str(&format!("  {label:<28} {}\n", path.display()));
    }
    out
}
