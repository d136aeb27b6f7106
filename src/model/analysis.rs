//! Trace analyses as model data: what an analyzer computed over some span of time, as
//! typed rows that merge — latency distributions add bucket by bucket, tables add cell by
//! cell, counts add — so the engine keeps them per time slice exactly as it keeps stack
//! counts, and every live mode and window applies to them the same way.
//!
//! [`AnalysisRows`] are the numbers; [`AnalysisSchema`] says once per session what they
//! mean (which syscall or event pair a series is, the table's headers and sort order), so
//! rows stay small and a slice never repeats a name.

use std::fmt;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::call_rows::CallRows;
use super::fault_counts::FaultCounts;
use super::latency_stats::LatencyStats;
use super::lockup_warnings::LockupRows;
use super::memory_stacks::{LeakRows, MemSchema, ProfRows};
use super::period_counts::{CountInstance, PeriodCounts, PeriodSchema};
use super::scale::scale;
pub use super::sql_rows::{SqlRows, SqlSchema};
use super::timer_samples::{TimerSamples, TimerSchema};
use super::units::ValueUnit;

/// A row of a latency table: which series (a syscall number, a stage pair's index) on
/// which instance (the thread or key with `--perins`, else 0).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LatencyKey {
    pub instance: u64,
    pub series: u64,
}

/// Latency rows (syscalls, multi-trace delay, rundelay).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LatencyRows {
    pub rows: FxHashMap<LatencyKey, LatencyStats>,
}

/// `--impl pair` counts: per stage pair, how often it closed; per first event, how often
/// it found no second one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PairRows {
    pub paired: Vec<u64>,
    pub unpaired: Vec<u64>,
}

/// A row of perf-prof's `top`: a key, or a command name under `--only-comm`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TopKey {
    Key(u64),
    Comm(String),
}

/// The cells of one `top` row.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TopCells {
    /// The name `comm=` read from the row's first event.
    pub comm: Option<String>,
    pub values: Vec<u64>,
}

/// `top` rows and the events they were made of.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TopRows {
    pub rows: FxHashMap<TopKey, TopCells>,
    pub events: u64,
}

/// What an analyzer computed over some span: the rows of its table.
#[derive(Clone, Debug, PartialEq)]
pub enum AnalysisRows {
    Latency(LatencyRows),
    Pairs(PairRows),
    Top(TopRows),
    /// `stat`/`hrcount`: event counts per period.
    Periods(PeriodCounts),
    /// `page-faults`: faults per thread and address region.
    Faults(FaultCounts),
    /// `hrtimer`: the timer periods whose counts met the condition.
    Timer(TimerSamples),
    /// `watchdog`: the lockups it predicted.
    Lockups(LockupRows),
    /// `kmemleak`: live allocations per stack.
    Leaks(LeakRows),
    /// `kmemprof`: bytes allocated and freed per stack.
    MemProf(ProfRows),
    /// `nested-trace`: call edges and function times.
    Calls(CallRows),
    /// live `sql`: the events, as table rows the queries run over.
    Sql(SqlRows),
}

impl AnalysisRows {
    /// Nothing of this kind yet (the identity of [`merge`](Self::merge)).
    pub fn empty_like(&self) -> AnalysisRows {
        match self {
            AnalysisRows::Latency(_) => AnalysisRows::Latency(LatencyRows::default()),
            AnalysisRows::Pairs(_) => AnalysisRows::Pairs(PairRows::default()),
            AnalysisRows::Top(_) => AnalysisRows::Top(TopRows::default()),
            AnalysisRows::Periods(_) => AnalysisRows::Periods(PeriodCounts::default()),
            AnalysisRows::Faults(_) => AnalysisRows::Faults(FaultCounts::default()),
            AnalysisRows::Timer(_) => AnalysisRows::Timer(TimerSamples::default()),
            AnalysisRows::Lockups(_) => AnalysisRows::Lockups(LockupRows::default()),
            AnalysisRows::Leaks(_) => AnalysisRows::Leaks(LeakRows::default()),
            AnalysisRows::MemProf(_) => AnalysisRows::MemProf(ProfRows::default()),
            AnalysisRows::Calls(_) => AnalysisRows::Calls(CallRows::default()),
            AnalysisRows::Sql(_) => AnalysisRows::Sql(SqlRows::default()),
        }
    }

