//! An analysis's artifacts, from its typed rows: the table as perf-prof prints it
//! (`<analyzer>.txt`), as CSV and JSON with one typed cell per column, every latency
//! distribution as a CSV of its buckets (`latency/NNN-<series>.csv`) and one summary CSV
//! with each distribution's count, percentiles and extremes (`latency.csv`). Columns and
//! keys are named by the values' unit: `p99_ns` for durations, `p99` for plain numbers
//! (num-dist of a count or a size), with a `unit` column when the series differ.

use std::path::PathBuf;

use serde_json::{Map, Value, json};

use crate::analyzers::present;
use crate::analyzers::text::{TextStyle, analysis_text};
use crate::model::analysis::{AnalysisSchema, AnalysisSnapshot};
use crate::model::present::LatencySeries;
use crate::model::threads::ThreadNames;
use crate::model::units::ValueUnit;

use super::ExportError;
use super::analysis_table::{self, csv_field};
use super::clock::ExportClock;
use super::heatmap_csv::HeatmapSummary;
use super::layout::OutputLayout;
use super::offenders::OffendersSummary;
use super::stage::Stage;

/// What the reports say of the analysis.
#[derive(Clone, Debug, PartialEq)]
pub struct AnalysisSummary {
    pub name: String,
    /// Events fed to the analyzer in the exported selection.
    pub events: u64,
    /// Rows of the table.
    pub rows: usize,
    pub series: Vec<SeriesSummary>,
    /// The `--than` offenders written (offenders.txt, offenders.json), when there were any.
    pub offenders: Option<OffendersSummary>,
    /// The latency heatmap written (heatmap.csv), when there was one.
    pub heatmap: Option<HeatmapSummary>,
}

/// The figures of a distribution in latency.csv and report.json, in column order; each
/// is named with its unit (`p99_ns`, `p99`).
const FIGURES: [&str; 8] = ["total", "min", "avg", "p50", "p95", "p99", "p99_9", "max"];

/// One distribution's numbers, in its unit.
#[derive(Clone, Debug, PartialEq)]
pub struct SeriesSummary {
    pub label: String,
    pub unit: ValueUnit,
    pub calls: u64,
    /// [`FIGURES`] in order: total, min, avg, p50, p95, p99, p99.9, max.
    pub figures: [u64; 8],
    pub than: u64,
    pub errors: u64,
    pub csv: PathBuf,
}

impl SeriesSummary {
    fn of(series: &LatencySeries, csv: PathBuf) -> Self {
        let h = &series.stats.histogram;
        let p = |q: f64| h.percentile(q).unwrap_or(0);
        Self {
            label: series.label(),
            unit: series.unit,
            calls: series.stats.calls(),
            figures: [
                series.stats.total_ns(),
                h.min().unwrap_or(0),
                series.stats.avg_ns(),
                p(50.0),
                p(95.0),
                p(99.0),
                p(99.9),
                h.max().unwrap_or(0),
            ],
            than: series.stats.than,
            errors: series.stats.errors,
            csv,
        }
    }

    /// The figure `name` of [`FIGURES`] (`min`, `p99`, …).
    pub fn figure(&self, name: &str) -> u64 {
        FIGURES
            .iter()
            .position(|f| *f == name)
            .map_or(0, |i| self.figures[i])
    }

    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("series".into(), json!(self.label));
        m.insert("unit".into(), json!(self.unit.name()));
        m.insert("calls".into(), json!(self.calls));
        for (name, value) in FIGURES.iter().zip(self.figures) {
            m.insert(self.unit.column(name), json!(value));
        }
        m.insert("than".into(), json!(self.than));
        m.insert("errors".into(), json!(self.errors));
        m.insert("buckets_csv".into(), json!(self.csv.display().to_string()));
        Value::Object(m)
    }
}

/// latency.csv: a row per distribution, its figures named by the unit the series share
/// (`p99_ns` or `p99`), or unit-neutral after a `unit` column when they differ.
fn latency_csv(summaries: &[SeriesSummary]) -> String {
    let shared = summaries
        .first()
        .map(|s| s.unit)
        .filter(|u| summaries.iter().all(|s| s.unit == *u));
    let mut header = vec!["series".to_string()];
    if shared.is_none() {
        header.push("unit".into());
    }
    header.push("calls".into());
    header.extend(FIGURES.iter().map(|f| match shared {
        Some(unit) => unit.column(f),
        None => f.to_string(),
    }));
    header.extend(["than", "errors", "buckets_csv"].map(String::from));
    let mut csv = header.join(",");
    csv.push('\n');
    for s in summaries {
        let mut row = vec![csv_field(&s.label)];
        if shared.is_none() {
            row.push(s.unit.name().into());
        }
        row.push(s.calls.to_string());
        row.extend(s.figures.iter().map(u64::to_string));
        row.extend([s.than.to_string(), s.errors.to_string()]);
        row.push(csv_field(&s.csv.display().to_string()));
        csv.push_str(&row.join(","));
        csv.push('\n');
    }
    csv
}

