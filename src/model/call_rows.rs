//! perf-prof's `nested-trace` as model data: which function called which (call edges,
//! counted) and how long each function took (entry → its exit, one distribution per
//! function). Edges rather than a tree: the rows of two spans merge by adding, and the
//! tree a table prints is built from the edges when it is shown
//! ([`crate::analyzers::nested_trace::call_table`]).

use rustc_hash::FxHashMap;

use super::latency_stats::LatencyStats;
use super::scale::scale;

/// Who called a function: nothing pending under its key (a root), or another function.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Caller {
    Root,
    Function(u32),
}

/// One span's calls and function times. Functions are indexes into
/// [`crate::model::analysis::CallSchema::functions`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CallRows {
    /// (caller, callee) → how many times the callee was entered from that caller.
    pub edges: FxHashMap<(Caller, u32), u64>,
    /// Per function, entry → exit times (call-delay, delay).
    pub times: FxHashMap<u32, LatencyStats>,
}

impl CallRows {
    pub fn is_empty(&self) -> bool {
        self.edges.is_empty() && self.times.is_empty()
    }

    pub fn merge_scaled(&mut self, other: &CallRows, factor: f64) {
        for (edge, n) in &other.edges {
            let into = self.edges.entry(*edge).or_default();
            *into = into.saturating_add(scale(*n, factor));
        }
        for (function, stats) in &other.times {
            let into = self.times.entry(*function).or_default();
            if factor >= 1.0 {
                into.merge(stats);
            } else {
                into.merge_scaled(stats, factor);
            }
        }
        if factor < 1.0 {
            self.edges.retain(|_, n| *n > 0);
            self.times.retain(|_, s| s.calls() > 0);
        }
    }

    pub fn heap_bytes(&self) -> usize {
        self.edges.capacity() * std::mem::size_of::<((Caller, u32), u64)>()
            + self
                .times
                .values()
                .map(|s| std::mem::size_of::<(u32, LatencyStats)>() + s.histogram.heap_bytes())
                .sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_merge_by_adding_edges_and_distributions() {
        let mut a = CallRows::default();
        a.edges.insert((Caller::Root, 0), 2);
        a.times.entry(0).or_default().record(1_000, None);
        let mut b = CallRows::default();
        b.edges.insert((Caller::Root, 0), 3);
        b.edges.insert((Caller::Function(0), 1), 7);
        b.times.entry(0).or_default().record(5_000, None);
        a.merge_scaled(&b, 1.0);
        assert_eq!(a.edges[&(Caller::Root, 0)], 5);
        assert_eq!(a.edges[&(Caller::Function(0), 1)], 7);
        assert_eq!(a.times[&0].calls(), 2);
        assert_eq!(a.times[&0].total_ns(), 6_000);
    }
}
