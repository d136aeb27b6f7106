//! Search in the call tree: which frames match the regex, which subtrees hold a match
//! (so a walk skips the rest), and the next or previous matching node in depth-first
//! order with children by total weight — the order the tree shows them in.

use regex::Regex;

use super::items::sorted_children;
use crate::model::{FrameTable, NodeId, StackTrie};

/// Matches of one regex in one trie.
#[derive(Clone, Debug, Default)]
pub struct MatchIndex {
    /// Per frame: does its name match.
    pub frames: Vec<bool>,
    /// Per node: the node or one below it matches.
    subtree: Vec<bool>,
    /// Matching nodes.
    pub count: usize,
}

impl MatchIndex {
    pub fn build(trie: &StackTrie, frames: &FrameTable, re: &Regex) -> Self {
        let frame_matches: Vec<bool> = frames.ids().map(|f| re.is_match(frames.name(f))).collect();
        let mut subtree = vec![false; trie.len()];
        let mut count = 0;
        // Node ids put parents before children, so one backward pass carries every
        // match up to its ancestors.
        for id in (0..trie.len() as u32).rev().map(NodeId) {
            let node = trie.node(id);
            let own = node
                .frame()
                .is_some_and(|f| frame_matches.get(f.index()).copied().unwrap_or(false));
            if own {
                count += 1;
            }
            let below = subtree[id.index()] || own;
            subtree[id.index()] = below;
            if below && let Some(parent) = node.parent() {
                subtree[parent.index()] = true;
            }
        }
        MatchIndex {
            frames: frame_matches,
            subtree,
            count,
        }
    }

    fn node_matches(&self, trie: &StackTrie, id: NodeId) -> bool {
        trie.node(id)
            .frame()
            .is_some_and(|f| self.frames.get(f.index()).copied().unwrap_or(false))
    }

    /// The matching node after (`forward`) or before `current` in display order,
    /// wrapping around; `current` is a path hash, `on_path` the hashes of its ancestors
    /// (walked even when they hold no match, to find `current`).
    pub fn step(
        &self,
        trie: &StackTrie,
        frames: &FrameTable,
        current: Option<u64>,
        on_path: &[u64],
        forward: bool,
    ) -> Option<NodeId> {
        if self.count == 0 {
            return None;
        }
        let mut first = None;
        let mut last = None;
        let mut before = None;
        let mut passed = current.is_none();
        let mut stack: Vec<NodeId> = sorted_children(trie, frames, NodeId::ROOT);
        stack.reverse();
        while let Some(id) = stack.pop() {
            let node = trie.node(id);
            let is_current = current == Some(node.path_hash);
            if self.node_matches(trie, id) && !is_current {
                if passed {
                    if forward {
                        return Some(id);
                    }
                } else {
                    before = Some(id);
                }
                first = first.or(Some(id));
                last = Some(id);
            }
            if is_current {
                passed = true;
                if !forward && before.is_some() {
                    return before;
                }
            }
            let walk =
                self.subtree.get(id.index()).copied().unwrap_or(false) || on_path.contains(&node.path_hash);
            if walk {
                let mut kids = sorted_children(trie, frames, id);
                kids.reverse();
                stack.extend(kids);
            }
        }
        if forward { first } else { before.or(last) }
    }
}
