//! The `--than` offenders as a list: each over-threshold pair's lines as `--no-tui`
//! prints them ([`slow_pair_lines`], with the events' stacks), pair by pair so a list
//! knows where each pair starts. The Tables view's offender pane and `offenders.txt`
//! print through here, so what the pane shows is what the file holds.
//!
//! The sample clock is turned into wall-clock time by an offset the caller reads (the
//! pane when it prints, the export when it writes); nothing here reads a clock.

use std::time::{Duration, SystemTime};

use super::event_line::slow_pair_lines;
use super::stack_lines::stack_lines;
use super::wall_clock::WallClock;
use crate::analyzers::latency::SlowPair;
use crate::model::tables::ProfileTables;
use crate::model::threads::ThreadNames;
use crate::sources::tracefs::EventPrinter;
use crate::trace::event::{EventLayout, TraceEvent};

/// What printing a session's offenders needs besides the pairs.
pub struct OffenderPrinting<'a> {
    /// The layouts of the session's events, by event index.
    pub layouts: &'a [EventLayout],
    pub printer: &'a EventPrinter,
    /// The stacks the pairs' events name.
    pub tables: &'a ProfileTables,
    pub threads: &'a ThreadNames,
    /// CLOCK_REALTIME − the sample clock ([`realtime_offset_ns`]).
    pub realtime_offset_ns: i128,
}

/// Offenders printed: their lines and where each pair's lines start.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PrintedOffenders {
    pub lines: Vec<String>,
    /// Index in `lines` of each pair's first line, in pair order.
    pub pair_starts: Vec<usize>,
}

/// CLOCK_REALTIME − the sample clock, from one reading of both clocks (`real` and
/// `monotonic_ns` taken together): the sample clock is CLOCK_MONOTONIC shifted by the
/// session's live offset (none for a recorded session, whose times then print as if
/// they were taken on this boot, as the pane always printed them).
pub fn realtime_offset_ns(real: SystemTime, monotonic_ns: u64, live_clock_offset_ns: Option<i64>) -> i128 {
    let real_ns = real
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i128);
    real_ns - i128::from(monotonic_ns) + i128::from(live_clock_offset_ns.unwrap_or(0))
}

/// `time_ns` on the sample clock as local wall-clock time.
pub fn offender_wall_clock(realtime_offset_ns: i128, time_ns: u64) -> WallClock {
    let real = (i128::from(time_ns) + realtime_offset_ns).max(0) as u64;
    WallClock::local(SystemTime::UNIX_EPOCH + Duration::from_nanos(real))
}

/// Every pair of `pairs`, oldest first, as `--no-tui` prints it.
pub fn offender_lines<'p>(
    pairs: impl IntoIterator<Item = &'p SlowPair>,
    printing: &OffenderPrinting<'_>,
) -> PrintedOffenders {
    let wall_of = |time_ns: u64| offender_wall_clock(printing.realtime_offset_ns, time_ns);
    let comm_of = |tid: u32| printing.threads.name(tid);
    let fields = |e: &TraceEvent<'_>, l: &EventLayout| printing.printer.fields_text(e, l);
    let stack = |stack, callchain: &[u64]| stack_lines(printing.tables, stack, callchain);
    let mut printed = PrintedOffenders::default();
    for pair in pairs {
        printed.pair_starts.push(printed.lines.len());
        let text = slow_pair_lines(
            std::slice::from_ref(pair),
            printing.layouts,
            &wall_of,
            &comm_of,
            &fields,
            Some(&stack),
        );
        printed.lines.extend(text.lines().map(String::from));
    }
    printed
}
