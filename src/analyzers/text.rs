//! perf-prof's text output for the analyzer tables (`--no-tui`, `-i`): the same header,
//! dash line, column widths, `%.3f` microseconds, `--perins` key and comm columns, the
//! `than(reqs)` column and the row order, byte for byte, so scripts written against
//! perf-prof's tables keep working.
//!
//! perfscope prints more than perf-prof: p99.9 in the delay tables (multi-trace,
//! rundelay), and p50/p95/p99/p99.9 in the syscalls and blktrace tables (perf-prof prints
//! min/avg/max only). These columns are **appended after perf-prof's last column** (after
//! `than(reqs)` when present), so every perf-prof column keeps its position;
//! [`TextStyle::perfscope_columns`] turns them off for strictly perf-prof output. Their
//! percentiles come from log-linear histograms: within 1/128 of the true value (see
//! [`crate::model::histogram::RELATIVE_ERROR`]); perf-prof's own p50/p95/p99 come from a
//! t-digest, so those columns may differ from perf-prof's in the last digits.
//!
//! Lines are built into a `String` (the caller writes it out); wall-clock time is passed
//! in as a [`WallClock`] (local time), never read here.

mod blktrace_table;
mod call_tree;
mod event_line;
mod fault_table;
mod hrtimer_lines;
mod kmem_report;
mod kvm_exit_table;
mod latency_tables;
mod lockup_lines;
mod num_dist_table;
mod offender_lines;
mod oncpu_table;
mod pair_lines;
mod sql_tables;
mod stack_lines;
mod stat_lines;
mod task_state_table;
mod top_table;
mod wall_clock;

#[cfg(test)]
mod golden_tests;

pub use blktrace_table::blktrace_table;
pub use call_tree::call_tree_text;
pub use event_line::{event_line, latency_flags, slow_pair_lines};
pub use fault_table::fault_table;
pub use hrtimer_lines::hrtimer_lines;
pub use kmem_report::{kmemleak_report, kmemprof_report, stack_text};
pub use kvm_exit_table::{NO_VM_NOTICE, kvm_exit_table};
pub use latency_tables::{delay_table, syscall_table};
pub use lockup_lines::lockup_lines;
pub use num_dist_table::num_dist_table;
pub use offender_lines::{
    OffenderPrinting, PrintedOffenders, offender_lines, offender_wall_clock, realtime_offset_ns,
};
pub use oncpu_table::oncpu_table;
pub use pair_lines::pair_lines;
pub use sql_tables::{SqlWidths, sql_text};
pub use stack_lines::{StackFrame, push_stack_lines, stack_lines, visit_stack_frames};
pub use stat_lines::stat_lines;
pub use task_state_table::task_state_table;
pub use top_table::{TopText, top_table};
pub use wall_clock::{LocalClock, WallClock};

use crate::model::analysis::{AnalysisInfo, AnalysisRows, AnalysisSchema};
use crate::model::threads::ThreadNames;

/// How tables are printed.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TextStyle {
    /// Wrap non-zero `than(reqs)` cells in bold red (perf-prof does when stdout is a tty).
    pub color: bool,
    /// Append perfscope's percentile columns after perf-prof's.
    pub perfscope_columns: bool,
    /// CLOCK_REALTIME − the event clock: lines stamped with their event's own time
    /// (hrtimer's) print its wall clock; `None` stamps them with the print's.
    pub event_clock_offset_ns: Option<i128>,
}

impl Default for TextStyle {
    fn default() -> Self {
        Self {
            color: false,
            perfscope_columns: true,
            event_clock_offset_ns: None,
        }
    }
}

