//! An analysis's typed table as files: CSV (a header of the columns' file names, one
//! line per row) and JSON (the columns with their kinds, one object per row). Both read
//! the same cells the Tables view sorts by, so a script and the screen agree; a column's
//! file name carries its unit (`p99_ns`), and integers are written whole.

use serde_json::{Map, Value, json};

use crate::model::present::{AnalysisTable, Cell, ColumnKind};

/// One CSV field, quoted when it must be.
pub fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// The table as CSV.
pub fn to_csv(table: &AnalysisTable) -> String {
    let header: Vec<String> = table.columns.iter().map(|c| csv_field(&c.file_name())).collect();
    let mut csv = header.join(",");
    csv.push('\n');
    for row in &table.rows {
        let line: Vec<String> = row.cells.iter().map(|c| csv_field(&c.plain())).collect();
        csv.push_str(&line.join(","));
        csv.push('\n');
    }
    csv
}

fn cell_json(cell: &Cell) -> Value {
    match cell {
        // JSON numbers as the integer types serde knows; beyond them (never a count or
        // a duration) the exact digits as text rather than a rounded number.
        Cell::Int(n) => i64::try_from(*n)
            .map(Value::from)
            .or_else(|_| u64::try_from(*n).map(Value::from))
            .unwrap_or_else(|_| Value::String(n.to_string())),
        Cell::Float(f) => json!(f),
        Cell::Text(t) => json!(t),
    }
}

fn kind_name(kind: ColumnKind) -> &'static str {
    match kind {
        ColumnKind::Text => "text",
        ColumnKind::Id => "id",
        ColumnKind::Count => "count",
        ColumnKind::Nanoseconds => "ns",
        ColumnKind::Seconds => "s",
        ColumnKind::Bytes => "bytes",
        ColumnKind::Percent => "percent",
        ColumnKind::Number => "number",
    }
}

/// The table as JSON: `columns` (name, kind) and `rows` keyed by the columns' file names.
pub fn to_json(table: &AnalysisTable, analyzer: &str, events: u64) -> Value {
    let columns: Vec<Value> = table
        .columns
        .iter()
        .map(|c| json!({"name": c.file_name(), "kind": kind_name(c.kind)}))
        .collect();
    let rows: Vec<Value> = table
        .rows
        .iter()
        .map(|row| {
            let mut m = Map::new();
            for (column, cell) in table.columns.iter().zip(&row.cells) {
                m.insert(column.file_name(), cell_json(cell));
            }
            Value::Object(m)
        })
        .collect();
    json!({
        "analyzer": analyzer,
        "title": table.title,
        "events": events,
        "columns": columns,
        "rows": rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::present::{Column, TableRow};

    fn table() -> AnalysisTable {
        AnalysisTable {
            title: "syscalls".into(),
            header: vec!["syscall  calls  p99".into()],
            columns: vec![
                Column::new("syscall", ColumnKind::Text),
                Column::new("calls", ColumnKind::Count),
                Column::new("p99", ColumnKind::Nanoseconds),
                Column::new("%gsys", ColumnKind::Percent),
                Column::new("bytes", ColumnKind::Bytes),
            ],
            rows: vec![
                TableRow {
                    text: "read(0)  3  1.2us".into(),
                    cells: vec![
                        Cell::Text("read(0)".into()),
                        Cell::Int(3),
                        Cell::Int(u64::MAX.into()),
                        Cell::Float(12.5),
                        Cell::Int(-4096),
                    ],
                },
                TableRow {
                    text: "wr,\"x\"  1  2us".into(),
                    cells: vec![
                        Cell::Text("wr,\"x\"".into()),
                        Cell::Int(1),
                        Cell::Int(2_000),
                        Cell::Float(0.0),
                        Cell::Int(0),
                    ],
                },
            ],
        }
    }

    #[test]
    fn csv_and_json_hold_the_same_cells_with_units_in_the_names_and_integers_exact() {
        let t = table();
        assert_eq!(
            to_csv(&t),
            "syscall,calls,p99_ns,%gsys,bytes\n\
             read(0),3,18446744073709551615,12.5,-4096\n\
             \"wr,\"\"x\"\"\",1,2000,0,0\n"
        );
        let j = to_json(&t, "syscalls", 4);
        assert_eq!(j["columns"][2], json!({"name": "p99_ns", "kind": "ns"}));
        assert_eq!(j["rows"][0]["p99_ns"], json!(u64::MAX));
        assert_eq!(j["rows"][0]["bytes"], json!(-4096));
        assert_eq!(j["rows"][1]["syscall"], json!("wr,\"x\""));
        // One object per row, one key per column.
        let rows = j["rows"].as_array().unwrap();
        assert_eq!(rows.len(), t.rows.len());
        assert!(
            rows.iter()
                .all(|r| r.as_object().unwrap().len() == t.columns.len())
        );
    }
}
