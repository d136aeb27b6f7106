//! `num-dist`: the distribution of a number each event carries — `num=EXPR` on every
//! event (`-e 'sched:sched_stat_runtime//num=runtime/'`) — as perf-prof's num-dist
//! computes it: per event (and per CPU or thread with `--perins`), calls, total, min,
//! avg, p99 and max of the values as unsigned 64-bit integers (a negative value wraps,
//! and so does the total, as in perf-prof's C arithmetic).
//!
//! Rows are [`LatencyRows`] keyed by (instance, event index): the values go into the same
//! mergeable distributions as latencies, so the engine keeps them per slice. p99 comes
//! from the log-linear histogram (within 1/128 of the value; perf-prof uses a t-digest).
//! Each event's values carry a unit ([`ValueUnit`]): a plain number, unless `num=` is a
//! field the kernel's format marks as nanoseconds (`crate::trace::field_units`), so the
//! Latency view and the exports never write a count as a time.

use super::latency::{PairPrint, SlowPair, SlowPairQueue};
use super::{Analyzer, AnalyzerError};
use crate::model::analysis::{AnalysisRows, AnalysisSchema, LatencyKey, LatencyRows, NumDistSchema};
use crate::model::latency_stats::LatencyStats;
use crate::model::units::ValueUnit;
use crate::trace::event::{OwnedTraceEvent, TraceEvent};
use crate::trace::expr::BoundExpr;

/// What `--perins` splits the distributions by.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum NumInstance {
    Cpu,
    Thread,
}

/// One event of the analysis: its name in the table, its `num=` expression and what the
/// expression's values are.
pub struct NumEvent {
    pub name: String,
    pub num: BoundExpr,
    pub unit: ValueUnit,
}

pub struct NumDistAnalyzer {
    /// By event index.
    events: Vec<NumEvent>,
    /// `Some` with `--perins`.
    instance: Option<NumInstance>,
    /// `--than V`: values above it are counted, and their events listed (perf-prof prints
    /// each such event's line, and its stack).
    than: Option<u64>,
    rows: LatencyRows,
    over: SlowPairQueue,
}

impl NumDistAnalyzer {
    pub fn new(
        events: Vec<NumEvent>,
        instance: Option<NumInstance>,
        than: Option<u64>,
        capacity: usize,
    ) -> Result<Self, AnalyzerError> {
        if events.is_empty() {
            return Err(AnalyzerError::Config(
                "num-dist needs events with num=EXPR: -e 'sys:name//num=FIELD/'".into(),
            ));
        }
        Ok(Self {
            events,
            instance,
            than,
            rows: LatencyRows::default(),
            over: SlowPairQueue::new(capacity),
        })
    }

    /// The events whose value passed `--than` since the last call, and how many did not
    /// fit the queue.
    pub fn take_slow_pairs(&mut self) -> (Vec<SlowPair>, u64) {
        self.over.take()
    }

    fn schema_of(&self) -> NumDistSchema {
        NumDistSchema {
            events: self.events.iter().map(|e| e.name.clone()).collect(),
            units: self.events.iter().map(|e| e.unit).collect(),
            instance_header: self.instance.map(|i| match i {
                NumInstance::Cpu => "CPU".into(),
                NumInstance::Thread => "THREAD".into(),
            }),
        }
    }
}

/// One row: the instance (with `--perins`), the event's name, its distribution.
#[derive(Clone, Debug, PartialEq)]
pub struct NumDistRow {
    pub instance: Option<u64>,
    pub event: String,
    pub stats: LatencyStats,
    /// What the event's values are (perf-prof's text prints them raw either way).
    pub unit: ValueUnit,
}

impl NumDistRow {
    /// The sum as perf-prof's `u64` keeps it: wrapped.
    pub fn total(&self) -> u64 {
        self.stats.histogram.sum() as u64
    }

    /// perf-prof's avg: the wrapped total over the calls.
    pub fn avg(&self) -> u64 {
        self.total().checked_div(self.stats.calls()).unwrap_or(0)
    }
}

/// The num-dist table in perf-prof's order: by instance, then event order.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct NumDistTable {
    /// `CPU` / `THREAD` with `--perins`.
    pub instance_header: Option<String>,
    /// Every event's name (the column is as wide as the longest).
    pub events: Vec<String>,
    pub rows: Vec<NumDistRow>,
}

pub fn num_dist_table(schema: &NumDistSchema, rows: &LatencyRows) -> NumDistTable {
    let mut keyed: Vec<(&LatencyKey, &LatencyStats)> =
        rows.rows.iter().filter(|(_, s)| s.calls() > 0).collect();
    keyed.sort_by_key(|(k, _)| **k);
    NumDistTable {
        instance_header: schema.instance_header.clone(),
        events: schema.events.clone(),
        rows: keyed
            .into_iter()
            .filter_map(|(key, stats)| {
                let event = usize::try_from(key.series).ok()?;
                Some(NumDistRow {
                    instance: schema.instance_header.is_some().then_some(key.instance),
                    event: schema.events.get(event)?.clone(),
                    stats: stats.clone(),
                    unit: schema.units.get(event).copied().unwrap_or(ValueUnit::Number),
                })
            })
            .collect(),
    }
}

impl Analyzer for NumDistAnalyzer {
    type Table = NumDistTable;

    fn feed(&mut self, event: &TraceEvent<'_>) {
        let index = usize::from(event.event.0);
        let Some(value) = self.events.get(index).and_then(|e| e.num.eval_int(event)) else {
            return;
        };
        let instance = match self.instance {
            Some(NumInstance::Cpu) => u64::from(event.cpu),
            Some(NumInstance::Thread) => u64::from(event.tid),
            None => 0,
        };
        let key = LatencyKey {
            instance,
            series: index as u64,
        };
        // perf-prof keeps the value as u64: -1 is 18446744073709551615.
        let value = value as u64;
        self.rows.rows.entry(key).or_default().record(value, self.than);
        if self.than.is_some_and(|than| value > than) {
            if self.over.has_room() {
                let own = OwnedTraceEvent::from_event(event);
                self.over.push(SlowPair::new(own, event, value, PairPrint::Event));
            } else {
                self.over.note_dropped();
            }
        }
    }

    /// Values are independent of each other: nothing pending to drop.
    fn lost(&mut self, _from_ns: u64, _to_ns: u64) {}

    fn take_rows(&mut self) -> AnalysisRows {
        AnalysisRows::Latency(std::mem::take(&mut self.rows))
    }

    fn rows(&self) -> AnalysisRows {
        AnalysisRows::Latency(self.rows.clone())
    }

    fn schema(&self) -> AnalysisSchema {
        AnalysisSchema::NumDist(self.schema_of())
    }

    fn tabulate(&self, rows: &AnalysisRows) -> NumDistTable {
        match rows {
            AnalysisRows::Latency(rows) => num_dist_table(&self.schema_of(), rows),
            _ => NumDistTable::default(),
        }
    }
}
