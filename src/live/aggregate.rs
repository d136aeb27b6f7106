//! The live aggregate: a trie and per-function weights that grow sample by sample, so a
//! live batch costs its own size, not the size of everything seen so far.
//!
//! The trie sits in an `Arc` so a snapshot can share it without a copy; the next `add`
//! copies it only if a snapshot still holds it (the builder double-buffers to avoid that).

use std::sync::Arc;

use crate::model::{FrameTable, Hotspots, NodeId, Profile, StackId, StackTrie};

const NO_NODE: u32 = u32::MAX;

/// Weights of the samples added so far.
#[derive(Clone, Debug, Default)]
pub struct Aggregate {
    trie: Arc<StackTrie>,
    /// Weight per stack id (the inverted trie and the instance split are built from it).
    per_stack: Vec<u64>,
    /// Leaf trie node per stack id, once the stack has been inserted.
    leaf_of_stack: Vec<u32>,
    self_by_frame: Vec<u64>,
    /// Once per sample, however often a frame repeats on the stack.
    total_by_frame: Vec<u64>,
    occurrences_by_frame: Vec<u64>,
    /// Per frame, the last stamp it was counted with (dedupes frames within one stack).
    seen_stamp: Vec<u32>,
    stamp: u32,
}

impl Aggregate {
    pub fn new() -> Self {
        Self::default()
    }

    /// Add one sample's weight on `stack`.
    pub fn add(&mut self, profile: &Profile, stack: StackId, weight: u64) {
        let index = stack.index();
        if self.per_stack.len() <= index {
            self.per_stack.resize(index + 1, 0);
            self.leaf_of_stack.resize(index + 1, NO_NODE);
        }
        self.per_stack[index] += weight;
        let trie = Arc::make_mut(&mut self.trie);
        match self.leaf_of_stack[index] {
            NO_NODE => {
                let leaf = trie.insert(profile.stack_frames(stack), weight, &profile.frames);
                self.leaf_of_stack[index] = leaf.0;
            }
            leaf => trie.add_to_path(NodeId(leaf), weight),
        }

        let frames = profile.frames.len();
        if self.self_by_frame.len() < frames {
            self.self_by_frame.resize(frames, 0);
            self.total_by_frame.resize(frames, 0);
            self.occurrences_by_frame.resize(frames, 0);
            self.seen_stamp.resize(frames, 0);
        }
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            // The stamp wrapped: old stamps could collide, so forget them.
            self.seen_stamp.fill(0);
            self.stamp = 1;
        }
        let mut leaf = None;
        for frame in profile.stack_frames(stack) {
            let f = frame.index();
            self.occurrences_by_frame[f] += weight;
            if self.seen_stamp[f] != self.stamp {
                self.seen_stamp[f] = self.stamp;
                self.total_by_frame[f] += weight;
            }
            leaf = Some(f);
        }
        if let Some(f) = leaf {
            self.self_by_frame[f] += weight;
        }
    }

    pub fn trie(&self) -> &StackTrie {
        &self.trie
    }

    /// The trie, shared (no copy).
    pub fn shared_trie(&self) -> Arc<StackTrie> {
        self.trie.clone()
    }

    pub fn per_stack(&self) -> &[u64] {
        &self.per_stack
    }

    pub fn total_weight(&self) -> u64 {
        self.trie.total_weight()
    }

    /// The hotspot table of everything added.
    pub fn hotspots(&self, frames: &FrameTable) -> Hotspots {
        Hotspots::from_frame_weights(
            frames,
            &self.self_by_frame,
            &self.total_by_frame,
            &self.occurrences_by_frame,
            self.trie.total_weight(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::profile::test_support::profile_from;
    use crate::model::{Selection, StackTrie};

    #[test]
    fn incremental_matches_a_bulk_build() {
        let p = profile_from(&[
            (&["main", "work", "leaf"], 3, None),
            (&["main", "rec", "rec", "rec"], 2, None),
            (&["main", "work", "leaf"], 1, None),
            (&["main", "work"], 4, None),
            (&["idle"], 5, None),
        ]);
        let mut agg = Aggregate::new();
        for s in p.samples() {
            agg.add(&p, s.stack, s.weight);
        }
        let bulk = StackTrie::from_selection(&p, &Selection::all().matcher(&p));
        let want = Hotspots::from_trie(&bulk, &p.frames);
        let got = agg.hotspots(&p.frames);
        assert_eq!(got.rows, want.rows);
        assert_eq!(got.total_weight, 15);
        assert_eq!(got.total_occurrences, want.total_occurrences);
        let rec = p.frames.get("rec").unwrap();
        let row = got.get(rec).unwrap();
        assert_eq!((row.self_weight, row.total_weight, row.occurrences), (2, 2, 6));
        // Same paths with the same weights.
        assert_eq!(agg.trie().len(), bulk.len());
        for id in bulk.ids() {
            let n = bulk.node(id);
            let m = agg.trie().node(agg.trie().find_path(n.path_hash).unwrap());
            assert_eq!((m.self_weight, m.total_weight), (n.self_weight, n.total_weight));
        }
    }
}
