//! perf-prof's watchdog lines: `<prefix> == collect all N watchdog hrtimer` once every
//! watched CPU's watchdog timer is known (perf-prof's `print_time` then a leading space),
//! and per predicted lockup `<prefix>WILL: soft lockup - CPU#%u [%lu - %lu > %lu]` or
//! `<prefix>WILL: hard lockup - CPU#%u [%llu - %llu > %lu]` — stamped with the event's
//! wall clock. perf-prof follows a warning with the events around it (the stopper's
//! switches, the sample's kernel stack); perfscope prints the warning alone.

use std::fmt::Write;

use super::WallClock;
use crate::model::lockup_warnings::{LockupKind, LockupRows, MAX_WARNINGS};

pub fn lockup_lines(rows: &LockupRows, wall_of: &dyn Fn(u64) -> WallClock) -> String {
    let mut out = String::new();
    let mut lines: Vec<(u64, String)> = rows
        .warnings
        .iter()
        .map(|w| {
            let kind = match w.kind {
                LockupKind::Soft => "soft",
                LockupKind::Hard => "hard",
            };
            (
                w.time_ns,
                format!(
                    "{}WILL: {kind} lockup - CPU#{} [{} - {} > {}]\n",
                    wall_of(w.time_ns).prefix(),
                    w.cpu,
                    w.now,
                    w.touch,
                    w.thresh
                ),
            )
        })
        .collect();
    if let Some((at, cpus)) = rows.collected {
        lines.push((
            at,
            format!(
                "{} == collect all {cpus} watchdog hrtimer\n",
                wall_of(at).prefix()
            ),
        ));
    }
    lines.sort_by_key(|(at, _)| *at);
    for (_, line) in lines {
        out.push_str(&line);
    }
    if rows.dropped > 0 {
        let _ = writeln!(
            out,
            "watchdog: {} more warnings (over {MAX_WARNINGS} kept)",
            rows.dropped
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::lockup_warnings::LockupWarning;

    #[test]
    fn warnings_and_the_collect_line_print_in_time_order() {
        let rows = LockupRows {
            warnings: vec![LockupWarning {
                time_ns: 9,
                cpu: 1,
                kind: LockupKind::Soft,
                now: 75_000,
                touch: 74_990,
                thresh: 4,
            }],
            dropped: 0,
            collected: Some((5, 2)),
            watchdog_ticks: 3,
        };
        let wall = WallClock {
            year: 2026,
            month: 12,
            day: 5,
            hour: 1,
            minute: 2,
            second: 3,
            microsecond: 4,
        };
        assert_eq!(
            lockup_lines(&rows, &|_| wall),
            "2026-12-05 01:02:03.000004  == collect all 2 watchdog hrtimer\n\
             2026-12-05 01:02:03.000004 WILL: soft lockup - CPU#1 [75000 - 74990 > 4]\n"
        );
    }
}