    pub fn is_empty(&self) -> bool {
        match self {
            AnalysisRows::Latency(l) => l.rows.is_empty(),
            AnalysisRows::Pairs(p) => p.paired.iter().chain(&p.unpaired).all(|&n| n == 0),
            AnalysisRows::Top(t) => t.rows.is_empty() && t.events == 0,
            AnalysisRows::Periods(p) => p.counts.is_empty(),
            AnalysisRows::Faults(f) => f.cells.is_empty(),
            AnalysisRows::Timer(t) => t.matched.is_empty() && t.periods == 0,
            AnalysisRows::Lockups(l) => l.is_empty(),
            AnalysisRows::Leaks(l) => l.is_empty(),
            AnalysisRows::MemProf(p) => p.is_empty(),
            AnalysisRows::Calls(c) => c.is_empty(),
            AnalysisRows::Sql(q) => q.is_empty(),
        }
    }

    /// Add `other` (rows of the same analyzer) into these.
    pub fn merge(&mut self, other: &AnalysisRows) {
        self.merge_scaled(other, 1.0);
    }

    /// Add `other` with every count multiplied by `factor` (decay mode; 1 = plain merge).
    pub fn merge_scaled(&mut self, other: &AnalysisRows, factor: f64) {
        match (self, other) {
            (AnalysisRows::Latency(a), AnalysisRows::Latency(b)) => {
                for (key, stats) in &b.rows {
                    let into = a.rows.entry(*key).or_default();
                    if factor >= 1.0 {
                        into.merge(stats);
                    } else {
                        into.merge_scaled(stats, factor);
                    }
                }
                if factor < 1.0 {
                    a.rows.retain(|_, s| s.calls() > 0);
                }
            }
            (AnalysisRows::Pairs(a), AnalysisRows::Pairs(b)) => {
                add_counts(&mut a.paired, &b.paired, factor);
                add_counts(&mut a.unpaired, &b.unpaired, factor);
            }
            (AnalysisRows::Top(a), AnalysisRows::Top(b)) => {
                for (key, cells) in &b.rows {
                    let into = a.rows.entry(key.clone()).or_insert_with(|| TopCells {
                        comm: cells.comm.clone(),
                        values: vec![0; cells.values.len()],
                    });
                    if into.values.len() < cells.values.len() {
                        into.values.resize(cells.values.len(), 0);
                    }
                    for (t, v) in into.values.iter_mut().zip(&cells.values) {
                        // perf-prof's sums wrap (unsigned C arithmetic); so do these.
                        *t = t.wrapping_add(scale(*v, factor));
                    }
                }
                if factor < 1.0 {
                    a.rows.retain(|_, c| c.values.iter().any(|&v| v != 0));
                }
                a.events = a.events.saturating_add(scale(b.events, factor));
            }
            (AnalysisRows::Periods(a), AnalysisRows::Periods(b)) => a.merge_scaled(b, factor),
            (AnalysisRows::Faults(a), AnalysisRows::Faults(b)) => a.merge_scaled(b, factor),
            (AnalysisRows::Timer(a), AnalysisRows::Timer(b)) => a.merge_scaled(b, factor),
            (AnalysisRows::Lockups(a), AnalysisRows::Lockups(b)) => a.merge_scaled(b, factor),
            (AnalysisRows::Leaks(a), AnalysisRows::Leaks(b)) => a.merge_scaled(b, factor),
            (AnalysisRows::MemProf(a), AnalysisRows::MemProf(b)) => a.merge_scaled(b, factor),
            (AnalysisRows::Calls(a), AnalysisRows::Calls(b)) => a.merge_scaled(b, factor),
            (AnalysisRows::Sql(a), AnalysisRows::Sql(b)) => a.merge(b),
            // Rows of another analyzer: a session runs one, so this does not happen.
            _ => {}
        }
    }

