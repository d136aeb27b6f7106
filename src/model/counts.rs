//! Sample counts: what a stream of samples reduces to once its time is binned away — a
//! weight per distinct (stack, instance, record facts) key.
//!
//! This is the unit the engine keeps per time slice and every view and export is built
//! from, so memory grows with distinct stacks, never with samples. The key keeps the
//! record facts ([`SampleMeta`]) so resolve statistics (depth, flags, callchain method)
//! stay exact for any window.

use rustc_hash::FxHashMap;

use super::sample::{InstanceId, Sample, SampleMeta};
use super::stack::StackId;

/// What samples are counted by: the same stack on the same instance with the same record
/// facts is one entry however often it was sampled.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct SampleKey {
    pub stack: StackId,
    pub instance: InstanceId,
    pub meta: SampleMeta,
}

impl SampleKey {
    pub fn of(sample: &Sample) -> Self {
        Self {
            stack: sample.stack,
            instance: sample.instance,
            meta: sample.meta,
        }
    }
}

/// A weight per key, mergeable.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StackCounts {
    weights: FxHashMap<SampleKey, u64>,
    total: u64,
}

impl StackCounts {
    pub fn new() -> Self {
        Self::default()
    }

    /// Count `weight` more on `key` (saturating: a hostile input cannot wrap a count).
    pub fn add(&mut self, key: SampleKey, weight: u64) {
        let w = self.weights.entry(key).or_default();
        *w = w.saturating_add(weight);
        self.total = self.total.saturating_add(weight);
    }

    /// Add every count of `other`.
    pub fn merge(&mut self, other: &StackCounts) {
        self.weights.reserve(other.weights.len());
        for (key, weight) in &other.weights {
            self.add(*key, *weight);
        }
    }

    /// Merge `other` into whichever of the two is larger and keep the result here: the
    /// bigger map is never copied.
    pub fn absorb(&mut self, mut other: StackCounts) {
        if other.weights.len() > self.weights.len() {
            std::mem::swap(self, &mut other);
        }
        self.merge(&other);
    }

    pub fn iter(&self) -> impl Iterator<Item = (SampleKey, u64)> + '_ {
        self.weights.iter().map(|(k, w)| (*k, *w))
    }

    /// Distinct keys.
    pub fn len(&self) -> usize {
        self.weights.len()
    }

    pub fn is_empty(&self) -> bool {
        self.weights.is_empty()
    }

    /// Sum of all weights.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Bytes this holds on the heap (the hash table's buckets and control bytes).
    pub fn heap_bytes(&self) -> usize {
        let entry = std::mem::size_of::<(SampleKey, u64)>() + 1;
        self.weights.capacity() * entry
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(stack: u32) -> SampleKey {
        SampleKey {
            stack: StackId(stack),
            instance: InstanceId(0),
            meta: SampleMeta::default(),
        }
    }

    #[test]
    fn counts_merge_by_key_and_saturate() {
        let mut a = StackCounts::new();
        a.add(key(1), 2);
        a.add(key(2), 1);
        a.add(key(1), 3);
        let mut b = StackCounts::new();
        b.add(key(2), 4);
        b.add(key(3), 1);
        b.add(key(4), 1);
        a.absorb(b);
        let mut got: Vec<(u32, u64)> = a.iter().map(|(k, w)| (k.stack.0, w)).collect();
        got.sort();
        assert_eq!(got, [(1, 5), (2, 5), (3, 1), (4, 1)]);
        assert_eq!((a.len(), a.total()), (4, 12));
        a.add(key(1), u64::MAX);
        assert_eq!(a.iter().find(|(k, _)| k.stack.0 == 1).unwrap().1, u64::MAX);
        assert_eq!(a.total(), u64::MAX);
    }
}
