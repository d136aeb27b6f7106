//! The stack trie: every distinct call path once, with self and total weights.
//!
//! Children are keyed by `(parent, frame)` through the node's path hash, a stable hash of
//! the frame names along the path, so the same path has the same hash in every rebuild:
//! a view can keep its selection or zoom across live updates with one map lookup.

use std::sync::OnceLock;

use rustc_hash::FxHashMap;

use super::frames::{FrameId, FrameTable};
use super::hash::{ROOT_PATH_HASH, child_path_hash};
use super::selection::{SampleSource, Selection};
use super::stack::StackId;
use super::tables::ProfileTables;

/// Which end of a stack the trie starts from.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum TrieOrder {
    /// Root first: the call tree, the icicle flamegraph.
    #[default]
    RootFirst,
    /// Leaf first: the inverted trie (bottom-up call tree, callers of a leaf).
    LeafFirst,
}

/// Index of a node in a [`StackTrie`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub u32);

impl NodeId {
    pub const ROOT: NodeId = NodeId(0);

    pub fn index(self) -> usize {
        self.0 as usize
    }
}

const NONE: u32 = u32::MAX;

/// One call path.
#[derive(Clone, Debug)]
pub struct TrieNode {
    frame: FrameId,
    parent: u32,
    first_child: u32,
    last_child: u32,
    next_sibling: u32,
    /// Number of frames from the root (the root is 0).
    pub depth: u32,
    /// Weight of samples whose stack ends here.
    pub self_weight: u64,
    /// Weight of samples whose stack passes through here.
    pub total_weight: u64,
    /// Stable identity of the path (see the module docs).
    pub path_hash: u64,
}

impl TrieNode {
    /// The frame of this node; `None` for the root.
    pub fn frame(&self) -> Option<FrameId> {
        (self.parent != NONE).then_some(self.frame)
    }

    pub fn parent(&self) -> Option<NodeId> {
        (self.parent != NONE).then_some(NodeId(self.parent))
    }
}

/// A trie of call paths, root first.
#[derive(Clone, Debug)]
pub struct StackTrie {
    nodes: Vec<TrieNode>,
    /// Path hash → node, built on first use: a bulk build does not need it.
    index: OnceLock<FxHashMap<u64, NodeId>>,
}

impl Default for StackTrie {
    fn default() -> Self {
        Self::new()
    }
}

impl StackTrie {
    pub fn new() -> Self {
        let root = TrieNode {
            frame: FrameId(NONE),
            parent: NONE,
            first_child: NONE,
            last_child: NONE,
            next_sibling: NONE,
            depth: 0,
            self_weight: 0,
            total_weight: 0,
            path_hash: ROOT_PATH_HASH,
        };
        Self {
            nodes: vec![root],
            index: OnceLock::new(),
        }
    }

    /// Build from the samples a selection picks.
    pub fn from_selection(source: &dyn SampleSource, selection: &Selection) -> Self {
        let tables = source.tables();
        let mut per_stack = vec![0u64; tables.stacks.len()];
        selection.for_each_selected(source, &mut |c| {
            let w = &mut per_stack[c.key.stack.index()];
            *w = w.saturating_add(c.weight);
        });
        Self::from_stack_weights(tables, &per_stack, TrieOrder::RootFirst)
    }

    /// [`from_stack_list`](Self::from_stack_list) over a dense weight per stack id.
    pub fn from_stack_weights(profile: &ProfileTables, per_stack: &[u64], order: TrieOrder) -> Self {
        let list = per_stack
            .iter()
            .enumerate()
            .filter(|(_, w)| **w > 0)
            .map(|(i, &w)| (StackId(i as u32), w));
        Self::from_stack_list(profile, list, order)
    }

    /// Build from `(stack, weight)` pairs, each stack at most once.
    ///
    /// The distinct stacks are sorted by frame names and walked in that order: a stack
    /// shares its prefix with the one before it and every node after the shared prefix is
    /// new, so the build needs no lookups, and children come out in name order (the merged
    /// order of flamegraphs). [`TrieOrder::LeafFirst`] builds the inverted trie, whose
    /// first level is the leaf functions and whose children are their callers.
    pub fn from_stack_list(
        profile: &ProfileTables,
        stacks: impl IntoIterator<Item = (StackId, u64)>,
        order: TrieOrder,
    ) -> Self {
        Self::from_stack_list_with_leaves(profile, stacks, order, |_, _| {})
    }

