//! The whole artifact set of a run, written from one session's data: the main window, the
//! boot / workload / post phases the markers define, the focus variant, the analysis's
//! tables and distributions, and the reports. Headless runs, the TUI's export key and the
//! QEMU runner all write through here, so their files agree.

use std::path::PathBuf;

use serde_json::Value;

use crate::model::analysis::AnalysisSnapshot;
use crate::model::heatmap::LatencyHeatmap;
use crate::model::selection::SampleSource;
use crate::model::threads::ThreadNames;
use crate::model::{
    Focus, InputInfo, InstanceId, Phase, PhaseMarkers, Selection, SourceFacts, Target, TimeWindow, Verdict,
    WindowInfo,
};

use super::clock::ExportClock;
use super::flamegraph_lines::{self, MAX_SVG_DEPTH, MAX_SVG_FRAMES, SvgCuts};
use super::layout::{OutputLayout, Variant};
use super::offenders::{self, OffenderSource};
use super::report::{Report, ReportInput, VariantInfo};
use super::stage::Stage;
use super::stats::ResolveStats;
use super::svg::SvgOptions;
use super::tables::FunctionRow;
use super::{ExportError, ExportView, folded, pprof};

/// `--format`: which stack formats to write (the reports are always written).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum StackFormat {
    Folded,
    Svg,
    Pprof,
    #[default]
    All,
}

/// `--flamegraph-kind`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum FlamegraphKind {
    #[default]
    Svg,
    /// The SVG plus a self-contained HTML page.
    Html,
    /// No SVG at all.
    Folded,
}

/// What to write and how: the artifact flags every headless command and the export key
/// share. The defaults are the reference harness's (min-percent 0.3, top 80, every format).
#[derive(Clone, Debug)]
pub struct ArtifactOptions {
    pub format: StackFormat,
    pub flamegraph_kind: FlamegraphKind,
    /// Also write `*.focus.*` variants for this regex.
    pub focus: Option<Focus>,
    /// Flamegraph minimum frame width in percent (0 keeps everything).
    pub min_percent: f64,
    /// Rows of the hotspot tables.
    pub top: usize,
    /// Recorded in report.json `parameters`.
    pub parameters: Value,
    /// Title of the flamegraphs.
    pub title: String,
}

/// `--min-percent`'s default.
pub const DEFAULT_MIN_PERCENT: f64 = 0.3;
/// `--top`'s default.
pub const DEFAULT_TOP: usize = 80;

impl Default for ArtifactOptions {
    fn default() -> Self {
        Self {
            format: StackFormat::All,
            flamegraph_kind: FlamegraphKind::Svg,
            focus: None,
            min_percent: DEFAULT_MIN_PERCENT,
            top: DEFAULT_TOP,
            parameters: Value::Object(Default::default()),
            title: "perfscope Flame Graph".into(),
        }
    }
}

impl ArtifactOptions {
    fn wants_svg(&self) -> bool {
        matches!(self.format, StackFormat::Svg | StackFormat::All)
            && self.flamegraph_kind != FlamegraphKind::Folded
    }

    fn wants_pprof(&self) -> bool {
        matches!(self.format, StackFormat::Pprof | StackFormat::All)
    }
}

/// What was written.
#[derive(Clone, Debug)]
pub struct ArtifactSet {
    pub layout: OutputLayout,
    /// (label, path) of the output directories and every file written, in writing order.
    pub files: Vec<(String, PathBuf)>,
    pub total_samples: u64,
    pub top_functions: Vec<FunctionRow>,
    /// The session's verdict when the set was written (report.json's `result`).
    pub verdict: Verdict,
    pub warnings: Vec<String>,
}

impl ArtifactSet {
    /// `ok` or `incomplete`, as report.json says.
    pub fn result(&self) -> &'static str {
        self.verdict.result()
    }

    /// The files written (the directories are listed in `files` too, for report.json).
    pub fn file_count(&self) -> usize {
        self.files
            .iter()
            .filter(|(label, _)| !is_directory_label(label))
            .count()
    }
}

/// `files` entries that name a directory, not a file.
fn is_directory_label(label: &str) -> bool {
    label == "work_dir" || label == "qperf_dir"
}

