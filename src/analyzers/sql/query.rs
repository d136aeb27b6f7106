//! Run the live `sql` queries over one span's events: a fresh in-memory SQLite database
//! per span (so every query sees that span's events only, as perf-prof's tables start over
//! each interval), its event tables and perf-prof's `event_metadata`, then each
//! `;`-separated statement in order.

use rusqlite::types::Value;
use rusqlite::{Batch, Connection, fallible_iterator::FallibleIterator, params_from_iter};

use crate::model::sql_rows::{SqlRows, SqlSchema, SqlTable, SqlValue};

/// One statement's result.
#[derive(Clone, Debug, PartialEq)]
pub struct QueryResult {
    /// The statement as SQLite split it (its `;` and leading blanks, as perf-prof echoes it).
    pub statement: String,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Value>>,
}

fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

fn create_sql(table: &SqlTable) -> String {
    let columns: Vec<String> = table
        .columns
        .iter()
        .map(|(name, ty)| format!("{} {}", quote_ident(name), ty.sql()))
        .collect();
    format!(
        "CREATE TABLE {} ({});",
        quote_ident(&table.name),
        columns.join(", ")
    )
}

const METADATA_SQL: &str = "CREATE TABLE event_metadata (table_name TEXT PRIMARY KEY, \
     event_system TEXT NOT NULL, event_name TEXT NOT NULL, event_id INTEGER NOT NULL, \
     filter_expression TEXT, has_stack BOOLEAN DEFAULT FALSE, max_stack INTEGER, \
     field_count INTEGER NOT NULL, created_time INTEGER NOT NULL, sample_count INTEGER DEFAULT 0, \
     first_sample_time INTEGER, last_sample_time INTEGER, function_list TEXT);";

fn to_value(v: &SqlValue) -> Value {
    match v {
        SqlValue::Null => Value::Null,
        SqlValue::Integer(i) => Value::Integer(*i),
        SqlValue::Text(s) => Value::Text(s.clone()),
        SqlValue::Blob(b) => Value::Blob(b.clone()),
    }
}

fn message(e: rusqlite::Error) -> String {
    e.to_string()
}

/// A database holding `rows` under `schema`'s tables.
fn database(schema: &SqlSchema, rows: &SqlRows) -> rusqlite::Result<Connection> {
    let conn = Connection::open_in_memory()?;
    // The user's queries reach no file: no ATTACH, no VACUUM INTO.
    crate::store::schema::refuse_other_files(&conn)?;
    conn.execute_batch("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;")?;
    conn.execute_batch(METADATA_SQL)?;
    // perf-prof's `syscall(nr)` helper (its other helpers decode print fmt tables).
    conn.create_scalar_function(
        "syscall",
        1,
        rusqlite::functions::FunctionFlags::SQLITE_UTF8
            | rusqlite::functions::FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| {
            let nr: i64 = ctx.get(0)?;
            Ok(u64::try_from(nr)
                .ok()
                .and_then(crate::analyzers::syscall_name)
                .map_or_else(|| nr.to_string(), str::to_string))
        },
    )?;
    let tx = conn.unchecked_transaction()?;
    for (i, table) in schema.tables.iter().enumerate() {
        tx.execute_batch(&create_sql(table))?;
        let events = rows.tables.get(i).map_or(&[][..], Vec::as_slice);
        let marks = vec!["?"; table.columns.len()].join(", ");
        let mut insert = tx.prepare(&format!(
            "INSERT INTO {} VALUES ({marks})",
            quote_ident(&table.name)
        ))?;
        for event in events {
            insert.execute(params_from_iter(event.iter().map(to_value)))?;
        }
        // `_time` is the third column.
        let time = |e: &Vec<SqlValue>| match e.get(2) {
            Some(SqlValue::Integer(t)) => Some(*t),
            _ => None,
        };
        tx.execute(
            "INSERT INTO event_metadata VALUES (?1, ?2, ?3, ?4, ?5, FALSE, 0, ?6, ?7, ?8, ?9, ?10, NULL)",
            rusqlite::params![
                table.name,
                table.system,
                table.event,
                table.event_id as i64,
                table.filter,
                table.field_count as i64,
                table.created_unix_s as i64,
                events.len() as i64,
                events.iter().filter_map(time).min(),
                events.iter().filter_map(time).max(),
            ],
        )?;
    }
    tx.commit()?;
    Ok(conn)
}

/// Every statement of `schema.query` run over `rows`.
pub fn run(schema: &SqlSchema, rows: &SqlRows) -> Result<Vec<QueryResult>, String> {
    let conn = database(schema, rows).map_err(message)?;
    let mut results = Vec::new();
    let mut batch = Batch::new(&conn, &schema.query);
    while let Some(mut stmt) = batch.next().map_err(message)? {
        let statement = stmt.expanded_sql().unwrap_or_default();
        let columns: Vec<String> = stmt.column_names().iter().map(|c| c.to_string()).collect();
        let n = columns.len();
        let mut found = Vec::new();
        let mut cursor = stmt.query([]).map_err(message)?;
        while let Some(row) = cursor.next().map_err(message)? {
            found.push(
                (0..n)
                    .map(|i| row.get::<_, Value>(i))
                    .collect::<Result<_, _>>()
                    .map_err(message)?,
            );
        }
        results.push(QueryResult {
            statement,
            columns,
            rows: found,
        });
    }
    Ok(results)
}

/// Prepare every statement against the empty tables: a query that names an unknown table
/// or column, or does not parse, is refused before the events are opened.
pub fn check(schema: &SqlSchema) -> Result<(), String> {
    let conn = database(schema, &SqlRows::default()).map_err(message)?;
    let tables: Vec<&str> = schema.tables.iter().map(|t| t.name.as_str()).collect();
    let mut batch = Batch::new(&conn, &schema.query);
    let mut statements = 0;
    loop {
        match batch.next() {
            Ok(Some(_)) => statements += 1,
            Ok(None) => break,
            Err(e) => {
                return Err(format!(
                    "sql --query: {e} (the tables are {} and event_metadata; `perfscope trace -e EVENT help` lists an event's fields)",
                    tables.join(", ")
                ));
            }
        }
    }
    if statements == 0 {
        return Err(
            "sql --query has no statement: give one, e.g. --query 'SELECT COUNT(*) FROM TABLE'".into(),
        );
    }
    Ok(())
}
