//! perf-prof's `stat` and `hrcount`: how many events of each `-e` event happened in each
//! `--period`, per interval, per instance with `--perins`.
//!
//! perf-prof counts with a perf_event counter group read every period; on CPU-wide
//! sessions its group members never start on this kind of kernel (notes §7.2: members
//! opened disabled and enabled through the leader stay at 0), so it prints zeros. Here
//! every event is a record of the session's rings, counted as it is read: the count is
//! exact (lost records aside, which the session reports), CPU-wide or per thread, and the
//! rows are the engine's, so live modes, windows, export and replay apply.

use super::Analyzer;
use crate::model::analysis::{AnalysisRows, AnalysisSchema};
use crate::model::period_counts::{CountInstance, PeriodCounts, PeriodKey, PeriodSchema};
use crate::trace::event::TraceEvent;

/// The counter's configuration.
#[derive(Clone, Debug)]
pub struct StatConfig {
    /// Printed name of every event, by event index.
    pub events: Vec<String>,
    /// What one record of each event counts for (1; a clock's sampling period in ns).
    pub weights: Vec<u64>,
    /// `--perins`: count per CPU (CPU-wide) or per thread (attached to threads).
    pub instance: Option<CountInstance>,
    pub period_ns: u64,
    /// Periods per printed table (interval / period).
    pub columns: usize,
}

/// Counts events per (instance, event, period).
pub struct StatAnalyzer {
    config: StatConfig,
    counts: PeriodCounts,
}

impl StatAnalyzer {
    pub fn new(config: StatConfig) -> Self {
        let mut config = config;
        config.period_ns = config.period_ns.max(1);
        config.columns = config.columns.max(1);
        Self {
            config,
            counts: PeriodCounts::default(),
        }
    }
}

/// One printed row: an event on an instance, its last `columns` periods and its total.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatRow {
    pub instance: Option<u64>,
    pub event: usize,
    /// Oldest first; periods older than the table's first column are added to it, so the
    /// buckets always add up to `total`.
    pub buckets: Vec<u64>,
    pub total: u64,
}

/// A stat/hrcount table: rows by instance, then event order (perf-prof's order).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatTable {
    pub events: Vec<String>,
    pub instance: Option<CountInstance>,
    pub rows: Vec<StatRow>,
}

/// The table of `counts`: its columns are the `schema.columns` periods ending with the
/// latest period any cell has. Every event gets a row (zeros included) on every instance
/// seen, as perf-prof prints every counter.
pub fn stat_table(schema: &PeriodSchema, counts: &PeriodCounts) -> StatTable {
    let columns = schema.columns.max(1);
    let last = counts.counts.keys().map(|k| k.period).max().unwrap_or(0);
    let first = last.saturating_sub(columns as u64 - 1);
    let mut instances: Vec<u64> = if schema.instance.is_some() {
        counts.counts.keys().map(|k| k.instance).collect()
    } else {
        vec![0]
    };
    instances.sort_unstable();
    instances.dedup();
    let mut rows = Vec::new();
    for &instance in &instances {
        for event in 0..schema.events.len() {
            rows.push(StatRow {
                instance: schema.instance.map(|_| instance),
                event,
                buckets: vec![0; columns],
                total: 0,
            });
        }
    }
    let events = schema.events.len();
    for (key, &n) in &counts.counts {
        let Ok(at) = instances.binary_search(&key.instance) else {
            continue;
        };
        let Some(row) = rows.get_mut(at * events + usize::from(key.event)) else {
            continue;
        };
        if usize::from(key.event) >= events {
            continue;
        }
        let column = key.period.saturating_sub(first) as usize;
        row.buckets[column.min(columns - 1)] += n;
        row.total += n;
    }
    StatTable {
        events: schema.events.clone(),
        instance: schema.instance,
        rows,
    }
}

impl Analyzer for StatAnalyzer {
    type Table = StatTable;

    fn feed(&mut self, event: &TraceEvent<'_>) {
        if usize::from(event.event.0) >= self.config.events.len() {
            return;
        }
        let instance = match self.config.instance {
            Some(CountInstance::Cpu) => u64::from(event.cpu),
            Some(CountInstance::Thread) => u64::from(event.tid),
            None => 0,
        };
        self.counts.add(
            PeriodKey {
                instance,
                event: event.event.0,
                period: event.time_ns / self.config.period_ns,
            },
            self.config
                .weights
                .get(usize::from(event.event.0))
                .copied()
                .unwrap_or(1),
        );
    }

