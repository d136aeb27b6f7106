//! Latency histograms: log-linear buckets over `u64` nanoseconds (the HdrHistogram layout),
//! mergeable, with percentiles whose error is stated by [`RELATIVE_ERROR`].
//!
//! Values below 2^[`SUB_BUCKET_BITS`] (64 ns) get a bucket each, so they are exact. Every
//! power of two above that, `[2^e, 2^(e+1))`, is split into 64 equal sub-buckets of width
//! `2^(e-6)`; a bucket is therefore never wider than 1/64 of its lower bound.
//!
//! Storage fits the histograms a session keeps most of — one per row per time slice,
//! tens of thousands of them, most holding a handful of values: up to [`SPARSE_MAX`]
//! non-empty buckets are a sorted list of 8-byte (bucket, count) pairs; past that, one
//! lazily allocated block of 64 counters per power of two that holds a value, so a
//! histogram stays bounded (at most 59 blocks, 30 KiB for the whole `u64` range). A 512-byte
//! block per power of two for every small histogram made them most of a `syscalls` run's
//! memory.
//!
//! The histogram owns only numbers: no terminal, no units, no I/O.

/// Sub-buckets per power of two, as a power of two: 2^6 = 64.
pub const SUB_BUCKET_BITS: u32 = 6;

const SUB_BUCKETS: usize = 1 << SUB_BUCKET_BITS;

/// One block for the exact values below 64, then one per exponent 6..=63.
const GROUPS: usize = 64 - SUB_BUCKET_BITS as usize + 1;

/// The widest bucket is this fraction of its lower bound (1/64 ≈ 1.6%): any value reported
/// from a bucket is within `RELATIVE_ERROR × true value` of the true value. Percentiles
/// report the middle of their bucket, so they are within half of it (1/128).
pub const RELATIVE_ERROR: f64 = 1.0 / SUB_BUCKETS as f64;

type Block = Box<[u64; SUB_BUCKETS]>;

/// Non-empty buckets a histogram lists before it switches to blocks (256 bytes: half a
/// block).
pub const SPARSE_MAX: usize = 32;

/// One non-empty bucket of a sparse histogram: `index` is `group × 64 + sub`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct SparseBucket {
    index: u16,
    count: u32,
}

/// The bucket counts: a sorted list of the non-empty buckets, or blocks (see the module).
#[derive(Clone, Debug)]
enum Buckets {
    Sparse(Vec<SparseBucket>),
    /// Block `g` counts values of group `g` (see [`group_and_sub`]).
    Dense(Vec<Option<Block>>),
}

impl Default for Buckets {
    fn default() -> Self {
        Buckets::Sparse(Vec::new())
    }
}

/// A latency distribution in nanoseconds.
///
/// `count`, `sum`, `min` and `max` are exact; percentiles come from the buckets. Statistics
/// that an empty histogram does not have (`min`, `max`, `mean`, `percentile`) are `None`.
#[derive(Clone, Debug, Default)]
pub struct LatencyHistogram {
    buckets: Buckets,
    count: u64,
    /// u128 so even `u64::MAX` values recorded many times sum exactly.
    sum: u128,
    /// Meaningful only when `count > 0` (kept 0 otherwise so `Default` equals empty).
    min: u64,
    max: u64,
}

/// The block and the sub-bucket a value falls in.
fn group_and_sub(value: u64) -> (usize, usize) {
    if value < SUB_BUCKETS as u64 {
        return (0, value as usize);
    }
    let exponent = 63 - value.leading_zeros();
    let shift = exponent - SUB_BUCKET_BITS;
    let group = (shift + 1) as usize;
    let sub = ((value >> shift) as usize) - SUB_BUCKETS;
    (group, sub)
}

/// `[low, high)` of a bucket. The topmost bucket ends at 2^64, which `u64` cannot hold:
/// its `high` saturates to `u64::MAX` (and then includes `u64::MAX` itself).
fn bucket_bounds(group: usize, sub: usize) -> (u64, u64) {
    if group == 0 {
        return (sub as u64, sub as u64 + 1);
    }
    let shift = (group - 1) as u32;
    let low = ((SUB_BUCKETS + sub) as u64) << shift;
    let high = low.saturating_add(1u64 << shift);
    (low, high)
}

