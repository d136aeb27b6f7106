//! Query results as perf-prof's sql profiler prints them (notes/perf-prof.md §4), so
//! scripts written against its output keep working, and as CSV.
//!
//! perf-prof's table: a `=== query ===` line, a header, a `----+----` separator, then one
//! line per row; every column is left-aligned at a width that starts at the header's and
//! grows as wider values are printed (so early rows can be ragged — by design). INTEGER
//! prints as `%lld`, FLOAT as `%.6f`, TEXT as is, BLOB as `[BLOB:n]`, NULL as `NULL`.

use std::io::Write;

use rusqlite::types::ValueRef;

use crate::model::text::{Repeat, spaces};

/// One result value as perf-prof prints it.
pub fn perf_prof_cell(value: ValueRef<'_>) -> String {
    match value {
        ValueRef::Null => "NULL".into(),
        ValueRef::Integer(i) => i.to_string(),
        ValueRef::Real(f) => format!("{f:.6}"),
        // A session's text (comm names, symbols, console lines) came from outside: the
        // terminal gets it as text.
        ValueRef::Text(t) => crate::model::text::escape_controls(&String::from_utf8_lossy(t)).into_owned(),
        ValueRef::Blob(b) => format!("[BLOB:{}]", b.len()),
    }
}

/// Writes one query's result in perf-prof's layout.
pub struct PerfProfTable {
    widths: Vec<usize>,
}

fn width(s: &str) -> usize {
    s.chars().count()
}

fn pad(out: &mut dyn Write, s: &str, w: usize) -> std::io::Result<()> {
    write!(out, "{s}{}", spaces(w.saturating_sub(width(s))))
}

impl PerfProfTable {
    /// Print the query line, the header and the separator.
    pub fn start(out: &mut dyn Write, query: &str, columns: &[String]) -> std::io::Result<Self> {
        Self::start_after(out, query, columns, &[])
    }

    /// As [`start`](Self::start), the columns at least as wide as `earlier` (the widths
    /// the same query reached before: the live sql profiler keeps them from one interval
    /// to the next, as perf-prof's).
    pub fn start_after(
        out: &mut dyn Write,
        query: &str,
        columns: &[String],
        earlier: &[usize],
    ) -> std::io::Result<Self> {
        writeln!(out, "=== {query} ===")?;
        let widths: Vec<usize> = columns
            .iter()
            .enumerate()
            .map(|(i, c)| width(c).max(earlier.get(i).copied().unwrap_or(0)))
            .collect();
        for (i, c) in columns.iter().enumerate() {
            if i > 0 {
                write!(out, " | ")?;
            }
            pad(out, c, widths[i])?;
        }
        writeln!(out)?;
        for (i, w) in widths.iter().enumerate() {
            if i > 0 {
                write!(out, "-+-")?;
            }
            write!(out, "{}", Repeat('-', *w))?;
        }
        writeln!(out)?;
        Ok(Self { widths })
    }

    /// Print one row; columns widen to fit.
    pub fn row(&mut self, out: &mut dyn Write, cells: &[String]) -> std::io::Result<()> {
        for (i, cell) in cells.iter().enumerate() {
            if i > 0 {
                write!(out, " | ")?;
            }
            let w = &mut self.widths[i];
            *w = (*w).max(width(cell));
            pad(out, cell, *w)?;
        }
        writeln!(out)
    }

    /// The empty line after a table.
    pub fn end(self, out: &mut dyn Write) -> std::io::Result<()> {
        writeln!(out)
    }

    /// The widths the columns reached.
    pub fn widths(&self) -> &[usize] {
        &self.widths
    }
}

/// One value as a CSV field: NULL is empty, a BLOB is lower-case hex, text is quoted
/// when it holds a comma or quote, its control characters spelled out (`\e[31m`, `\n`):
/// a recorded name is whatever a traced program put there, and the CSV may reach a
/// terminal.
pub fn csv_cell(value: ValueRef<'_>) -> String {
    match value {
        ValueRef::Null => String::new(),
        ValueRef::Integer(i) => i.to_string(),
        ValueRef::Real(f) => f.to_string(),
        ValueRef::Text(t) => csv_quote(&crate::model::text::escape_controls(&String::from_utf8_lossy(t))),
        ValueRef::Blob(b) => b.iter().map(|x| format!("{x:02x}")).collect(),
    }
}

pub fn csv_quote(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_start_at_header_width_and_grow() {
        let mut out = Vec::new();
        let mut t =
            PerfProfTable::start(&mut out, "SELECT comm, n", &["comm".into(), "count".into()]).unwrap();
        for (c, n) in [("sh", "38"), ("rcu_preempt", "10"), ("kworker/0:1", "1")] {
            t.row(&mut out, &[c.into(), n.into()]).unwrap();
        }
        t.end(&mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "=== SELECT comm, n ===\n\
             comm | count\n\
             -----+------\n\
             sh   | 38   \n\
             rcu_preempt | 10   \n\
             kworker/0:1 | 1    \n\n"
        );
    }

    #[test]
    fn values_render_as_perf_prof_and_csv_do() {
        assert_eq!(perf_prof_cell(ValueRef::Real(1.5)), "1.500000");
        assert_eq!(perf_prof_cell(ValueRef::Blob(&[1, 2, 3])), "[BLOB:3]");
        assert_eq!(perf_prof_cell(ValueRef::Text(b"\x1b[2Jx")), "\\e[2Jx");
        assert_eq!(perf_prof_cell(ValueRef::Null), "NULL");
        assert_eq!(perf_prof_cell(ValueRef::Integer(-7)), "-7");
        assert_eq!(csv_cell(ValueRef::Text(b"a,\"b\"")), "\"a,\"\"b\"\"\"");
        assert_eq!(csv_cell(ValueRef::Text(b"\x1b[2Jx\ny")), "\\e[2Jx\\ny");
        assert_eq!(csv_cell(ValueRef::Blob(&[0xde, 0xad])), "dead");
        assert_eq!(csv_cell(ValueRef::Null), "");
    }
}