/// The inputs an artifact set is made from.
pub struct ArtifactSource<'a> {
    pub samples: &'a dyn SampleSource,
    /// Only this instance's samples (a view cycled to one CPU / thread).
    pub instance: Option<InstanceId>,
    pub facts: &'a SourceFacts,
    pub input: InputInfo,
    pub plugin_summary: Vec<(String, String)>,
    pub warnings: Vec<String>,
    /// The session's analysis over the same selection, when it runs one.
    pub analysis: Option<AnalysisSnapshot>,
    /// The analysis's `--than` offenders, as the offender pane lists them.
    pub offenders: Option<OffenderSource<'a>>,
    /// The analysis's latency heatmap of the same selection, as the Latency view draws it.
    pub heatmap: Option<LatencyHeatmap>,
    pub threads: &'a ThreadNames,
    /// Files of the run to copy into the qperf directory (`qemu.time.txt`, …).
    pub extra_files: &'a [(String, Vec<u8>)],
    /// What the session profiles (which notes the reports carry).
    pub target: Target,
    /// The session's verdict: report.json's `result`, `returncode`, `input.clean`.
    pub verdict: Verdict,
}

/// Where the set goes and which window it is of.
pub struct ArtifactTarget<'a> {
    pub out_dir: &'a std::path::Path,
    pub arch: &'a str,
    /// Marker times on the sample clock; they make the main window and the phases.
    pub markers: PhaseMarkers,
    pub window: WindowInfo,
}

