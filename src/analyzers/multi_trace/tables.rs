//! What a multi-trace analyzer reports: the delay table or the pair counts.

use crate::analyzers::latency::LatencyStats;
use crate::model::analysis::PairNames;

#[derive(Clone, Debug, PartialEq)]
pub struct DelayRow {
    /// The key, with `--perins`.
    pub instance: Option<u64>,
    /// Index into [`DelayTable::pairs`].
    pub pair: usize,
    pub stats: LatencyStats,
}

/// The delay table: rows by instance (with `--perins`), then total time, largest first.
#[derive(Clone, Debug, PartialEq)]
pub struct DelayTable {
    /// Every pair the stages define (column widths come from all of them, as in perf-prof).
    pub pairs: Vec<PairNames>,
    /// `Some(header)` with `--perins`.
    pub key_header: Option<String>,
    /// The key column's width (perf-prof: at least 6 for a key expression, else 3).
    pub key_width: usize,
    pub comm_column: bool,
    pub than_ns: Option<u64>,
    pub rows: Vec<DelayRow>,
}

impl DelayTable {
    /// Pairs closed, over all rows.
    pub fn total_calls(&self) -> u64 {
        self.rows.iter().map(|r| r.stats.calls()).sum()
    }

    /// The `start => end` names of a row.
    pub fn names(&self, row: &DelayRow) -> Option<&PairNames> {
        self.pairs.get(row.pair)
    }
}

/// `--impl pair` counts of one interval: per first event `unpaired`, per pair `paired`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PairCount {
    /// `sys:name` of the first event.
    pub first: String,
    /// `sys:name` of the second event; `None` = the unpaired count of `first`.
    pub second: Option<String>,
    pub count: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PairTable {
    /// perf-prof's order: per first event its unpaired line, then its pairs.
    pub rows: Vec<PairCount>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum MultiTraceTable {
    Delay(DelayTable),
    Pair(PairTable),
}
