//! top's plain (non-tty) output: a title line, the header, then one row per key;
//! `%*s `/`%*lu ` right-aligned cells with one trailing space, the name `%s` last.

use std::fmt::Write;

use super::{UNKNOWN_COMM, WallClock};
use crate::analyzers::top::TopTable;
use crate::model::text::{escape_controls, left_aligned, right_aligned};

/// What the top printer needs beyond the table.
pub struct TopText<'a> {
    /// The title's program name (`perf-prof` in perf-prof's output).
    pub program: &'a str,
    /// Names of keys that are pids (no event has `key=`).
    pub comm_of: &'a dyn Fn(u32) -> Option<String>,
    /// `printkey=`: the key cell's text, padded to the key column.
    pub printkey: Option<&'a dyn Fn(u64) -> String>,
}

/// The top table; empty when there are no rows (perf-prof prints nothing then).
pub fn top_table(table: &TopTable, wall: &WallClock, text: &TopText<'_>) -> String {
    let mut out = String::new();
    if table.rows.is_empty() {
        return out;
    }
    let _ = writeln!(
        out,
        "{}{} - {}  sample {} events",
        wall.prefix(),
        text.program,
        wall.time_of_day(),
        table.events_total
    );
    // Headers are the user's aliases, names the comm of a thread: their text, never a
    // terminal command.
    let key_header = table.key_header.as_deref().map(escape_controls);
    let column_headers: Vec<_> = table.column_headers.iter().map(|h| escape_controls(h)).collect();
    let key_width = key_header.as_deref().map(|h| h.len().max(8));
    let widths: Vec<usize> = column_headers.iter().map(|h| h.len().max(12)).collect();
    if let (Some(header), Some(width)) = (key_header.as_deref(), key_width) {
        let _ = write!(out, "{} ", right_aligned(header, width));
    }
    for (header, width) in column_headers.iter().zip(&widths) {
        let _ = write!(out, "{} ", right_aligned(header, *width));
    }
    if let Some(comm) = &table.comm_header {
        out.push_str(&escape_controls(comm));
    }
    out.push('\n');
    for row in &table.rows {
        if let Some(width) = key_width {
            match text.printkey {
                Some(printkey) => {
                    let cell = printkey(row.key);
                    let _ = write!(out, "{} ", left_aligned(cell, width));
                }
                None => {
                    let _ = write!(out, "{} ", right_aligned(row.key, width));
                }
            }
        }
        for (value, width) in row.values.iter().zip(&widths) {
            let _ = write!(out, "{} ", right_aligned(value, *width));
        }
        if table.comm_header.is_some() {
            let name = match &row.comm {
                Some(name) => escape_controls(name).into_owned(),
                None if table.comm_from_pid => u32::try_from(row.key)
                    .ok()
                    .and_then(text.comm_of)
                    .unwrap_or_else(|| UNKNOWN_COMM.into()),
                None => String::new(),
            };
            out.push_str(&name);
        }
        out.push('\n');
    }
    out
}
