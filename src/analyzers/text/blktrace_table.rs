//! The blktrace table as perf-prof prints it (`blktrace_interval`): the three stage rows
//! always, zero ones included; stage names right/left-aligned to the longest event name;
//! `%8llu %16.3f %12.3f %12.3f %12.3f` in microseconds; ` %6llu (%3llu%)` under `--than`.
//! perfscope's percentiles follow perf-prof's last column (see [`TextStyle`]).

use std::fmt::Write;

use super::{TextStyle, WallClock, us};
use crate::analyzers::blktrace::{BlktraceTable, STAGES};
use crate::analyzers::latency::LatencyStats;

const PERCENTILES: [(f64, &str); 4] = [
    (50.0, "p50(us)"),
    (95.0, "p95(us)"),
    (99.0, "p99(us)"),
    (99.9, "p99.9(us)"),
];

/// ` %6llu (%3llu%)`, bold red when `color` and non-zero (perf-prof: when stdout is a tty).
fn than_cell(out: &mut String, stats: &LatencyStats, color: bool) {
    let cell = format!("{:>6} ({:>3}%)", stats.than, stats.than_percent());
    if color && stats.than > 0 {
        let _ = write!(out, " \x1b[31;1m{cell}\x1b[0m");
    } else {
        let _ = write!(out, " {cell}");
    }
}

pub fn blktrace_table(table: &BlktraceTable, wall: &WallClock, style: TextStyle) -> String {
    // perf-prof's width: the longest of the four event names.
    let width = STAGES.iter().map(|s| s.len()).max().unwrap_or(0);
    let than = table.than_ns.is_some();
    let mut out = wall.prefix();
    out.push('\n');
    let _ = write!(
        out,
        "{:>width$} => {:<width$} {:>8} {:>16} {:>12} {:>12} {:>12}",
        "start", "end", "reqs", "total(us)", "min(us)", "avg(us)", "max(us)"
    );
    if than {
        out.push_str("    than(reqs)");
    }
    if style.perfscope_columns {
        for (_, name) in PERCENTILES {
            let _ = write!(out, " {name:>12}");
        }
    }
    out.push('\n');
    let dashes = "-".repeat(width);
    let _ = write!(
        out,
        "{dashes}    {dashes} -------- ---------------- ------------ ------------ ------------"
    );
    if than {
        out.push_str("  -------------");
    }
    if style.perfscope_columns {
        out.push_str(&" ------------".repeat(PERCENTILES.len()));
    }
    out.push('\n');
    for row in &table.rows {
        let stats = &row.stats;
        let _ = write!(
            out,
            "{:>width$} => {:<width$} {:>8} {:>16} {:>12} {:>12} {:>12}",
            row.start,
            row.end,
            stats.calls(),
            us(stats.total_ns()),
            us(stats.histogram.min().unwrap_or(0)),
            us(stats.avg_ns()),
            us(stats.histogram.max().unwrap_or(0)),
        );
        if than {
            than_cell(&mut out, stats, style.color);
        }
        if style.perfscope_columns {
            for (p, _) in PERCENTILES {
                let _ = write!(out, " {:>12}", us(stats.histogram.percentile(p).unwrap_or(0)));
            }
        }
        out.push('\n');
    }
    out
}