/// The perf-prof text of an analysis's `rows` (one interval's, or several merged).
/// `events_total`: top's title counts events over the whole run, as perf-prof; `None`
/// counts those of `rows`.
pub fn analysis_text(
    info: &AnalysisInfo,
    rows: &AnalysisRows,
    wall: &WallClock,
    names: &ThreadNames,
    style: TextStyle,
    events_total: Option<u64>,
) -> String {
    // A thread names itself (prctl, the file it execs): what the terminal gets is its text.
    let comm_of = |tid: u32| {
        names
            .name(tid)
            .map(|n| escape_controls(crate::model::threads::comm_cut(&n)).into_owned())
    };
    match (&info.schema, rows) {
        (AnalysisSchema::Syscalls(schema), AnalysisRows::Latency(rows)) => syscall_table(
            &crate::analyzers::syscalls::syscall_table(schema, rows),
            wall,
            &comm_of,
            style,
        ),
        (AnalysisSchema::Delay(schema), AnalysisRows::Latency(rows)) => delay_table(
            &crate::analyzers::multi_trace::delay_table(schema, rows),
            wall,
            &comm_of,
            style,
        ),
        (AnalysisSchema::TaskState(schema), AnalysisRows::Latency(rows)) => task_state_table(
            &crate::analyzers::task_state::task_state_table(schema, rows),
            wall,
            &comm_of,
        ),
        (AnalysisSchema::OnCpu(schema), AnalysisRows::Latency(rows)) => oncpu_table(
            &crate::analyzers::oncpu::oncpu_table(schema, rows, &|tid| names.name(tid)),
            wall,
        ),
        (AnalysisSchema::Blktrace(schema), AnalysisRows::Latency(rows)) => blktrace_table(
            &crate::analyzers::blktrace::blktrace_table(schema, rows),
            wall,
            style,
        ),
        (AnalysisSchema::NumDist(schema), AnalysisRows::Latency(rows)) => {
            num_dist_table(&crate::analyzers::num_dist::num_dist_table(schema, rows), wall)
        }
        (AnalysisSchema::Pairs(schema), AnalysisRows::Pairs(rows)) => {
            pair_lines(&crate::analyzers::multi_trace::pair_table(schema, rows), wall)
        }
        (AnalysisSchema::Top(schema), AnalysisRows::Top(rows)) => {
            let mut table = crate::analyzers::top::top_table(schema, rows);
            if let Some(total) = events_total {
                table.events_total = total;
            }
            let printkey = schema.printkey.as_ref().map(|p| p.0.clone());
            let printkey_fn = |key: u64| {
                printkey
                    .as_ref()
                    .map(|p| escape_controls(&p(key)).into_owned())
                    .unwrap_or_default()
            };
            let printkey_ref: &dyn Fn(u64) -> String = &printkey_fn;
            top_table(
                &table,
                wall,
                &TopText {
                    program: "perfscope",
                    comm_of: &comm_of,
                    printkey: printkey.is_some().then_some(printkey_ref),
                },
            )
        }
        (AnalysisSchema::Periods(schema), AnalysisRows::Periods(counts)) => {
            stat_lines(&crate::analyzers::stat::stat_table(schema, counts), wall)
        }
        (AnalysisSchema::Faults, AnalysisRows::Faults(counts)) => fault_table(
            &crate::analyzers::page_faults::fault_table(counts),
            wall,
            &comm_of,
        ),
        (AnalysisSchema::KvmExit(schema), AnalysisRows::Latency(rows)) => {
            kvm_exit_table(&crate::analyzers::kvm_exit::kvm_exit_table(schema, rows), wall)
        }
        (AnalysisSchema::Timer(schema), AnalysisRows::Timer(samples)) => {
            hrtimer_lines(schema, samples, &|t| event_wall(style, wall, t))
        }
        (AnalysisSchema::Calls(schema), AnalysisRows::Calls(rows)) => {
            call_tree_text(schema, rows, wall, style)
        }
        (AnalysisSchema::Sql(schema), AnalysisRows::Sql(rows)) => {
            sql_text(schema, rows, wall, &mut SqlWidths::default())
        }
        (AnalysisSchema::Lockups, AnalysisRows::Lockups(rows)) => {
            lockup_lines(rows, &|t| event_wall(style, wall, t))
        }
        (AnalysisSchema::Leaks(schema), AnalysisRows::Leaks(rows)) => kmemleak_report(schema, rows, wall),
        (AnalysisSchema::MemProf(schema), AnalysisRows::MemProf(rows)) => kmemprof_report(schema, rows, wall),
        _ => String::new(),
    }
}

/// The wall clock of event time `time_ns` (the print's when the offset is unknown).
fn event_wall(style: TextStyle, wall: &WallClock, time_ns: u64) -> WallClock {
    match style.event_clock_offset_ns {
        Some(offset) => WallClock::local(
            std::time::UNIX_EPOCH
                + std::time::Duration::from_nanos((i128::from(time_ns) + offset).max(0) as u64),
        ),
        None => *wall,
    }
}

/// A multi-trace table as perf-prof prints it: the delay table, or the pair lines.
pub fn multi_trace_text(
    table: &crate::analyzers::multi_trace::MultiTraceTable,
    wall: &WallClock,
    comm_of: &dyn Fn(u32) -> Option<String>,
    style: TextStyle,
) -> String {
    use crate::analyzers::multi_trace::MultiTraceTable;
    match table {
        MultiTraceTable::Delay(delay) => delay_table(delay, wall, comm_of, style),
        MultiTraceTable::Pair(pair) => pair_lines(pair, wall),
    }
}

use crate::model::text::escape_controls;

/// perf-prof's name for a pid the comm cache does not know.
pub const UNKNOWN_COMM: &str = crate::model::threads::UNKNOWN_THREAD;

/// `ns` as perf-prof prints latencies: microseconds, `%.3f`.
fn us(ns: u64) -> String {
    format!("{:.3}", ns as f64 / 1000.0)
}