/// The power-of-two range `[2^e, 2^(e+1))` a value falls in, as its index: 0 holds only the
/// value 0, index `i ≥ 1` holds `[2^(i-1), 2^i)`.
pub fn log2_index(value: u64) -> usize {
    64 - value.leading_zeros() as usize
}

pub fn log2_bounds(index: usize) -> (u64, u64) {
    match index {
        0 => (0, 1),
        64 => (1 << 63, u64::MAX),
        i => (1 << (i - 1), 1 << i),
    }
}

/// Equal contents are equal whatever the storage (one list, the other blocks).
impl PartialEq for LatencyHistogram {
    fn eq(&self, other: &Self) -> bool {
        (self.count, self.sum, self.min, self.max) == (other.count, other.sum, other.min, other.max)
            && self.counts().eq(other.counts())
    }
}

impl LatencyHistogram {
    pub fn new() -> Self {
        Self::default()
    }

    /// Count one value.
    pub fn record(&mut self, value_ns: u64) {
        self.record_n(value_ns, 1);
    }

    /// Count a value `count` times (counts saturate at `u64::MAX` rather than wrap).
    pub fn record_n(&mut self, value_ns: u64, count: u64) {
        if count == 0 {
            return;
        }
        let (group, sub) = group_and_sub(value_ns);
        self.add(group, sub, count);
        self.note(value_ns, value_ns, count, value_ns as u128 * count as u128);
    }

    /// Add every value of `other`: the result is the histogram of the union.
    pub fn merge(&mut self, other: &LatencyHistogram) {
        if other.count == 0 {
            return;
        }
        for (group, sub, n) in other.counts() {
            self.add(group, sub, n);
        }
        self.note(other.min, other.max, other.count, other.sum);
    }

    /// Add every value of `other` with its count multiplied by `factor` (0..=1; decay
    /// weights): bucket counts are rounded, so a bucket whose share rounds to 0 is gone.
    /// The sum is scaled too; min and max are those of the buckets that remain.
    pub fn merge_scaled(&mut self, other: &LatencyHistogram, factor: f64) {
        if factor >= 1.0 {
            self.merge(other);
            return;
        }
        if other.count == 0 || factor <= 0.0 || factor.is_nan() {
            return;
        }
        let mut kept = 0u64;
        let mut low_kept = None;
        let mut high_kept = 0u64;
        for (group, sub, n) in other.counts() {
            let scaled = (n as f64 * factor).round() as u64;
            if scaled == 0 {
                continue;
            }
            let (low, high) = bucket_bounds(group, sub);
            low_kept.get_or_insert(low);
            high_kept = high - 1;
            self.add(group, sub, scaled);
            kept = kept.saturating_add(scaled);
        }
        let Some(low) = low_kept else { return };
        let sum = (other.sum as f64 * factor) as u128;
        self.note(low.max(other.min), high_kept.min(other.max), kept, sum);
    }

    /// Bytes the buckets take on the heap.
    pub fn heap_bytes(&self) -> usize {
        match &self.buckets {
            Buckets::Sparse(list) => list.capacity() * std::mem::size_of::<SparseBucket>(),
            Buckets::Dense(groups) => {
                groups.capacity() * std::mem::size_of::<Option<Block>>()
                    + groups.iter().flatten().count() * std::mem::size_of::<[u64; SUB_BUCKETS]>()
            }
        }
    }

