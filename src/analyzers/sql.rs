//! perf-prof's live `sql`: every event becomes a row of its event's table — perf-prof's
//! columns: `_pid, _tid, _time, _cpu, _period`, `common_flags, common_preempt_count,
//! common_pid`, then every format field (strings TEXT, other arrays BLOB, the rest
//! INTEGER) — and `--query` runs over one interval's rows ([`query`]). The analyzer only
//! decodes events into rows; the rows are the engine's like any analyzer's, so the TUI's
//! windows query whatever span is selected.

pub mod query;

use super::{Analyzer, AnalyzerError};
use crate::model::analysis::{AnalysisRows, AnalysisSchema};
use crate::model::sql_rows::{SqlRows, SqlSchema, SqlTable, SqlType, SqlValue};
use crate::trace::event::{EventLayout, FieldKind, FieldLayout, TraceEvent};

/// The sample's columns, before the event's own.
pub const SAMPLE_COLUMNS: [&str; 5] = ["_pid", "_tid", "_time", "_cpu", "_period"];

/// What the command line says of one event.
pub struct SqlEvent {
    /// The alias, else the event name: the table's name.
    pub table: String,
    pub filter: Option<String>,
}

pub struct SqlAnalyzer {
    schema: SqlSchema,
    /// Per opened event, the fields its columns read (common_type left out).
    fields: Vec<Vec<FieldLayout>>,
    rows: SqlRows,
}

fn column_type(field: &FieldLayout) -> SqlType {
    if field.is_string() {
        SqlType::Text
    } else {
        match field.kind {
            FieldKind::Signed | FieldKind::Unsigned => SqlType::Integer,
            _ => SqlType::Blob,
        }
    }
}

fn value(field: &FieldLayout, raw: &[u8]) -> SqlValue {
    use rusqlite::types::Value;
    match crate::store::sql::field_value(field, raw) {
        Value::Integer(i) => SqlValue::Integer(i),
        Value::Text(s) => SqlValue::Text(s),
        Value::Blob(b) => SqlValue::Blob(b),
        Value::Null | Value::Real(_) => SqlValue::Null,
    }
}

impl SqlAnalyzer {
    /// `layouts[i]` and `events[i]` describe `EventIndex(i)`. The query is checked here,
    /// against the empty tables, so a bad one fails before any event is opened.
    pub fn new(
        layouts: &[EventLayout],
        events: &[SqlEvent],
        query: &str,
        created_unix_s: u64,
    ) -> Result<Self, AnalyzerError> {
        let mut tables: Vec<SqlTable> = Vec::new();
        let mut fields = Vec::new();
        for (layout, event) in layouts.iter().zip(events) {
            if tables.iter().any(|t| t.name == event.table) {
                return Err(AnalyzerError::Config(format!(
                    "sql: two events make the table `{}`: give one `alias=NAME` (-e '{}//alias=NAME/')",
                    event.table,
                    layout.full_name()
                )));
            }
            let kept: Vec<FieldLayout> = layout
                .fields
                .iter()
                .filter(|f| f.name != "common_type")
                .cloned()
                .collect();
            let mut columns: Vec<(String, SqlType)> = SAMPLE_COLUMNS
                .iter()
                .map(|c| (c.to_string(), SqlType::Integer))
                .collect();
            columns.extend(kept.iter().map(|f| (f.name.clone(), column_type(f))));
            tables.push(SqlTable {
                name: event.table.clone(),
                system: layout.system.clone(),
                event: layout.name.clone(),
                event_id: layout.id,
                filter: event.filter.clone(),
                field_count: columns.len(),
                columns,
                created_unix_s,
            });
            fields.push(kept);
        }
        let schema = SqlSchema {
            tables,
            query: query.to_string(),
        };
        query::check(&schema).map_err(AnalyzerError::Config)?;
        Ok(Self {
            schema,
            fields,
            rows: SqlRows::default(),
        })
    }
}

impl Analyzer for SqlAnalyzer {
    type Table = Result<Vec<query::QueryResult>, String>;

    fn feed(&mut self, event: &TraceEvent<'_>) {
        let index = usize::from(event.event.0);
        let Some(fields) = self.fields.get(index) else {
            return;
        };
        let mut row = Vec::with_capacity(SAMPLE_COLUMNS.len() + fields.len());
        row.extend([
            SqlValue::Integer(i64::from(event.pid)),
            SqlValue::Integer(i64::from(event.tid)),
            SqlValue::Integer(event.time_ns as i64),
            SqlValue::Integer(i64::from(event.cpu)),
            // Tracepoints are opened with sample_period 1: every record stands for one.
            SqlValue::Integer(1),
        ]);
        row.extend(fields.iter().map(|f| value(f, event.raw)));
        self.rows.push(index, row);
    }

    fn lost(&mut self, _from_ns: u64, _to_ns: u64) {
        // Rows are single events: nothing pending to corrupt.
    }

    fn take_rows(&mut self) -> AnalysisRows {
        AnalysisRows::Sql(std::mem::take(&mut self.rows))
    }

    fn rows(&self) -> AnalysisRows {
        AnalysisRows::Sql(self.rows.clone())
    }

    fn schema(&self) -> AnalysisSchema {
        AnalysisSchema::Sql(self.schema.clone())
    }

    fn tabulate(&self, rows: &AnalysisRows) -> Self::Table {
        match rows {
            AnalysisRows::Sql(rows) => query::run(&self.schema, rows),
            _ => query::run(&self.schema, &SqlRows::default()),
        }
    }
}

#[cfg(test)]
mod tests;
