//! The live `sql` output as perf-prof prints it per interval: the time line, then each
//! statement's table (`=== statement ===`, header, `---+---`, rows, an empty line).
//! Columns start at the header's width and only grow; perf-prof keeps a statement's widths
//! from one interval to the next, so the printer passes them in ([`SqlWidths`]).

use crate::analyzers::sql::query::run;
use crate::model::sql_rows::{SqlRows, SqlSchema};
use crate::store::table::{PerfProfTable, perf_prof_cell};

use super::WallClock;

/// The widths each statement's columns reached so far.
#[derive(Clone, Debug, Default)]
pub struct SqlWidths(Vec<Vec<usize>>);

/// One interval's text.
pub fn sql_text(schema: &SqlSchema, rows: &SqlRows, wall: &WallClock, widths: &mut SqlWidths) -> String {
    let mut out: Vec<u8> = Vec::new();
    out.extend_from_slice(wall.prefix().as_bytes());
    out.push(b'\n');
    match run(schema, rows) {
        Ok(results) => {
            if widths.0.len() < results.len() {
                widths.0.resize(results.len(), Vec::new());
            }
            for (result, earlier) in results.iter().zip(widths.0.iter_mut()) {
                // Writes into a Vec cannot fail.
                let Ok(mut table) =
                    PerfProfTable::start_after(&mut out, &result.statement, &result.columns, earlier)
                else {
                    continue;
                };
                for row in &result.rows {
                    let cells: Vec<String> = row.iter().map(|v| perf_prof_cell(v.into())).collect();
                    let _ = table.row(&mut out, &cells);
                }
                *earlier = table.widths().to_vec();
                let _ = table.end(&mut out);
            }
        }
        Err(e) => out.extend_from_slice(format!("sql: the query failed: {e}\n").as_bytes()),
    }
    if rows.dropped > 0 {
        out.extend_from_slice(
            format!(
                "sql: {} events of this interval were not kept (at most {} are)\n",
                rows.dropped,
                crate::model::sql_rows::MAX_EVENTS
            )
            .as_bytes(),
        );
    }
    String::from_utf8_lossy(&out).into_owned()
}