/// Write everything.
pub fn write_all(
    source: ArtifactSource<'_>,
    options: &ArtifactOptions,
    target: ArtifactTarget<'_>,
) -> Result<ArtifactSet, ExportError> {
    let layout =
        OutputLayout::new(target.out_dir, target.arch).map_err(|e| ExportError::new(target.out_dir, e))?;
    // Every file goes to a private staging directory; `latest/` is replaced by it whole at
    // the end, so a failed or concurrent export never breaks the set there.
    let stage =
        Stage::begin(target.out_dir, &layout.work_dir).map_err(|e| ExportError::new(&layout.work_dir, e))?;
    let mut files: Vec<(String, PathBuf)> = vec![
        ("work_dir".into(), layout.work_dir.clone()),
        ("qperf_dir".into(), layout.qperf_dir.clone()),
    ];
    let mut warnings = source.warnings.clone();
    let samples = source.samples;
    // Read once: `<analyzer>.txt`'s stamp and offenders.txt's times agree.
    let clock = ExportClock::now();
    let main_window = target.markers.main_window();
    let select = |window: TimeWindow| Selection::window(window).with_instance(source.instance);

    // Main window.
    let main = ExportView::new(samples, select(main_window));
    if main.stats.window_without_timestamps {
        warnings.push("input has no timestamps; elapsed-time filtering was not applied".into());
    }
    let main_written = write_variant(
        &main,
        &layout,
        &stage,
        Variant::Main,
        options,
        source.facts,
        &mut files,
    )?;
    if options.flamegraph_kind == FlamegraphKind::Html
        && let Some(svg) = &main_written.svg_bytes
    {
        let path = layout.html();
        stage.write(&path, &super::svg::html_page(svg, &options.title))?;
        files.push(("flamegraph_html".into(), path));
    }
    if options.wants_pprof() {
        let path = layout.pprof();
        stage.write(&path, &pprof::encode(&pprof::build(&main)))?;
        files.push(("pprof".into(), path));
    }

    // Phases and focus. The workload window is the main window (the markers bound both),
    // so its files are copies, as the reference writes them.
    let mut variants = Vec::new();
    for phase in Phase::ALL {
        let Some(window) = target.markers.window(phase) else {
            continue;
        };
        if window == main_window {
            variants.push(copy_variant(
                &layout,
                &stage,
                &main_written.info,
                Variant::Phase(phase),
                &mut files,
            )?);
            continue;
        }
        let view = ExportView::new(samples, select(window));
        let w = write_variant(
            &view,
            &layout,
            &stage,
            Variant::Phase(phase),
            options,
            source.facts,
            &mut files,
        )?;
        variants.push(w.info);
    }
    if let Some(focus) = &options.focus {
        let view = ExportView::new(samples, select(main_window).with_focus(Some(focus.clone())));
        let w = write_variant(
            &view,
            &layout,
            &stage,
            Variant::Focus,
            options,
            source.facts,
            &mut files,
        )?;
        if w.info.samples == 0 {
            warnings.push(format!(
                "--focus {:?} matched no sample in the window",
                focus.pattern()
            ));
        }
        variants.push(w.info);
    }

    // The analysis: its tables and distributions, its offenders and its heatmap.
    let analysis_summary = match &source.analysis {
        Some(analysis) => {
            let mut summary =
                super::analysis::write(analysis, source.threads, &clock, &layout, &stage, &mut files)?;
            if let Some(offenders) = &source.offenders {
                let names = offenders::Names {
                    tables: samples.tables(),
                    threads: source.threads,
                };
                summary.offenders = offenders::write(offenders, &names, &clock, &layout, &stage, &mut files)?;
            }
            if let (Some(map), Some(unit)) = (&source.heatmap, analysis.info.schema.shared_unit()) {
                summary.heatmap = super::heatmap_csv::write(map, unit, &layout, &stage, &mut files)?;
            }
            Some(summary)
        }
        None => None,
    };

    // Files of the run.
    for (name, bytes) in source.extra_files {
        let path = layout.run_file(name);
        stage.write(&path, bytes)?;
        files.push((OutputLayout::run_file_label(name), path));
    }

    // Window, summary, tables and reports.
    let mut window = target.window.clone();
    window.boot_samples_excluded = Some(main_written.stats.excluded_before);
    window.post_window_samples_excluded = Some(main_written.stats.excluded_after);
    let window_path = layout.window_json();
    write_json(&stage, &window_path, &window.to_json())?;
    files.push(("window".into(), window_path));

    let hotspots_path = layout.hotspots_csv();
    stage.write(
        &hotspots_path,
        super::hotspots_csv::render(&main, options.top, options.min_percent).as_bytes(),
    )?;
    files.push(("hotspots_csv".into(), hotspots_path));

    let summary_path = layout.summary_txt();
    files.push(("summary_txt".into(), summary_path.clone()));
    let categories_path = layout.categories_csv();
    files.push(("hotspot_categories_csv".into(), categories_path.clone()));
    let json_path = layout.report_json();
    files.push(("report".into(), json_path.clone()));
    let md_path = layout.report_md();
    files.push(("markdown".into(), md_path.clone()));

    let artifacts = listed_artifacts(&files, &source.input);
    let report = Report::new(ReportInput {
        arch: target.arch.to_string(),
        main: &main,
        stats: &main_written.stats,
        stats_json: main_written.stats_json.clone(),
        facts: source.facts,
        input: source.input,
        window,
        parameters: options.parameters.clone(),
        plugin_summary: source.plugin_summary.clone(),
        variants,
        artifacts,
        target: source.target,
        verdict: &source.verdict,
        top: options.top,
        warnings: warnings.clone(),
        analysis: analysis_summary,
        run_files: source.extra_files,
        min_percent: options.min_percent,
    });
    stage.write(
        &categories_path,
        super::categories::render_csv(&report.categories).as_bytes(),
    )?;
    let summary = summary_text(&report, options, &main_written, &source.plugin_summary);
    stage.write(&summary_path, summary.as_bytes())?;
    // report.json's `summary` is summary.txt's pairs, as the reference's.
    let mut json = report.to_json();
    json["summary"] = super::run_metrics::summary_pairs(&summary);
    write_json(&stage, &json_path, &super::report::sorted(json))?;
    stage.write(&md_path, report.to_markdown().as_bytes())?;

    stage
        .commit(OutputLayout::owns)
        .map_err(|e| ExportError::new(&layout.work_dir, e))?;
    Ok(ArtifactSet {
        layout,
        files,
        total_samples: main.total_weight(),
        top_functions: report.functions.clone(),
        verdict: source.verdict.clone(),
        warnings,
    })
}