    /// Add `n` to bucket (`group`, `sub`): in the list while it fits (a new bucket past
    /// [`SPARSE_MAX`] or a count past `u32` moves every bucket to blocks).
    fn add(&mut self, group: usize, sub: usize, n: u64) {
        debug_assert!(group < GROUPS && sub < SUB_BUCKETS);
        if let Buckets::Sparse(list) = &mut self.buckets {
            let index = (group * SUB_BUCKETS + sub) as u16;
            match list.binary_search_by_key(&index, |b| b.index) {
                Ok(i) => {
                    if let Ok(count) = u32::try_from(u64::from(list[i].count).saturating_add(n)) {
                        list[i].count = count;
                        return;
                    }
                }
                Err(i) if list.len() < SPARSE_MAX => {
                    if let Ok(count) = u32::try_from(n) {
                        list.insert(i, SparseBucket { index, count });
                        return;
                    }
                }
                Err(_) => {}
            }
            self.move_to_blocks();
        }
        if let Buckets::Dense(groups) = &mut self.buckets {
            if groups.len() <= group {
                groups.resize_with(group + 1, || None);
            }
            let block = groups[group].get_or_insert_with(|| Box::new([0; SUB_BUCKETS]));
            block[sub] = block[sub].saturating_add(n);
        }
    }

    fn move_to_blocks(&mut self) {
        let Buckets::Sparse(list) = &self.buckets else {
            return;
        };
        let mut groups: Vec<Option<Block>> = Vec::new();
        for b in list {
            let (group, sub) = (
                usize::from(b.index) / SUB_BUCKETS,
                usize::from(b.index) % SUB_BUCKETS,
            );
            if groups.len() <= group {
                groups.resize_with(group + 1, || None);
            }
            groups[group].get_or_insert_with(|| Box::new([0; SUB_BUCKETS]))[sub] = u64::from(b.count);
        }
        self.buckets = Buckets::Dense(groups);
    }

