//! The one builder of what views and exports show: selected sample counts go in, one
//! (stack, instance, weight) at a time; the trie, the inverted trie, the hotspot table and
//! the per-instance split come out. The live snapshot, every export and the view tests
//! build through it, so what a view shows and what a file holds are the same numbers.
//!
//! Adding is incremental — a live batch costs its own size, not the size of everything
//! seen — and the trie sits in an `Arc` so a snapshot shares it without a copy (the next
//! `add` copies it only while a snapshot still holds it).

use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::frames::FrameTable;
use super::hotspots::Hotspots;
use super::sample::InstanceId;
use super::stack::StackId;
use super::tables::ProfileTables;
use super::trie::{NodeId, StackTrie, TrieOrder};

const NO_NODE: u32 = u32::MAX;

/// What the views currently need beyond the forward trie and the hotspots.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Wants {
    pub inverted: bool,
    pub instances: bool,
}

impl Wants {
    pub const ALL: Wants = Wants {
        inverted: true,
        instances: true,
    };
}

/// One instance's share of the selection (per-instance panes).
#[derive(Clone, Debug)]
pub struct InstanceSlice {
    pub id: InstanceId,
    /// "CPU 3", "vCPU 0", "1234 nginx".
    pub label: String,
    pub trie: Arc<StackTrie>,
    pub hotspots: Arc<Hotspots>,
}

/// What a selection looks like: the shapes every view and export draws from.
#[derive(Clone, Debug, Default)]
pub struct ViewData {
    /// The selection, root first.
    pub trie: Arc<StackTrie>,
    /// Leaf first; `None` unless asked for (it costs as much as the forward trie).
    pub inverted: Option<Arc<StackTrie>>,
    pub hotspots: Arc<Hotspots>,
    /// One slice per instance with selected samples, in instance order; empty unless asked.
    pub instances: Arc<Vec<InstanceSlice>>,
}

/// Weights of the samples added so far.
#[derive(Clone, Debug, Default)]
pub struct Aggregate {
    trie: Arc<StackTrie>,
    /// Weight per stack id (the inverted trie is built from it).
    per_stack: Vec<u64>,
    /// Leaf trie node per stack id, once the stack has been inserted.
    leaf_of_stack: Vec<u32>,
    /// Weight per (stack, instance) (the instance split and pprof's labels).
    per_instance: FxHashMap<(StackId, InstanceId), u64>,
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

    /// Everything at once from weights per (stack, instance): the trie is built in bulk
    /// (nodes laid out depth first in name order, what drawing and searching a huge trie
    /// walk fastest) and each distinct stack is walked once, not once per sample. Later
    /// [`add`](Self::add)s grow it incrementally as usual.
    pub fn from_counts(
        tables: &ProfileTables,
        counts: impl IntoIterator<Item = (StackId, InstanceId, u64)>,
    ) -> Self {
        let mut aggregate = Self::new();
        for (stack, instance, weight) in counts {
            if weight == 0 {
                continue;
            }
            let index = stack.index();
            if aggregate.per_stack.len() <= index {
                aggregate.per_stack.resize(index + 1, 0);
            }
            aggregate.per_stack[index] = aggregate.per_stack[index].saturating_add(weight);
            let w = aggregate.per_instance.entry((stack, instance)).or_default();
            *w = w.saturating_add(weight);
        }
        let per_stack = std::mem::take(&mut aggregate.per_stack);
        for (index, &weight) in per_stack.iter().enumerate() {
            if weight > 0 {
                aggregate.count_frames(tables, StackId(index as u32), weight);
            }
        }
        let mut leaf_of_stack = vec![NO_NODE; per_stack.len()];
        let weighed = per_stack.iter().enumerate().map(|(i, &w)| (StackId(i as u32), w));
        let trie = StackTrie::from_stack_list_with_leaves(tables, weighed, TrieOrder::RootFirst, |s, n| {
            leaf_of_stack[s.index()] = n.0
        });
        aggregate.trie = Arc::new(trie);
        aggregate.leaf_of_stack = leaf_of_stack;
        aggregate.per_stack = per_stack;
        aggregate
    }

    /// Add `weight` samples of `stack` taken on `instance`.
    pub fn add(&mut self, tables: &ProfileTables, stack: StackId, instance: InstanceId, weight: u64) {
        if weight == 0 {
            return;
        }
        let index = stack.index();
        if self.per_stack.len() <= index {
            self.per_stack.resize(index + 1, 0);
            self.leaf_of_stack.resize(index + 1, NO_NODE);
        }
        self.per_stack[index] = self.per_stack[index].saturating_add(weight);
        let w = self.per_instance.entry((stack, instance)).or_default();
        *w = w.saturating_add(weight);
        let trie = Arc::make_mut(&mut self.trie);
        match self.leaf_of_stack[index] {
            NO_NODE => {
                let leaf = trie.insert(tables.stack_frames(stack), weight, &tables.frames);
                self.leaf_of_stack[index] = leaf.0;
            }
            leaf => trie.add_to_path(NodeId(leaf), weight),
        }
        self.count_frames(tables, stack, weight);
    }

    /// Self, total (once per stack) and occurrence weights of `stack`'s frames.
    fn count_frames(&mut self, tables: &ProfileTables, stack: StackId, weight: u64) {
        let frames = tables.frames.len();
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
        for frame in tables.stack_frames(stack) {
            let f = frame.index();
            self.occurrences_by_frame[f] = self.occurrences_by_frame[f].saturating_add(weight);
            if self.seen_stamp[f] != self.stamp {
                self.seen_stamp[f] = self.stamp;
                self.total_by_frame[f] = self.total_by_frame[f].saturating_add(weight);
            }
            leaf = Some(f);
        }
        if let Some(f) = leaf {
            self.self_by_frame[f] = self.self_by_frame[f].saturating_add(weight);
        }
    }

