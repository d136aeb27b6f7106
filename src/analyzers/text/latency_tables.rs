//! The syscalls table and the multi-trace / rundelay delay table, as perf-prof prints
//! them (`syscalls_print_header`/`delay_print_header` and their row printers).

use std::fmt::Write;

use super::{TextStyle, UNKNOWN_COMM, WallClock, us};
use crate::analyzers::latency::LatencyStats;
use crate::analyzers::multi_trace::DelayTable;
use crate::analyzers::syscall_label;
use crate::analyzers::syscalls::SyscallTable;
use crate::model::text::{escape_controls, left_aligned, right_aligned};

/// Task names are at most 15 characters (`TASK_COMM_LEN` 16 with the NUL); the column is 16.
const COMM_WIDTH: usize = 16;

const PERFSCOPE_SYSCALL_PERCENTILES: [(f64, &str); 4] = [
    (50.0, "p50(us)"),
    (95.0, "p95(us)"),
    (99.0, "p99(us)"),
    (99.9, "p99.9(us)"),
];

fn dashes(out: &mut String, n: usize) {
    out.extend(std::iter::repeat_n('-', n));
}

/// ` %6lu (%3lu%)`, bold red when `color` and non-zero.
fn than_cell(out: &mut String, stats: &LatencyStats, color: bool) {
    let cell = format!("{:>6} ({:>3}%)", stats.than, stats.than_percent());
    if color && stats.than > 0 {
        let _ = write!(out, " \x1b[31;1m{cell}\x1b[0m");
    } else {
        let _ = write!(out, " {cell}");
    }
}

fn percentile_us(stats: &LatencyStats, p: f64) -> String {
    us(stats.histogram.percentile(p).unwrap_or(0))
}

/// The syscalls table; empty when there are no rows (perf-prof prints nothing then).
pub fn syscall_table(
    table: &SyscallTable,
    wall: &WallClock,
    comm_of: &dyn Fn(u32) -> Option<String>,
    style: TextStyle,
) -> String {
    let mut out = String::new();
    if table.rows.is_empty() {
        return out;
    }
    let than = table.than_ns.is_some();
    out.push_str(&wall.prefix());
    out.push('\n');
    if table.perins {
        let _ = write!(out, "thread {:<COMM_WIDTH$} ", "comm");
    }
    let _ = write!(
        out,
        "{:<20} {:>8} {:>16} {:>12} {:>12} {:>12} {:>6}",
        "syscalls", "calls", "total(us)", "min(us)", "avg(us)", "max(us)", "err"
    );
    if than {
        out.push_str("   than(reqs)");
    }
    if style.perfscope_columns {
        for (_, name) in PERFSCOPE_SYSCALL_PERCENTILES {
            let _ = write!(out, " {name:>12}");
        }
    }
    out.push('\n');
    if table.perins {
        out.push_str("------ ");
        dashes(&mut out, COMM_WIDTH);
        out.push(' ');
    }
    dashes(&mut out, 20);
    out.push_str(" -------- ---------------- ------------ ------------ ------------ ------");
    if than {
        out.push_str(" --------------");
    }
    if style.perfscope_columns {
        out.push_str(&" ------------".repeat(PERFSCOPE_SYSCALL_PERCENTILES.len()));
    }
    out.push('\n');
    for row in &table.rows {
        let stats = &row.stats;
        if let Some(thread) = row.thread {
            let comm = comm_of(thread).unwrap_or_else(|| UNKNOWN_COMM.into());
            let _ = write!(out, "{thread:<6} {comm:<COMM_WIDTH$} ");
        }
        let _ = write!(
            out,
            "{:<20} {:>8} {:>16} {:>12} {:>12} {:>12} {:>6}",
            syscall_label(row.id),
            stats.calls(),
            us(stats.total_ns()),
            us(stats.histogram.min().unwrap_or(0)),
            us(stats.avg_ns()),
            us(stats.histogram.max().unwrap_or(0)),
            stats.errors
        );
        if than {
            than_cell(&mut out, stats, style.color);
        }
        if style.perfscope_columns {
            for (p, _) in PERFSCOPE_SYSCALL_PERCENTILES {
                let _ = write!(out, " {:>12}", percentile_us(stats, p));
            }
        }
        out.push('\n');
    }
    out
}