    /// Non-empty buckets in increasing order as (group, sub, count).
    fn counts(&self) -> impl Iterator<Item = (usize, usize, u64)> + '_ {
        let (list, groups) = match &self.buckets {
            Buckets::Sparse(list) => (Some(list), None),
            Buckets::Dense(groups) => (None, Some(groups)),
        };
        let sparse = list.into_iter().flatten().map(|b| {
            let index = usize::from(b.index);
            (index / SUB_BUCKETS, index % SUB_BUCKETS, u64::from(b.count))
        });
        let dense = groups
            .into_iter()
            .flatten()
            .enumerate()
            .filter_map(|(g, block)| block.as_ref().map(|b| (g, b)))
            .flat_map(|(g, block)| {
                block
                    .iter()
                    .enumerate()
                    .filter(|(_, n)| **n > 0)
                    .map(move |(s, &n)| (g, s, n))
            });
        sparse.chain(dense)
    }

    /// Fold values spanning `[min, max]` into the exact statistics.
    fn note(&mut self, min: u64, max: u64, count: u64, sum: u128) {
        if self.count == 0 {
            self.min = min;
            self.max = max;
        } else {
            self.min = self.min.min(min);
            self.max = self.max.max(max);
        }
        self.count = self.count.saturating_add(count);
        self.sum = self.sum.saturating_add(sum);
    }

    /// How many values were recorded.
    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Exact sum of all values (u128: a u64 sum overflows after a few huge values).
    pub fn sum(&self) -> u128 {
        self.sum
    }

    /// Exact smallest value.
    pub fn min(&self) -> Option<u64> {
        (self.count > 0).then_some(self.min)
    }

    /// Exact largest value.
    pub fn max(&self) -> Option<u64> {
        (self.count > 0).then_some(self.max)
    }

    /// Exact mean (up to f64 rounding).
    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum as f64 / self.count as f64)
    }

    /// The nearest-rank percentile: the value at rank `ceil(p/100 × count)` (at least 1) of
    /// the sorted values, within `RELATIVE_ERROR / 2` of it. `p` is clamped to [0, 100];
    /// p = 0 is the exact min, p = 100 the exact max. `None` when empty.
    pub fn percentile(&self, p: f64) -> Option<u64> {
        if self.count == 0 {
            return None;
        }
        let p = if p.is_nan() { 0.0 } else { p.clamp(0.0, 100.0) };
        // p × count / 100 in f64 lands a hair above a whole rank for p like 99.9
        // (999.0000000000001 for 1000 values): such a hair is rounding, not a next rank.
        let exact = p * self.count as f64 / 100.0;
        let nearest = exact.round();
        let rank = if (exact - nearest).abs() <= 1e-9 * nearest.max(1.0) {
            nearest
        } else {
            exact.ceil()
        };
        let rank = rank.clamp(1.0, self.count as f64) as u64;
        if rank == 1 {
            return Some(self.min);
        }
        if rank == self.count {
            return Some(self.max);
        }
        let mut seen = 0u64;
        for (low, high, n) in self.buckets() {
            seen = seen.saturating_add(n);
            if seen >= rank {
                // The middle of the bucket halves the worst error; min and max are exact,
                // so clamping to them can only move the estimate toward the true value.
                let mid = low + (high - 1 - low).div_ceil(2);
                return Some(mid.clamp(self.min, self.max));
            }
        }
        Some(self.max)
    }

    /// Non-empty buckets in increasing order as `(low_ns, high_ns_exclusive, count)`. The
    /// topmost bucket's end saturates to `u64::MAX` (2^64 does not fit).
    pub fn buckets(&self) -> impl Iterator<Item = (u64, u64, u64)> + '_ {
        self.counts().map(|(g, s, n)| {
            let (low, high) = bucket_bounds(g, s);
            (low, high, n)
        })
    }

    /// Counts per power of two — `[0, 1)`, `[1, 2)`, `[2, 4)`, … `[2^63, u64::MAX]` — from
    /// the lowest non-empty range to the highest, empty ranges between them included (a
    /// display shows the shape, gaps too). Exact: every bucket lies inside one range.
    /// Empty histogram → empty vector.
    pub fn log2_buckets(&self) -> Vec<(u64, u64, u64)> {
        let mut counts = [0u64; 65];
        for (low, _, n) in self.buckets() {
            let i = log2_index(low);
            counts[i] = counts[i].saturating_add(n);
        }
        let Some(first) = counts.iter().position(|&n| n > 0) else {
            return Vec::new();
        };
        let last = counts.iter().rposition(|&n| n > 0).unwrap_or(first);
        (first..=last)
            .map(|i| {
                let (low, high) = log2_bounds(i);
                (low, high, counts[i])
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Nearest-rank percentile of sorted values: the ground truth.
    fn true_percentile(sorted: &[u64], p: f64) -> u64 {
        // In integers (per hundred thousand) so the ground truth has no rounding of its own.
        let p_e5 = (p * 1000.0).round() as usize;
        let rank = (p_e5 * sorted.len()).div_ceil(100_000).max(1);
        sorted[rank - 1]
    }

    #[test]
    fn whole_ranks_are_not_pushed_up_by_float_rounding() {
        let mut h = LatencyHistogram::new();
        for v in 1..=1000 {
            h.record(v);
        }
        // Rank 999 of 1000 is 999, in bucket [992, 1000): its middle, not the max (1000).
        assert_eq!(h.percentile(99.9), Some(996));
        assert_eq!(h.percentile(50.0), Some(502)); // 500 is in [500, 504)
        assert_eq!(h.percentile(100.0), Some(1000));
    }

    /// A deterministic spread over nine decades (xorshift, log-uniform-ish).
    fn random_values(n: usize, seed: u64) -> Vec<u64> {
        let mut rng = crate::model::test_rng::TestRng::new(seed);
        (0..n)
            .map(|_| {
                let state = rng.next_u64();
                let decades = (state % 30) as u32; // 2^0 .. 2^29 scale
                (state >> 20) % (1u64 << decades).max(2) + (state & 0xff)
            })
            .collect()
    }

    #[test]
    fn small_values_are_exact() {
        let mut h = LatencyHistogram::new();
        for v in [0, 1, 2, 3, 5, 63] {
            h.record(v);
        }
        assert_eq!(h.count(), 6);
        assert_eq!(h.sum(), 74);
        assert_eq!(h.min(), Some(0));
        assert_eq!(h.max(), Some(63));
        assert_eq!(
            h.buckets().collect::<Vec<_>>(),
            [(0, 1, 1), (1, 2, 1), (2, 3, 1), (3, 4, 1), (5, 6, 1), (63, 64, 1)]
        );
        assert_eq!(h.percentile(50.0), Some(2));
        assert_eq!(h.percentile(60.0), Some(3));
        assert_eq!(h.percentile(70.0), Some(5));
        assert_eq!(h.mean(), Some(74.0 / 6.0));
    }

    #[test]
    fn bucket_layout_is_log_linear() {
        // 64..128 still has width 1; 128..256 width 2; 1000 starts [1000, 1008) (width 8).
        assert_eq!(group_and_sub(64), (1, 0));
        assert_eq!(bucket_bounds(1, 0), (64, 65));
        assert_eq!(bucket_bounds(2, 0), (128, 130));
        let (g, s) = group_and_sub(1000);
        assert_eq!(bucket_bounds(g, s), (1000, 1008));
        // Every bucket is at most RELATIVE_ERROR of its low bound wide, and buckets tile.
        let mut expected_low = 0u64;
        for g in 0..GROUPS {
            for s in 0..SUB_BUCKETS {
                let (low, high) = bucket_bounds(g, s);
                assert_eq!(low, expected_low, "group {g} sub {s}");
                if low >= SUB_BUCKETS as u64 {
                    assert!((high - low) as f64 <= low as f64 * RELATIVE_ERROR);
                }
                assert_eq!(group_and_sub(low), (g, s));
                assert_eq!(group_and_sub(high - 1), (g, s));
                expected_low = high;
            }
        }
        assert_eq!(group_and_sub(u64::MAX), (GROUPS - 1, SUB_BUCKETS - 1));
        assert_eq!(expected_low, u64::MAX);
    }

    #[test]
    fn percentiles_stay_within_the_stated_error() {
        let values = random_values(20_000, 0x9e37_79b9_7f4a_7c15);
        let mut h = LatencyHistogram::new();
        for &v in &values {
            h.record(v);
        }
        let mut sorted = values.clone();
        sorted.sort_unstable();
        for p in [1.0, 10.0, 50.0, 90.0, 95.0, 99.0, 99.9] {
            let truth = true_percentile(&sorted, p);
            let got = h.percentile(p).unwrap();
            let err = (got as f64 - truth as f64).abs();
            assert!(
                err <= truth as f64 * RELATIVE_ERROR / 2.0,
                "p{p}: got {got}, true {truth}"
            );
        }
        assert_eq!(h.percentile(0.0), Some(sorted[0]));
        assert_eq!(h.percentile(100.0), Some(*sorted.last().unwrap()));
        assert_eq!(h.min(), Some(sorted[0]));
        assert_eq!(h.max(), sorted.last().copied());
        assert_eq!(h.sum(), values.iter().map(|&v| v as u128).sum::<u128>());
        assert_eq!(h.count(), 20_000);
        // The spread really does cover many decades (the test would be weak otherwise).
        assert!(sorted[0] < 300 && *sorted.last().unwrap() > 100_000_000);
    }

    #[test]
    fn merge_equals_the_union() {
        let a_values = random_values(5_000, 1);
        let b_values = random_values(7_000, 2);
        let mut a = LatencyHistogram::new();
        let mut b = LatencyHistogram::new();
        let mut union = LatencyHistogram::new();
        for &v in &a_values {
            a.record(v);
            union.record(v);
        }
        for &v in &b_values {
            b.record(v);
            union.record(v);
        }
        let mut merged = a.clone();
        merged.merge(&b);
        assert_eq!(merged, union);
        for p in [0.0, 50.0, 95.0, 99.0, 99.9, 100.0] {
            assert_eq!(merged.percentile(p), union.percentile(p));
        }
        // Merging into an empty histogram and merging an empty one are identities.
        let mut empty = LatencyHistogram::new();
        empty.merge(&a);
        assert_eq!(empty, a);
        let before = a.clone();
        a.merge(&LatencyHistogram::new());
        assert_eq!(a, before);
    }

    #[test]
    fn extremes_work() {
        let mut h = LatencyHistogram::new();
        h.record_n(u64::MAX, 3);
        h.record(0);
        assert_eq!(h.count(), 4);
        assert_eq!(h.sum(), 3 * u64::MAX as u128);
        assert_eq!(h.min(), Some(0));
        assert_eq!(h.max(), Some(u64::MAX));
        assert_eq!(h.percentile(100.0), Some(u64::MAX));
        assert_eq!(h.percentile(0.0), Some(0));
        assert_eq!(h.percentile(50.0), Some(u64::MAX - (1 << 56)));
        let top = h.buckets().last().unwrap();
        assert_eq!(top, (u64::MAX - (1 << 57) + 1, u64::MAX, 3));
        assert_eq!(h.log2_buckets().first(), Some(&(0, 1, 1)));
        assert_eq!(h.log2_buckets().last(), Some(&(1 << 63, u64::MAX, 3)));
        assert_eq!(h.log2_buckets().len(), 65);
        // Bounded storage: the whole range is 59 blocks.
        h.move_to_blocks();
        let Buckets::Dense(groups) = &h.buckets else {
            panic!()
        };
        assert_eq!(groups.len(), GROUPS);
    }

    #[test]
    fn empty_histograms_have_no_statistics() {
        let mut h = LatencyHistogram::new();
        h.record_n(42, 0);
        assert_eq!(h, LatencyHistogram::default());
        assert_eq!(h.count(), 0);
        assert_eq!(h.sum(), 0);
        assert_eq!(h.min(), None);
        assert_eq!(h.max(), None);
        assert_eq!(h.mean(), None);
        assert_eq!(h.percentile(50.0), None);
        assert_eq!(h.buckets().count(), 0);
        assert!(h.log2_buckets().is_empty());
    }

    #[test]
    fn log2_ranges_group_buckets_and_keep_gaps() {
        let mut h = LatencyHistogram::new();
        h.record_n(1_500, 2); // [1024, 2048)
        h.record(1_000); // [512, 1024)
        h.record(9_000); // [8192, 16384)
        assert_eq!(
            h.log2_buckets(),
            [
                (512, 1024, 1),
                (1024, 2048, 2),
                (2048, 4096, 0),
                (4096, 8192, 0),
                (8192, 16384, 1)
            ]
        );
        // Out-of-range p is clamped, not a panic.
        assert_eq!(h.percentile(250.0), Some(9_000));
        assert_eq!(h.percentile(-3.0), Some(1_000));
    }

    /// A histogram moves from the list to blocks past SPARSE_MAX buckets or a u32 count,
    /// and answers the same either way; a small one stays small.
    #[test]
    fn list_and_blocks_hold_the_same_histogram() {
        let values: Vec<u64> = (0..5_000u64).map(|i| (i * 7919) % 3_000_000).collect();
        let mut listed = LatencyHistogram::new();
        let mut blocked = LatencyHistogram::new();
        blocked.move_to_blocks();
        for &v in &values {
            listed.record(v);
            blocked.record(v);
        }
        assert!(
            matches!(listed.buckets, Buckets::Dense(_)),
            "many buckets: blocks"
        );
        assert_eq!(listed, blocked);
        let mut few = LatencyHistogram::new();
        for v in [10, 10, 2_000, 40_000, 5_000_000] {
            few.record(v);
        }
        assert!(matches!(few.buckets, Buckets::Sparse(_)));
        assert!(few.heap_bytes() <= 8 * 8, "{} bytes", few.heap_bytes());
        let mut few_blocks = few.clone();
        few_blocks.move_to_blocks();
        assert_eq!(few, few_blocks, "equal across storages");
        assert_eq!(
            few.buckets().collect::<Vec<_>>(),
            few_blocks.buckets().collect::<Vec<_>>()
        );
        assert_eq!(few.percentile(50.0), few_blocks.percentile(50.0));
        // A count past u32 in one bucket: blocks, nothing lost.
        let mut big = LatencyHistogram::new();
        big.record_n(100, u64::from(u32::MAX));
        big.record_n(100, 5);
        assert!(matches!(big.buckets, Buckets::Dense(_)));
        assert_eq!(
            big.buckets().collect::<Vec<_>>(),
            [(100, 101, u64::from(u32::MAX) + 5)]
        );
        // Merges across storages add up.
        let mut merged = few.clone();
        merged.merge(&blocked);
        let mut expected = few_blocks.clone();
        expected.merge(&listed);
        assert_eq!(merged, expected);
        assert_eq!(merged.count(), 5 + 5_000);
    }
}
