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

/// A cell a table row can be sorted by: integers exact (a u64 of nanoseconds does not
/// fit an f64's 53 bits; kmemprof's byte balances are signed), fractions (seconds,
/// percentages) as floats, text as text.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    Int(i128),
    Float(f64),
    Text(String),
}

impl Cell {
    /// Numbers by value (largest first reads best, the caller reverses), text by text;
    /// numbers before text.
    pub fn compare(&self, other: &Cell) -> Ordering {
        match (self, other) {
            (Cell::Int(a), Cell::Int(b)) => a.cmp(b),
            (Cell::Int(a), Cell::Float(b)) => (*a as f64).total_cmp(b),
            (Cell::Float(a), Cell::Int(b)) => a.total_cmp(&(*b as f64)),
            (Cell::Float(a), Cell::Float(b)) => a.total_cmp(b),
            (Cell::Text(a), Cell::Text(b)) => a.cmp(b),
            (Cell::Text(_), _) => Ordering::Greater,
            (_, Cell::Text(_)) => Ordering::Less,
        }
    }

    /// The value as CSV writes it (integers whole, text as is).
    pub fn plain(&self) -> String {
        match self {
            Cell::Int(n) => n.to_string(),
            Cell::Float(f) => f.to_string(),
            Cell::Text(t) => t.clone(),
        }
    }
}

/// What a column holds: how files name it (a duration's name carries `_ns`) and how it
/// aligns (text left, numbers right).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ColumnKind {
    /// A name: a syscall, a command, an event, a stack.
    Text,
    /// An identifier written as a number: a CPU, a pid, a key.
    Id,
    /// How many (calls, events, objects).
    Count,
    /// A duration in nanoseconds.
    Nanoseconds,
    /// A time stamp in seconds (fractional).
    Seconds,
    /// A size in bytes.
    Bytes,
    /// A share in percent.
    Percent,
    /// A number in the event's own terms (num-dist of a field that is not a duration).
    Number,
}

/// One column of a table.
#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    /// As the Tables view and its sort hint name it: "p99", "comm", "%gsys".
    pub name: String,
    pub kind: ColumnKind,
}

impl Column {
    pub fn new(name: impl Into<String>, kind: ColumnKind) -> Self {
        Self {
            name: name.into(),
            kind,
        }
    }

    /// The name in CSV and JSON: with its unit where the name does not say it
    /// (`p99_ns`, `time_s`), so a script never guesses.
    pub fn file_name(&self) -> String {
        let suffix = match self.kind {
            ColumnKind::Nanoseconds => "_ns",
            ColumnKind::Seconds => "_s",
            _ => "",
        };
        if suffix.is_empty() || self.name.ends_with(suffix) {
            self.name.clone()
        } else {
            format!("{}{suffix}", self.name)
        }
    }

    /// A duration column, or a plain number one when the values are not durations.
    pub fn valued(name: impl Into<String>, unit: ValueUnit) -> Self {
        let kind = match unit {
            ValueUnit::Nanoseconds => ColumnKind::Nanoseconds,
            ValueUnit::Number => ColumnKind::Number,
        };
        Self::new(name, kind)
    }

    /// Text reads from the left, numbers line up on the right.
    pub fn right_aligned(&self) -> bool {
        self.kind != ColumnKind::Text
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
    /// The sortable columns, in cell order.
    pub columns: Vec<Column>,
    /// In the analyzer's own order (perf-prof's).
    pub rows: Vec<TableRow>,
}

impl AnalysisTable {
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
}
