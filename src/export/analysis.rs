//! An analysis's artifacts, from its typed rows: the table as perf-prof prints it
//! (`<analyzer>.txt`), as CSV and JSON with one typed cell per column, every latency
//! distribution as a CSV of its buckets (`latency/NNN-<series>.csv`) and one summary CSV
//! with each distribution's count, percentiles and extremes (`latency.csv`).

use std::path::PathBuf;
use std::time::SystemTime;

use serde_json::{Map, Value, json};

use crate::analyzers::present;
use crate::analyzers::text::{TextStyle, WallClock, analysis_text};
use crate::model::analysis::{AnalysisSchema, AnalysisSnapshot};
use crate::model::present::{Cell, LatencySeries};
use crate::model::threads::ThreadNames;

use super::layout::OutputLayout;
use super::{ExportError, write_file};

/// What the reports say of the analysis.
#[derive(Clone, Debug, PartialEq)]
pub struct AnalysisSummary {
    pub name: String,
    /// Events fed to the analyzer in the exported selection.
    pub events: u64,
    /// Rows of the table.
    pub rows: usize,
    pub series: Vec<SeriesSummary>,
}

/// One distribution's numbers (nanoseconds).
#[derive(Clone, Debug, PartialEq)]
pub struct SeriesSummary {
    pub label: String,
    pub calls: u64,
    pub total_ns: u64,
    pub min_ns: u64,
    pub avg_ns: u64,
    pub p50_ns: u64,
    pub p95_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    pub max_ns: u64,
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
            calls: series.stats.calls(),
            total_ns: series.stats.total_ns(),
            min_ns: h.min().unwrap_or(0),
            avg_ns: series.stats.avg_ns(),
            p50_ns: p(50.0),
            p95_ns: p(95.0),
            p99_ns: p(99.0),
            p999_ns: p(99.9),
            max_ns: h.max().unwrap_or(0),
            than: series.stats.than,
            errors: series.stats.errors,
            csv,
        }
    }

    pub fn to_json(&self) -> Value {
        json!({
            "series": self.label,
            "calls": self.calls,
            "total_ns": self.total_ns,
            "min_ns": self.min_ns,
            "avg_ns": self.avg_ns,
            "p50_ns": self.p50_ns,
            "p95_ns": self.p95_ns,
            "p99_ns": self.p99_ns,
            "p99_9_ns": self.p999_ns,
            "max_ns": self.max_ns,
            "than": self.than,
            "errors": self.errors,
            "buckets_csv": self.csv.display().to_string(),
        })
    }
}

impl AnalysisSummary {
    pub fn to_json(&self) -> Value {
        json!({
            "analyzer": self.name,
            "events": self.events,
            "table_rows": self.rows,
            "latency": self.series.iter().map(SeriesSummary::to_json).collect::<Vec<_>>(),
        })
    }
}

/// A CSV cell: quoted when it holds a comma, a quote or a line break.
fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

fn cell_text(cell: &Cell) -> String {
    match cell {
        Cell::Number(n) if n.fract() == 0.0 && n.abs() < 9.0e15 => format!("{}", *n as i64),
        Cell::Number(n) => n.to_string(),
        Cell::Text(t) => t.clone(),
    }
}

fn cell_json(cell: &Cell) -> Value {
    match cell {
        Cell::Number(n) if n.fract() == 0.0 && n.abs() < 9.0e15 => json!(*n as i64),
        Cell::Number(n) => json!(n),
        Cell::Text(t) => json!(t),
    }
}

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

/// Write the analysis's files into the work directory; returns their summary.
pub fn write(
    analysis: &AnalysisSnapshot,
    threads: &ThreadNames,
    layout: &OutputLayout,
    files: &mut Vec<(String, PathBuf)>,
) -> Result<AnalysisSummary, ExportError> {
    let info = &analysis.info;
    let name = file_stem(&info.name);
    let dir = &layout.work_dir;

    let wall = WallClock::local(SystemTime::now());
    let text = analysis_text(info, &analysis.rows, &wall, threads, TextStyle::default(), None);
    let path = dir.join(format!("{name}.txt"));
    write_file(&path, text.as_bytes())?;
    files.push(("analysis_text".into(), path));

    let table = present::table(info, &analysis.rows, threads);
    let mut csv = table
        .columns
        .iter()
        .map(|c| csv_field(c))
        .collect::<Vec<_>>()
        .join(",");
    csv.push('\n');
    for row in &table.rows {
        let line: Vec<String> = row.cells.iter().map(|c| csv_field(&cell_text(c))).collect();
        csv.push_str(&line.join(","));
        csv.push('\n');
    }
    let path = dir.join(format!("{name}.csv"));
    write_file(&path, csv.as_bytes())?;
    files.push(("analysis_csv".into(), path));

    let rows: Vec<Value> = table
        .rows
        .iter()
        .map(|row| {
            let mut m = Map::new();
            for (column, cell) in table.columns.iter().zip(&row.cells) {
                m.insert(column.clone(), cell_json(cell));
            }
            Value::Object(m)
        })
        .collect();
    let json_table = json!({
        "analyzer": info.name,
        "title": table.title,
        "events": analysis.events,
        "columns": table.columns,
        "rows": rows,
    });
    let path = dir.join(format!("{name}.json"));
    let mut text = serde_json::to_string_pretty(&json_table).unwrap_or_default();
    text.push('\n');
    write_file(&path, text.as_bytes())?;
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
    );
    if has_latency {
        let latency_dir = dir.join("latency");
        for (i, s) in series.iter().enumerate() {
            let mut csv = String::from("low_ns,high_ns,count\n");
            for (low, high, n) in s.stats.histogram.buckets() {
                csv.push_str(&format!("{low},{high},{n}\n"));
            }
            let path = latency_dir.join(format!("{:03}-{}.csv", i + 1, file_stem(&s.label())));
            write_file(&path, csv.as_bytes())?;
            files.push((format!("latency_{:03}", i + 1), path.clone()));
            summaries.push(SeriesSummary::of(s, path));
        }
        let mut csv = String::from(
            "series,calls,total_ns,min_ns,avg_ns,p50_ns,p95_ns,p99_ns,p99_9_ns,max_ns,than,errors,buckets_csv\n",
        );
        for s in &summaries {
            csv.push_str(&format!(
                "{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
                csv_field(&s.label),
                s.calls,
                s.total_ns,
                s.min_ns,
                s.avg_ns,
                s.p50_ns,
                s.p95_ns,
                s.p99_ns,
                s.p999_ns,
                s.max_ns,
                s.than,
                s.errors,
                csv_field(&s.csv.display().to_string())
            ));
        }
        let path = dir.join("latency.csv");
        write_file(&path, csv.as_bytes())?;
        files.push(("latency_csv".into(), path));
    }
    Ok(AnalysisSummary {
        name: info.name.clone(),
        events: analysis.events,
        rows: table.rows.len(),
        series: summaries,
    })
}
