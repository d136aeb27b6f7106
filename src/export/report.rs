//! `report.json` and `report.md`: one summary of a run for people and scripts.
//!
//! report.json keeps the reference harness's top-level keys (`arch`, `result`,
//! `parameters`, `window`, `resolve_stats`, `callchain`, `hotspots`, `plugin_summary`,
//! `artifacts`, …), written with sorted keys as the harness does. report.md says in words
//! where perfscope counts differently from the reference tools, and why.

use std::path::PathBuf;

use serde_json::{Map, Value, json};

use super::ExportView;
use super::analysis::AnalysisSummary;
use super::categories::{self, CategoryTotal};
use super::stats::ResolveStats;
use super::tables::{FunctionRow, StackRow, function_rows, round4, stack_rows};
use super::{fix_candidates, run_metrics};
use crate::model::units::ValueUnit;
use crate::model::{InputInfo, SourceFacts, Target, Verdict, WindowInfo};

/// Where perfscope's numbers differ from qperf-analyzer and the harness, on purpose.
pub const DIFFERENCES: &[&str] = &[
    "Function self and total are counted once per sample: total counts a recursive function once, \
     self is the leaf. The reference counts every frame occurrence (recursion and inline levels again) \
     over all frames; that number is kept as `samples`/`percent` (hotspots.csv columns 3-4, \
     report.json `occurrences`) for existing scripts.",
    "A clean end of the qperf.bin file is not reported as an error; a truncated or corrupt record is \
     reported with its byte offset and the bytes lost.",
    "Identical stacks are merged in stack.folded (the reference writes one line per sample), so \
     folded line counts are distinct stacks, not samples.",
    "A `;` inside a function name is written as U+FF1B (；) in folded files so the line still splits \
     into the right frames.",
    "Symbol-table names have their `::h<hash>` removed, like DWARF names; a symbol owns only its own \
     size (or up to the next symbol when it has none), so addresses past a function are not given \
     its name with a huge offset.",
    "The short and module symbol styles split paths only outside generic arguments.",
    "Samples removed by --focus are not counted as selected.",
    "avg_depth and max_depth both count raw addresses per stack (the reference's avg_depth counted \
     inline-expanded frames, so it could exceed max_depth); avg_frames and max_frames count the \
     inline-expanded frames. Idle samples (a halted vCPU) have no stack and count in neither.",
    "The focus variant applies within the main window (the reference ignores the window there).",
    "Only the kernel image's own physical range is an alias of it (its load address from the ELF \
     program headers, else from the arch's boot protocol: riscv64 0x80200000, loongarch64 the low \
     48 bits; resolve.stats.json `kernel_alias` says which), not every address whose low 32 bits \
     match. Addresses outside the image are named by region, never by kernel symbols: \
     `[firmware]`, `[user]` (its own symbols under it with --user-elf), or `0x…` under \
     `[unknown]`; a sample whose leaf is outside the kernel keeps only that leaf. Until a leaf has been in the kernel, the lower half is the \
     firmware's (OVMF's drivers, SeaBIOS in RAM), not user space. A kernel booted through UEFI \
     (--uefi) has no alias: OVMF loads it anywhere.",
    "flamegraph.html embeds the SVG, so it works on its own.",
];

/// One phase or focus variant that was written.
#[derive(Clone, Debug, PartialEq)]
pub struct VariantInfo {
    pub name: String,
    pub samples: u64,
    pub folded: PathBuf,
    pub svg: Option<PathBuf>,
}

/// Everything the reports are made of.
pub struct ReportInput<'a> {
    pub arch: String,
    pub main: &'a ExportView<'a>,
    pub stats: &'a ResolveStats,
    pub stats_json: Value,
    pub facts: &'a SourceFacts,
    pub input: InputInfo,
    pub window: WindowInfo,
    pub parameters: Value,
    pub plugin_summary: Vec<(String, String)>,
    pub variants: Vec<VariantInfo>,
    /// (label, path) of every file written.
    pub artifacts: Vec<(String, PathBuf)>,
    pub top: usize,
    pub warnings: Vec<String>,
    /// The session's analysis, when it runs one.
    pub analysis: Option<AnalysisSummary>,
    /// Files of the run by name (`qemu.time.txt`, `qemu.perf.csv`, `profile.stdout`).
    pub run_files: &'a [(String, Vec<u8>)],
    /// `--min-percent`: the fix candidates' threshold too.
    pub min_percent: f64,
    /// What the session profiles: a host session's reports carry no QEMU/qperf notes.
    pub target: Target,
    /// The session's verdict: `result`, `returncode`, `input.clean` and the completeness
    /// section come from it and nothing else.
    pub verdict: &'a Verdict,
}

