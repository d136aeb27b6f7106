//! The task-state table as perf-prof prints it (`task_state_print_header` and its row
//! printer): `St` then calls, total, min, p50, p95, p99, max in `%.3f` microseconds;
//! `--perins` puts `%6d %-16s ` (thread, comm) in front. perf-prof has no `than` column
//! here, and neither does this.

use std::fmt::Write;

use super::{UNKNOWN_COMM, WallClock, us};
use crate::analyzers::task_state::TaskStateTable;

/// The kernel's `TASK_COMM_LEN` (16) less the NUL: perf-prof prints at most this much.
const COMM_CHARS: usize = 15;

/// The task-state table; empty when there are no rows (perf-prof prints nothing then).
pub fn task_state_table(
    table: &TaskStateTable,
    wall: &WallClock,
    comm_of: &dyn Fn(u32) -> Option<String>,
) -> String {
    let mut out = String::new();
    if table.rows.is_empty() {
        return out;
    }
    out.push_str(&wall.prefix());
    out.push('\n');
    if table.perins {
        out.push_str("thread comm             ");
    }
    out.push_str(
        "St    calls        total(us)      min(us)      p50(us)      p95(us)      p99(us)      max(us)\n",
    );
    if table.perins {
        out.push_str("------ ---------------- ");
    }
    out.push_str(
        "-- -------- ---------------- ------------ ------------ ------------ ------------ ------------\n",
    );
    for row in &table.rows {
        let stats = &row.stats;
        let h = &stats.histogram;
        if let Some(thread) = row.thread {
            let comm = comm_of(thread).unwrap_or_else(|| UNKNOWN_COMM.into());
            let comm: String = comm.chars().take(COMM_CHARS).collect();
            let _ = write!(out, "{thread:>6} {comm:<16} ");
        }
        let percentile = |p: f64| us(h.percentile(p).unwrap_or(0));
        let _ = writeln!(
            out,
            "{:<2} {:>8} {:>16} {:>12} {:>12} {:>12} {:>12} {:>12}",
            row.state.label(),
            stats.calls(),
            us(stats.total_ns()),
            us(h.min().unwrap_or(0)),
            percentile(50.0),
            percentile(95.0),
            percentile(99.0),
            us(h.max().unwrap_or(0)),
        );
    }
    out
}
