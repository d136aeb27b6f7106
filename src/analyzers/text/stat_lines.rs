//! perf-prof's `stat`/`hrcount` text (its non-tty "direct" format): the time, then one
//! line per (instance, event) — names right-aligned to the longest, the periods' counts
//! right-aligned in one width (at least 2) and `|`-separated, then the total:
//! `[ 19225] sched:sched_switch  6| 1| 0|24| 5 | total 36`.

use super::WallClock;
use crate::analyzers::stat::StatTable;
use crate::model::period_counts::CountInstance;

pub fn stat_lines(table: &StatTable, wall: &WallClock) -> String {
    let name_width = table.events.iter().map(|e| e.chars().count()).max().unwrap_or(0);
    let count_width = table
        .rows
        .iter()
        .flat_map(|r| &r.buckets)
        .map(|n| n.to_string().len())
        .max()
        .unwrap_or(1)
        .max(2);
    let mut out = wall.prefix();
    out.push('\n');
    for row in &table.rows {
        match (table.instance, row.instance) {
            (Some(CountInstance::Cpu), Some(cpu)) => out.push_str(&format!("[{cpu:03}] ")),
            (Some(CountInstance::Thread), Some(tid)) => out.push_str(&format!("[{tid:6}] ")),
            _ => {}
        }
        let name = table.events.get(row.event).map_or("", String::as_str);
        out.push_str(&format!("{name:>name_width$} "));
        let cells: Vec<String> = row.buckets.iter().map(|n| format!("{n:>count_width$}")).collect();
        out.push_str(&cells.join("|"));
        out.push_str(&format!(" | total {}\n", row.total));
    }
    out
}
