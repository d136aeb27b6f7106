//! Latency histograms (log-linear buckets, mergeable, percentiles with a stated error).
//! Placeholder type so the crate builds while the histogram is written.

/// A latency distribution in nanoseconds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LatencyHistogram {}

impl LatencyHistogram {
    pub fn new() -> Self {
        Self::default()
    }
}
