//! Time order across rings, for analyzers that pair events from different CPUs.
//!
//! perf-prof's rule (`--order`): records are held back and released only up to the
//! smallest "latest timestamp read" over the rings that still hold records — once a ring
//! has been read up to time T, anything older on a ring drained in the same pass has
//! already been written. A LOST record becomes a [`LostSpan`] covering
//! `[last record before it, first record after it]` on its ring, ordered just before the
//! first record after it, so an analyzer can drop state the gap may have corrupted.
//!
//! That rule alone trusts an idle ring never to deliver something older than what a busy
//! ring has shown. When the reader also says *when* it found a ring drained
//! ([`OrderedMerge::mark_drained`], the perf clock is CLOCK_MONOTONIC so the reader can
//! read it), that ring bounds the horizon too, and late records become impossible.
//!
//! Each ring already delivers in time order, so held records wait in one FIFO per ring
//! (their bytes appended to that ring's reusable arena: no allocation per record) and the
//! merge only compares the rings' heads — a heap of k entries for k rings, not of every
//! held record. This is the syscall analyzer's hot path: ~1 M records/s under `dd bs=1`.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Records lost on one ring and the time range they fall in.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct LostSpan {
    pub ring: usize,
    pub count: u64,
    /// Time of the last record read from the ring before the loss (0 if none).
    pub start_ns: u64,
    /// Time of the first record after it; `None` when the merge was flushed first.
    pub end_ns: Option<u64>,
}

/// What the merge releases, in time order.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Released<'a> {
    Record {
        ring: usize,
        time_ns: u64,
        bytes: &'a [u8],
    },
    Lost(LostSpan),
}

/// A held item: a record (its bytes at `start` words into the ring's arena) or a loss.
/// Kept to 16 bytes — a busy ring holds thousands of them (a record is 64 KiB at most and
/// an arena far less than 32 GiB; losses are rare, so theirs is boxed).
enum Held {
    Record { time_ns: u64, start: u32, len: u16 },
    Lost(Box<LostSpan>),
}

const _: () = assert!(std::mem::size_of::<Held>() == 16);

impl Held {
    /// The time it is ordered at: a loss goes just before the record after it.
    fn time(&self) -> u64 {
        match self {
            Held::Record { time_ns, .. } => *time_ns,
            Held::Lost(span) => span.end_ns.unwrap_or(span.start_ns),
        }
    }
}

#[derive(Default)]
struct RingQueue {
    /// Latest timestamp pushed from this ring.
    last_ns: Option<u64>,
    /// The ring was found empty with the clock at this time: it is complete up to here.
    drained_ns: Option<u64>,
    /// Lost records seen since the last timed record: (count, time of the record before).
    lost: Option<(u64, u64)>,
    held: VecDeque<Held>,
    /// Bytes of the held records, u64-aligned; words before `arena_head` are released.
    arena: Vec<u64>,
    arena_head: usize,
}

impl RingQueue {
    /// How far this ring is known complete (see [`OrderedMerge::horizon`]).
    fn bound(&self) -> Option<u64> {
        match (self.drained_ns, self.last_ns) {
            (Some(drained), last) => Some(drained.max(last.unwrap_or(0))),
            (None, last) if !self.held.is_empty() => last,
            _ => None,
        }
    }

    /// Give the arena's released words back once it is worth it.
    fn compact(&mut self) {
        if self.held.is_empty() {
            self.arena.clear();
            self.arena_head = 0;
        } else if self.arena_head > 4096 && self.arena_head * 2 > self.arena.len() {
            let shift = self.arena_head;
            self.arena.drain(..shift);
            self.arena_head = 0;
            for item in &mut self.held {
                if let Held::Record { start, .. } = item {
                    *start -= shift as u32;
                }
            }
        }
    }
}

/// Counters of the merge.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct MergeStats {
    pub released: u64,
    pub max_held: usize,
    /// Records that arrived older than something already released (emitted anyway, late).
    pub late: u64,
}