    /// Bytes the rows hold on the heap, roughly (the memory bound's accounting).
    pub fn heap_bytes(&self) -> usize {
        match self {
            AnalysisRows::Latency(l) => l
                .rows
                .values()
                .map(|s| std::mem::size_of::<(LatencyKey, LatencyStats)>() + s.histogram.heap_bytes())
                .sum(),
            AnalysisRows::Pairs(p) => (p.paired.capacity() + p.unpaired.capacity()) * 8,
            AnalysisRows::Top(t) => t
                .rows
                .iter()
                .map(|(k, c)| {
                    64 + c.values.capacity() * 8
                        + c.comm.as_ref().map_or(0, String::capacity)
                        + match k {
                            TopKey::Comm(s) => s.capacity(),
                            TopKey::Key(_) => 0,
                        }
                })
                .sum(),
            AnalysisRows::Faults(f) => {
                f.cells.capacity()
                    * std::mem::size_of::<(super::fault_counts::FaultKey, super::fault_counts::FaultCells)>()
            }
            AnalysisRows::Periods(p) => {
                p.counts.capacity() * std::mem::size_of::<(super::period_counts::PeriodKey, u64)>()
            }
            AnalysisRows::Timer(t) => t.heap_bytes(),
            AnalysisRows::Lockups(l) => l.heap_bytes(),
            AnalysisRows::Leaks(l) => l.heap_bytes(),
            AnalysisRows::MemProf(p) => p.heap_bytes(),
            AnalysisRows::Calls(c) => c.heap_bytes(),
            AnalysisRows::Sql(q) => q.heap_bytes(),
        }
    }
}

fn add_counts(into: &mut Vec<u64>, from: &[u64], factor: f64) {
    if into.len() < from.len() {
        into.resize(from.len(), 0);
    }
    for (t, v) in into.iter_mut().zip(from) {
        *t = t.saturating_add(scale(*v, factor));
    }
}

/// The two column names of a stage pair (`start => end`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PairNames {
    pub start: String,
    pub end: String,
}

/// Formats a `top` key as `printkey=` says (an expression over the key).
#[derive(Clone)]
pub struct KeyPrinter(pub Arc<dyn Fn(u64) -> String + Send + Sync>);

impl fmt::Debug for KeyPrinter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("KeyPrinter")
    }
}

/// What a syscalls table's rows are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyscallsSchema {
    /// Rows per (thread, syscall): [`LatencyKey::instance`] is the thread id.
    pub perins: bool,
    pub than_ns: Option<u64>,
}

/// What a delay table's rows are (multi-trace `--impl delay`, rundelay).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DelaySchema {
    /// Every pair the stages define, by [`LatencyKey::series`] (column widths come from all
    /// of them, as in perf-prof).
    pub pairs: Vec<PairNames>,
    /// `Some(header)` with `--perins`: [`LatencyKey::instance`] is the key.
    pub key_header: Option<String>,
    /// The key column's width (perf-prof: at least 6 for a key expression, else 3).
    pub key_width: usize,
    /// The key is a thread: name it in a comm column.
    pub comm_column: bool,
    pub than_ns: Option<u64>,
}

/// What a task-state table's rows are: [`LatencyKey::series`] is the state
/// (`crate::analyzers::task_state::TaskState`), [`LatencyKey::instance`] the thread with
/// `--perins` (else 0).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskStateSchema {
    pub perins: bool,
    pub than_ns: Option<u64>,
}

/// What an oncpu table's rows are: [`LatencyKey::instance`] is the CPU,
/// [`LatencyKey::series`] the thread, each value one run of the thread on the CPU.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OnCpuSchema {
    /// `--only-comm`: one item per command name, not per thread.
    pub only_comm: bool,
    /// `--detail`: switches and the longest run next to each run time.
    pub detail: bool,
    /// Thread mode (`-p`/`-t`, a workload): the chosen threads' rows, each with the CPUs
    /// it ran on (perf-prof's `THREAD COMM SUM(ms) CPUS(ms)`).
    pub threads: bool,
}

/// What a kvm-exit table's rows are: [`LatencyKey::series`] is perf-prof's key
/// `(isa << 32) | exit_reason`, [`LatencyKey::instance`] the CPU or thread with
/// `--perins` (else 0); [`LatencyStats::extra_ns`] is the time of exits taken in the
/// guest's kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KvmExitSchema {
    /// `Some` with `--perins`: rows per CPU (`[CPU]`) or per thread (`[THREAD]`).
    pub instance: Option<CountInstance>,
    pub than_ns: Option<u64>,
}

/// What a blktrace table's rows are: [`LatencyKey::series`] is the stage a request
/// reached (1 = inserted, 2 = issued, 3 = completed; each value the time since the stage
/// before), [`LatencyKey::instance`] is 0.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BlktraceSchema {
    pub than_ns: Option<u64>,
}

