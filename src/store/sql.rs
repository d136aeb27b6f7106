//! `perfscope sql`: run `;`-separated queries on a session over a read-only connection
//! and print each as perf-prof's sql profiler does (or as CSV).
//!
//! The connection gets helpers: `field(type, raw, 'name')` decodes one event field with
//! the layout stored at record time (type = `event_types.id`, the alias, the event name or
//! `sys:name`), and one TEMP VIEW per event type named after it (alias, else event name)
//! with perf-prof's columns — `_pid, _tid, _time, _cpu`, then every field but
//! `common_type`, then the record as `_raw` — so `SELECT prev_comm, COUNT(*) FROM sched_switch GROUP BY 1` works.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use rusqlite::fallible_iterator::FallibleIterator;
use rusqlite::functions::FunctionFlags;
use rusqlite::types::Value;
use rusqlite::{Batch, Connection};

use super::error::{SqliteContext, StoreError};
use super::reader::{RecordedEventType, read_event_types};
use super::schema;
use super::table::{PerfProfTable, csv_cell, csv_quote, perf_prof_cell};
use crate::trace::event::{FieldKind, FieldLayout};

/// How query results are printed.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SqlOutput {
    /// perf-prof's sql profiler layout.
    Table,
    /// A header line and comma-separated rows per query (a blank line between queries).
    Csv,
}

/// The value of one field of a raw record, typed as the view columns are: strings as
/// TEXT, other arrays and non-string payloads as BLOB, integers as INTEGER.
pub fn field_value(field: &FieldLayout, raw: &[u8]) -> Value {
    if field.is_string() {
        return field
            .read_str(raw)
            .map(|s| Value::Text(s.into_owned()))
            .unwrap_or(Value::Null);
    }
    match field.kind {
        FieldKind::Signed => field.read_i64(raw).map(Value::Integer).unwrap_or(Value::Null),
        FieldKind::Unsigned => field
            .read_u64(raw)
            .map(|v| Value::Integer(v as i64))
            .unwrap_or(Value::Null),
        FieldKind::Array { .. } => raw
            .get(field.offset..field.offset + field.size)
            .map(|b| Value::Blob(b.to_vec()))
            .unwrap_or(Value::Null),
        FieldKind::DataLoc { .. } | FieldKind::RelLoc { .. } => field
            .payload(raw)
            .map(|b| Value::Blob(b.to_vec()))
            .unwrap_or(Value::Null),
        FieldKind::CharArray => Value::Null,
    }
}

fn find_type<'a>(types: &'a [RecordedEventType], key: &Value) -> Option<&'a RecordedEventType> {
    match key {
        Value::Integer(i) => types.iter().find(|t| i64::from(t.index.0) == *i),
        Value::Text(name) => types.iter().find(|t| {
            t.alias.as_deref() == Some(name.as_str())
                || t.layout.name == *name
                || t.layout.full_name() == *name
        }),
        _ => None,
    }
}

fn user_error(message: String) -> rusqlite::Error {
    rusqlite::Error::UserFunctionError(message.into())
}

/// Register `field()` on `conn`.
pub fn register_field_function(
    conn: &Connection,
    types: Arc<Vec<RecordedEventType>>,
) -> rusqlite::Result<()> {
    conn.create_scalar_function(
        "field",
        3,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        move |ctx| {
            let key: Value = ctx.get(0)?;
            let Some(t) = find_type(&types, &key) else {
                let known: Vec<String> = types
                    .iter()
                    .map(|t| format!("{} ({})", t.index.0, t.table_name()))
                    .collect();
                return Err(user_error(format!(
                    "field(): no event type {key:?} in this session; it has: {}",
                    known.join(", ")
                )));
            };
            let raw = match ctx.get_raw(1) {
                rusqlite::types::ValueRef::Blob(b) => b,
                rusqlite::types::ValueRef::Null => return Ok(Value::Null),
                _ => {
                    return Err(user_error(
                        "field(): the second argument must be events.raw".into(),
                    ));
                }
            };
            let name: String = ctx.get(2)?;
            let Some(field) = t.layout.field(&name) else {
                let names: Vec<&str> = t.layout.fields.iter().map(|f| f.name.as_str()).collect();
                return Err(user_error(format!(
                    "field(): {} has no field `{name}`; its fields are {}",
                    t.layout.full_name(),
                    names.join(", ")
                )));
            };
            Ok(field_value(field, raw))
        },
    )
}

fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

fn quote_text(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// The TEMP VIEW of one event type; `None` when its name would shadow a session table.
pub fn view_sql(t: &RecordedEventType) -> Option<String> {
    let name = t.table_name();
    if schema::TABLES.contains(&name) {
        return None;
    }
    let mut columns = vec![
        "pid AS _pid".to_string(),
        "tid AS _tid".into(),
        "time_ns AS _time".into(),
        "cpu AS _cpu".into(),
    ];
    for f in t.layout.fields.iter().filter(|f| f.name != "common_type") {
        columns.push(format!(
            "field({}, raw, {}) AS {}",
            t.index.0,
            quote_text(&f.name),
            quote_ident(&f.name)
        ));
    }
    columns.push("raw AS _raw".into());
    Some(format!(
        "CREATE TEMP VIEW IF NOT EXISTS {} AS SELECT {} FROM main.events WHERE type_id = {}",
        quote_ident(name),
        columns.join(", "),
        t.index.0
    ))
}

/// A read-only connection to a session with `field()` and the event views.
pub fn query_connection(path: &Path) -> Result<Connection, StoreError> {
    let conn = schema::open_read_only(path)?;
    let types = Arc::new(read_event_types(path, &conn)?);
    register_field_function(&conn, types.clone()).ctx(|| "cannot register field()".into())?;
    for t in types.iter() {
        if let Some(sql) = view_sql(t) {
            conn.execute_batch(&sql)
                .ctx(|| format!("cannot create the view of {}", t.layout.full_name()))?;
        }
    }
    Ok(conn)
}

/// Run every statement of `sql` on the session at `path`, printing each result.
pub fn run_sql(path: &Path, sql: &str, format: SqlOutput, out: &mut dyn Write) -> Result<(), StoreError> {
    let conn = query_connection(path)?;
    run_on(&conn, sql, format, out)
}

/// Run every statement of `sql` on `conn`.
pub fn run_on(
    conn: &Connection,
    sql: &str,
    format: SqlOutput,
    out: &mut dyn Write,
) -> Result<(), StoreError> {
    let mut batch = Batch::new(conn, sql);
    let mut first = true;
    while let Some(mut stmt) = batch.next().ctx(|| "the query does not parse".into())? {
        // perf-prof echoes the statement as SQLite saw it (its `;` and leading blanks too).
        let text = stmt.expanded_sql().unwrap_or_default();
        let columns: Vec<String> = stmt.column_names().iter().map(|c| c.to_string()).collect();
        let n = columns.len();
        let mut rows = stmt.query([]).ctx(|| format!("query `{}` failed", text.trim()))?;
        let w = |e| StoreError::Output(e);
        match format {
            SqlOutput::Table => {
                let mut table = PerfProfTable::start(out, &text, &columns).map_err(w)?;
                while let Some(row) = rows.next().ctx(|| format!("query `{}` failed", text.trim()))? {
                    let cells: Vec<String> = (0..n)
                        .map(|i| row.get_ref(i).map(perf_prof_cell))
                        .collect::<Result<_, _>>()
                        .ctx(|| "cannot read a result".into())?;
                    table.row(out, &cells).map_err(w)?;
                }
                table.end(out).map_err(w)?;
            }
            SqlOutput::Csv => {
                if !first {
                    writeln!(out).map_err(w)?;
                }
                let header: Vec<String> = columns.iter().map(|c| csv_quote(c)).collect();
                writeln!(out, "{}", header.join(",")).map_err(w)?;
                while let Some(row) = rows.next().ctx(|| format!("query `{}` failed", text.trim()))? {
                    let cells: Vec<String> = (0..n)
                        .map(|i| row.get_ref(i).map(csv_cell))
                        .collect::<Result<_, _>>()
                        .ctx(|| "cannot read a result".into())?;
                    writeln!(out, "{}", cells.join(",")).map_err(w)?;
                }
            }
        }
        first = false;
    }
    Ok(())
}
