//! The `--than` offenders as the Tables view lists them: each over-threshold pair as the
//! two raw event lines perf-prof prints (the same text `--no-tui` writes), built from the
//! state's bounded queue and shared between snapshots while the queue does not change.
//!
//! A pair is printed once, when it arrives: the list keeps each queued pair's lines and
//! a new snapshot prints only the pairs that came since (a full queue of 4,096 is not
//! printed again for every new one), forgetting those that left the queue.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::SystemTime;

use crate::analyzers::latency::SlowPair;
use crate::analyzers::text;

use super::state::ModelState;

/// The offenders of a session, printed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OffenderLines {
    /// Two lines per pair (with `--detail`, the events between them in a gutter), oldest
    /// pair first; shared with the list that printed them, not copied.
    pub lines: Vec<Arc<str>>,
    /// Where each pair's lines start in `lines` (a pane selects and opens one pair).
    pub pair_starts: Vec<usize>,
    /// Pairs listed.
    pub pairs: usize,
    /// Pairs that went past the queue (older ones, or ones the analyzer could not keep).
    pub dropped: u64,
}

/// The printed pairs of the queue, kept between snapshots.
#[derive(Debug, Default)]
pub struct OffenderCache {
    /// (pairs ever queued, pairs dropped) when `built` was made.
    key: Option<(u64, u64)>,
    /// CLOCK_REALTIME − the sample clock, read when the first pair was printed: every
    /// pair prints with it, so printing one pair at a time gives the lines printing all
    /// at once would.
    realtime_offset_ns: Option<i128>,
    /// Each queued pair's lines, oldest first; `first` is the queue position of the front.
    printed: VecDeque<Arc<[Arc<str>]>>,
    first: u64,
    built: Arc<OffenderLines>,
}

impl OffenderCache {
    /// A list that prints with this offset instead of reading the clocks (tests).
    #[cfg(test)]
    pub fn with_offset(realtime_offset_ns: i128) -> Self {
        Self {
            realtime_offset_ns: Some(realtime_offset_ns),
            ..Self::default()
        }
    }

    /// The offenders of `state`, printed (the previous list when nothing changed; only
    /// the new pairs printed when some came).
    pub fn get(&mut self, state: &ModelState) -> Arc<OffenderLines> {
        let key = (state.offenders_queued, state.offenders_dropped);
        if self.key == Some(key) {
            return self.built.clone();
        }
        if state.event_format.is_none() {
            // Nothing to print the events with yet: say how many, print them later.
            return Arc::new(OffenderLines {
                pairs: state.offenders.len(),
                dropped: state.offenders_dropped,
                ..OffenderLines::default()
            });
        }
        self.key = Some(key);
        let offset = *self.realtime_offset_ns.get_or_insert_with(|| {
            text::realtime_offset_ns(
                SystemTime::now(),
                crate::sources::clock::monotonic_ns(),
                state.live_clock_offset_ns,
            )
        });
        // (A state filled by hand, as tests do, has queued nothing: its queue is all new.)
        let end = state.offenders_queued.max(state.offenders.len() as u64);
        let start = end.saturating_sub(state.offenders.len() as u64);
        while self.first < start && !self.printed.is_empty() {
            self.printed.pop_front();
            self.first += 1;
        }
        if self.printed.is_empty() {
            self.first = start;
        }
        let have = self.first + self.printed.len() as u64;
        let new = usize::try_from(end.saturating_sub(have)).unwrap_or(usize::MAX);
        let skip = state.offenders.len().saturating_sub(new);
        for pair in state.offenders.iter().skip(skip) {
            self.printed.push_back(print_pair(state, pair, offset));
        }
        self.built = Arc::new(assemble(
            self.printed.iter().map(|p| &p[..]),
            state.offenders_dropped,
        ));
        self.built.clone()
    }
}

/// One pair's lines with `realtime_offset_ns`.
fn print_pair(state: &ModelState, pair: &SlowPair, realtime_offset_ns: i128) -> Arc<[Arc<str>]> {
    let Some(format) = &state.event_format else {
        return Arc::new([]);
    };
    let printed = text::offender_lines(
        std::iter::once(pair),
        &text::OffenderPrinting {
            layouts: &format.layouts,
            printer: &format.printer,
            tables: &state.tables,
            threads: &state.threads,
            realtime_offset_ns,
        },
    );
    printed.lines.into_iter().map(Arc::from).collect()
}

/// The list of pairs' lines, with where each pair starts.
fn assemble<'a>(pairs: impl Iterator<Item = &'a [Arc<str>]>, dropped: u64) -> OffenderLines {
    let mut out = OffenderLines {
        dropped,
        ..OffenderLines::default()
    };
    for lines in pairs {
        out.pair_starts.push(out.lines.len());
        out.lines.extend(lines.iter().cloned());
        out.pairs += 1;
    }
    out
}

/// The offenders of `state` printed with `realtime_offset_ns` (CLOCK_REALTIME − the
/// sample clock) all at once; pure, so a test pins its lines.
pub fn print_at(state: &ModelState, realtime_offset_ns: i128) -> OffenderLines {
    let pairs: Vec<_> = state
        .offenders
        .iter()
        .map(|pair| print_pair(state, pair, realtime_offset_ns))
        .collect();
    assemble(pairs.iter().map(|p| &p[..]), state.offenders_dropped)
}