/// The delay table (multi-trace `--impl delay`, rundelay); empty when there are no rows.
pub fn delay_table(
    table: &DelayTable,
    wall: &WallClock,
    comm_of: &dyn Fn(u32) -> Option<String>,
    style: TextStyle,
) -> String {
    let mut out = String::new();
    if table.rows.is_empty() {
        return out;
    }
    let than = table.than_ns.is_some();
    // Widths over every pair the stages define, at least "start" / "end".
    // The pair names are the user's aliases: printed as text, never as terminal commands.
    let names: Vec<(String, String)> = table
        .pairs
        .iter()
        .map(|p| {
            (
                escape_controls(&p.start).into_owned(),
                escape_controls(&p.end).into_owned(),
            )
        })
        .collect();
    let start_width = names.iter().map(|(s, _)| s.chars().count()).fold(5, usize::max);
    let end_width = names.iter().map(|(_, e)| e.chars().count()).fold(3, usize::max);
    let key = table
        .key_header
        .as_deref()
        .map(|h| (h, table.key_width.max(h.len()).max(3)));
    let comm = key.is_some() && table.comm_column;

    out.push_str(&wall.prefix());
    out.push('\n');
    if let Some((header, width)) = key {
        let _ = write!(out, "{} ", left_aligned(header, width));
        if comm {
            let _ = write!(out, "{:<COMM_WIDTH$} ", "comm");
        }
    }
    let _ = write!(
        out,
        "{} => {} {:>8} {:>16} {:>12} {:>12} {:>12} {:>12} {:>12}",
        right_aligned("start", start_width),
        left_aligned("end", end_width),
        "calls",
        "total(us)",
        "min(us)",
        "p50(us)",
        "p95(us)",
        "p99(us)",
        "max(us)"
    );
    if than {
        out.push_str("    than(reqs)");
    }
    if style.perfscope_columns {
        let _ = write!(out, " {:>12}", "p99.9(us)");
    }
    out.push('\n');
    if let Some((_, width)) = key {
        dashes(&mut out, width);
        out.push(' ');
        if comm {
            dashes(&mut out, COMM_WIDTH);
            out.push(' ');
        }
    }
    dashes(&mut out, start_width);
    out.push_str("    ");
    dashes(&mut out, end_width);
    out.push_str(
        " -------- ---------------- ------------ ------------ ------------ ------------ ------------",
    );
    if than {
        out.push_str(" --------------");
    }
    if style.perfscope_columns {
        out.push_str(" ------------");
    }
    out.push('\n');
    for row in &table.rows {
        let Some((start, end)) = names.get(row.pair) else {
            continue;
        };
        let stats = &row.stats;
        if let (Some((_, width)), Some(instance)) = (key, row.instance) {
            let _ = write!(out, "{} ", left_aligned(instance, width));
            if comm {
                let name = u32::try_from(instance)
                    .ok()
                    .and_then(comm_of)
                    .unwrap_or_else(|| UNKNOWN_COMM.into());
                let _ = write!(out, "{name:<COMM_WIDTH$} ");
            }
        }
        let _ = write!(
            out,
            "{} => {} {:>8} {:>16} {:>12} {:>12} {:>12} {:>12} {:>12}",
            right_aligned(start, start_width),
            left_aligned(end, end_width),
            stats.calls(),
            us(stats.total_ns()),
            us(stats.histogram.min().unwrap_or(0)),
            percentile_us(stats, 50.0),
            percentile_us(stats, 95.0),
            percentile_us(stats, 99.0),
            us(stats.histogram.max().unwrap_or(0)),
        );
        if than {
            than_cell(&mut out, stats, style.color);
        }
        if style.perfscope_columns {
            let _ = write!(out, " {:>12}", percentile_us(stats, 99.9));
        }
        out.push('\n');
    }
    out
}
