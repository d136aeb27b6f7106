//! Golden tests: tables built by the analyzers from synthetic events whose latencies are
//! chosen to reproduce rows of perf-prof's real output (notes/perf-prof-outputs/, copied
//! here byte for byte), then printed and compared with those lines.

use super::*;

mod blktrace;
mod latency;
mod top_and_events;
use crate::analyzers::Analyzer;
use crate::analyzers::key::KeySource;
use crate::analyzers::multi_trace::{
    Implementation, Instance, MultiTraceAnalyzer, MultiTraceConfig, MultiTraceTable, StageEvent,
};
use crate::analyzers::rundelay::{RundelayOptions, rundelay};
use crate::analyzers::syscalls::{SyscallsAnalyzer, SyscallsConfig};
use crate::analyzers::test_events::{self, Value, event, layout, record};
use crate::analyzers::top::{TopAnalyzer, TopColumn, TopConfig, TopEvent};
use crate::model::histogram::RELATIVE_ERROR;
use crate::trace::event::{EventIndex, EventLayout, FieldKind};

pub(super) const PERF_PROF: TextStyle = TextStyle {
    color: false,
    perfscope_columns: false,
    event_clock_offset_ns: None,
};

pub(super) fn wall(line: &str) -> WallClock {
    // "2026-12-02 15:45:12.185600 "
    let n = |r: std::ops::Range<usize>| line[r].parse::<u32>().unwrap();
    WallClock {
        year: n(0..4) as i32,
        month: n(5..7),
        day: n(8..10),
        hour: n(11..13),
        minute: n(14..16),
        second: n(17..19),
        microsecond: n(20..26),
    }
}

/// Latencies with exactly this `sum`: the `fixed` values plus, per segment, `count` values
/// in `[low, high]` (filled lowest segment first).
pub(super) fn latencies(sum: u64, fixed: &[u64], segments: &[(u64, u64, u64)]) -> Vec<u64> {
    let mut out = fixed.to_vec();
    let floor: u64 = fixed.iter().sum::<u64>() + segments.iter().map(|&(n, lo, _)| n * lo).sum::<u64>();
    let mut rest = sum.checked_sub(floor).expect("sum below the smallest possible");
    for &(n, lo, hi) in segments {
        if n == 0 {
            continue;
        }
        let give = rest.min(n * (hi - lo));
        rest -= give;
        out.extend((0..n).map(|i| lo + give / n + u64::from(i < give % n)));
    }
    assert_eq!(rest, 0, "sum above the largest possible");
    out
}

/// A perf-prof syscalls row's latencies: `n` calls, `total`, `min`, `max` (ns), of which
/// `than` are above `threshold`.
pub(super) fn row_latencies(n: u64, total: u64, min: u64, max: u64, than: Option<(u64, u64)>) -> Vec<u64> {
    if n == 1 {
        return vec![total];
    }
    let Some((threshold, than)) = than else {
        return latencies(total, &[min, max], &[(n - 2, min, max)]);
    };
    let fixed_over = u64::from(min > threshold) + u64::from(max > threshold);
    let over = than - fixed_over;
    latencies(
        total,
        &[min, max],
        &[
            (n - 2 - over, min, threshold.max(min)),
            (over, threshold + 1, max),
        ],
    )
}

pub(super) struct Syscalls {
    pub(super) layouts: Vec<EventLayout>,
    time: u64,
}

impl Syscalls {
    pub(super) fn new() -> Self {
        Self {
            layouts: vec![test_events::sys_enter(), test_events::sys_exit()],
            time: 1_000,
        }
    }

    pub(super) fn feed(
        &mut self,
        a: &mut SyscallsAnalyzer,
        tid: u32,
        id: i64,
        latencies: &[u64],
        errors: u64,
    ) {
        let enter = record(&self.layouts[0], tid, &[("id", Value::Int(id))]);
        let ok = record(
            &self.layouts[1],
            tid,
            &[("id", Value::Int(id)), ("ret", Value::Int(0))],
        );
        let err = record(
            &self.layouts[1],
            tid,
            &[("id", Value::Int(id)), ("ret", Value::Int(-110))],
        );
        for (i, &latency) in latencies.iter().enumerate() {
            a.feed(&event(0, self.time, 0, tid, &enter));
            let exit = if (i as u64) < errors { &err } else { &ok };
            a.feed(&event(1, self.time + latency, 0, tid, exit));
            self.time += latency + 10;
        }
    }
}

pub(super) fn comm_of(pid: u32) -> Option<String> {
    let name = match pid {
        2391 => "memfd:sealed-91",
        17489 => "dd",
        17493 => "perf-prof",
        11 => "kworker/0:1-eve",
        21 => "migration/1",
        17938 => "python3",
        17940 => "bash",
        _ => return None,
    };
    Some(name.into())
}