/// What a num-dist table's rows are: [`LatencyKey::series`] is the event index,
/// [`LatencyKey::instance`] the CPU or thread with `--perins` (else 0).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NumDistSchema {
    /// Each event's name (its alias, else its name), by event index.
    pub events: Vec<String>,
    /// What each event's `num=` is (a duration field, else a plain number), by event index.
    pub units: Vec<ValueUnit>,
    /// `CPU` or `THREAD` with `--perins`.
    pub instance_header: Option<String>,
}

/// What `--impl pair` counts are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PairSchema {
    /// `sys:name` of every node ([`PairRows::unpaired`] is by node).
    pub nodes: Vec<String>,
    /// (first node, second node) of every pair ([`PairRows::paired`] is by pair).
    pub pairs: Vec<(usize, usize)>,
    /// First nodes in stage order (the table lists them).
    pub first_nodes: Vec<usize>,
}

/// What a `top` table's columns are.
#[derive(Clone, Debug)]
pub struct TopSchema {
    /// `PID` or the upper-cased key expression; `None` with `--only-comm`.
    pub key_header: Option<String>,
    /// `COMM` or the upper-cased `comm=` expression; `None` = no name column.
    pub comm_header: Option<String>,
    /// The name column shows the comm of the key (a tid): no event has a key.
    pub comm_from_pid: bool,
    pub column_headers: Vec<String>,
    /// Sort priority: top-by columns in order, then the others in order.
    pub sort_order: Vec<usize>,
    pub printkey: Option<KeyPrinter>,
}

/// What `nested-trace` reports (perf-prof's `--impl`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CallReport {
    /// `call`: the call tree only.
    Calls,
    /// `call-delay`: the call tree with each function's time.
    CallsAndTimes,
    /// `delay`: each function's time, entry => exit, in stage order.
    Times,
}

/// What `nested-trace` rows are: [`CallRows`] functions index `functions`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallSchema {
    /// Each `-e` stage's entry event name (alias, else name), by function index.
    pub functions: Vec<String>,
    /// Each stage's exit event name (the `delay` table's `end` column).
    pub exits: Vec<String>,
    pub report: CallReport,
    /// `--than` (the `delay` table's `than(reqs)` column).
    pub than_ns: Option<u64>,
}

/// What an analyzer's rows mean.
#[derive(Clone, Debug)]
pub enum AnalysisSchema {
    Syscalls(SyscallsSchema),
    Delay(DelaySchema),
    TaskState(TaskStateSchema),
    OnCpu(OnCpuSchema),
    Blktrace(BlktraceSchema),
    NumDist(NumDistSchema),
    Pairs(PairSchema),
    Top(TopSchema),
    Periods(PeriodSchema),
    /// `page-faults` (its rows say all there is).
    Faults,
    KvmExit(KvmExitSchema),
    Timer(TimerSchema),
    /// `watchdog` (its rows say all there is).
    Lockups,
    /// `kmemleak`.
    Leaks(MemSchema),
    /// `kmemprof`.
    MemProf(MemSchema),
    /// `nested-trace`: the functions and the implementation.
    Calls(CallSchema),
    /// live `sql`: the events' tables and the queries.
    Sql(SqlSchema),
}

impl AnalysisSchema {
    /// The unit every latency row of this analysis shares: nanoseconds for the delay
    /// analyzers, num-dist's events' own when they agree; `None` when they do not (one
    /// axis cannot hold both).
    pub fn shared_unit(&self) -> Option<ValueUnit> {
        match self {
            AnalysisSchema::NumDist(schema) => {
                let first = *schema.units.first()?;
                schema.units.iter().all(|&u| u == first).then_some(first)
            }
            _ => Some(ValueUnit::Nanoseconds),
        }
    }

