//! One latency cell of an analyzer table (a distribution plus the counts perf-prof keeps
//! next to it), and the bounded queue of over-threshold event pairs for `--than` dumps.

use crate::model::stack::StackId;
use std::collections::VecDeque;

pub use crate::model::latency_stats::LatencyStats;
use crate::trace::event::{OwnedTraceEvent, TraceEvent};

/// `errno` returns: the kernel's `IS_ERR_VALUE` range.
pub fn is_error_return(ret: i64) -> bool {
    (-4095..=-1).contains(&ret)
}

/// Overwrite `owned` with `event`, keeping its buffers' capacity: pending events are
/// copied at event rate under `--than`, and reusing buffers keeps that allocation-free.
pub(crate) fn refill_owned(owned: &mut OwnedTraceEvent, event: &TraceEvent<'_>) {
    owned.time_ns = event.time_ns;
    owned.cpu = event.cpu;
    owned.pid = event.pid;
    owned.tid = event.tid;
    owned.event = event.event;
    owned.raw.clear();
    owned.raw.extend_from_slice(event.raw);
    owned.callchain.clear();
    owned.callchain.extend_from_slice(event.callchain);
    owned.rebuilt = event.rebuilt;
}

/// An over-threshold pair, kept for the text printer (`--than` dumps two raw event lines).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlowPair {
    pub first: OwnedTraceEvent,
    pub second: OwnedTraceEvent,
    pub latency_ns: u64,
    /// multi-trace `--detail`: the events between the two, in time order.
    pub detail: Vec<OwnedTraceEvent>,
    /// The first and the second event's callchains as the feed interned them (`stack`
    /// attribute); `None` until a feed resolves them, or when the event has no stack.
    pub stacks: [Option<StackId>; 2],
    /// How the analyzer's perf-prof twin prints the pair.
    pub print: PairPrint,
}

impl SlowPair {
    /// The pair of `first` (copied when it started) and `second` (the event ending it now),
    /// `latency_ns` apart, printed as `print` says; no `--detail` events, no stacks yet.
    pub fn new(first: OwnedTraceEvent, second: &TraceEvent<'_>, latency_ns: u64, print: PairPrint) -> Self {
        SlowPair {
            first,
            second: OwnedTraceEvent::from_event(second),
            latency_ns,
            detail: Vec::new(),
            stacks: Default::default(),
            print,
        }
    }
}

/// How perf-prof prints an analyzer's over-threshold pairs: its two event printers differ
/// in spacing, latency flags and time rounding, and task-state heads each pair.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum PairPrint {
    /// `tp_print_event` lines (multi-trace, syscalls, nested-trace, rundelay).
    #[default]
    TraceLines,
    /// libtraceevent's lines (`tep__print_event`: blktrace, kvm-exit).
    TepLines,
    /// task-state: libtraceevent's lines under `task-state: PID COMM WAIT|RUNDELAY N ms`
    /// — task `pid` slept (`run_delay` false) or waited for a CPU that long.
    TaskState { pid: u32, run_delay: bool },
    /// num-dist: one event whose value passed `--than` (the pair's `second`; `first` is the
    /// same event), its `tp_print_event` line alone.
    Event,
}

/// A bounded FIFO of [`SlowPair`]s: when full, new pairs are counted as dropped (the
/// printer says how many) rather than growing without bound when everything is slow.
#[derive(Clone, Debug, Default)]
pub struct SlowPairQueue {
    pairs: VecDeque<SlowPair>,
    capacity: usize,
    dropped: u64,
}

impl SlowPairQueue {
    pub fn new(capacity: usize) -> Self {
        Self {
            pairs: VecDeque::new(),
            capacity,
            dropped: 0,
        }
    }

    pub fn push(&mut self, pair: SlowPair) {
        if self.pairs.len() < self.capacity {
            self.pairs.push_back(pair);
        } else {
            self.dropped += 1;
        }
    }

    /// Would a push be kept? (Lets callers skip copying events that would be dropped.)
    pub fn has_room(&self) -> bool {
        self.pairs.len() < self.capacity
    }

    pub fn note_dropped(&mut self) {
        self.dropped += 1;
    }

    /// The queued pairs, oldest first, and how many were dropped since the last take.
    pub fn take(&mut self) -> (Vec<SlowPair>, u64) {
        let dropped = std::mem::take(&mut self.dropped);
        (self.pairs.drain(..).collect(), dropped)
    }

    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::event::EventIndex;

    #[test]
    fn stats_count_than_strictly_above_and_average_in_integers() {
        let mut stats = LatencyStats::default();
        for latency in [3_706, 25_618, 1_000] {
            stats.record(latency, Some(1_000));
        }
        assert_eq!(stats.calls(), 3);
        assert_eq!(stats.than, 2, "1000 is not above 1000");
        assert_eq!(stats.total_ns(), 30_324);
        assert_eq!(stats.avg_ns(), 10_108);
        assert_eq!(stats.than_percent(), 66);
        assert_eq!(LatencyStats::default().avg_ns(), 0);
        assert!(is_error_return(-1) && is_error_return(-4095));
        assert!(!is_error_return(-4096) && !is_error_return(0));
    }

    #[test]
    fn the_slow_pair_queue_is_bounded_and_counts_drops() {
        let event = OwnedTraceEvent {
            time_ns: 1,
            cpu: 0,
            pid: 1,
            tid: 1,
            event: EventIndex(0),
            raw: vec![],
            callchain: vec![],
            rebuilt: false,
        };
        let pair = SlowPair {
            first: event.clone(),
            second: event,
            latency_ns: 5,
            detail: Vec::new(),
            stacks: Default::default(),
            print: PairPrint::TraceLines,
        };
        let mut queue = SlowPairQueue::new(2);
        for _ in 0..5 {
            queue.push(pair.clone());
        }
        assert_eq!(queue.len(), 2);
        let (pairs, dropped) = queue.take();
        assert_eq!((pairs.len(), dropped), (2, 3));
        assert!(queue.is_empty());
        assert_eq!(queue.take().1, 0);
    }
}