    pub fn trie(&self) -> &StackTrie {
        &self.trie
    }

    pub fn total_weight(&self) -> u64 {
        self.trie.total_weight()
    }

    /// Weight per stack id (ids beyond the slice weigh 0).
    pub fn per_stack(&self) -> &[u64] {
        &self.per_stack
    }

    /// Weight per (stack, instance), in no particular order.
    pub fn per_instance(&self) -> impl Iterator<Item = (StackId, InstanceId, u64)> + '_ {
        self.per_instance.iter().map(|(&(s, i), &w)| (s, i, w))
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

    /// The shapes of everything added: the trie shared, the rest built as `wants` asks.
    pub fn view(&self, tables: &ProfileTables, wants: Wants) -> ViewData {
        let trie = self.trie.clone();
        // Views re-find their selection by path hash at every snapshot: build the index
        // here, off the UI thread.
        trie.build_index();
        let inverted = wants.inverted.then(|| {
            let t = StackTrie::from_stack_weights(tables, &self.per_stack, TrieOrder::LeafFirst);
            t.build_index();
            Arc::new(t)
        });
        let instances = if wants.instances {
            self.instance_slices(tables)
        } else {
            Vec::new()
        };
        ViewData {
            trie,
            inverted,
            hotspots: Arc::new(self.hotspots(&tables.frames)),
            instances: Arc::new(instances),
        }
    }

    /// One trie and hotspot table per instance with weight, in instance order.
    fn instance_slices(&self, tables: &ProfileTables) -> Vec<InstanceSlice> {
        let mut by_instance: FxHashMap<InstanceId, Vec<(StackId, u64)>> = FxHashMap::default();
        for (&(stack, instance), &w) in &self.per_instance {
            by_instance.entry(instance).or_default().push((stack, w));
        }
        let mut split: Vec<(InstanceId, Vec<(StackId, u64)>)> = by_instance.into_iter().collect();
        split.sort_by_key(|(id, _)| *id);
        split
            .into_iter()
            .map(|(id, mut stacks)| {
                stacks.sort_unstable_by_key(|(s, _)| *s);
                let trie = StackTrie::from_stack_list(tables, stacks, TrieOrder::RootFirst);
                trie.build_index();
                let hotspots = Hotspots::from_trie(&trie, &tables.frames);
                InstanceSlice {
                    id,
                    label: tables.instance_info(id).label.clone(),
                    trie: Arc::new(trie),
                    hotspots: Arc::new(hotspots),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Selection;
    use crate::model::sample_list::test_support::profile_from;

    #[test]
    fn incremental_and_bulk_builds_agree_and_bulk_children_are_in_name_order() {
        let p = profile_from(&[
            (&["main", "work", "leaf"], 3, None),
            (&["main", "rec", "rec", "rec"], 2, None),
            (&["main", "work", "leaf"], 1, None),
            (&["main", "work"], 4, None),
            (&["idle"], 5, None),
            (&["main", "alpha"], 1, None),
        ]);
        let mut incremental = Aggregate::new();
        for s in p.samples() {
            incremental.add(&p, s.stack, s.instance, s.weight);
        }
        let bulk = Aggregate::from_counts(&p, p.samples().iter().map(|s| (s.stack, s.instance, s.weight)));
        let (a, b) = (incremental.hotspots(&p.frames), bulk.hotspots(&p.frames));
        assert_eq!(a.rows, b.rows);
        assert_eq!((a.total_weight, a.total_occurrences), (16, b.total_occurrences));
        let rec = p.frames.get("rec").unwrap();
        let row = a.get(rec).unwrap();
        assert_eq!((row.self_weight, row.total_weight, row.occurrences), (2, 2, 6));
        // Same paths with the same weights; the bulk trie's children in name order.
        let reference = StackTrie::from_selection(&p, &Selection::all());
        for trie in [incremental.trie(), bulk.trie()] {
            assert_eq!(trie.len(), reference.len());
            for id in reference.ids() {
                let n = reference.node(id);
                let m = trie.node(trie.find_path(n.path_hash).unwrap());
                assert_eq!((m.self_weight, m.total_weight), (n.self_weight, n.total_weight));
            }
        }
        for id in bulk.trie().ids() {
            let names: Vec<&str> = bulk
                .trie()
                .children(id)
                .map(|c| p.frames.name(bulk.trie().node(c).frame().unwrap()))
                .collect();
            assert!(names.windows(2).all(|w| w[0] <= w[1]), "{names:?}");
        }
        // A bulk aggregate keeps growing incrementally.
        let mut grown = bulk;
        let work = p.samples()[3];
        grown.add(&p, work.stack, work.instance, 10);
        assert_eq!(grown.total_weight(), 26);
        let w = p.frames.get("work").unwrap();
        assert_eq!(grown.hotspots(&p.frames).get(w).unwrap().self_weight, 14);
        // The bulk build told it where each stack ends: the addition lands on that node and
        // its ancestors, with no new node.
        assert_eq!(grown.trie().len(), reference.len());
        let main = grown
            .trie()
            .children(NodeId::ROOT)
            .find(|&c| grown.trie().node(c).frame() == p.frames.get("main"));
        let main = main.unwrap();
        let work_node = grown
            .trie()
            .children(main)
            .find(|&c| grown.trie().node(c).frame() == Some(w));
        let n = grown.trie().node(work_node.unwrap());
        assert_eq!((n.self_weight, n.total_weight), (14, 18));
        assert_eq!(grown.trie().node(main).total_weight, 21);
        let views = grown.view(&p, Wants::ALL);
        assert_eq!(views.instances.len(), 1);
        assert_eq!(views.inverted.unwrap().total_weight(), 26);
    }
}