/// The k-way merge of per-ring record streams.
pub struct OrderedMerge {
    rings: Vec<RingQueue>,
    held: usize,
    released_up_to: u64,
    stats: MergeStats,
}

impl OrderedMerge {
    pub fn new(rings: usize) -> OrderedMerge {
        OrderedMerge {
            rings: (0..rings).map(|_| RingQueue::default()).collect(),
            held: 0,
            released_up_to: 0,
            stats: MergeStats::default(),
        }
    }

    pub fn stats(&self) -> MergeStats {
        self.stats
    }

    /// Records held back now.
    pub fn held(&self) -> usize {
        self.held
    }

    fn ring(&mut self, ring: usize) -> &mut RingQueue {
        if ring >= self.rings.len() {
            self.rings.resize_with(ring + 1, RingQueue::default);
        }
        &mut self.rings[ring]
    }

    fn hold(&mut self, ring: usize, item: Held) {
        self.ring(ring).held.push_back(item);
        self.held += 1;
        self.stats.max_held = self.stats.max_held.max(self.held);
    }

    /// A record read from `ring` at `time_ns` (rings deliver in time order). Copied.
    /// A perf record: its size fits its header's u16.
    pub fn push(&mut self, ring: usize, time_ns: u64, record: &[u8]) {
        debug_assert!(record.len() <= usize::from(u16::MAX));
        if time_ns < self.released_up_to {
            self.stats.late += 1;
        }
        // The ring's queue once: this runs for every record (a million a second).
        let queue = self.ring(ring);
        let mut held = 1;
        if let Some((count, start_ns)) = queue.lost.take() {
            queue.held.push_back(Held::Lost(Box::new(LostSpan {
                ring,
                count,
                start_ns,
                end_ns: Some(time_ns),
            })));
            held += 1;
        }
        let start = queue.arena.len();
        queue.arena.resize(start + record.len().div_ceil(8), 0);
        // SAFETY: the words just added, viewed as bytes, `record.len()` of them.
        unsafe {
            std::slice::from_raw_parts_mut(queue.arena[start..].as_mut_ptr().cast::<u8>(), record.len())
        }
        .copy_from_slice(record);
        queue.last_ns = Some(queue.last_ns.map_or(time_ns, |t| t.max(time_ns)));
        queue.held.push_back(Held::Record {
            time_ns,
            start: start as u32,
            len: record.len() as u16,
        });
        self.held += held;
        self.stats.max_held = self.stats.max_held.max(self.held);
    }

    /// `count` records were lost on `ring` (a LOST record was read there).
    pub fn push_lost(&mut self, ring: usize, count: u64) {
        let queue = self.ring(ring);
        let start = queue.last_ns.unwrap_or(0);
        let (total, start_ns) = queue.lost.unwrap_or((0, start));
        queue.lost = Some((total + count, start_ns));
    }

    /// `ring` was read to its end with the perf clock (CLOCK_MONOTONIC) at `clock_ns`
    /// or later: nothing stamped before `clock_ns` can still appear on it.
    pub fn mark_drained(&mut self, ring: usize, clock_ns: u64) {
        let queue = self.ring(ring);
        queue.drained_ns = Some(queue.drained_ns.map_or(clock_ns, |t| t.max(clock_ns)));
    }

    /// The time up to which records may be released: the minimum over rings of how far
    /// each is known complete — its latest record read (perf-prof: rings still holding
    /// records) or the clock when it was found drained (rings that were marked).
    fn horizon(&self) -> Option<u64> {
        self.rings.iter().filter_map(RingQueue::bound).min()
    }

