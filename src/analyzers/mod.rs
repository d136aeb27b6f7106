//! Analyzers: host tracepoint events in, latency distributions and key/value tables out
//! (syscalls, rundelay, multi-trace delay/pair, top), as perf-prof computes them.
//! Pure state machines over [`crate::trace::event::TraceEvent`]s; no I/O.
//!
//! Every analyzer is an [`Analyzer`]: it is built once from the [`EventLayout`]s of the
//! opened events (looking up the few [`FieldLayout`]s it needs, so per event only those
//! fields are read), then fed events in timestamp order. [`Analyzer::lost`] discards the
//! pending state a lost-records range may have corrupted, as perf-prof does.
//! [`Analyzer::take_rows`] hands over what happened since its last call as typed, mergeable
//! rows ([`crate::model::analysis::AnalysisRows`]) and starts over: an analyzer keeps no
//! history — the engine keeps the rows per time slice, so every live mode and window
//! applies to them, and `-i` text output prints each interval's rows.
//! [`Analyzer::tabulate`] puts rows in perf-prof's table order for printing.
//!
//! Percentiles come from [`crate::model::histogram::LatencyHistogram`]: log-linear
//! buckets, so a reported percentile is within 1/128 (half a bucket of at most 1/64 of
//! its value) of the true nearest-rank percentile; min, max, total, calls and averages are
//! exact. perf-prof uses a t-digest instead, so its p50/p95/p99 differ in the last digits.
//!
//! [`text`] renders the tables exactly as perf-prof prints them; [`present`] shapes rows
//! for the views. [`session`] is the one face a tracepoint session's analyzer has
//! (built from [`options::TraceOptions`] and the resolved events, live or replayed).
//!
//! [`EventLayout`]: crate::trace::event::EventLayout
//! [`FieldLayout`]: crate::trace::event::FieldLayout

pub mod blktrace;
pub mod chosen_tasks;
pub mod hrtimer;
pub mod key;
pub mod kmemleak;
pub mod kmemprof;
pub mod kvm_exit;
pub mod latency;
pub mod mem_events;
pub mod memory_table;
pub mod multi_trace;
pub mod nested_trace;
pub mod num_dist;
pub mod oncpu;
pub mod options;
pub mod page_faults;
pub mod present;
pub mod rundelay;
pub mod session;
pub mod sql;
pub mod stat;
mod syscall_table;
pub mod syscalls;
pub mod task_state;
pub mod text;
pub mod top;
pub mod watchdog;

#[cfg(test)]
mod test_events;

use crate::model::analysis::{AnalysisRows, AnalysisSchema};
use crate::trace::event::TraceEvent;

/// An analyzer: events in (timestamp order), rows out.
pub trait Analyzer {
    /// The analyzer's table, in perf-prof's order.
    type Table;

    /// Account one event. Events of no interest to the analyzer are ignored.
    fn feed(&mut self, event: &TraceEvent<'_>);

    /// Records between `from_ns` and `to_ns` were lost: drop pending first events that
    /// may have lost their second one (they would pair with a wrong, later event).
    fn lost(&mut self, from_ns: u64, to_ns: u64);

    /// The rows since the previous call (or since the start), then a new interval.
    fn take_rows(&mut self) -> AnalysisRows;

    /// The rows of the current interval, without taking them.
    fn rows(&self) -> AnalysisRows;

    /// What the rows mean.
    fn schema(&self) -> AnalysisSchema;

    /// Rows of this analyzer (one interval's, or several merged) as its table.
    fn tabulate(&self, rows: &AnalysisRows) -> Self::Table;
}

/// An analyzer with its intervals added up, as the engine adds them: what the tests look
/// at through `take_interval` (one interval's table) and `snapshot` (all of them).
#[cfg(test)]
pub(crate) struct Tabulated<A: Analyzer> {
    pub inner: A,
    earlier: Option<AnalysisRows>,
}

#[cfg(test)]
impl<A: Analyzer> Tabulated<A> {
    pub fn new(inner: A) -> Self {
        Self { inner, earlier: None }
    }

