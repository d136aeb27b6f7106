//! One latency cell of an analyzer's table: a distribution and the counts perf-prof keeps
//! beside it. A leaf of the analysis rows (call_rows, present and analysis use it).

use super::histogram::LatencyHistogram;
use super::scale::scale;

/// One latency cell of an analyzer table: a distribution plus the counts perf-prof keeps
/// next to it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LatencyStats {
    pub histogram: LatencyHistogram,
    /// Latencies strictly above the `--than` threshold (perf-prof: `delta > than`).
    pub than: u64,
    /// Syscalls whose return value was an errno (`-4095..=-1`).
    pub errors: u64,
    /// The part of the total an analyzer sets apart (kvm-exit: exits taken while the
    /// guest ran its kernel, perf-prof's `%gsys`); 0 for the others.
    pub extra_ns: u64,
}

impl LatencyStats {
    pub fn record(&mut self, latency_ns: u64, than_ns: Option<u64>) {
        self.histogram.record(latency_ns);
        if than_ns.is_some_and(|than| latency_ns > than) {
            self.than += 1;
        }
    }

    pub fn merge(&mut self, other: &LatencyStats) {
        self.histogram.merge(&other.histogram);
        self.than = self.than.saturating_add(other.than);
        self.errors = self.errors.saturating_add(other.errors);
        self.extra_ns = self.extra_ns.saturating_add(other.extra_ns);
    }

    /// Merge `other` with every count multiplied by `factor` (0..=1; decay mode).
    pub fn merge_scaled(&mut self, other: &LatencyStats, factor: f64) {
        self.histogram.merge_scaled(&other.histogram, factor);
        self.than = self.than.saturating_add(scale(other.than, factor));
        self.errors = self.errors.saturating_add(scale(other.errors, factor));
        self.extra_ns = self.extra_ns.saturating_add(scale(other.extra_ns, factor));
    }

    pub fn calls(&self) -> u64 {
        self.histogram.count()
    }

    /// Sum of all latencies (saturating at `u64::MAX` ns, 584 years).
    pub fn total_ns(&self) -> u64 {
        u64::try_from(self.histogram.sum()).unwrap_or(u64::MAX)
    }

    /// The mean as perf-prof computes it: integer `sum / n` in ns.
    pub fn avg_ns(&self) -> u64 {
        self.total_ns().checked_div(self.calls()).unwrap_or(0)
    }

    /// The `than(reqs)` percentage: integer `than * 100 / n`, as perf-prof prints it.
    pub fn than_percent(&self) -> u64 {
        self.than.saturating_mul(100) / self.calls().max(1)
    }
}
