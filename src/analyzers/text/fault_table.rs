//! `page-faults`' table: the time, a header, then one line per (thread, 2 MiB region),
//! most faults first, in perf-prof's column style (`%6d %-16s`, right-aligned counts).

use super::WallClock;
use crate::analyzers::page_faults::FaultRow;

pub fn fault_table(rows: &[FaultRow], wall: &WallClock, comm_of: &dyn Fn(u32) -> Option<String>) -> String {
    let mut out = wall.prefix();
    out.push('\n');
    out.push_str(&format!(
        "{:>6} {:<16} {:>18} {:>10} {:>10} {:>10} {:>10}\n",
        "THREAD", "COMM", "REGION(2M)", "FAULTS", "USER", "KERNEL", "WRITE"
    ));
    out.push_str(&format!(
        "{} {} {} {} {} {} {}\n",
        "-".repeat(6),
        "-".repeat(16),
        "-".repeat(18),
        "-".repeat(10),
        "-".repeat(10),
        "-".repeat(10),
        "-".repeat(10)
    ));
    for row in rows {
        let comm = comm_of(row.tid).unwrap_or_else(|| super::UNKNOWN_COMM.to_string());
        out.push_str(&format!(
            "{:>6} {:<16} {:>#18x} {:>10} {:>10} {:>10} {:>10}\n",
            row.tid,
            comm,
            row.region_start,
            row.total(),
            row.user,
            row.kernel,
            row.write
        ));
    }
    out
}
