//! Periodic event counts (perf-prof's `stat` and `hrcount`) as model data: how many events
//! of each `-e` event an instance (a CPU or a thread) had in each `--period` of event time.
//!
//! A period is numbered from the clock's zero (`time_ns / period_ns`), not from the start
//! of an interval, so rows of any slices merge by plain addition and a window or a live
//! mode picks whole periods; the table takes the last periods of whatever it is given.

use rustc_hash::FxHashMap;

use super::scale::scale;

/// One counter cell: an event, on an instance, in one period.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PeriodKey {
    /// The thread id or CPU with `--perins`, else 0.
    pub instance: u64,
    /// Index of the `-e` event, in the order they were opened.
    pub event: u16,
    /// `time_ns / period_ns`.
    pub period: u64,
}

/// Event counts per (instance, event, period).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PeriodCounts {
    pub counts: FxHashMap<PeriodKey, u64>,
}

impl PeriodCounts {
    pub fn add(&mut self, key: PeriodKey, n: u64) {
        let cell = self.counts.entry(key).or_insert(0);
        *cell = cell.saturating_add(n);
    }

    /// Add `other` with every count multiplied by `factor` (decay mode; 1 = plain merge).
    pub fn merge_scaled(&mut self, other: &PeriodCounts, factor: f64) {
        for (key, &n) in &other.counts {
            self.add(*key, scale(n, factor));
        }
        if factor < 1.0 {
            self.counts.retain(|_, n| *n > 0);
        }
    }
}

/// Whose counts a row is with `--perins`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CountInstance {
    /// `[%03d] ` (CPU-wide sessions).
    Cpu,
    /// `[%6d] ` (sessions attached to threads).
    Thread,
}

/// What periodic counts mean.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PeriodSchema {
    /// Every `-e` event's printed name (`sys:name`, or its `alias=`), by [`PeriodKey::event`].
    pub events: Vec<String>,
    /// `Some` with `--perins`: rows are per instance of this kind.
    pub instance: Option<CountInstance>,
    pub period_ns: u64,
    /// Columns of a table: perf-prof's `hist_size`, interval / period (at least 1).
    pub columns: usize,
}
