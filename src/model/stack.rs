//! Interned stacks: a path of locations, root (outermost caller) first.
//!
//! Samples share stacks heavily, so a sample stores only a [`StackId`]. A profile can hold
//! a million distinct stacks, so the table keeps every path back to back in one arena and
//! indexes them by id: no allocation per stack, nothing to free one by one.

use std::hash::BuildHasher;

use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;

use super::frames::FrameId;
use super::location::{LocationId, LocationTable};

/// Index of a stack in a [`StackTable`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StackId(pub u32);

impl StackId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Root-first paths of locations, back to back: the stacks of a table, or those a feed
/// hands the engine in one delta.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct StackPaths {
    locations: Vec<LocationId>,
    /// Where each path ends in `locations` (it starts where the previous one ends).
    ends: Vec<usize>,
}

impl StackPaths {
    pub fn push(&mut self, root_first: &[LocationId]) {
        self.locations.extend_from_slice(root_first);
        self.ends.push(self.locations.len());
    }

    pub fn get(&self, i: usize) -> &[LocationId] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.locations[start..self.ends[i]]
    }

    pub fn iter(&self) -> impl Iterator<Item = &[LocationId]> {
        (0..self.ends.len()).map(|i| self.get(i))
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    fn heap_bytes(&self) -> usize {
        self.locations.capacity() * std::mem::size_of::<LocationId>()
            + self.ends.capacity() * std::mem::size_of::<usize>()
    }
}

/// The stack interner.
#[derive(Debug, Default, Clone)]
pub struct StackTable {
    paths: StackPaths,
    /// Ids by the hash of their path; the path itself is read from `paths`.
    index: HashTable<StackId>,
    /// How many paths the index covers: stacks appended from a feed's delta are indexed
    /// only when something interns here (the engine's copy of the tables never does).
    indexed: usize,
}

fn hash_of(path: &[LocationId]) -> u64 {
    FxBuildHasher.hash_one(path)
}

impl StackTable {
    pub fn new() -> Self {
        Self::default()
    }

    /// Intern a root-first path of locations.
    pub fn intern(&mut self, root_first: &[LocationId]) -> StackId {
        self.index_appended();
        let hash = hash_of(root_first);
        let Self { paths, index, .. } = self;
        if let Some(&id) = index.find(hash, |&id| paths.get(id.index()) == root_first) {
            return id;
        }
        let id = self.append(root_first);
        let Self { paths, index, .. } = self;
        index.insert_unique(hash, id, |&id| hash_of(paths.get(id.index())));
        self.indexed = paths.len();
        id
    }

    /// Add a stack known to be new here — one a feed interned and hands over in a delta —
    /// without looking it up.
    pub fn append(&mut self, root_first: &[LocationId]) -> StackId {
        let id = StackId(u32::try_from(self.paths.len()).expect("more than 2^32 stacks"));
        self.paths.push(root_first);
        id
    }

    /// Index the stacks appended since the last intern.
    fn index_appended(&mut self) {
        let Self {
            paths,
            index,
            indexed,
        } = self;
        for i in *indexed..paths.len() {
            let id = StackId(i as u32);
            index.insert_unique(hash_of(paths.get(i)), id, |&id| hash_of(paths.get(id.index())));
        }
        *indexed = paths.len();
    }

    /// Locations of a stack, root first.
    pub fn locations(&self, id: StackId) -> &[LocationId] {
        self.paths.get(id.index())
    }

    /// The paths of stacks `from..`, for a delta.
    pub fn paths_from(&self, from: usize) -> StackPaths {
        let mut out = StackPaths::default();
        for i in from..self.paths.len() {
            out.push(self.paths.get(i));
        }
        out
    }

    /// Frames of a stack, root first, inline chains expanded (outermost first).
    pub fn frames<'a>(
        &'a self,
        id: StackId,
        locations: &'a LocationTable,
    ) -> impl Iterator<Item = FrameId> + 'a {
        self.locations(id)
            .iter()
            .flat_map(move |&loc| locations.get(loc).frames_outermost_first())
    }

    pub fn len(&self) -> usize {
        self.paths.len()
    }

    pub fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }

    /// Bytes on the heap, roughly.
    pub fn heap_bytes(&self) -> usize {
        self.paths.heap_bytes() + self.index.capacity() * (std::mem::size_of::<StackId>() + 1)
    }

    pub fn ids(&self) -> impl Iterator<Item = StackId> {
        (0..self.paths.len() as u32).map(StackId)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_paths_share_an_id_and_read_back() {
        let l = |i| LocationId(i);
        let mut t = StackTable::new();
        let a = t.intern(&[l(1), l(2)]);
        let b = t.intern(&[l(1)]);
        let empty = t.intern(&[]);
        assert_eq!(t.intern(&[l(1), l(2)]), a);
        assert_eq!(t.intern(&[]), empty);
        assert_ne!(a, b);
        assert_eq!(t.locations(a), [l(1), l(2)]);
        assert_eq!(t.locations(b), [l(1)]);
        assert!(t.locations(empty).is_empty());
        // Many more stacks than the index starts with: rehashing reads the arena.
        let ids: Vec<StackId> = (0..10_000).map(|i| t.intern(&[l(i), l(i + 1)])).collect();
        for (i, id) in ids.iter().enumerate() {
            assert_eq!(t.intern(&[l(i as u32), l(i as u32 + 1)]), *id);
        }
        // Appended stacks are found once something interns again.
        let appended = t.append(&[l(7), l(7), l(7)]);
        assert_eq!(t.intern(&[l(7), l(7), l(7)]), appended);
        let tail = t.paths_from(3);
        assert_eq!(tail.len(), 10_000);
        assert_eq!(tail.get(0), [l(0), l(1)]);
    }
}
