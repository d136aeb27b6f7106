//! A bounded cache with two generations: lookups hit the current map, then the previous
//! one (promoting the entry); when the current map is full it becomes the previous one and
//! the old previous is dropped. Hot entries survive every turnover, memory stays at most
//! two generations, and there is no per-entry bookkeeping on the hit path.

use std::hash::Hash;

use rustc_hash::FxHashMap;

pub struct AddressCache<K, V> {
    current: FxHashMap<K, V>,
    previous: FxHashMap<K, V>,
    generation_capacity: usize,
}

impl<K: Hash + Eq + Copy, V: Clone> AddressCache<K, V> {
    /// Keeps between `capacity / 2` and `capacity` entries.
    pub fn new(capacity: usize) -> Self {
        Self {
            current: FxHashMap::default(),
            previous: FxHashMap::default(),
            generation_capacity: (capacity / 2).max(1),
        }
    }

    pub fn get(&mut self, key: &K) -> Option<V> {
        if let Some(v) = self.current.get(key) {
            return Some(v.clone());
        }
        let v = self.previous.remove(key)?;
        self.insert(*key, v.clone());
        Some(v)
    }

    pub fn insert(&mut self, key: K, value: V) {
        if self.current.len() >= self.generation_capacity {
            self.previous = std::mem::take(&mut self.current);
        }
        self.current.insert(key, value);
    }

    pub fn len(&self) -> usize {
        self.current.len() + self.previous.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stays_bounded_and_keeps_hot_entries() {
        let mut c = AddressCache::new(100);
        c.insert(0u64, "hot");
        for i in 1..1000u64 {
            c.insert(i, "cold");
            assert_eq!(c.get(&0), Some("hot"), "after {i} inserts");
            assert!(c.len() <= 100);
        }
        assert_eq!(c.get(&1), None, "cold entries age out");
        assert_eq!(c.get(&999), Some("cold"));
    }
}
