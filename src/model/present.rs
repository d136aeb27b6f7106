//! Analyses shaped for showing: the rows of an analysis with their names resolved (which
//! syscall, which thread) — still typed, so a view sorts by any column and filters by
//! regex without parsing text back.

use std::cmp::Ordering;

use super::latency_stats::LatencyStats;
use super::units::ValueUnit;

/// One latency distribution, as the Latency view lists it.
#[derive(Clone, Debug, PartialEq)]
pub struct LatencySeries {
    /// What is measured: "read(0)", "sched_wakeup => sched_switch".
    pub name: String,
    /// Whose (with `--perins`): "1234 bash", "key 17".
    pub instance: Option<String>,
    pub stats: LatencyStats,
    /// What the values are (a duration, a plain number): every renderer writes them in it.
    pub unit: ValueUnit,
    /// The analyzer counts failed calls (syscalls): show them.
    pub counts_errors: bool,
}

impl LatencySeries {
    /// "read(0) · 1234 bash".
    pub fn label(&self) -> String {
        match &self.instance {
            Some(instance) => format!("{} · {instance}", self.name),
            None => self.name.clone(),
        }
    }
}

/// A cell a table row can be sorted by.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    Number(f64),
    Text(String),
}

impl Cell {
    /// Numbers by value (largest first reads best, the caller reverses), text by text;
    /// numbers before text.
    pub fn compare(&self, other: &Cell) -> Ordering {
        match (self, other) {
            (Cell::Number(a), Cell::Number(b)) => a.total_cmp(b),
            (Cell::Text(a), Cell::Text(b)) => a.cmp(b),
            (Cell::Number(_), Cell::Text(_)) => Ordering::Less,
            (Cell::Text(_), Cell::Number(_)) => Ordering::Greater,
        }
    }
}

/// One row: its line exactly as the text output prints it, and its cells.
#[derive(Clone, Debug, PartialEq)]
pub struct TableRow {
    pub text: String,
    pub cells: Vec<Cell>,
}

/// An analyzer's table as its text output prints it (perf-prof's layout): a title, the
/// header lines (column names, dashes) and one row per line, each with sortable cells.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AnalysisTable {
    /// "syscalls", "sched_wakeup => sched_switch", "top sched:sched_stat_runtime".
    pub title: String,
    pub header: Vec<String>,
    /// The names of the sortable columns, in cell order.
    pub columns: Vec<String>,
    /// In the analyzer's own order (perf-prof's).
    pub rows: Vec<TableRow>,
}

impl AnalysisTable {
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
}