impl AnalysisSummary {
    pub fn to_json(&self) -> Value {
        let mut json = json!({
            "analyzer": self.name,
            "events": self.events,
            "table_rows": self.rows,
            "latency": self.series.iter().map(SeriesSummary::to_json).collect::<Vec<_>>(),
        });
        // Only what was written: a session without offenders or heatmap names none.
        if let Some(offenders) = &self.offenders {
            json["offenders"] = offenders.to_json();
        }
        if let Some(heatmap) = &self.heatmap {
            json["heatmap"] = heatmap.to_json();
        }
        json
    }
}

/// A CSV cell: quoted when it holds a comma, a quote or a line break.
/// A file name for a series label: letters, digits and `._-` kept, the rest `_`.
fn file_stem(label: &str) -> String {
    let stem: String = label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .take(80)
        .collect();
    stem.trim_matches('_').to_string()
}

/// Write the analysis's files into the work directory, `<analyzer>.txt` stamped with
/// `clock`; returns their summary.
pub fn write(
    analysis: &AnalysisSnapshot,
    threads: &ThreadNames,
    clock: &ExportClock,
    layout: &OutputLayout,
    stage: &Stage,
    files: &mut Vec<(String, PathBuf)>,
) -> Result<AnalysisSummary, ExportError> {
    let info = &analysis.info;
    let name = file_stem(&info.name);
    let dir = &layout.work_dir;

    let wall = clock.wall();
    let text = analysis_text(info, &analysis.rows, &wall, threads, TextStyle::default(), None);
    let path = dir.join(format!("{name}.txt"));
    stage.write(&path, text.as_bytes())?;
    files.push(("analysis_text".into(), path));

    let table = present::table(info, &analysis.rows, threads);
    let path = dir.join(format!("{name}.csv"));
    stage.write(&path, analysis_table::to_csv(&table).as_bytes())?;
    files.push(("analysis_csv".into(), path));

    let json_table = analysis_table::to_json(&table, &info.name, analysis.events);
    let path = dir.join(format!("{name}.json"));
    let mut text = serde_json::to_string_pretty(&json_table).unwrap_or_default();
    text.push('\n');
    stage.write(&path, text.as_bytes())?;
    files.push(("analysis_json".into(), path));

    let series = present::latency_series(info, &analysis.rows, threads);
    let mut summaries = Vec::new();
    let has_latency = matches!(
        info.schema,
        AnalysisSchema::Syscalls(_)
            | AnalysisSchema::Delay(_)
            | AnalysisSchema::TaskState(_)
            | AnalysisSchema::KvmExit(_)
            | AnalysisSchema::Blktrace(_)
            | AnalysisSchema::NumDist(_)
    );
    if has_latency {
        let latency_dir = dir.join("latency");
        for (i, s) in series.iter().enumerate() {
            let mut csv = format!("{},{},count\n", s.unit.column("low"), s.unit.column("high"));
            for (low, high, n) in s.stats.histogram.buckets() {
                csv.push_str(&format!("{low},{high},{n}\n"));
            }
            let path = latency_dir.join(format!("{:03}-{}.csv", i + 1, file_stem(&s.label())));
            stage.write(&path, csv.as_bytes())?;
            files.push((format!("latency_{:03}", i + 1), path.clone()));
            summaries.push(SeriesSummary::of(s, path));
        }
        let path = dir.join("latency.csv");
        stage.write(&path, latency_csv(&summaries).as_bytes())?;
        files.push(("latency_csv".into(), path));
    }
    Ok(AnalysisSummary {
        name: info.name.clone(),
        events: analysis.events,
        rows: table.rows.len(),
        series: summaries,
        offenders: None,
        heatmap: None,
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::model::analysis::{
        AnalysisInfo, AnalysisRows, LatencyKey, LatencyRows, NumDistSchema, SyscallsSchema,
    };
    use crate::model::latency_stats::LatencyStats;

    /// A distribution of 1..=n.
    fn one_to(n: u64) -> LatencyStats {
        let mut s = LatencyStats::default();
        (1..=n).for_each(|v| s.record(v, None));
        s
    }

    fn rows(series: &[(u64, LatencyStats)]) -> AnalysisRows {
        AnalysisRows::Latency(LatencyRows {
            rows: series
                .iter()
                .map(|(i, s)| {
                    (
                        LatencyKey {
                            instance: 0,
                            series: *i,
                        },
                        s.clone(),
                    )
                })
                .collect(),
        })
    }

    /// The analysis's files written into a fresh directory: (latency.csv, the first bucket
    /// CSV, the summary).
    fn written(name: &str, schema: AnalysisSchema, rows: AnalysisRows) -> (String, String, AnalysisSummary) {
        let dir = tempfile::tempdir().unwrap();
        let layout = OutputLayout::new(dir.path(), "x86_64").unwrap();
        let stage = Stage::begin(dir.path(), &layout.work_dir).unwrap();
        let analysis = AnalysisSnapshot {
            info: Arc::new(AnalysisInfo {
                name: name.into(),
                schema,
            }),
            rows,
            events: 1000,
        };
        let mut files = Vec::new();
        let summary = write(
            &analysis,
            &ThreadNames::default(),
            &ExportClock::now(),
            &layout,
            &stage,
            &mut files,
        )
        .unwrap();
        stage.commit(OutputLayout::owns).unwrap();
        let read = |p: &std::path::Path| std::fs::read_to_string(p).unwrap();
        let latency = read(&layout.work_dir.join("latency.csv"));
        let buckets = read(&summary.series[0].csv);
        (latency, buckets, summary)
    }

    fn num_dist(units: Vec<ValueUnit>) -> AnalysisSchema {
        AnalysisSchema::NumDist(NumDistSchema {
            events: vec!["sys_enter_read".into(), "sched_stat_runtime".into()],
            units,
            instance_header: None,
        })
    }

    /// num-dist of read sizes: no column, key or bucket bound says ns.
    #[test]
    fn a_num_dist_of_numbers_has_no_ns_columns() {
        let (latency, buckets, summary) = written(
            "num-dist",
            num_dist(vec![ValueUnit::Number, ValueUnit::Number]),
            rows(&[(0, one_to(1000))]),
        );
        let mut lines = latency.lines();
        assert_eq!(
            lines.next(),
            Some("series,calls,total,min,avg,p50,p95,p99,p99_9,max,than,errors,buckets_csv")
        );
        let row: Vec<&str> = lines.next().unwrap().split(',').collect();
        assert_eq!(row[..5], ["sys_enter_read", "1000", "500500", "1", "500"]);
        assert_eq!(row[9], "1000", "max");
        assert!(!latency.contains("_ns"), "{latency}");
        assert_eq!(buckets.lines().next(), Some("low,high,count"));
        let json = summary.series[0].to_json();
        assert_eq!(json["unit"], "number");
        assert_eq!((json["p99"].as_u64(), json.get("p99_ns")), (Some(988), None));
    }

    /// A duration analyzer keeps its `_ns` names; a num-dist of a duration field does too;
    /// a num-dist of both says each row's unit and names no unit in its columns.
    #[test]
    fn durations_keep_ns_columns_and_mixed_units_get_a_unit_column() {
        let syscalls = AnalysisSchema::Syscalls(SyscallsSchema {
            perins: false,
            than_ns: None,
        });
        let (latency, buckets, summary) = written("syscalls", syscalls, rows(&[(0, one_to(10))]));
        assert!(
            latency.starts_with(
                "series,calls,total_ns,min_ns,avg_ns,p50_ns,p95_ns,p99_ns,p99_9_ns,max_ns,than,errors,buckets_csv\nread(0),10,55,1,5,"
            ),
            "{latency}"
        );
        assert_eq!(buckets.lines().next(), Some("low_ns,high_ns,count"));
        assert_eq!(summary.series[0].to_json()["max_ns"], 10);

        let (latency, _, _) = written(
            "num-dist",
            num_dist(vec![ValueUnit::Number, ValueUnit::Nanoseconds]),
            rows(&[(0, one_to(3)), (1, one_to(4))]),
        );
        let lines: Vec<&str> = latency.lines().collect();
        assert_eq!(
            lines[0],
            "series,unit,calls,total,min,avg,p50,p95,p99,p99_9,max,than,errors,buckets_csv"
        );
        assert!(
            lines[1].starts_with("sys_enter_read,number,3,6,1,2,"),
            "{latency}"
        );
        assert!(
            lines[2].starts_with("sched_stat_runtime,ns,4,10,1,2,"),
            "{latency}"
        );
    }
}