    /// [`from_stack_list`](Self::from_stack_list), telling `leaf` the node each stack ends
    /// at: a live aggregate keeps it, so a later sample of a known stack adds along its
    /// parents instead of looking its path up again.
    pub fn from_stack_list_with_leaves(
        profile: &ProfileTables,
        stacks: impl IntoIterator<Item = (StackId, u64)>,
        order: TrieOrder,
        mut leaf: impl FnMut(StackId, NodeId),
    ) -> Self {
        let rank = profile.frames.name_ranks();
        let mut flat: Vec<FrameId> = Vec::new();
        let mut entries: Vec<(usize, usize, u64, StackId)> = Vec::new(); // (start, end, weight, stack)
        for (stack, weight) in stacks {
            if weight > 0 {
                let start = flat.len();
                flat.extend(profile.stack_frames(stack));
                if order == TrieOrder::LeafFirst {
                    flat[start..].reverse();
                }
                entries.push((start, flat.len(), weight, stack));
            }
        }
        entries.sort_unstable_by(|a, b| {
            let x = flat[a.0..a.1].iter().map(|f| rank[f.index()]);
            let y = flat[b.0..b.1].iter().map(|f| rank[f.index()]);
            x.cmp(y)
        });

        let mut trie = Self::new();
        let mut path: Vec<NodeId> = Vec::new();
        let mut previous: &[FrameId] = &[];
        for &(start, end, weight, stack) in &entries {
            let frames = &flat[start..end];
            let common = previous.iter().zip(frames).take_while(|(a, b)| a == b).count();
            path.truncate(common);
            for &frame in &frames[common..] {
                let parent = path.last().copied().unwrap_or(NodeId::ROOT);
                path.push(trie.push_child(parent, frame, &profile.frames));
            }
            trie.nodes[0].total_weight += weight;
            for n in &path {
                trie.nodes[n.index()].total_weight += weight;
            }
            let last = path.last().copied().unwrap_or(NodeId::ROOT);
            trie.nodes[last.index()].self_weight += weight;
            leaf(stack, last);
            previous = frames;
        }
        trie
    }

    /// Add `weight` along a root-first path of frames; returns the last node.
    pub fn insert(
        &mut self,
        root_first: impl IntoIterator<Item = FrameId>,
        weight: u64,
        frames: &FrameTable,
    ) -> NodeId {
        let mut node = NodeId::ROOT;
        self.nodes[0].total_weight += weight;
        for frame in root_first {
            node = self.child_or_insert(node, frame, frames);
            self.nodes[node.index()].total_weight += weight;
        }
        self.nodes[node.index()].self_weight += weight;
        node
    }

    /// Add `weight` to an existing node's path: self at `leaf`, total at it and every
    /// ancestor (a live update of a stack already in the trie needs no lookups).
    pub fn add_to_path(&mut self, leaf: NodeId, weight: u64) {
        self.nodes[leaf.index()].self_weight += weight;
        let mut cur = leaf.0;
        while cur != NONE {
            self.nodes[cur as usize].total_weight += weight;
            cur = self.nodes[cur as usize].parent;
        }
    }

    fn child_or_insert(&mut self, parent: NodeId, frame: FrameId, frames: &FrameTable) -> NodeId {
        let hash = child_path_hash(self.nodes[parent.index()].path_hash, frames.name_hash(frame));
        if let Some(&found) = self.path_index().get(&hash) {
            let n = &self.nodes[found.index()];
            if n.parent == parent.0 && n.frame == frame {
                return found;
            }
            // A 64-bit hash collision: fall back to scanning the siblings.
            if let Some(c) = self
                .children(parent)
                .find(|&c| self.nodes[c.index()].frame == frame)
            {
                return c;
            }
        }
        let id = self.push_child(parent, frame, frames);
        if let Some(index) = self.index.get_mut() {
            index.entry(hash).or_insert(id);
        }
        id
    }

