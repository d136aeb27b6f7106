//! Flag groups shared by the commands that read recorded inputs (`report`, `diff`, `open`):
//! where the symbols come from and how names look, which samples count (focus and marker
//! window), and which artifacts to write — with their conversion into the library's
//! options. `perfscope qemu` reuses the artifact flags, the symbol style and the focus.

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{Args, ValueEnum};

use crate::export::artifacts::{
    ArtifactOptions, DEFAULT_MIN_PERCENT, DEFAULT_TOP, FlamegraphKind, StackFormat,
};
use crate::feeds::file::Input;
use crate::feeds::symbol_options::SymbolSource;
use crate::model::Focus;
use crate::symbols::SymbolStyle;

use super::units::parse_seconds;

#[derive(Args)]
pub struct SymbolArgs {
    /// Kernel ELF with symbols (and DWARF, for lines and inline frames).
    #[arg(long, short = 'e', value_name = "ELF")]
    pub elf: Option<PathBuf>,
    /// A kallsyms file instead of an ELF (Linux guests).
    #[arg(long, value_name = "FILE", conflicts_with = "elf")]
    pub kallsyms: Option<PathBuf>,
    /// How much of each name to show.
    #[arg(long, value_enum, default_value_t = StyleArg::Full, ignore_case = true)]
    pub symbol_style: StyleArg,
    /// Keep only frames inside the kernel's text range (firmware and user addresses are dropped and counted).
    #[arg(long)]
    pub kernel_filter: bool,
    /// A guest user program (ELF) whose symbols name the user-space samples inside its text,
    /// under `[user]` (repeatable).
    #[arg(long = "user-elf", value_name = "ELF", conflicts_with = "kernel_filter")]
    pub user_elves: Vec<PathBuf>,
}

// Which samples count: a focus and the marker window.
#[derive(Args)]
pub struct WindowArgs {
    /// Focus on samples whose stack has a frame matching REGEX (report: extra *.focus.*
    /// artifacts; TUI: the initial focus, changed later with the focus key).
    #[arg(long, value_name = "REGEX")]
    pub focus: Option<String>,
    /// Main window start, seconds on the sample clock (samples before are "boot").
    #[arg(long, value_name = "S", value_parser = parse_seconds, allow_negative_numbers = true)]
    pub start_sec: Option<Duration>,
    /// Main window end, seconds on the sample clock (samples from here on are "post").
    #[arg(long, value_name = "S", value_parser = parse_seconds, allow_negative_numbers = true)]
    pub stop_sec: Option<Duration>,
}

impl WindowArgs {
    /// `--start-sec` as the library's options take it.
    pub fn start_secs(&self) -> Option<f64> {
        self.start_sec.map(|d| d.as_secs_f64())
    }

    /// `--stop-sec` as the library's options take it.
    pub fn stop_secs(&self) -> Option<f64> {
        self.stop_sec.map(|d| d.as_secs_f64())
    }
}

// Which artifacts to write and how: the same flags for every command that writes them.
#[derive(Args)]
pub struct ArtifactArgs {
    /// Stack formats to write (the reports are always written).
    #[arg(long, value_enum, default_value_t = FormatArg::All, ignore_case = true)]
    pub format: FormatArg,
    #[arg(long, value_enum, default_value_t = KindArg::Svg, ignore_case = true)]
    pub flamegraph_kind: KindArg,
    /// Do not prune narrow frames from the flamegraphs.
    #[arg(long)]
    pub no_truncate: bool,
    /// Flamegraph minimum frame width, percent of all samples.
    #[arg(long, value_name = "P", default_value_t = DEFAULT_MIN_PERCENT)]
    pub min_percent: f64,
    /// Rows in the hotspot tables.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_TOP)]
    pub top: usize,
}

impl ArtifactArgs {
    pub fn options(&self) -> anyhow::Result<ArtifactOptions> {
        if self.min_percent.is_nan() || self.min_percent < 0.0 {
            crate::usage!("--min-percent must be 0 or more (got {})", self.min_percent);
        }
        if self.top == 0 {
            crate::usage!("--top must be at least 1");
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

#[derive(Copy, Clone, ValueEnum)]
pub enum StyleArg {
    Full,
    Short,
    Module,
}

#[derive(Copy, Clone, ValueEnum)]
pub enum FormatArg {
    Folded,
    Svg,
    Pprof,
    All,
}

#[derive(Copy, Clone, ValueEnum)]
pub enum KindArg {
    Svg,
    Html,
    Folded,
}

impl StyleArg {
    pub fn style(self) -> SymbolStyle {
        match self {
            StyleArg::Full => SymbolStyle::Full,
            StyleArg::Short => SymbolStyle::Short,
            StyleArg::Module => SymbolStyle::Module,
        }
    }
}

impl SymbolArgs {
    pub fn style(&self) -> SymbolStyle {
        match self.symbol_style {
            StyleArg::Full => SymbolStyle::Full,
            StyleArg::Short => SymbolStyle::Short,
            StyleArg::Module => SymbolStyle::Module,
        }
    }

    pub fn source(&self) -> Option<SymbolSource> {
        match (&self.elf, &self.kallsyms) {
            (Some(elf), _) => Some(SymbolSource::Elf(elf.clone())),
            (None, Some(k)) => Some(SymbolSource::Kallsyms(k.clone())),
            (None, None) => None,
        }
    }

    /// A folded file, or a qperf.bin (which needs symbols): the feed tells which from the
    /// file's first bytes when it opens it, the one time it is opened.
    pub fn input(&self, path: PathBuf) -> Input {
        Input::Guess {
            path,
            symbols: self.source(),
        }
    }
}

/// The `--focus` regex as a focus (none without the flag).
pub fn focus_of(text: Option<&str>) -> anyhow::Result<Option<Focus>> {
    text.map(Focus::new).transpose().map_err(|e| {
        crate::model::usage::UsageError(format!("--focus is not a valid regular expression: {e:#}")).into()
    })
}

/// A session file: named `.db`, or an SQLite file by its header.
pub fn is_session(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "db") || crate::store::schema::is_sqlite_file(path).unwrap_or(false)
}