    /// Rows of this analyzer with nothing in them.
    pub fn empty_rows(&self) -> AnalysisRows {
        match self {
            AnalysisSchema::Syscalls(_)
            | AnalysisSchema::Delay(_)
            | AnalysisSchema::TaskState(_)
            | AnalysisSchema::OnCpu(_)
            | AnalysisSchema::KvmExit(_)
            | AnalysisSchema::Blktrace(_)
            | AnalysisSchema::NumDist(_) => AnalysisRows::Latency(LatencyRows::default()),
            AnalysisSchema::Pairs(p) => AnalysisRows::Pairs(PairRows {
                paired: vec![0; p.pairs.len()],
                unpaired: vec![0; p.nodes.len()],
            }),
            AnalysisSchema::Top(_) => AnalysisRows::Top(TopRows::default()),
            AnalysisSchema::Periods(_) => AnalysisRows::Periods(PeriodCounts::default()),
            AnalysisSchema::Faults => AnalysisRows::Faults(FaultCounts::default()),
            AnalysisSchema::Timer(_) => AnalysisRows::Timer(TimerSamples::default()),
            AnalysisSchema::Lockups => AnalysisRows::Lockups(LockupRows::default()),
            AnalysisSchema::Leaks(_) => AnalysisRows::Leaks(LeakRows::default()),
            AnalysisSchema::MemProf(_) => AnalysisRows::MemProf(ProfRows::default()),
            AnalysisSchema::Calls(_) => AnalysisRows::Calls(CallRows::default()),
            AnalysisSchema::Sql(_) => AnalysisRows::Sql(SqlRows::default()),
        }
    }
}

/// A session's analysis as the engine knows it: which analyzer, and its schema.
#[derive(Clone, Debug)]
pub struct AnalysisInfo {
    /// `syscalls`, `rundelay`, `multi-trace`, `top`.
    pub name: String,
    pub schema: AnalysisSchema,
}

/// Everything there is to show of an analysis for one selection: its rows merged over the
/// selected slices, and the events they were made of.
#[derive(Clone, Debug)]
pub struct AnalysisSnapshot {
    pub info: Arc<AnalysisInfo>,
    pub rows: AnalysisRows,
    /// Events fed to the analyzer in the selection.
    pub events: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn latency(values: &[u64]) -> LatencyStats {
        let mut s = LatencyStats::default();
        for &v in values {
            s.record(v, Some(1_000));
        }
        s
    }

    #[test]
    fn latency_rows_merge_bucket_by_bucket_and_scale_for_decay() {
        let key = LatencyKey {
            instance: 0,
            series: 1,
        };
        let mut a = AnalysisRows::Latency(LatencyRows {
            rows: [(key, latency(&[10, 2_000]))].into_iter().collect(),
        });
        let b = AnalysisRows::Latency(LatencyRows {
            rows: [(key, latency(&[20, 30, 3_000, 4_000]))].into_iter().collect(),
        });
        a.merge(&b);
        let AnalysisRows::Latency(rows) = &a else { panic!() };
        let s = &rows.rows[&key];
        assert_eq!((s.calls(), s.than, s.total_ns()), (6, 3, 9_060));
        assert_eq!(s.histogram.max(), Some(4_000));

        let mut decayed = b.empty_like();
        decayed.merge_scaled(&b, 0.5);
        let AnalysisRows::Latency(rows) = &decayed else {
            panic!()
        };
        assert_eq!(
            rows.rows[&key].calls(),
            4,
            "each single-value bucket rounds 0.5 up"
        );
        let mut gone = b.empty_like();
        gone.merge_scaled(&b, 0.1);
        assert!(gone.is_empty(), "counts that round to 0 leave no row");
    }

    #[test]
    fn top_and_pair_rows_add_cells() {
        let mut a = AnalysisRows::Top(TopRows {
            rows: [(
                TopKey::Key(7),
                TopCells {
                    comm: Some("a".into()),
                    values: vec![1, 2],
                },
            )]
            .into_iter()
            .collect(),
            events: 3,
        });
        a.merge(&a.clone());
        let AnalysisRows::Top(t) = &a else { panic!() };
        assert_eq!(t.rows[&TopKey::Key(7)].values, [2, 4]);
        assert_eq!(t.events, 6);
        let mut p = AnalysisRows::Pairs(PairRows {
            paired: vec![1, 2],
            unpaired: vec![3],
        });
        p.merge(&AnalysisRows::Pairs(PairRows {
            paired: vec![1, 1],
            unpaired: vec![0],
        }));
        assert_eq!(
            p,
            AnalysisRows::Pairs(PairRows {
                paired: vec![2, 3],
                unpaired: vec![3]
            })
        );
    }
}
