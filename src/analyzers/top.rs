//! `top`: key/value aggregation of tracepoint fields, as perf-prof's `top` computes it.
//! Each event adds its `top-by=` / `top-add=` values (or 1, for an event with neither: a
//! count column) to the row of its key (`key=`, else the sample's thread id); rows sort by
//! the `top-by` columns (largest first, in declaration order), then the other columns,
//! then the key. Statistics are per interval, except the event count of the title line,
//! which perf-prof keeps over the whole run.

use super::key::KeySource;
use super::{Analyzer, AnalyzerError};
use crate::model::analysis::{AnalysisRows, AnalysisSchema, TopCells, TopKey, TopRows, TopSchema};
use crate::trace::event::{EventIndex, TraceEvent};

/// A string read from an event (`comm=EXPR`: `comm`, `prev_comm`, `ksymbol(function)`).
pub type CommSource = Box<dyn Fn(&TraceEvent<'_>) -> Option<String> + Send>;

/// A pid → comm lookup (the live comm cache), for `--only-comm` without `comm=`.
pub type PidComm = Box<dyn Fn(u32) -> Option<String> + Send>;

/// One value column.
pub struct TopColumn {
    /// The header as perf-prof prints it: the attribute text or alias, upper-cased.
    pub header: String,
    /// What to sum; `None` = count events.
    pub value: Option<KeySource>,
    /// A `top-by` column (sorts), else `top-add` or a count.
    pub sort_by: bool,
}

impl TopColumn {
    /// `top-by=EXPR` (sort) or `top-add=EXPR`; `header_text` is the expression text or alias.
    pub fn sum(header_text: &str, value: KeySource, sort_by: bool) -> Self {
        Self {
            header: header_text.to_uppercase(),
            value: Some(value),
            sort_by,
        }
    }

    /// The count column of an event without `top-by`/`top-add`, named after its alias or
    /// event name.
    pub fn count(name: &str) -> Self {
        Self {
            header: name.to_uppercase(),
            value: None,
            sort_by: false,
        }
    }
}

pub struct TopEvent {
    pub event: EventIndex,
    /// `key=`; `None` = the sample tid.
    pub key: Option<KeySource>,
    /// `comm=`.
    pub comm: Option<CommSource>,
    pub columns: Vec<TopColumn>,
}

pub struct TopConfig {
    pub events: Vec<TopEvent>,
    /// The first key expression's text (`None` = no key: `PID`).
    pub key_text: Option<String>,
    /// The first `comm=` expression's text (`None`: `COMM`).
    pub comm_text: Option<String>,
    /// `--only-comm`: rows by name, the key column hidden.
    pub only_comm: bool,
    /// Names for rows without `comm=` under `--only-comm`.
    pub pid_comm: Option<PidComm>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopRow {
    /// The key (with `--only-comm`: 0).
    pub key: u64,
    /// The row name from `comm=` (or the lookup under `--only-comm`); `None` when the
    /// printer is to look the key up as a pid ([`TopTable::comm_from_pid`]).
    pub comm: Option<String>,
    pub values: Vec<u64>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopTable {
    /// `PID` or the upper-cased key expression; `None` with `--only-comm`.
    pub key_header: Option<String>,
    /// `COMM` or the upper-cased `comm=` expression; `None` = no name column.
    pub comm_header: Option<String>,
    /// The name column shows the comm of the key (a tid): no event has a key.
    pub comm_from_pid: bool,
    pub column_headers: Vec<String>,
    pub rows: Vec<TopRow>,
    /// Events counted since the start (perf-prof's `sample N events`).
    pub events_total: u64,
}

struct Event {
    key: Option<KeySource>,
    comm: Option<CommSource>,
    /// Columns of the table this event adds to.
    first_column: usize,
    values: Vec<Option<KeySource>>,
}

pub struct TopAnalyzer {
    /// Events by `EventIndex.0`.
    events: Vec<Option<Event>>,
    key_header: Option<String>,
    comm_header: Option<String>,
    comm_from_pid: bool,
    only_comm: bool,
    pid_comm: Option<PidComm>,
    column_headers: Vec<String>,
    /// Sort priority: top-by columns in order, then the others in order.
    sort_order: Vec<usize>,
    /// The rows since the last take, and the events they were made of.
    rows: TopRows,
    /// Events since the start: perf-prof's title counts them all, interval or not.
    events_total: u64,
}

impl TopAnalyzer {
    pub fn new(config: TopConfig) -> Result<Self, AnalyzerError> {
        let keyed = config.events.iter().filter(|e| e.key.is_some()).count();
        if keyed != 0 && keyed != config.events.len() {
            return Err(AnalyzerError::Config(
                "top: either every event has `key=` or none has: add `key=` to the others \
                 (or use `-k EXPR` for all)"
                    .into(),
            ));
        }
        let has_comm = config.events.iter().any(|e| e.comm.is_some());
        if config.only_comm && !has_comm && config.pid_comm.is_none() {
            return Err(AnalyzerError::Config(
                "top --only-comm needs `comm=` on the events (or a pid → comm lookup)".into(),
            ));
        }
        let comm_from_pid = keyed == 0 && !has_comm && !config.only_comm;
        let comm_header = (keyed == 0 || has_comm || config.only_comm)
            .then(|| config.comm_text.as_deref().unwrap_or("COMM").to_uppercase());
        let key_header =
            (!config.only_comm).then(|| config.key_text.as_deref().unwrap_or("PID").to_uppercase());
        let mut column_headers = Vec::new();
        let mut sort_by = Vec::new();
        let mut others = Vec::new();
        let mut events: Vec<Option<Event>> = Vec::new();
        for event in config.events {
            let index = usize::from(event.event.0);
            if events.len() <= index {
                events.resize_with(index + 1, || None);
            }
            let first_column = column_headers.len();
            let mut values = Vec::new();
            for column in event.columns {
                let at = column_headers.len();
                if column.sort_by {
                    sort_by.push(at)
                } else {
                    others.push(at)
                }
                column_headers.push(column.header);
                values.push(column.value);
            }
            events[index] = Some(Event {
                key: event.key,
                comm: event.comm,
                first_column,
                values,
            });
        }
        sort_by.extend(others);
        Ok(Self {
            events,
            key_header,
            comm_header,
            comm_from_pid,
            only_comm: config.only_comm,
            pid_comm: config.pid_comm,
            column_headers,
            sort_order: sort_by,
            rows: TopRows::default(),
            events_total: 0,
        })
    }

    fn schema_of(&self) -> TopSchema {
        TopSchema {
            key_header: self.key_header.clone(),
            comm_header: self.comm_header.clone(),
            comm_from_pid: self.comm_from_pid,
            column_headers: self.column_headers.clone(),
            sort_order: self.sort_order.clone(),
            printkey: None,
        }
    }
}

/// The top table of `rows`: by the `top-by` columns (largest first, in declaration order),
/// then the other columns, then the key.
pub fn top_table(schema: &TopSchema, rows: &TopRows) -> TopTable {
    let mut table: Vec<(TopRow, Option<&str>)> = rows
        .rows
        .iter()
        .map(|(key, cells)| {
            let (key, name) = match key {
                TopKey::Key(k) => (*k, None),
                TopKey::Comm(c) => (0, Some(c.as_str())),
            };
            let comm = name.map(str::to_string).or_else(|| cells.comm.clone());
            let mut values = cells.values.clone();
            values.resize(schema.column_headers.len(), 0);
            (TopRow { key, comm, values }, name)
        })
        .collect();
    table.sort_by(|(a, an), (b, bn)| {
        schema
            .sort_order
            .iter()
            .map(|&c| b.values[c].cmp(&a.values[c]))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.key.cmp(&b.key))
            .then(an.cmp(bn))
    });
    TopTable {
        key_header: schema.key_header.clone(),
        comm_header: schema.comm_header.clone(),
        comm_from_pid: schema.comm_from_pid,
        column_headers: schema.column_headers.clone(),
        rows: table.into_iter().map(|(row, _)| row).collect(),
        events_total: rows.events,
    }
}

impl Analyzer for TopAnalyzer {
    type Table = TopTable;

    fn feed(&mut self, event: &TraceEvent<'_>) {
        let Some(Some(spec)) = self.events.get(usize::from(event.event.0)) else {
            return;
        };
        let row_key = if self.only_comm {
            let name = match &spec.comm {
                Some(comm) => comm(event),
                None => self.pid_comm.as_ref().and_then(|lookup| lookup(event.tid)),
            };
            TopKey::Comm(name.unwrap_or_else(|| "<...>".into()))
        } else {
            let key = match &spec.key {
                Some(source) => source.read(event),
                None => Some(u64::from(event.tid)),
            };
            let Some(key) = key else { return };
            TopKey::Key(key)
        };
        self.rows.events += 1;
        self.events_total += 1;
        let columns = self.column_headers.len();
        let row = self.rows.rows.entry(row_key).or_insert_with(|| TopCells {
            // Named once per row and interval: no string per event.
            comm: spec.comm.as_ref().and_then(|comm| comm(event)),
            values: vec![0; columns],
        });
        for (i, value) in spec.values.iter().enumerate() {
            let add = match value {
                Some(source) => match source.read(event) {
                    Some(v) => v,
                    None => continue,
                },
                None => 1,
            };
            let cell = &mut row.values[spec.first_column + i];
            *cell = cell.wrapping_add(add);
        }
    }

    fn lost(&mut self, _from_ns: u64, _to_ns: u64) {
        // Sums have no pending state: a hole only makes them smaller.
    }

    fn take_rows(&mut self) -> AnalysisRows {
        AnalysisRows::Top(std::mem::take(&mut self.rows))
    }

    fn rows(&self) -> AnalysisRows {
        AnalysisRows::Top(self.rows.clone())
    }

    fn schema(&self) -> AnalysisSchema {
        AnalysisSchema::Top(self.schema_of())
    }

    /// The table of `rows`, titled with the events since the start (as perf-prof).
    fn tabulate(&self, rows: &AnalysisRows) -> TopTable {
        let mut table = match rows {
            AnalysisRows::Top(rows) => top_table(&self.schema_of(), rows),
            _ => top_table(&self.schema_of(), &TopRows::default()),
        };
        table.events_total = self.events_total;
        table
    }
}

#[cfg(test)]
mod tests;