    /// A new node under `parent`, not yet linked among its siblings.
    fn push_child_detached(&mut self, parent: NodeId, frame: FrameId, frames: &FrameTable) -> NodeId {
        let id = NodeId(u32::try_from(self.nodes.len()).expect("more than 2^32 trie nodes"));
        let p = &self.nodes[parent.index()];
        let (depth, path_hash) = (p.depth + 1, child_path_hash(p.path_hash, frames.name_hash(frame)));
        self.nodes.push(TrieNode {
            frame,
            parent: parent.0,
            first_child: NONE,
            last_child: NONE,
            next_sibling: NONE,
            depth,
            self_weight: 0,
            total_weight: 0,
            path_hash,
        });
        id
    }

    /// Append a new child (no check that it exists already).
    fn push_child(&mut self, parent: NodeId, frame: FrameId, frames: &FrameTable) -> NodeId {
        let last = self.nodes[parent.index()].last_child;
        let id = self.push_child_detached(parent, frame, frames);
        if last == NONE {
            self.nodes[parent.index()].first_child = id.0;
        } else {
            self.nodes[last as usize].next_sibling = id.0;
        }
        self.nodes[parent.index()].last_child = id.0;
        id
    }

    fn path_index(&self) -> &FxHashMap<u64, NodeId> {
        self.index.get_or_init(|| {
            let mut map = FxHashMap::default();
            map.reserve(self.nodes.len());
            for (i, n) in self.nodes.iter().enumerate() {
                map.entry(n.path_hash).or_insert(NodeId(i as u32));
            }
            map
        })
    }

    pub fn node(&self, id: NodeId) -> &TrieNode {
        &self.nodes[id.index()]
    }

    pub fn root(&self) -> &TrieNode {
        &self.nodes[0]
    }

    /// Sum of all inserted weight.
    pub fn total_weight(&self) -> u64 {
        self.nodes[0].total_weight
    }

    /// Number of nodes, the root included.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// True when nothing but the root exists.
    pub fn is_empty(&self) -> bool {
        self.nodes.len() == 1
    }

    /// Children in creation order: name order after a bulk build; a live insert appends
    /// (keeping names in order there would cost a walk of the siblings per new node).
    pub fn children(&self, id: NodeId) -> Children<'_> {
        Children {
            trie: self,
            next: self.nodes[id.index()].first_child,
        }
    }

    /// Children sorted by frame name: the merged, deterministic order of flamegraphs.
    pub fn children_by_name(&self, id: NodeId, frames: &FrameTable) -> Vec<NodeId> {
        let mut kids: Vec<NodeId> = self.children(id).collect();
        let name = |n: &NodeId| frames.name(self.nodes[n.index()].frame);
        if !kids.windows(2).all(|w| name(&w[0]) <= name(&w[1])) {
            kids.sort_by(|a, b| name(a).cmp(name(b)));
        }
        kids
    }

    /// Build the path-hash index now (on the thread that can afford it) rather than at
    /// the first [`find_path`](Self::find_path).
    pub fn build_index(&self) {
        self.path_index();
    }

    /// The node with this path hash, if the path exists.
    pub fn find_path(&self, path_hash: u64) -> Option<NodeId> {
        self.path_index().get(&path_hash).copied()
    }

    /// Frames from the root to `id`.
    pub fn path(&self, id: NodeId) -> Vec<FrameId> {
        let mut out = Vec::with_capacity(self.nodes[id.index()].depth as usize);
        let mut cur = id;
        while let Some(frame) = self.nodes[cur.index()].frame() {
            out.push(frame);
            cur = NodeId(self.nodes[cur.index()].parent);
        }
        out.reverse();
        out
    }

    /// All node ids, parents before children.
    pub fn ids(&self) -> impl Iterator<Item = NodeId> {
        (0..self.nodes.len() as u32).map(NodeId)
    }
}

/// Iterator over a node's children.
pub struct Children<'a> {
    trie: &'a StackTrie,
    next: u32,
}

