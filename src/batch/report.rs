//! `perfscope report`: open a recorded input and write the full artifact set.

use std::path::PathBuf;

use anyhow::{Context, bail};
use serde_json::json;

use crate::export::artifacts::{
    self, ArtifactOptions, ArtifactSet, ArtifactSource, FlamegraphKind, StackFormat,
};
use crate::ingest::open::{Input, OpenOptions, open};
use crate::model::{Focus, WindowInfo};
use crate::symbols::SymbolStyle;

use super::progress::Progress;

/// Options of `perfscope report` (the CLI's flags, parsed).
#[derive(Clone, Debug)]
pub struct ReportOptions {
    pub input: Input,
    pub out_dir: PathBuf,
    pub arch: Option<String>,
    pub format: StackFormat,
    pub flamegraph_kind: FlamegraphKind,
    pub symbol_style: SymbolStyle,
    pub focus: Option<String>,
    pub start_sec: Option<f64>,
    pub stop_sec: Option<f64>,
    pub kernel_filter: bool,
    pub no_truncate: bool,
    pub min_percent: f64,
    pub top: usize,
}

impl ReportOptions {
    /// Defaults of `cargo xtask starry perf`: min-percent 0.3, top 80, all formats.
    pub fn new(input: Input, out_dir: PathBuf) -> Self {
        Self {
            input,
            out_dir,
            arch: None,
            format: StackFormat::All,
            flamegraph_kind: FlamegraphKind::Svg,
            symbol_style: SymbolStyle::Full,
            focus: None,
            start_sec: None,
            stop_sec: None,
            kernel_filter: false,
            no_truncate: false,
            min_percent: 0.3,
            top: 80,
        }
    }

    fn validate(&self) -> anyhow::Result<Option<Focus>> {
        if self.min_percent.is_nan() || self.min_percent < 0.0 {
            bail!("--min-percent must be 0 or more (got {})", self.min_percent);
        }
        for (name, v) in [("--start-sec", self.start_sec), ("--stop-sec", self.stop_sec)] {
            if let Some(v) = v
                && (!v.is_finite() || v < 0.0)
            {
                bail!("{name} must be a non-negative number of seconds (got {v})");
            }
        }
        if let (Some(a), Some(b)) = (self.start_sec, self.stop_sec)
            && a >= b
        {
            bail!("--start-sec ({a}) must be less than --stop-sec ({b})");
        }
        if self.top == 0 {
            bail!("--top must be at least 1");
        }
        self.focus
            .as_deref()
            .map(Focus::new)
            .transpose()
            .context("--focus is not a valid regular expression")
    }
}

/// Run the report; returns what was written.
pub fn run(options: &ReportOptions) -> anyhow::Result<ArtifactSet> {
    let focus = options.validate()?;
    let mut progress: Option<Progress> = None;
    let opened = open(
        &options.input,
        &OpenOptions {
            style: options.symbol_style,
            kernel_filter: options.kernel_filter,
        },
        &mut |done, total| {
            progress
                .get_or_insert_with(|| Progress::new("decoding", total))
                .update(done)
        },
    )?;
    drop(progress);

    let arch = options
        .arch
        .clone()
        .or_else(|| opened.profile.info.arch.clone())
        .unwrap_or_else(|| "unknown".into());
    let min_percent = if options.no_truncate {
        0.0
    } else {
        options.min_percent
    };
    let parameters = json!({
        "format": format!("{:?}", options.format).to_lowercase(),
        "flamegraph_kind": format!("{:?}", options.flamegraph_kind).to_lowercase(),
        "symbol_style": options.symbol_style.name(),
        "focus": options.focus,
        "start_sec": options.start_sec,
        "stop_sec": options.stop_sec,
        "kernel_filter": options.kernel_filter,
        "no_truncate": options.no_truncate,
        "min_percent": options.min_percent,
        "top": options.top,
    });
    let artifact_options = ArtifactOptions {
        out_dir: options.out_dir.clone(),
        arch,
        format: options.format,
        flamegraph_kind: options.flamegraph_kind,
        focus,
        markers: artifacts::markers_from_secs(options.start_sec, options.stop_sec),
        window: WindowInfo::from_seconds(options.start_sec, options.stop_sec),
        min_percent,
        top: options.top,
        parameters,
        title: "perfscope Flame Graph".into(),
    };
    let source = ArtifactSource {
        profile: &opened.profile,
        facts: &opened.facts,
        input: opened.input.clone(),
        plugin_summary: opened
            .plugin_summary
            .as_ref()
            .map(|s| s.entries.clone())
            .unwrap_or_default(),
        warnings: opened.warnings.clone(),
    };
    Ok(artifacts::write_all(source, &artifact_options)?)
}

/// The text `perfscope report` prints when it is done.
pub fn summary(set: &ArtifactSet, top: usize) -> String {
    let mut out = format!(
        "perfscope report: {} samples, result {}\n",
        set.total_samples, set.result
    );
    for w in &set.warnings {
        out.push_str(&format!("warning: {w}\n"));
    }
    if !set.top_functions.is_empty() {
        out.push_str(&format!(
            "\n{:>8} {:>7} {:>8} {:>7}  function\n",
            "self", "self%", "total", "total%"
        ));
        for f in set.top_functions.iter().take(top) {
            out.push_str(&format!(
                "{:>8} {:>6.2}% {:>8} {:>6.2}%  {}\n",
                f.self_weight, f.self_percent, f.total_weight, f.total_percent, f.name
            ));
        }
    }
    out.push_str("\nartifacts:\n");
    for (label, path) in &set.files {
        out.push_str(&format!("  {label:<28} {}\n", path.display()));
    }
    out
}