    /// Counts are not pairs: a lost range only means fewer counted (the session says so).
    fn lost(&mut self, _from_ns: u64, _to_ns: u64) {}

    fn take_rows(&mut self) -> AnalysisRows {
        AnalysisRows::Periods(std::mem::take(&mut self.counts))
    }

    fn rows(&self) -> AnalysisRows {
        AnalysisRows::Periods(self.counts.clone())
    }

    fn schema(&self) -> AnalysisSchema {
        AnalysisSchema::Periods(PeriodSchema {
            events: self.config.events.clone(),
            instance: self.config.instance,
            period_ns: self.config.period_ns,
            columns: self.config.columns,
        })
    }

    fn tabulate(&self, rows: &AnalysisRows) -> StatTable {
        let AnalysisSchema::Periods(schema) = self.schema() else {
            unreachable!("stat's schema is Periods")
        };
        match rows {
            AnalysisRows::Periods(counts) => stat_table(&schema, counts),
            _ => stat_table(&schema, &PeriodCounts::default()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyzers::text::{WallClock, stat_lines};
    use crate::trace::event::EventIndex;

    fn event(time_ns: u64, cpu: u32, tid: u32, index: u16) -> TraceEvent<'static> {
        TraceEvent {
            time_ns,
            cpu,
            pid: tid,
            tid,
            event: EventIndex(index),
            raw: &[],
            callchain: &[],
            rebuilt: false,
        }
    }

    fn wall(hour: u32, minute: u32, second: u32, microsecond: u32) -> WallClock {
        WallClock {
            year: 2026,
            month: 12,
            day: 2,
            hour,
            minute,
            second,
            microsecond,
        }
    }

    fn analyzer(instance: Option<CountInstance>, columns: usize) -> StatAnalyzer {
        StatAnalyzer::new(StatConfig {
            events: vec!["sched:sched_switch".into(), "wakeup".into()],
            weights: vec![1, 1],
            instance,
            period_ns: 100,
            columns,
        })
    }

    #[test]
    fn buckets_are_the_last_periods_and_add_up_to_the_total() {
        let mut a = analyzer(None, 3);
        for t in [5, 150, 160, 250, 420, 430, 431] {
            a.feed(&event(t, 0, 7, 0));
        }
        a.feed(&event(440, 1, 8, 1));
        let table = a.tabulate(&a.rows());
        // periods 2..=4 are the columns; 0 and 1 fold into the first.
        assert_eq!(table.rows[0].buckets, vec![4, 0, 3]);
        assert_eq!(table.rows[0].total, 7);
        assert_eq!(table.rows[1].buckets, vec![0, 0, 1]);
        let wall = wall(15, 47, 41, 985143);
        assert_eq!(
            stat_lines(&table, &wall),
            "2026-12-02 15:47:41.985143 \n\
             sched:sched_switch  4| 0| 3 | total 7\n\
             \x20           wakeup  0| 0| 1 | total 1\n"
        );
    }

    #[test]
    fn perins_rows_are_per_cpu_or_thread_in_perf_prof_format() {
        let mut a = analyzer(Some(CountInstance::Thread), 1);
        for _ in 0..123 {
            a.feed(&event(10, 0, 19225, 0));
        }
        let table = a.tabulate(&a.rows());
        let wall = wall(15, 47, 54, 321835);
        assert_eq!(
            stat_lines(&table, &wall),
            "2026-12-02 15:47:54.321835 \n\
             [ 19225] sched:sched_switch 123 | total 123\n\
             [ 19225]             wakeup   0 | total 0\n"
        );
        let mut a = analyzer(Some(CountInstance::Cpu), 2);
        a.feed(&event(10, 1, 5, 1));
        let text = stat_lines(&a.tabulate(&a.rows()), &wall);
        assert!(
            text.contains("\n[001] sched:sched_switch  0| 0 | total 0\n"),
            "{text}"
        );
    }

    #[test]
    fn no_events_print_one_zero_row_per_event() {
        let a = analyzer(None, 1);
        let table = a.tabulate(&a.rows());
        assert_eq!(table.rows.len(), 2);
        assert!(table.rows.iter().all(|r| r.total == 0 && r.buckets == vec![0]));
    }
}