impl Iterator for Children<'_> {
    type Item = NodeId;

    fn next(&mut self) -> Option<NodeId> {
        if self.next == NONE {
            return None;
        }
        let id = NodeId(self.next);
        self.next = self.trie.nodes[id.index()].next_sibling;
        Some(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::sample_list::SampleList;
    use crate::model::sample_list::test_support::profile_from;

    fn name_path(p: &SampleList, t: &StackTrie, id: NodeId) -> Vec<String> {
        t.path(id)
            .into_iter()
            .map(|f| p.frames.name(f).to_string())
            .collect()
    }

    #[test]
    fn self_and_total_weights_add_up() {
        let p = profile_from(&[
            (&["main", "a", "b"], 3, None),
            (&["main", "a"], 2, None),
            (&["main", "c"], 5, None),
        ]);
        let t = StackTrie::from_selection(&p, &Selection::all());
        assert_eq!(t.total_weight(), 10);
        assert_eq!(t.len(), 5);
        let main = t.children(NodeId::ROOT).next().unwrap();
        assert_eq!(t.node(main).total_weight, 10);
        assert_eq!(t.node(main).self_weight, 0);
        let kids = t.children_by_name(main, &p.frames);
        let weights: Vec<(String, u64, u64)> = kids
            .iter()
            .map(|&k| {
                let n = t.node(k);
                (
                    p.frames.name(n.frame().unwrap()).to_string(),
                    n.self_weight,
                    n.total_weight,
                )
            })
            .collect();
        assert_eq!(weights, [("a".to_string(), 2, 5), ("c".to_string(), 5, 5)]);
        assert_eq!(name_path(&p, &t, kids[0]), ["main", "a"]);
        assert_eq!(t.node(kids[0]).depth, 2);
    }

    #[test]
    fn bulk_build_and_live_inserts_agree() {
        let p = profile_from(&[
            (&["main", "b", "x"], 1, None),
            (&["main", "a"], 2, None),
            (&["main", "b"], 3, None),
            (&["other"], 4, None),
            (&["main", "a", "y"], 5, None),
        ]);
        let mut bulk = StackTrie::from_selection(&p, &Selection::all());
        let mut live = StackTrie::new();
        for s in p.samples() {
            live.insert(p.stack_frames(s.stack), s.weight, &p.frames);
        }
        assert_eq!(bulk.len(), live.len());
        for id in live.ids() {
            let n = live.node(id);
            let m = bulk.node(bulk.find_path(n.path_hash).unwrap());
            assert_eq!(
                (n.self_weight, n.total_weight, n.depth),
                (m.self_weight, m.total_weight, m.depth)
            );
        }
        // Children of a bulk build come in name order.
        let main = bulk.children(NodeId::ROOT).next().unwrap();
        let names: Vec<&str> = bulk
            .children(main)
            .map(|c| p.frames.name(bulk.node(c).frame().unwrap()))
            .collect();
        assert_eq!(names, ["a", "b"]);
        // A live insert into a bulk-built trie finds the existing path.
        let before = bulk.len();
        let leaf = bulk.insert(p.stack_frames(p.samples()[0].stack), 10, &p.frames);
        assert_eq!(bulk.len(), before);
        assert_eq!(bulk.node(leaf).self_weight, 11);
        live.insert(
            [p.frames.get("other").unwrap(), p.frames.get("a").unwrap()],
            1,
            &p.frames,
        );
        assert_eq!(live.len(), before + 1);
    }

    #[test]
    fn path_hashes_are_stable_across_rebuilds() {
        let p1 = profile_from(&[(&["main", "a", "b"], 1, None), (&["main", "z"], 1, None)]);
        let p2 = profile_from(&[(&["main", "z"], 4, None), (&["main", "a", "b"], 9, None)]);
        let t1 = StackTrie::from_selection(&p1, &Selection::all());
        let t2 = StackTrie::from_selection(&p2, &Selection::all());
        for id in t1.ids() {
            let hash = t1.node(id).path_hash;
            let other = t2.find_path(hash).expect("same path exists");
            assert_eq!(name_path(&p1, &t1, id), name_path(&p2, &t2, other));
        }
    }
}