/// What report.json's `artifacts` lists: the files this run wrote, and the recording it
/// read when that is a qperf.bin (the reference's `raw_samples`, with its summary sidecar
/// as `plugin_summary`) — each only if it is there.
fn listed_artifacts(files: &[(String, PathBuf)], input: &InputInfo) -> Vec<(String, PathBuf)> {
    let mut listed = files.to_vec();
    if input.kind == "qperf" && !input.path.is_empty() {
        let bin = PathBuf::from(&input.path);
        let sidecar = crate::sources::qperf_file::sidecar_path(&bin);
        for (label, path) in [("raw_samples", bin), ("plugin_summary", sidecar)] {
            if path.is_file() && !listed.iter().any(|(l, _)| l == label) {
                listed.push((label.to_string(), path));
            }
        }
    }
    listed
}

struct Written {
    info: VariantInfo,
    stats: ResolveStats,
    stats_json: Value,
    svg_bytes: Option<Vec<u8>>,
    /// What the main SVG leaves out (`None` without an SVG).
    svg_cuts: Option<SvgCuts>,
    folded_lines: usize,
}

fn write_variant(
    view: &ExportView<'_>,
    layout: &OutputLayout,
    stage: &Stage,
    variant: Variant,
    options: &ArtifactOptions,
    facts: &SourceFacts,
    files: &mut Vec<(String, PathBuf)>,
) -> Result<Written, ExportError> {
    let paths = layout.variant(variant);
    let label = |kind: &str| match variant {
        Variant::Main => kind.to_string(),
        v => format!("{kind}_{}", v.name()),
    };
    let lines: Vec<&str> = view.folded().iter().map(|(_, l)| l.as_str()).collect();
    stage.write(&paths.folded, folded::text(&lines).as_bytes())?;
    files.push((label("folded"), paths.folded.clone()));

    let mut svg_bytes = None;
    let mut svg_cuts = None;
    let title = match variant {
        Variant::Main => options.title.clone(),
        v => format!("{} ({})", options.title, v.name()),
    };
    if options.wants_svg() && !lines.is_empty() {
        // Frames narrower than the minimum width, or deeper than the SVG limit, are merged
        // into labelled bars before inferno sees them: a huge profile stays cheap to render
        // and every sample still counts in the root.
        let svg_stacks = flamegraph_lines::svg_stacks(&view.trie, &view.tables.frames, options.min_percent);
        let svg_options = SvgOptions {
            title,
            subtitle: svg_stacks.cuts.describe(),
            min_percent: options.min_percent,
            ..SvgOptions::default()
        };
        let svg = super::svg::render(&svg_stacks.lines, &svg_options)
            .map_err(|e| ExportError::new(&paths.svg, e))?;
        stage.write(&paths.svg, &svg)?;
        svg_bytes = Some(svg);
        svg_cuts = Some(svg_stacks.cuts);
        files.push((label("flamegraph"), paths.svg.clone()));
    } else if options.wants_svg() {
        let svg = super::svg::empty(&title, "no samples in this window");
        stage.write(&paths.svg, &svg)?;
        svg_bytes = Some(svg);
        files.push((label("flamegraph"), paths.svg.clone()));
    }

    let stats = view.stats.clone();
    let stats_json = stats.to_json(facts, &view.selection.window, view);
    write_json(stage, &paths.stats, &stats_json)?;
    files.push((label("resolve_stats"), paths.stats.clone()));
    stage.write(&paths.depth, stats.depth_csv().as_bytes())?;
    files.push((label("stack_depth_summary"), paths.depth.clone()));

    Ok(Written {
        info: VariantInfo {
            name: variant.name().to_string(),
            samples: view.total_weight(),
            folded: paths.folded,
            svg: svg_bytes.as_ref().map(|_| paths.svg),
        },
        stats,
        stats_json,
        svg_bytes,
        svg_cuts,
        folded_lines: lines.len(),
    })
}

