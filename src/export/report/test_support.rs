//! A report over a small profile, for the renderers' tests.

use serde_json::json;

use super::{Report, ReportInput};
use crate::export::ExportView;
use crate::export::analysis::{AnalysisSummary, SeriesSummary};
use crate::export::heatmap_csv::HeatmapSummary;
use crate::export::offenders::OffendersSummary;
use crate::model::sample_list::test_support::profile_from;
use crate::model::units::ValueUnit;
use crate::model::verdict::{Finding, Gap};
use crate::model::{InputInfo, Selection, SourceFacts, Target, Verdict, WindowInfo};

/// What the session was.
pub struct Case {
    pub target: Target,
    pub verdict: Verdict,
    pub analysis: Option<AnalysisSummary>,
    /// Root-first stacks and their weights (none: an analysis without stack samples).
    pub stacks: Vec<(Vec<&'static str>, u64)>,
}

impl Case {
    /// A clean host profile of two stacks.
    pub fn host() -> Case {
        Case {
            target: Target::Host,
            verdict: Verdict::new([], true),
            analysis: None,
            stacks: vec![(vec!["main", "work", "leaf"], 3), (vec!["main", "idle"], 1)],
        }
    }

    /// A host profile whose kernel lost 5 events.
    pub fn lossy() -> Case {
        Case {
            verdict: Verdict::new(
                [Finding::new(Gap::Lost, Some(5), "the kernel lost 5 events")],
                true,
            ),
            ..Case::host()
        }
    }

    pub fn guest() -> Case {
        Case {
            target: Target::Guest,
            ..Case::host()
        }
    }

    /// A syscalls analysis with one series and no stack samples.
    pub fn analysis() -> Case {
        Case {
            analysis: Some(AnalysisSummary {
                name: "syscalls".into(),
                events: 20,
                rows: 1,
                series: vec![SeriesSummary {
                    label: "read(0)".into(),
                    unit: ValueUnit::Nanoseconds,
                    calls: 10,
                    figures: [10_000, 500, 1_000, 900, 2_000, 2_500, 3_000, 3_000],
                    than: 0,
                    errors: 0,
                    csv: "latency.csv".into(),
                }],
                offenders: None,
                heatmap: None,
            }),
            stacks: Vec::new(),
            ..Case::host()
        }
    }
}

impl Case {
    /// The syscalls analysis of a `--than` run: 2 offender pairs kept, 3 dropped, and a
    /// heatmap of 2 columns.
    pub fn analysis_with_offenders() -> Case {
        let mut case = Case::analysis();
        if let Some(a) = &mut case.analysis {
            a.offenders = Some(OffendersSummary {
                pairs: 2,
                dropped: 3,
                text: "out/offenders.txt".into(),
                json: "out/offenders.json".into(),
            });
            a.heatmap = Some(HeatmapSummary {
                columns: 2,
                column_ns: 500,
                ranges: 3,
                total: 4,
                csv: "out/heatmap.csv".into(),
            });
        }
        case
    }
}

/// `check` run on the report of `case`.
pub fn with_report<R>(case: Case, check: impl FnOnce(&Report) -> R) -> R {
    let stacks: Vec<(&[&str], u64, Option<u64>)> = case
        .stacks
        .iter()
        .enumerate()
        .map(|(i, (frames, weight))| (frames.as_slice(), *weight, Some(i as u64 + 1)))
        .collect();
    let profile = profile_from(&stacks);
    let view = ExportView::new(&profile, Selection::all());
    let facts = SourceFacts::default();
    let report = Report::new(ReportInput {
        arch: "x86_64".into(),
        main: &view,
        stats: &view.stats,
        stats_json: json!({}),
        facts: &facts,
        input: InputInfo {
            kind: "perf_event".into(),
            path: "perf_event".into(),
            end: "session ended".into(),
            ..InputInfo::default()
        },
        window: WindowInfo::default(),
        parameters: json!({}),
        plugin_summary: vec![("executed_blocks".into(), "10".into())],
        variants: Vec::new(),
        artifacts: vec![("report".into(), "out/report.json".into())],
        top: 10,
        warnings: Vec::new(),
        analysis: case.analysis,
        run_files: &[],
        min_percent: 0.5,
        target: case.target,
        verdict: &case.verdict,
    });
    check(&report)
}