    /// The interval's table; the interval's rows join the earlier ones.
    pub fn take_interval(&mut self) -> A::Table {
        let rows = self.inner.take_rows();
        match &mut self.earlier {
            Some(earlier) => earlier.merge(&rows),
            None => self.earlier = Some(rows.clone()),
        }
        self.inner.tabulate(&rows)
    }

    /// Every interval so far, the current one included.
    pub fn snapshot(&self) -> A::Table {
        let current = self.inner.rows();
        let mut all = self.earlier.clone().unwrap_or_else(|| current.empty_like());
        all.merge(&current);
        self.inner.tabulate(&all)
    }
}

#[cfg(test)]
impl<A: Analyzer> std::ops::Deref for Tabulated<A> {
    type Target = A;

    fn deref(&self) -> &A {
        &self.inner
    }
}

#[cfg(test)]
impl<A: Analyzer> std::ops::DerefMut for Tabulated<A> {
    fn deref_mut(&mut self) -> &mut A {
        &mut self.inner
    }
}

/// Setting an analyzer up failed: the opened events are not the ones it needs.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum AnalyzerError {
    #[error("{analyzer} needs the event {event}: add `-e {event}`")]
    MissingEvent { analyzer: &'static str, event: String },
    #[error(
        "event {event} has no field `{field}` in its tracefs format: check the event name, \
         or pick a field listed in /sys/kernel/tracing/events/{event_path}/format"
    )]
    MissingField {
        event: String,
        event_path: String,
        field: String,
    },
    #[error("{0}")]
    Config(String),
}

impl AnalyzerError {
    pub(crate) fn missing_field(layout: &crate::trace::event::EventLayout, field: &str) -> Self {
        AnalyzerError::MissingField {
            event: layout.full_name(),
            event_path: format!("{}/{}", layout.system, layout.name),
            field: field.to_string(),
        }
    }
}

/// The syscall name perf-prof prints for an x86_64 syscall number: `read(0)`,
/// `epoll_wait(232)`. Numbers outside the table print as `syscall(id)` (perf-prof prints
/// the bare number there; the cell keeps its `%-20s` width either way).
pub fn syscall_label(id: u64) -> String {
    match syscall_name(id) {
        Some(name) => format!("{name}({id})"),
        None => format!("syscall({id})"),
    }
}

/// The x86_64 name of a syscall number, if it has one.
pub fn syscall_name(id: u64) -> Option<&'static str> {
    let id = u16::try_from(id).ok()?;
    let table = syscall_table::X86_64_SYSCALLS;
    table
        .binary_search_by_key(&id, |&(nr, _)| nr)
        .ok()
        .map(|i| table[i].1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn analyzers_can_move_to_the_model_thread() {
        fn send<T: Send>() {}
        send::<syscalls::SyscallsAnalyzer>();
        send::<multi_trace::MultiTraceAnalyzer>();
        send::<top::TopAnalyzer>();
        send::<syscalls::SyscallTable>();
        send::<multi_trace::MultiTraceTable>();
        send::<top::TopTable>();
    }

    #[test]
    fn syscalls_are_named_as_perf_prof_names_them() {
        assert_eq!(syscall_label(0), "read(0)");
        assert_eq!(syscall_label(232), "epoll_wait(232)");
        assert_eq!(syscall_label(262), "newfstatat(262)");
        assert_eq!(syscall_label(202), "futex(202)");
        assert_eq!(syscall_label(16), "ioctl(16)");
        assert_eq!(syscall_label(462), "mseal(462)");
        assert_eq!(syscall_label(400), "syscall(400)", "a gap in the table");
        assert_eq!(syscall_label(1 << 40), "syscall(1099511627776)");
        // The table is sorted (binary search relies on it) and has no duplicate ids.
        let ids: Vec<u16> = syscall_table::X86_64_SYSCALLS.iter().map(|e| e.0).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(ids.len(), 381);
    }
}
