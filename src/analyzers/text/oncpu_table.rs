//! The oncpu table as perf-prof prints it in CPU mode: `CPU SUM(ms) COMM:TID(ms)`, then
//! per CPU `%03d %-7lu ` (whole milliseconds) and one `comm:tid(%.1fms) ` item per task,
//! longest first — the trailing space included. `--only-comm` names items by command
//! (`comm(%.1fms) `); `--detail` adds switches and the longest run:
//! `CPU SUM(ms/sws) COMM:TID(ms/sws/max_ms)` with `%03d %-11s ` (`962ms/186`) and
//! `comm:tid(%.1fms/%d/%.1fms) ` items.

use std::fmt::Write;

use super::WallClock;
use crate::analyzers::oncpu::OnCpuTable;
use crate::model::text::escape_controls;

/// The oncpu table; empty when no task ran (perf-prof prints nothing then).
pub fn oncpu_table(table: &OnCpuTable, wall: &WallClock) -> String {
    let mut out = String::new();
    if table.rows.is_empty() {
        return out;
    }
    out.push_str(&wall.prefix());
    out.push('\n');
    let item = if table.only_comm { "COMM" } else { "COMM:TID" };
    if table.detail {
        let _ = writeln!(out, "CPU SUM(ms/sws) {item}(ms/sws/max_ms)");
    } else {
        let _ = writeln!(out, "CPU SUM(ms) {item}(ms)");
    }
    let ms = |ns: u64| ns as f64 / 1e6;
    for row in &table.rows {
        let sum_ms = row.total_ns / 1_000_000;
        if table.detail {
            let _ = write!(
                out,
                "{:03} {:<11} ",
                row.cpu,
                format!("{sum_ms}ms/{}", row.switches)
            );
        } else {
            let _ = write!(out, "{:03} {sum_ms:<7} ", row.cpu);
        }
        for task in &row.tasks {
            // A thread names itself: what the terminal gets is its text.
            out.push_str(&escape_controls(&task.comm));
            if let Some(tid) = task.tid {
                let _ = write!(out, ":{tid}");
            }
            let stats = &task.stats;
            if table.detail {
                let max = stats.histogram.max().unwrap_or(0);
                let _ = write!(
                    out,
                    "({:.1}ms/{}/{:.1}ms) ",
                    ms(stats.total_ns()),
                    stats.calls(),
                    ms(max)
                );
            } else {
                let _ = write!(out, "({:.1}ms) ", ms(stats.total_ns()));
            }
        }
        out.push('\n');
    }
    out
}
