//! The `--than` offenders as the Tables view lists them: each over-threshold pair as the
//! two raw event lines perf-prof prints (the same text `--no-tui` writes), built from the
//! state's bounded queue and shared between snapshots while the queue does not change.

use std::sync::Arc;
use std::time::SystemTime;

use crate::analyzers::text;

use super::state::ModelState;

/// The offenders of a session, printed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OffenderLines {
    /// Two lines per pair (with `--detail`, the events between them in a gutter), oldest
    /// pair first.
    pub lines: Vec<String>,
    /// Where each pair's lines start in `lines` (a pane selects and opens one pair).
    pub pair_starts: Vec<usize>,
    /// Pairs listed.
    pub pairs: usize,
    /// Pairs that went past the queue (older ones, or ones the analyzer could not keep).
    pub dropped: u64,
}

/// What the last built list was built from, so an unchanged queue costs nothing.
#[derive(Debug, Default)]
pub struct OffenderCache {
    key: Option<(usize, u64, Option<u64>)>,
    built: Arc<OffenderLines>,
}

impl OffenderCache {
    /// The offenders of `state`, printed (the previous list when nothing changed).
    pub fn get(&mut self, state: &ModelState) -> Arc<OffenderLines> {
        let key = (
            state.offenders.len(),
            state.offenders_dropped,
            state.offenders.back().map(|p| p.second.time_ns),
        );
        if self.key != Some(key) {
            self.key = Some(key);
            self.built = Arc::new(print(state));
        }
        self.built.clone()
    }
}

/// The pane's list, its wall-clock times read now: the pane shows what is, so it reads
/// the clocks when the queue changes (an export reads its own, [`crate::export`]).
fn print(state: &ModelState) -> OffenderLines {
    let offset = text::realtime_offset_ns(
        SystemTime::now(),
        crate::sources::clock::monotonic_ns(),
        state.live_clock_offset_ns,
    );
    print_at(state, offset)
}

/// The offenders of `state` printed with `realtime_offset_ns` (CLOCK_REALTIME − the
/// sample clock); pure, so a test pins its lines.
pub fn print_at(state: &ModelState, realtime_offset_ns: i128) -> OffenderLines {
    let printed = match &state.event_format {
        Some(format) => text::offender_lines(
            &state.offenders,
            &text::OffenderPrinting {
                layouts: &format.layouts,
                printer: &format.printer,
                tables: &state.tables,
                threads: &state.threads,
                realtime_offset_ns,
            },
        ),
        None => text::PrintedOffenders::default(),
    };
    OffenderLines {
        lines: printed.lines,
        pair_starts: printed.pair_starts,
        pairs: state.offenders.len(),
        dropped: state.offenders_dropped,
    }
}
