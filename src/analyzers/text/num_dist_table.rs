//! The num-dist table as perf-prof prints it: raw integers (no unit), the event column as
//! wide as the longest event name (names right-aligned under a left-aligned `event`), and
//! with `--perins` a `[CPU] ` (`[%03d] `) or `[THREAD] ` (`%-8d `) column in front.

use std::fmt::Write;

use super::WallClock;
use crate::analyzers::num_dist::NumDistTable;
use crate::model::text::escape_controls;

/// The num-dist table; empty when no event carried a value.
pub fn num_dist_table(table: &NumDistTable, wall: &WallClock) -> String {
    let mut out = String::new();
    if table.rows.is_empty() {
        return out;
    }
    let width = table.events.iter().map(|e| e.chars().count()).fold(5, usize::max);
    out.push_str(&wall.prefix());
    out.push('\n');
    let instance = table.instance_header.as_deref();
    if let Some(header) = instance {
        let _ = write!(out, "[{header}] ");
    }
    let _ = writeln!(
        out,
        "{:<width$} {:>8} {:>16} {:>12} {:>12} {:>12} {:>12}",
        "event", "calls", "total", "min", "avg", "p99", "max"
    );
    if let Some(header) = instance {
        out.extend(std::iter::repeat_n('-', header.len() + 2));
        out.push(' ');
    }
    out.extend(std::iter::repeat_n('-', width));
    out.push_str(" -------- ---------------- ------------ ------------ ------------ ------------\n");
    for row in &table.rows {
        match (instance, row.instance) {
            (Some("CPU"), Some(cpu)) => {
                let _ = write!(out, "[{cpu:03}] ");
            }
            (Some(_), Some(thread)) => {
                let _ = write!(out, "{thread:<8} ");
            }
            _ => {}
        }
        let h = &row.stats.histogram;
        // Event names are the user's aliases: printed as text, never as terminal commands.
        let _ = writeln!(
            out,
            "{:>width$} {:>8} {:>16} {:>12} {:>12} {:>12} {:>12}",
            escape_controls(&row.event),
            row.stats.calls(),
            row.total(),
            h.min().unwrap_or(0),
            row.avg(),
            h.percentile(99.0).unwrap_or(0),
            h.max().unwrap_or(0),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyzers::num_dist::NumDistRow;
    use crate::model::latency_stats::LatencyStats;
    use crate::model::units::ValueUnit;

    fn stats(values: &[u64]) -> LatencyStats {
        let mut s = LatencyStats::default();
        values.iter().for_each(|&v| s.record(v, None));
        s
    }

    /// perf-prof's `--perins` table on CPUs (notes/perf-prof-outputs/num-dist.txt), with
    /// the wrapped total and avg of negative `ret` values.
    #[test]
    fn perins_cpu_table_is_perf_profs() {
        let wall = WallClock {
            year: 2026,
            month: 12,
            day: 2,
            hour: 15,
            minute: 50,
            second: 51,
            microsecond: 909199,
        };
        let table = NumDistTable {
            instance_header: Some("CPU".into()),
            events: vec!["exit_ret".into(), "sched_switch".into()],
            rows: vec![
                NumDistRow {
                    instance: Some(0),
                    event: "sched_switch".into(),
                    stats: stats(&[120; 4]),
                    unit: ValueUnit::Number,
                },
                NumDistRow {
                    instance: Some(1),
                    event: "exit_ret".into(),
                    stats: stats(&[0, 5, -2i64 as u64]),
                    unit: ValueUnit::Number,
                },
            ],
        };
        let text = num_dist_table(&table, &wall);
        // perf-prof prints raw integers whatever the values are: a duration field's table
        // is the same bytes.
        let mut durations = table.clone();
        durations
            .rows
            .iter_mut()
            .for_each(|r| r.unit = ValueUnit::Nanoseconds);
        assert_eq!(num_dist_table(&durations, &wall), text);
        assert_eq!(
            text,
            "2026-12-02 15:50:51.909199 \n\
             [CPU] event           calls            total          min          avg          p99          max\n\
             ----- ------------ -------- ---------------- ------------ ------------ ------------ ------------\n\
             [000] sched_switch        4              480          120          120          120          120\n\
             [001]     exit_ret        3                3            0            1 18446744073709551614 18446744073709551614\n"
        );
    }
}
