//! perf-prof's watchdog lines: `<prefix> == collect all N watchdog hrtimer` once every
//! watched CPU's watchdog timer is known (perf-prof's `print_time` then a leading space),
//! and per predicted lockup `<prefix>WILL: soft lockup - CPU#%u [%lu - %lu > %lu]` or
//! `<prefix>WILL: hard lockup - CPU#%u [%llu - %llu > %lu]` — stamped with the event's
//! wall clock. With `-g` a hard lockup's line is followed by its tick's kernel stack, a
//! frame per line (`    %016x name+0xoff (module)`), as perf-prof prints the NMI's;
//! perf-prof's verbose lines around a warning (the stopper's switches) are left out.

use std::fmt::Write;

use super::WallClock;
use super::kmem_report::stack_text;
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
            let mut line = format!(
                "{}WILL: {kind} lockup - CPU#{} [{} - {} > {}]\n",
                wall_of(w.time_ns).prefix(),
                w.cpu,
                w.now,
                w.touch,
                w.thresh
            );
            if let Some(stack) = &w.stack {
                line.push_str(&stack_text(stack));
            }
            (w.time_ns, line)
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
    use crate::model::memory_stacks::{FrameText, NamedStack};

    #[test]
    fn warnings_and_the_collect_line_print_in_time_order_a_hard_one_with_its_stack() {
        let rows = LockupRows {
            warnings: vec![
                LockupWarning {
                    time_ns: 9,
                    cpu: 1,
                    kind: LockupKind::Soft,
                    now: 75_000,
                    touch: 74_990,
                    thresh: 4,
                    stack: None,
                },
                LockupWarning {
                    time_ns: 12,
                    cpu: 0,
                    kind: LockupKind::Hard,
                    now: 12,
                    touch: 1,
                    thresh: 10,
                    stack: Some(std::sync::Arc::new(NamedStack {
                        id: 1,
                        frames: vec![FrameText {
                            address: 0xffffffff81000010,
                            text: "spin_loop+0x10 ([kernel.kallsyms])".into(),
                        }],
                    })),
                },
            ],
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
             2026-12-05 01:02:03.000004 WILL: soft lockup - CPU#1 [75000 - 74990 > 4]\n\
             2026-12-05 01:02:03.000004 WILL: hard lockup - CPU#0 [12 - 1 > 10]\n\
             \x20   ffffffff81000010 spin_loop+0x10 ([kernel.kallsyms])\n"
        );
    }
}
