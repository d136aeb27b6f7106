//! nested-trace's output as perf-prof prints it: `--impl call` prints the call tree
//! (`call_iterator_print`), `call-delay` the tree as a table with each function's time
//! (`call_delay_begin`/`call_delay_iterator`), `delay` the delay table. A span without
//! any entry prints nothing, as perf-prof's (its tree prints only when calls were counted).

use std::fmt::Write;

use super::{TextStyle, WallClock, latency_tables::delay_table, us};
use crate::analyzers::nested_trace::{CallLine, CallTable, call_table, nested_delay_table};
use crate::model::analysis::{CallReport, CallSchema};
use crate::model::call_rows::CallRows;

/// `  | ` per level above the parent, then `  |-` (perf-prof's indent, 4 columns a level).
fn indent(line: &CallLine) -> String {
    if line.depth == 0 {
        return String::new();
    }
    let mut s = "  | ".repeat(line.depth - 1);
    s.push_str("  |-");
    s
}

/// The tree lines of `call`.
fn call_lines(table: &CallTable) -> String {
    let mut out = String::new();
    for line in &table.lines {
        let _ = writeln!(
            out,
            "{}{}{}",
            indent(line),
            line.name,
            if line.recursive { " R" } else { "" }
        );
    }
    out
}

/// The table of `call-delay`.
fn call_delay_lines(table: &CallTable, wall: &WallClock) -> String {
    let mut out = String::new();
    let width = (table.max_depth * 4 + table.name_width).max("function call".len());
    out.push_str(&wall.prefix());
    out.push('\n');
    let _ = writeln!(
        out,
        "{:>width$} R {:>8} {:>16} {:>12} {:>12} {:>12} {:>12} {:>12}",
        "function call", "calls", "total(us)", "min(us)", "p50(us)", "p95(us)", "p99(us)", "max(us)"
    );
    out.extend(std::iter::repeat_n('-', width));
    out.push_str(
        " - -------- ---------------- ------------ ------------ ------------ ------------ ------------\n",
    );
    for line in &table.lines {
        let prefix = indent(line);
        let pad = width.saturating_sub(prefix.len());
        let _ = write!(
            out,
            "{prefix}{:<pad$} {}",
            line.name,
            if line.recursive { "R" } else { " " }
        );
        if let Some(stats) = line.stats.as_ref().filter(|s| s.calls() > 0) {
            let h = &stats.histogram;
            let p = |q: f64| us(h.percentile(q).unwrap_or(0));
            let _ = write!(
                out,
                " {:>8} {:>16} {:>12} {:>12} {:>12} {:>12} {:>12}",
                stats.calls(),
                us(stats.total_ns()),
                us(h.min().unwrap_or(0)),
                p(50.0),
                p(95.0),
                p(99.0),
                us(h.max().unwrap_or(0)),
            );
        }
        out.push('\n');
    }
    out
}

/// nested-trace's text of `rows`.
pub fn call_tree_text(schema: &CallSchema, rows: &CallRows, wall: &WallClock, style: TextStyle) -> String {
    match schema.report {
        CallReport::Times => delay_table(
            &nested_delay_table(schema, rows, schema.than_ns),
            wall,
            &|_| None,
            style,
        ),
        report => {
            let table = call_table(schema, rows);
            if table.calls == 0 {
                return String::new();
            }
            if report == CallReport::Calls {
                call_lines(&table)
            } else {
                call_delay_lines(&table, wall)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::call_rows::Caller;

    fn wall() -> WallClock {
        WallClock::local(std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000))
    }

    fn schema(report: CallReport) -> CallSchema {
        CallSchema {
            functions: vec!["outer".into(), "inner".into(), "leaf".into()],
            exits: vec!["outer_ret".into(), "inner_ret".into(), "leaf_ret".into()],
            report,
            than_ns: None,
        }
    }

    fn rows() -> CallRows {
        let mut rows = CallRows::default();
        rows.edges.insert((Caller::Root, 0), 2);
        rows.edges.insert((Caller::Function(0), 1), 6);
        rows.edges.insert((Caller::Function(1), 2), 6);
        for _ in 0..2 {
            rows.times.entry(0).or_default().record(30_000_000, None);
        }
        for _ in 0..6 {
            rows.times.entry(1).or_default().record(2_000, None);
        }
        rows
    }

    #[test]
    fn call_prints_the_tree_indented_by_depth() {
        let text = call_tree_text(&schema(CallReport::Calls), &rows(), &wall(), TextStyle::default());
        assert_eq!(text, "outer\n  |-inner\n  |   |-leaf\n");
    }

    #[test]
    fn call_delay_prints_perf_prof_columns_and_blank_times() {
        let text = call_tree_text(
            &schema(CallReport::CallsAndTimes),
            &rows(),
            &wall(),
            TextStyle::default(),
        );
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], wall().prefix());
        // width = max depth 2 * 4 + longest name 5 = 13 = "function call".
        assert_eq!(
            lines[1],
            "function call R    calls        total(us)      min(us)      p50(us)      p95(us)      p99(us)      max(us)"
        );
        assert_eq!(
            lines[2],
            "------------- - -------- ---------------- ------------ ------------ ------------ ------------ ------------"
        );
        assert_eq!(
            lines[3],
            "outer                  2        60000.000    30000.000    30000.000    30000.000    30000.000    30000.000"
        );
        assert!(
            lines[4].starts_with("  |-inner              6           12.000        2.000"),
            "{}",
            lines[4]
        );
        // leaf never returned in the span: its name and no numbers.
        assert_eq!(lines[5], "  |   |-leaf   ");
    }

    #[test]
    fn recursion_marks_the_caller() {
        let mut rows = CallRows::default();
        rows.edges.insert((Caller::Root, 0), 1);
        rows.edges.insert((Caller::Function(0), 0), 3);
        rows.edges.insert((Caller::Function(0), 1), 1);
        rows.edges.insert((Caller::Function(1), 0), 1);
        let text = call_tree_text(&schema(CallReport::Calls), &rows, &wall(), TextStyle::default());
        // outer calls itself (R), inner calls outer, its ancestor (R).
        assert_eq!(text, "outer R\n  |-inner R\n");
    }

    #[test]
    fn nothing_is_printed_without_calls() {
        let text = call_tree_text(
            &schema(CallReport::CallsAndTimes),
            &CallRows::default(),
            &wall(),
            TextStyle::default(),
        );
        assert_eq!(text, "");
    }
}