    /// Release every record the ordering rule allows, oldest first. Call after each
    /// pass over all rings.
    pub fn release(&mut self, on_record: impl FnMut(Released<'_>)) {
        if let Some(horizon) = self.horizon() {
            self.release_up_to(horizon, on_record);
        }
    }

    /// Release everything held, and any pending loss (with an open end).
    pub fn flush(&mut self, on_record: impl FnMut(Released<'_>)) {
        for ring in 0..self.rings.len() {
            if let Some((count, start_ns)) = self.rings[ring].lost.take() {
                self.hold(
                    ring,
                    Held::Lost(Box::new(LostSpan {
                        ring,
                        count,
                        start_ns,
                        end_ns: None,
                    })),
                );
            }
        }
        self.release_up_to(u64::MAX, on_record);
    }

    /// Hand out, oldest first across rings, every held item at or before `horizon`.
    fn release_up_to(&mut self, horizon: u64, mut on_record: impl FnMut(Released<'_>)) {
        let mut heads: BinaryHeap<Reverse<(u64, usize)>> = self
            .rings
            .iter()
            .enumerate()
            .filter_map(|(i, q)| q.held.front().map(|h| Reverse((h.time(), i))))
            .collect();
        while let Some(Reverse((time, ring))) = heads.pop() {
            if time > horizon {
                break;
            }
            let queue = &mut self.rings[ring];
            let Some(item) = queue.held.pop_front() else {
                continue;
            };
            self.held -= 1;
            self.released_up_to = self.released_up_to.max(time);
            self.stats.released += 1;
            match item {
                Held::Lost(span) => on_record(Released::Lost(*span)),
                Held::Record { time_ns, start, len } => {
                    let (start, len) = (start as usize, usize::from(len));
                    queue.arena_head = start + len.div_ceil(8);
                    // SAFETY: the arena holds `len` bytes at `start` words, written by `push`.
                    let bytes = unsafe {
                        std::slice::from_raw_parts(queue.arena[start..].as_ptr().cast::<u8>(), len)
                    };
                    on_record(Released::Record { ring, time_ns, bytes });
                }
            }
            if let Some(next) = queue.held.front() {
                heads.push(Reverse((next.time(), ring)));
            }
        }
        for queue in &mut self.rings {
            queue.compact();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::model::test_rng::TestRng;

    fn collect(out: &mut Vec<(usize, u64, u64)>) -> impl FnMut(Released<'_>) + '_ {
        move |item| match item {
            Released::Record { ring, time_ns, bytes } => {
                out.push((ring, time_ns, u64::from_le_bytes(bytes[..8].try_into().unwrap())))
            }
            Released::Lost(_) => panic!("no loss expected"),
        }
    }

    #[test]
    fn interleaved_rings_come_out_sorted_complete_and_once() {
        for seed in 1..20u64 {
            let mut rng = TestRng::new(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            // A global stream of events at increasing times, each landing on one of 4 rings.
            let mut time = 0;
            let events: Vec<(usize, u64, u64)> = (0..2_000u64)
                .map(|serial| {
                    time += rng.next_u64() % 50;
                    ((rng.next_u64() % 4) as usize, time, serial)
                })
                .collect();
            let mut merge = OrderedMerge::new(4);
            let mut out = Vec::new();
            // Drain passes at random cut times: each pass pushes, ring by ring, what each
            // ring holds up to the cut, then releases.
            let mut next = 0;
            while next < events.len() {
                let cut = events[next].1 + rng.next_u64() % 400;
                let end = events[next..]
                    .iter()
                    .position(|e| e.1 > cut)
                    .map_or(events.len(), |p| next + p);
                for ring in 0..4 {
                    for &(r, t, serial) in &events[next..end] {
                        if r == ring {
                            merge.push(r, t, &serial.to_le_bytes());
                        }
                    }
                }
                merge.release(collect(&mut out));
                next = end;
            }
            merge.flush(collect(&mut out));
            assert!(
                out.windows(2).all(|w| w[0].1 <= w[1].1),
                "seed {seed}: sorted by time"
            );
            let mut serials: Vec<u64> = out.iter().map(|e| e.2).collect();
            serials.sort_unstable();
            assert_eq!(
                serials,
                (0..2_000).collect::<Vec<_>>(),
                "seed {seed}: nothing dropped or duplicated"
            );
            assert!(
                out.iter()
                    .all(|&(ring, time, serial)| events[serial as usize] == (ring, time, serial))
            );
            assert_eq!((merge.held(), merge.stats().late), (0, 0));
            assert!(
                merge.stats().max_held < 2_000,
                "records are released along the way"
            );
        }
    }

    #[test]
    fn rings_read_one_after_another_stay_sorted_when_drain_times_are_marked() {
        for seed in 1..20u64 {
            let mut rng = TestRng::new(seed.wrapping_mul(0x2545_f491_4f6c_dd1d) | 1);
            let mut time = 0;
            let events: Vec<(usize, u64, u64)> = (0..3_000u64)
                .map(|serial| {
                    time += rng.next_u64() % 40;
                    ((rng.next_u64() % 3) as usize, time, serial)
                })
                .collect();
            let mut merge = OrderedMerge::new(3);
            let mut out = Vec::new();
            // Each ring is read at its own, later clock: ring 2 shows newer records than
            // ring 0 had when it was read, as a real reader walking the rings sees.
            let mut consumed = [0usize; 3];
            let mut clock = 0;
            while consumed
                .iter()
                .zip(0..)
                .any(|(&c, r)| events.iter().skip(c).any(|e| e.0 == r))
            {
                for (ring, done) in consumed.iter_mut().enumerate() {
                    clock += rng.next_u64() % 150;
                    let mut idx = *done;
                    while idx < events.len() && events[idx].1 <= clock {
                        if events[idx].0 == ring {
                            merge.push(ring, events[idx].1, &events[idx].2.to_le_bytes());
                        }
                        idx += 1;
                    }
                    *done = idx;
                    merge.mark_drained(ring, clock);
                }
                merge.release(collect(&mut out));
            }
            merge.flush(collect(&mut out));
            assert!(
                out.windows(2).all(|w| w[0].1 <= w[1].1),
                "seed {seed}: sorted by time"
            );
            let mut serials: Vec<u64> = out.iter().map(|e| e.2).collect();
            serials.sort_unstable();
            assert_eq!(
                serials,
                (0..3_000).collect::<Vec<_>>(),
                "seed {seed}: each record exactly once"
            );
            assert_eq!(merge.stats().late, 0);
        }
    }

    #[test]
    fn records_wait_for_the_slowest_ring_and_a_loss_reports_its_range() {
        let mut merge = OrderedMerge::new(2);
        let mut out = Vec::new();
        let mut take = |item: Released<'_>| {
            out.push(match item {
                Released::Record { ring, time_ns, .. } => format!("r{ring}@{time_ns}"),
                Released::Lost(l) => format!("lost{}@r{}[{},{:?}]", l.count, l.ring, l.start_ns, l.end_ns),
            })
        };
        merge.push(0, 10, &[0; 8]);
        merge.push(0, 30, &[0; 8]);
        merge.push(1, 20, &[0; 8]);
        merge.release(&mut take);
        // Ring 1 was read up to 20: only records up to 20 may go.
        merge.push_lost(1, 5);
        merge.push(1, 50, &[0; 8]);
        merge.push(0, 40, &[0; 8]);
        merge.release(&mut take);
        merge.flush(&mut take);
        assert_eq!(
            out,
            [
                "r0@10",
                "r1@20",
                "r0@30",
                "r0@40",
                "lost5@r1[20,Some(50)]",
                "r1@50"
            ]
        );
    }

    #[test]
    fn a_loss_at_the_end_is_flushed_with_an_open_range() {
        let mut merge = OrderedMerge::new(1);
        merge.push(0, 7, &[1; 16]);
        merge.push_lost(0, 3);
        merge.push_lost(0, 2);
        let mut seen = Vec::new();
        merge.flush(|item| {
            seen.push(match item {
                Released::Record { time_ns, bytes, .. } => (time_ns, bytes.len() as u64),
                Released::Lost(l) => (l.start_ns, l.count + if l.end_ns.is_none() { 1000 } else { 0 }),
            })
        });
        assert_eq!(seen, [(7, 16), (7, 1005)]);
    }
}
