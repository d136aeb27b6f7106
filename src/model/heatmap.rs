//! The latency heatmap: latencies over time as counts per (time column, power-of-two
//! latency range) — perf-prof's `--heatmap` file drawn as trace2heatmap.pl would, but live
//! from the engine's per-slice analysis rows, so live modes and windows apply. Pure data.

use super::histogram::{LatencyHistogram, log2_bounds, log2_index};

/// Power-of-two latency ranges: `[0, 1)`, `[1, 2)`, … `[2^63, u64::MAX]` (histogram.rs).
pub const HEAT_ROWS: usize = 65;

/// Columns a heatmap has at most (a view merges neighbours to fit its width).
pub const MAX_HEAT_COLUMNS: usize = 240;

/// Counts per time column and latency row.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LatencyHeatmap {
    /// Where the first column starts on the sample clock.
    pub start_ns: u64,
    pub column_ns: u64,
    pub columns: usize,
    /// `columns × HEAT_ROWS`, column-major.
    counts: Vec<u64>,
}

impl LatencyHeatmap {
    /// An empty heatmap over `[start_ns, end_ns)` in `columns` equal columns (at least one).
    pub fn new(start_ns: u64, end_ns: u64, columns: usize) -> LatencyHeatmap {
        let columns = columns.clamp(1, MAX_HEAT_COLUMNS);
        let span = end_ns.saturating_sub(start_ns).max(1);
        let column_ns = span.div_ceil(columns as u64).max(1);
        let columns = span.div_ceil(column_ns) as usize;
        LatencyHeatmap {
            start_ns,
            column_ns,
            columns,
            counts: vec![0; columns * HEAT_ROWS],
        }
    }

    /// Where `[start_ns, end_ns)` ends.
    pub fn end_ns(&self) -> u64 {
        self.start_ns + self.column_ns * self.columns as u64
    }

    /// The latencies of `histogram`, recorded at `time_ns` (clamped into the columns: a
    /// slice that straddles the edge counts in the edge column).
    pub fn add(&mut self, time_ns: u64, histogram: &LatencyHistogram) {
        let column = (time_ns.saturating_sub(self.start_ns) / self.column_ns) as usize;
        let column = column.min(self.columns - 1);
        for (low, _, n) in histogram.buckets() {
            let cell = &mut self.counts[column * HEAT_ROWS + log2_index(low)];
            *cell = cell.saturating_add(n);
        }
    }

    pub fn count(&self, column: usize, row: usize) -> u64 {
        self.counts.get(column * HEAT_ROWS + row).copied().unwrap_or(0)
    }

    /// The lowest and highest rows with a count, `None` when empty.
    pub fn rows_used(&self) -> Option<(usize, usize)> {
        let used = |row: usize| (0..self.columns).any(|c| self.count(c, row) > 0);
        let low = (0..HEAT_ROWS).find(|&r| used(r))?;
        let high = (0..HEAT_ROWS).rev().find(|&r| used(r))?;
        Some((low, high))
    }

    pub fn total(&self) -> u64 {
        self.counts.iter().fold(0u64, |a, &n| a.saturating_add(n))
    }

    /// `[low, high)` of a row, in ns.
    pub fn row_bounds(row: usize) -> (u64, u64) {
        log2_bounds(row)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latencies_land_in_their_column_and_power_of_two_row() {
        let mut map = LatencyHeatmap::new(1_000, 2_000, 10);
        assert_eq!((map.column_ns, map.columns), (100, 10));
        let mut h = LatencyHistogram::new();
        h.record(20_000_000); // [2^24, 2^25) ns: row 25
        h.record(20_000_000);
        h.record(3); // [2, 4): row 2
        map.add(1_250, &h);
        assert_eq!(map.count(2, 25), 2);
        assert_eq!(map.count(2, 2), 1);
        assert_eq!(map.rows_used(), Some((2, 25)));
        assert_eq!(LatencyHeatmap::row_bounds(25), (1 << 24, 1 << 25));
        // Past the end: the last column.
        map.add(5_000, &h);
        assert_eq!(map.count(9, 25), 2);
        assert_eq!(map.total(), 6);
        assert_eq!(LatencyHeatmap::new(0, 0, 0).rows_used(), None);
    }
}
