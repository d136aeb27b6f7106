//! `perfscope diff <a> <b>`: which functions changed between two profiles, by self and
//! total share, and a differential flamegraph (red grew, blue shrank).

use std::path::PathBuf;

use anyhow::Context;

use crate::engine::Snapshot;
use crate::export::flamegraph_lines::{self, MAX_SVG_DEPTH};
use crate::export::svg::{self, SvgOptions};
use crate::export::write_file;
use crate::feeds::file::{FileFeed, Input};
use crate::feeds::symbol_options::OpenOptions;
use crate::model::diff::{DiffStack, diff_stacks};
use crate::model::{PhaseMarkers, ProfileDiff, Selection, Verdict};
use crate::sources::folded::format_line;

use super::headless::{self, Headless};

/// Options of `perfscope diff`.
#[derive(Clone, Debug)]
pub struct DiffOptions {
    pub baseline: Input,
    pub compare: Input,
    pub out_dir: PathBuf,
    pub top: usize,
    pub open: OpenOptions,
}

/// What a diff produced.
pub struct DiffOutcome {
    pub diff: ProfileDiff,
    pub stacks: Vec<DiffStack>,
    pub files: Vec<(String, PathBuf)>,
    pub warnings: Vec<String>,
    /// Each profile's verdict (baseline, comparison): the diff is as complete as both.
    pub verdicts: [Verdict; 2],
}

pub fn run(options: &DiffOptions) -> anyhow::Result<DiffOutcome> {
    let (a, wa, va) = whole(&options.baseline, &options.open).context("baseline")?;
    let (b, wb, vb) = whole(&options.compare, &options.open).context("comparison")?;
    let mut warnings = wa;
    warnings.extend(wb);
    let diff = ProfileDiff::between(&a.hotspots, &a.frames, &b.hotspots, &b.frames);
    let stacks = diff_stacks(&a.trie, &a.frames, &b.trie, &b.frames);

    let mut files = Vec::new();
    let folded_path = options.out_dir.join("diff.folded");
    let lines: Vec<String> = stacks
        .iter()
        .map(|s| format!("{} {}", format_line(&s.frames, s.weight_a), s.weight_b))
        .collect();
    write_file(&folded_path, (lines.join("\n") + "\n").as_bytes())?;
    files.push(("differential_folded".to_string(), folded_path));

    let csv_path = options.out_dir.join("diff.csv");
    write_file(&csv_path, render_csv(&diff).as_bytes())?;
    files.push(("diff_csv".to_string(), csv_path));

    if !lines.is_empty() {
        let svg_path = options.out_dir.join("flamegraph.diff.svg");
        // The SVG is cut at the flamegraphs' depth limit (diff.folded keeps every frame).
        let (svg_lines, cut_samples) = flamegraph_lines::differential_lines(&stacks);
        let mut subtitle = format!(
            "{} → {} (red: grew, blue: shrank; widths are the comparison)",
            display(&options.baseline),
            display(&options.compare)
        );
        if cut_samples > 0 {
            subtitle.push_str(&format!(
                "; stacks cut at depth {MAX_SVG_DEPTH} ({cut_samples} samples of both profiles)"
            ));
        }
        let opts = SvgOptions {
            title: "perfscope Differential Flame Graph".into(),
            subtitle: Some(subtitle),
            min_percent: 0.0,
            ..SvgOptions::default()
        };
        svg::write(&svg_lines, &opts, &svg_path)?;
        files.push(("differential_flamegraph".to_string(), svg_path));
    }
    Ok(DiffOutcome {
        diff,
        stacks,
        files,
        warnings,
        verdicts: [va, vb],
    })
}

/// An input read to its end through the engine: everything selected, its warnings and its
/// verdict.
fn whole(input: &Input, open: &OpenOptions) -> anyhow::Result<(Snapshot, Vec<String>, Verdict)> {
    let feed = FileFeed::new(input.clone(), open.clone(), None, PhaseMarkers::default());
    let outcome = headless::run(
        Box::new(feed),
        Headless {
            selection: Selection::all(),
            export: None,
            recording: None,
            progress: None,
        },
        &mut [],
    )?;
    if let Some(e) = outcome.error {
        anyhow::bail!(e);
    }
    let mut engine = outcome.engine;
    let warnings = engine.state.provenance.warnings.clone();
    let verdict = engine.verdict();
    Ok((engine.snapshot(), warnings, verdict))
}

fn display(input: &Input) -> String {
    input.path().display().to_string()
}

/// `diff.csv`: every function, both profiles, self and total (percent of each total).
pub fn render_csv(diff: &ProfileDiff) -> String {
    let mut out = String::from(
        "function,self_a,self_b,self_percent_a,self_percent_b,self_delta,total_a,total_b,total_percent_a,total_percent_b,total_delta\n",
    );
    for r in &diff.rows {
        out.push_str(&format!(
            "{},{},{},{:.4},{:.4},{:.4},{},{},{:.4},{:.4},{:.4}\n",
            crate::export::hotspots_csv::json_quote(&r.name),
            r.self_a,
            r.self_b,
            r.self_percent_a,
            r.self_percent_b,
            r.self_delta(),
            r.total_a,
            r.total_b,
            r.total_percent_a,
            r.total_percent_b,
            r.total_delta()
        ));
    }
    out
}

/// The table `perfscope diff` prints.
pub fn summary(outcome: &DiffOutcome, top: usize) -> String {
    let d = &outcome.diff;
    let mut out = format!(
        "baseline {} samples, comparison {} samples\n",
        d.total_a, d.total_b
    );
    let changed: Vec<_> = d.changed().take(top).collect();
    out.push_str(&format!(
        "\nTop {} changed functions (percentage points of each profile's samples)\n",
        changed.len()
    ));
    out.push_str(&format!(
        "{:>8} {:>8} {:>8}   {:>8} {:>8} {:>8}  function\n",
        "self a%", "self b%", "Δself", "total a%", "total b%", "Δtotal"
    ));
    for r in changed {
        out.push_str(&format!(
            "{:>8.2} {:>8.2} {:>+8.2}   {:>8.2} {:>8.2} {:>+8.2}  {}\n",
            r.self_percent_a,
            r.self_percent_b,
            r.self_delta(),
            r.total_percent_a,
            r.total_percent_b,
            r.total_delta(),
            r.name
        ));
    }
    out.push_str("\nartifacts:\n");
    for (label, path) in &outcome.files {
        out.push_str(&format!("  {label:<24} {}\n", path.display()));
    }
    out
}
