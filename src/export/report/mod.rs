//! `report.json` and `report.md`: one summary of a run for people and scripts. The rows
//! both use are computed once here ([`Report`]); [`json`] and [`markdown`] render them.
//!
//! report.json keeps the reference harness's top-level keys (`arch`, `result`,
//! `parameters`, `window`, `resolve_stats`, `callchain`, `hotspots`, `plugin_summary`,
//! `artifacts`, …), written with sorted keys as the harness does. report.md says in words
//! where perfscope counts differently from the reference tools, and why.

use std::path::PathBuf;

use serde_json::Value;

use super::ExportView;
use super::analysis::AnalysisSummary;
use super::categories::{self, CategoryTotal};
use super::stats::ResolveStats;
use super::tables::{FunctionRow, StackRow, function_rows, stack_rows};
use super::{fix_candidates, run_metrics};
use crate::model::{InputInfo, SourceFacts, Target, Verdict, WindowInfo};

mod json;
mod markdown;
#[cfg(test)]
mod test_support;

pub use json::sorted;

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
}
