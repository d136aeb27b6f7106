//! The stack trie: every distinct call path once, with self and total weights.
//!
//! Children are keyed by `(parent, frame)` through the node's path hash, a stable hash of
//! the frame names along the path, so the same path has the same hash in every rebuild:
//! a view can keep its selection or zoom across live updates with one map lookup.

use rustc_hash::FxHashMap;

use super::frames::{FrameId, FrameTable};
use super::hash::{ROOT_PATH_HASH, child_path_hash};
use super::profile::Profile;
use super::selection::SelectionMatcher;

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
    by_path: FxHashMap<u64, NodeId>,
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
            next_sibling: NONE,
            depth: 0,
            self_weight: 0,
            total_weight: 0,
            path_hash: ROOT_PATH_HASH,
        };
        let mut by_path = FxHashMap::default();
        by_path.insert(ROOT_PATH_HASH, NodeId::ROOT);
        Self {
            nodes: vec![root],
            by_path,
        }
    }

    /// Build from the samples a selection picks; identical stacks are summed first so each
    /// distinct stack is walked once.
    pub fn from_selection(profile: &Profile, matcher: &SelectionMatcher) -> Self {
        let mut per_stack = vec![0u64; profile.stacks.len()];
        for sample in matcher.samples(profile) {
            per_stack[sample.stack.index()] += sample.weight;
        }
        let mut trie = Self::new();
        for (index, &weight) in per_stack.iter().enumerate() {
            if weight > 0 {
                let stack = super::stack::StackId(index as u32);
                trie.insert(profile.stack_frames(stack), weight, &profile.frames);
            }
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

    fn child_or_insert(&mut self, parent: NodeId, frame: FrameId, frames: &FrameTable) -> NodeId {
        let hash = child_path_hash(self.nodes[parent.index()].path_hash, frames.name_hash(frame));
        if let Some(&found) = self.by_path.get(&hash) {
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
        let id = NodeId(u32::try_from(self.nodes.len()).expect("more than 2^32 trie nodes"));
        let depth = self.nodes[parent.index()].depth + 1;
        let next_sibling = self.nodes[parent.index()].first_child;
        self.nodes.push(TrieNode {
            frame,
            parent: parent.0,
            first_child: NONE,
            next_sibling,
            depth,
            self_weight: 0,
            total_weight: 0,
            path_hash: hash,
        });
        self.nodes[parent.index()].first_child = id.0;
        self.by_path.entry(hash).or_insert(id);
        id
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

    /// Children in no particular order (most recently created first).
    pub fn children(&self, id: NodeId) -> Children<'_> {
        Children {
            trie: self,
            next: self.nodes[id.index()].first_child,
        }
    }

    /// Children sorted by frame name: the merged, deterministic order of flamegraphs.
    pub fn children_by_name(&self, id: NodeId, frames: &FrameTable) -> Vec<NodeId> {
        let mut kids: Vec<NodeId> = self.children(id).collect();
        kids.sort_by(|a, b| {
            frames
                .name(self.nodes[a.index()].frame)
                .cmp(frames.name(self.nodes[b.index()].frame))
        });
        kids
    }

    /// The node with this path hash, if the path exists.
    pub fn find_path(&self, path_hash: u64) -> Option<NodeId> {
        self.by_path.get(&path_hash).copied()
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
    use crate::model::profile::test_support::profile_from;
    use crate::model::selection::Selection;

    fn name_path(p: &Profile, t: &StackTrie, id: NodeId) -> Vec<String> {
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
        let t = StackTrie::from_selection(&p, &Selection::all().matcher(&p));
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
    fn path_hashes_are_stable_across_rebuilds() {
        let p1 = profile_from(&[(&["main", "a", "b"], 1, None), (&["main", "z"], 1, None)]);
        let p2 = profile_from(&[(&["main", "z"], 4, None), (&["main", "a", "b"], 9, None)]);
        let t1 = StackTrie::from_selection(&p1, &Selection::all().matcher(&p1));
        let t2 = StackTrie::from_selection(&p2, &Selection::all().matcher(&p2));
        for id in t1.ids() {
            let hash = t1.node(id).path_hash;
            let other = t2.find_path(hash).expect("same path exists");
            assert_eq!(name_path(&p1, &t1, id), name_path(&p2, &t2, other));
        }
    }
}
