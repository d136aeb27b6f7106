//! The oncpu table as perf-prof prints it in CPU mode: `CPU SUM(ms) COMM:TID(ms)`, then
//! per CPU `%03d %-7lu ` (whole milliseconds) and one `comm:tid(%.1fms) ` item per task,
//! longest first — the trailing space included.

use std::fmt::Write;

use super::{UNKNOWN_COMM, WallClock};
use crate::analyzers::oncpu::OnCpuTable;

/// The kernel's `TASK_COMM_LEN` (16) less the NUL.
const COMM_CHARS: usize = 15;

/// The oncpu table; empty when no task ran (perf-prof prints nothing then).
pub fn oncpu_table(table: &OnCpuTable, wall: &WallClock, comm_of: &dyn Fn(u32) -> Option<String>) -> String {
    let mut out = String::new();
    if table.rows.is_empty() {
        return out;
    }
    out.push_str(&wall.prefix());
    out.push('\n');
    out.push_str("CPU SUM(ms) COMM:TID(ms)\n");
    for row in &table.rows {
        let _ = write!(out, "{:03} {:<7} ", row.cpu, row.total_ns / 1_000_000);
        for task in &row.tasks {
            let comm = comm_of(task.tid).unwrap_or_else(|| UNKNOWN_COMM.into());
            let comm: String = comm.chars().take(COMM_CHARS).collect();
            let ms = task.stats.total_ns() as f64 / 1e6;
            let _ = write!(out, "{comm}:{}({ms:.1}ms) ", task.tid);
        }
        out.push('\n');
    }
    out
}