/// Copy the main window's files under a variant's names.
fn copy_variant(
    layout: &OutputLayout,
    stage: &Stage,
    main: &VariantInfo,
    variant: Variant,
    files: &mut Vec<(String, PathBuf)>,
) -> Result<VariantInfo, ExportError> {
    let from = layout.variant(Variant::Main);
    let to = layout.variant(variant);
    let name = variant.name();
    let mut pairs = vec![
        (format!("folded_{name}"), from.folded, to.folded.clone()),
        (format!("resolve_stats_{name}"), from.stats, to.stats),
        (format!("stack_depth_summary_{name}"), from.depth, to.depth),
    ];
    if main.svg.is_some() {
        pairs.push((format!("flamegraph_{name}"), from.svg, to.svg.clone()));
    }
    for (label, src, dst) in pairs {
        // Read and written anew (not `fs::copy`), so the copy goes through the same
        // temporary-and-rename write as every artifact.
        let bytes = stage.read(&src)?;
        stage.write(&dst, &bytes)?;
        files.push((label, dst));
    }
    Ok(VariantInfo {
        name: name.to_string(),
        samples: main.samples,
        folded: to.folded,
        svg: main.svg.as_ref().map(|_| to.svg),
    })
}

fn write_json(stage: &Stage, path: &std::path::Path, value: &Value) -> Result<(), ExportError> {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    stage.write(path, text.as_bytes())
}

/// `summary.txt`: the run's settings and paths as `key = value` lines, like xtask's.
fn summary_text(
    report: &Report<'_>,
    options: &ArtifactOptions,
    main: &Written,
    plugin_summary: &[(String, String)],
) -> String {
    let i = &report.input;
    let mut kv: Vec<(String, String)> = Vec::new();
    let mut put = |k: &str, v: String| kv.push((k.to_string(), v));
    if i.target != Target::Host {
        put(
            "qperf_format_version",
            i.facts.format_version.map_or("none".into(), |v| v.to_string()),
        );
    }
    put("arch", i.arch.clone());
    put("input", i.input.path.clone());
    put("input_end", i.input.end.clone());
    if let Some(f) = i.main.tables.info.frequency_hz {
        put("frequency_hz", f.to_string());
    }
    put(
        "flamegraph_kind",
        format!("{:?}", options.flamegraph_kind).to_lowercase(),
    );
    put("flamegraph_min_percent", options.min_percent.to_string());
    if let Some(f) = &options.focus {
        put("focus", f.pattern().to_string());
    }
    put("kernel_filter", i.facts.kernel_filter.is_some().to_string());
    put("window_enabled", i.window.enabled.to_string());
    if let Some(t) = i.window.start_time {
        put("window_start_time", format!("{t:.9}"));
    }
    if let Some(t) = i.window.stop_time {
        put("window_stop_time", format!("{t:.9}"));
    }
    if let Some(d) = i.window.duration_sec() {
        put("window_duration_sec", format!("{d:.9}"));
    }
    put(
        "window_truncated_by_timeout",
        i.window.truncated_by_timeout.to_string(),
    );
    for (label, path) in &i.artifacts {
        put(label, path.display().to_string());
    }
    put("samples", report.total_samples().to_string());
    put("folded_stack_lines", main.folded_lines.to_string());
    put("flamegraph_generated", main.svg_bytes.is_some().to_string());
    put("flamegraph_max_depth", MAX_SVG_DEPTH.to_string());
    put("flamegraph_max_frames", MAX_SVG_FRAMES.to_string());
    if let Some(cut) = main.svg_cuts.as_ref().and_then(SvgCuts::describe) {
        put("flamegraph_cut", cut);
    }
    let mut text: String = kv.iter().map(|(k, v)| format!("{k} = {v}\n")).collect();
    if plugin_summary.is_empty() {
        if i.target != Target::Host {
            text.push_str("dropped_samples = unknown\nplugin_summary = unavailable; no qperf.summary.txt beside the input\n");
        }
    } else {
        text.push_str("\n[plugin_summary]\n");
        for (k, v) in plugin_summary {
            text.push_str(&format!("{k} = {v}\n"));
        }
    }
    text
}

/// The main window in nanoseconds from `--start-sec` / `--stop-sec`.
pub fn markers_from_secs(start_sec: Option<f64>, stop_sec: Option<f64>) -> PhaseMarkers {
    let w = TimeWindow::from_secs(start_sec, stop_sec);
    PhaseMarkers {
        start_ns: w.start_ns,
        stop_ns: w.stop_ns,
    }
}