/// The rows both reports use, computed once.
pub struct Report<'a> {
    pub input: ReportInput<'a>,
    pub functions: Vec<FunctionRow>,
    pub stacks: Vec<StackRow>,
    pub categories: Vec<CategoryTotal>,
    /// The reference's metrics of the run, by report.json key ([`Report::run_metrics`]):
    /// read from the run's files once, for both reports.
    metrics: Vec<(&'static str, Value)>,
}

impl<'a> Report<'a> {
    pub fn new(input: ReportInput<'a>) -> Self {
        let functions = function_rows(input.main, input.top);
        let stacks = stack_rows(input.main, input.top);
        let categories = categories::category_totals(input.main, input.top);
        let mut report = Self {
            input,
            functions,
            stacks,
            categories,
            metrics: Vec::new(),
        };
        report.metrics = report.run_metrics().into();
        report
    }

    /// One of the run's metrics by its report.json key.
    fn metric(&self, key: &str) -> &Value {
        self.metrics
            .iter()
            .find(|(k, _)| *k == key)
            .map_or(&Value::Null, |(_, v)| v)
    }

    pub fn total_samples(&self) -> u64 {
        self.input.main.total_weight()
    }

    /// `ok` or `incomplete`: the session's verdict.
    pub fn result(&self) -> &'static str {
        self.input.verdict.result()
    }

    /// A guest kernel's notes apply (QEMU, the qperf plugin, the reference harness): not
    /// for a host session.
    fn guest_notes(&self) -> bool {
        self.input.target != Target::Host
    }

    /// The session is an analysis without stack samples: no CPU-profile sections.
    fn analysis_only(&self) -> bool {
        self.input.analysis.is_some() && self.total_samples() == 0
    }

    pub fn to_json(&self) -> Value {
        let i = &self.input;
        let mut window = i.window.to_json();
        window["boot_samples_excluded"] = json!(self.input.stats.excluded_before);
        window["post_window_samples_excluded"] = json!(self.input.stats.excluded_after);
        let mut warnings = i.window.warnings.clone();
        warnings.extend(i.warnings.iter().cloned());
        if let Some(w) = i.stats.warning() {
            warnings.push(w.to_string());
        }
        window["warnings"] = json!(warnings);
        let top_functions: Vec<Value> = self
            .functions
            .iter()
            .map(|f| {
                json!({
                    "function": f.name,
                    "samples": f.occurrences,
                    "percent": round4(f.occurrence_percent),
                    "occurrences": f.occurrences,
                    "self": f.self_weight,
                    "self_percent": round4(f.self_percent),
                    "total": f.total_weight,
                    "total_percent": round4(f.total_percent),
                })
            })
            .collect();
        let top_stacks: Vec<Value> = self
            .stacks
            .iter()
            .map(|s| json!({"stack": s.stack, "samples": s.weight, "percent": round4(s.percent)}))
            .collect();
        let plugin: Map<String, Value> = i
            .plugin_summary
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect();
        let artifacts: Map<String, Value> = i
            .artifacts
            .iter()
            .map(|(k, p)| (k.clone(), json!(p.display().to_string())))
            .collect();
        let variants: Map<String, Value> = i
            .variants
            .iter()
            .map(|v| {
                (
                    v.name.clone(),
                    json!({
                        "samples": v.samples,
                        "folded": v.folded.display().to_string(),
                        "flamegraph": v.svg.as_ref().map(|p| p.display().to_string()),
                    }),
                )
            })
            .collect();
        let mut report = json!({
            "arch": i.arch,
            "result": self.result(),
            "returncode": i.verdict.exit_code(),
            "verdict": i.verdict.to_json(),
            "parameters": i.parameters,
            "input": {
                "kind": i.input.kind,
                "path": i.input.path,
                "format": i.input.format,
                "records": i.input.records,
                "bytes_read": i.input.bytes_read,
                "end": i.input.end,
                "clean": i.verdict.input_clean(),
                "bytes_lost": i.input.bytes_lost,
            },
            "window": window,
            "resolve_stats": i.stats_json,
            "callchain": i.stats.callchain_json(),
            "callchain_choice": i.facts.callchain.as_ref().map(|c| c.to_json()),
            "hotspots": {
                "total_samples": self.total_samples(),
                "total_frames": i.main.hotspots.total_occurrences,
                "counting": "per_sample",
                "top_functions": top_functions,
                "top_stacks": top_stacks,
                "category_totals": categories::to_json(&self.categories),
            },
            "variants": variants,
            "analysis": i.analysis.as_ref().map(AnalysisSummary::to_json),
            "artifacts": artifacts,
        });
        if self.guest_notes() {
            report["plugin_summary"] = json!(plugin);
            report["differences_from_reference"] = json!(DIFFERENCES);
            for (key, value) in &self.metrics {
                report[*key] = value.clone();
            }
        }
        sorted(report)
    }

    /// The reference's Workload Metrics and Fix Candidates sections.
    fn metrics_markdown(&self, md: &mut String) {
        let (workload, fixes) = (self.metric("workload_metrics"), self.metric("fix_candidates"));
        md.push_str("\n## Workload Metrics\n\n");
        let dd = &workload["dd"];
        let values = workload["values"].as_object().filter(|v| !v.is_empty());
        if dd.is_null() && values.is_none() {
            md.push_str("No workload stdout metrics were parsed.\n");
        }
        if let (Some(bytes), Some(s)) = (dd["bytes"].as_u64(), dd["elapsed_seconds"].as_f64()) {
            md.push_str(&format!("- dd: {bytes} bytes in {s} s\n"));
        }
        if let Some(values) = values {
            let mut keys: Vec<&String> = values.keys().collect();
            keys.sort();
            for key in keys.into_iter().take(12) {
                md.push_str(&format!("- {key}: {}\n", values[key]));
            }
        }
        md.push_str("\n## Fix Candidates\n\n");
        let fixes = fixes.as_array().cloned().unwrap_or_default();
        if fixes.is_empty() {
            md.push_str("No rule-based bottleneck fix candidates crossed the configured threshold.\n");
        }
        for fix in &fixes {
            md.push_str(&format!(
                "### {}\n\n- trigger: `{}` ({}%)\n- files: {}\n- strategy: {}\n\n",
                fix["id"].as_str().unwrap_or_default(),
                fix["trigger"].as_str().unwrap_or_default(),
                fix["percent"],
                fix["files"]
                    .as_array()
                    .map(|f| f.iter().filter_map(|v| v.as_str()).collect::<Vec<_>>().join("; "))
                    .unwrap_or_default(),
                fix["strategy"].as_str().unwrap_or_default(),
            ));
        }
    }

    /// A file of the run, as text.
    fn run_file(&self, name: &str) -> Option<String> {
        self.input
            .run_files
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, bytes)| String::from_utf8_lossy(bytes).into_owned())
    }

    /// The reference's metrics of the run ([`run_metrics`], [`fix_candidates`]).
    fn run_metrics(&self) -> [(&'static str, Value); 6] {
        let host_time = run_metrics::host_time_metrics(self.run_file("qemu.time.txt").as_deref());
        let host_perf = run_metrics::host_perf_metrics(self.run_file("qemu.perf.csv").as_deref());
        let workload = run_metrics::workload_metrics(self.run_file("profile.stdout").as_deref());
        let counter = |key: &str| {
            self.input
                .plugin_summary
                .iter()
                .find(|(k, _)| k == key)
                .and_then(|(_, v)| v.parse::<f64>().ok())
        };
        let normalized = run_metrics::normalized_metrics(&run_metrics::RunFacts {
            workload: &workload,
            host_time: &host_time,
            host_perf: &host_perf,
            total_samples: self.total_samples(),
            categories: &self.categories,
            guest_instructions: counter("executed_instructions"),
            guest_blocks: counter("executed_blocks"),
        });
        [
            ("host_time_metrics", host_time),
            ("host_perf_metrics", host_perf),
            ("workload_metrics", workload),
            ("normalized_metrics", normalized),
            (
                "fix_candidates",
                fix_candidates::fix_candidates(&self.functions, self.input.min_percent),
            ),
            ("linux_alignment", run_metrics::linux_alignment()),
        ]
    }

    pub fn to_markdown(&self) -> String {
        let i = &self.input;
        let mut md = String::from("# perfscope Performance Report\n\n");
        md.push_str(&format!("- arch: `{}`\n", i.arch));
        md.push_str(&format!("- result: `{}`\n", self.result()));
        if !self.analysis_only() {
            md.push_str(&format!(
                "- samples: {} selected of {} records\n",
                self.total_samples(),
                i.facts.raw_records
            ));
        }
        if let Some(a) = &i.analysis {
            md.push_str(&format!(
                "- analysis: `{}`, {} events, {} table rows\n",
                a.name, a.events, a.rows
            ));
        }
        md.push_str(&format!(
            "- input: `{}` ({}): {}\n",
            i.input.path, i.input.kind, i.input.end
        ));
        if let Some(dir) = i.artifacts.iter().find(|(k, _)| k == "work_dir") {
            md.push_str(&format!("- artifacts: `{}`\n", dir.1.display()));
        }
        self.window_markdown(&mut md);
        if !self.analysis_only() {
            self.profile_header_markdown(&mut md);
        }
        self.completeness_markdown(&mut md);
        self.latency_markdown(&mut md);
        if !self.analysis_only() {
            self.profile_markdown(&mut md);
        }
        if self.guest_notes() {
            self.metrics_markdown(&mut md);
        }
        if !self.analysis_only() {
            self.resolve_markdown(&mut md);
        }

        let mut warnings = i.window.warnings.clone();
        warnings.extend(i.warnings.iter().cloned());
        if let Some(w) = i.stats.warning() {
            warnings.push(w.to_string());
        }
        if !warnings.is_empty() {
            md.push_str("\n## Warnings\n\n");
            for w in warnings {
                md.push_str(&format!("- {w}\n"));
            }
        }

        md.push_str("\n## Artifacts\n\n");
        for (label, path) in &i.artifacts {
            md.push_str(&format!("- {label}: `{}`\n", path.display()));
        }

        if self.guest_notes() {
            md.push_str("\n## How perfscope counts (differences from qperf-analyzer and the harness)\n\n");
            for d in DIFFERENCES {
                md.push_str(&format!("- {d}\n"));
            }
        }
        // Names, paths and warnings come from binaries, session files and the guest: no
        // control character reaches a terminal that shows the file.
        crate::model::text::escape_controls_keeping_lines(&md)
    }

    /// The workload window line, when the run has one.
    fn window_markdown(&self, md: &mut String) {
        let (i, s) = (&self.input, self.input.stats);
        if !i.window.enabled {
            return;
        }
        let t = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{v:.3} s"));
        md.push_str(&format!(
            "- workload window: {} -> {}{} ({} samples before, {} after excluded)\n",
            t(i.window.start_time),
            t(i.window.stop_time),
            if i.window.truncated_by_timeout {
                ", truncated by timeout"
            } else {
                ""
            },
            s.excluded_before,
            s.excluded_after
        ));
    }

    /// How the stacks were taken and which of them count (callchain, kernel filter, focus).
    fn profile_header_markdown(&self, md: &mut String) {
        let (i, s) = (&self.input, self.input.stats);
        match &s.callchain_method {
            Some(m) => md.push_str(&format!(
                "- callchain: `{m}`, depth (addresses) avg {:.2} max {}, frames (inlines expanded) avg {:.2} max {}, unwind success {}{}\n",
                s.avg_depth(),
                s.max_depth,
                s.avg_frames(),
                s.max_frames,
                s.selected_multi_frame_records,
                match s.idle_records {
                    0 => String::new(),
                    n => format!(", idle samples {n}"),
                }
            )),
            None => md.push_str("- callchain: unknown (the input does not say)\n"),
        }
        if let Some(k) = &i.facts.kernel_filter {
            md.push_str(&format!(
                "- kernel filter: text 0x{:x}..0x{:x}; dropped {} frames and {} samples outside it\n",
                k.text_start, k.text_end, k.frames_dropped, k.samples_dropped
            ));
        }
        if let Some(f) = &i.main.selection.focus {
            md.push_str(&format!("- focus: `{}`\n", f.pattern()));
        }
    }

    /// What the session's figures miss, how much, and what it means (the verdict); what
    /// perfscope rebuilt or could not name, said beside it.
    fn completeness_markdown(&self, md: &mut String) {
        let verdict = self.input.verdict;
        md.push_str("\n## Completeness\n\n");
        if verdict.findings.is_empty() {
            md.push_str("Nothing was lost, dropped, cut or rebuilt: the figures are everything the source delivered.\n");
            return;
        }
        for reason in verdict.reasons() {
            md.push_str(&format!("- incomplete: {reason}\n"));
        }
        for note in verdict.notes() {
            md.push_str(&format!("- note: {note}\n"));
        }
    }

    fn latency_markdown(&self, md: &mut String) {
        let Some(a) = self.input.analysis.as_ref().filter(|a| !a.series.is_empty()) else {
            return;
        };
        // A num-dist of plain numbers is a distribution, not a latency.
        let durations = a.series.iter().all(|s| s.unit == ValueUnit::Nanoseconds);
        md.push_str(if durations {
            "\n## Latency\n\n"
        } else {
            "\n## Distributions\n\n"
        });
        md.push_str("| Series | Calls | Min | Avg | p50 | p95 | p99 | p99.9 | Max |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for s in &a.series {
            // Each series in its own unit: a num-dist count is not a time.
            let f = |figure: &str| s.unit.format(s.figure(figure));
            md.push_str(&format!(
                "| `{}` | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                md_code(&s.label),
                s.calls,
                f("min"),
                f("avg"),
                f("p50"),
                f("p95"),
                f("p99"),
                f("p99_9"),
                f("max")
            ));
        }
    }

    /// Top functions, top stacks, categories, phases: the CPU profile.
    fn profile_markdown(&self, md: &mut String) {
        let i = &self.input;
        md.push_str("\n## Top Functions\n\n");
        if self.functions.is_empty() {
            md.push_str("No samples were selected.\n");
        } else {
            md.push_str(
                "| # | Function | Self | Self % | Total | Total % |\n|---:|---|---:|---:|---:|---:|\n",
            );
            for (n, f) in self.functions.iter().take(20).enumerate() {
                md.push_str(&format!(
                    "| {} | `{}` | {} | {:.2} | {} | {:.2} |\n",
                    n + 1,
                    md_code(&f.name),
                    f.self_weight,
                    f.self_percent,
                    f.total_weight,
                    f.total_percent
                ));
            }
        }

        if !self.stacks.is_empty() {
            md.push_str("\n## Top Stacks\n\n");
            md.push_str("| Samples | % | Stack (root first) |\n|---:|---:|---|\n");
            for st in self.stacks.iter().take(10) {
                md.push_str(&format!(
                    "| {} | {:.2} | `{}` |\n",
                    st.weight,
                    st.percent,
                    md_code(&st.stack)
                ));
            }
        }

        if !self.categories.is_empty() {
            md.push_str(
                "\n## Hotspot Categories\n\n| Category | Axis | Samples | Percent |\n|---|---|---:|---:|\n",
            );
            for c in &self.categories {
                md.push_str(&format!(
                    "| {} | {} | {} | {:.2} |\n",
                    c.name, c.axis, c.samples, c.percent
                ));
            }
        }

        if !i.variants.is_empty() {
            md.push_str(
                "\n## Phases and Focus\n\n| Variant | Samples | Folded | Flamegraph |\n|---|---:|---|---|\n",
            );
            for v in &i.variants {
                md.push_str(&format!(
                    "| {} | {} | `{}` | {} |\n",
                    v.name,
                    v.samples,
                    v.folded.display(),
                    v.svg
                        .as_ref()
                        .map_or("-".to_string(), |p| format!("`{}`", p.display()))
                ));
            }
        }
    }

    /// How the addresses were resolved; the guest's regions and alias only for a guest.
    fn resolve_markdown(&self, md: &mut String) {
        let (i, s) = (&self.input, self.input.stats);
        md.push_str("\n## Resolve Statistics\n\n");
        md.push_str(&format!(
            "- selected records {}, bad (unresolved) {}, frames {}, leaf-only {}, multi-frame {}\n",
            s.selected_records,
            s.bad_records,
            s.selected_frames,
            s.selected_leaf_records,
            s.selected_multi_frame_records
        ));
        if !self.guest_notes() {
            md.push_str(&format!(
                "- addresses: {} not covered by any symbol\n",
                i.facts.unknown_frames
            ));
            return;
        }
        md.push_str(&format!(
            "- addresses: {} from physical aliases, {} not covered by any symbol\n",
            i.facts.aliased_frames, i.facts.unknown_frames
        ));
        let outside = &i.facts.outside_kernel;
        md.push_str(&format!(
            "- outside the kernel: {} firmware, {} user ({} named by --user-elf), {} unknown frames; {} return addresses of such samples dropped\n",
            outside.firmware_frames,
            outside.user_frames,
            outside.user_frames_named,
            outside.unknown_frames,
            outside.return_addresses_dropped
        ));
        if let Some(a) = &i.facts.kernel_alias {
            md.push_str(&format!(
                "- kernel physical alias: 0x{:x}-0x{:x} (from the {})\n",
                a.phys_start, a.phys_end, a.source
            ));
        }
    }
}

/// Keep a name readable inside a Markdown code span in a table.
fn md_code(s: &str) -> String {
    // Names come from binaries and session files: control characters spelled out.
    crate::model::text::escape_controls(s)
        .replace('`', "'")
        .replace('|', "\\|")
}

/// Sort object keys recursively (the harness writes `sort_keys=True`).
pub fn sorted(v: Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut entries: Vec<(String, Value)> = m.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(entries.into_iter().map(|(k, v)| (k, sorted(v))).collect())
        }
        Value::Array(a) => Value::Array(a.into_iter().map(sorted).collect()),
        other => other,
    }
}
