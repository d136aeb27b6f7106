//! The oncpu table as perf-prof prints it in CPU mode: `CPU SUM(ms) COMM:TID(ms)`, then
//! per CPU `%03d %-7lu ` (whole milliseconds) and one `comm:tid(%.1fms) ` item per task,
//! longest first — the trailing space included. `--only-comm` names items by command
//! (`comm(%.1fms) `); `--detail` adds switches and the longest run:
//! `CPU SUM(ms/sws) COMM:TID(ms/sws/max_ms)` with `%03d %-11s ` (`962ms/186`) and
//! `comm:tid(%.1fms/%d/%.1fms) ` items.
//!
//! Thread mode (`-p`/`-t`): `THREAD COMM             SUM(ms) CPUS(ms) `, then per thread
//! `%-6d %-16s %-7lu ` and one `cpu(Nms) ` item per CPU it ran on, by CPU (perf-prof's
//! SMT co-run columns need sibling CPUs and its `/proc/PID/sched_vmf_sib`; not printed).

use std::fmt::Write;

use super::WallClock;
use crate::analyzers::oncpu::{OnCpuTable, OnCpuThread};
use crate::model::text::escape_controls;

/// The oncpu table; empty when no task ran (perf-prof prints nothing then).
pub fn oncpu_table(table: &OnCpuTable, wall: &WallClock) -> String {
    let mut out = String::new();
    if table.rows.is_empty() {
        return out;
    }
    out.push_str(&wall.prefix());
    out.push('\n');
    if let Some(threads) = &table.threads {
        thread_rows(&mut out, threads);
        return out;
    }
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

/// Thread mode's header and rows (the caller printed the time stamp).
fn thread_rows(out: &mut String, threads: &[OnCpuThread]) {
    let _ = writeln!(out, "THREAD {:<16} {:<7} CPUS(ms) ", "COMM", "SUM(ms)");
    for thread in threads {
        let _ = write!(
            out,
            "{:<6} {:<16} {:<7} ",
            thread.tid,
            escape_controls(&thread.comm),
            thread.total_ns / 1_000_000
        );
        for (cpu, ns) in &thread.cpus {
            let _ = write!(out, "{cpu}({}ms) ", ns / 1_000_000);
        }
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_mode_prints_perf_profs_thread_rows() {
        let wall = WallClock {
            year: 2026,
            month: 12,
            day: 2,
            hour: 15,
            minute: 47,
            second: 29,
            microsecond: 849264,
        };
        let table = OnCpuTable {
            rows: vec![crate::analyzers::oncpu::OnCpuRow {
                cpu: 0,
                total_ns: 1,
                switches: 1,
                tasks: Vec::new(),
            }],
            threads: Some(vec![OnCpuThread {
                tid: 19226,
                comm: "sh".into(),
                total_ns: 972_400_000,
                cpus: vec![(0, 969_000_000), (1, 3_400_000)],
            }]),
            ..OnCpuTable::default()
        };
        assert_eq!(
            oncpu_table(&table, &wall),
            "2026-12-02 15:47:29.849264 \n\
             THREAD COMM             SUM(ms) CPUS(ms) \n\
             19226  sh               972     0(969ms) 1(3ms) \n"
        );
    }
}
