//! The `--than` offenders as the Tables view lists them: each over-threshold pair as the
//! two raw event lines perf-prof prints (the same text `--no-tui` writes), built from the
//! state's bounded queue and shared between snapshots while the queue does not change.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use crate::analyzers::text;
use crate::analyzers::text::WallClock;

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

fn print(state: &ModelState) -> OffenderLines {
    let pairs: Vec<_> = state.offenders.iter().cloned().collect();
    let mut pair_starts = Vec::with_capacity(pairs.len());
    let lines = match &state.event_format {
        Some(format) => {
            // Sample clock → wall clock, as the text output does: the sample clock is
            // CLOCK_MONOTONIC shifted by the live offset.
            let real_ns = SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as i128);
            let offset = real_ns - i128::from(crate::sources::clock::monotonic_ns())
                + i128::from(state.live_clock_offset_ns.unwrap_or(0));
            let wall_of = |time_ns: u64| {
                let real = (i128::from(time_ns) + offset).max(0) as u64;
                WallClock::local(SystemTime::UNIX_EPOCH + Duration::from_nanos(real))
            };
            let comm_of = |tid: u32| state.threads.name(tid);
            let fields = |e: &crate::trace::event::TraceEvent<'_>, l: &crate::trace::event::EventLayout| {
                format.printer.fields_text(e, l)
            };
            let stack = |stack, callchain: &[u64]| text::stack_lines(&state.tables, stack, callchain);
            // Pair by pair, to know where each one's lines start.
            let mut lines = Vec::new();
            for pair in &pairs {
                pair_starts.push(lines.len());
                let text = text::slow_pair_lines(
                    std::slice::from_ref(pair),
                    &format.layouts,
                    &wall_of,
                    &comm_of,
                    &fields,
                    Some(&stack),
                );
                lines.extend(text.lines().map(String::from));
            }
            lines
        }
        None => Vec::new(),
    };
    OffenderLines {
        lines,
        pair_starts,
        pairs: pairs.len(),
        dropped: state.offenders_dropped,
    }
}
