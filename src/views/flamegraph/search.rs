//! Flamegraph search: which frames match a regex, the match order for next / previous,
//! and the match coverage ("match 12.3%").
//!
//! The regex is tested once per distinct function name, not once per node, so a search over
//! a trie of millions of nodes costs one pass over the nodes plus a few thousand regex runs.

use std::cmp::Ordering;

use regex::Regex;

use crate::model::{FrameId, FrameTable, NodeId, StackTrie};

/// The result of one search over one trie.
#[derive(Clone, Debug)]
pub struct SearchMatches {
    regex: Regex,
    /// For every frame id, whether its name matches.
    frame_mask: Vec<bool>,
    /// Matching nodes by depth, then by id; by (depth, x in the unzoomed graph) once
    /// `ordered` (sorting waits for the first step: a live search is redone per snapshot,
    /// and most are only looked at, never stepped through).
    nodes: Vec<NodeId>,
    ordered: bool,
    /// Weight of samples whose stack contains a match, each sample once.
    matched_weight: u64,
    total_weight: u64,
    /// Index in `nodes` of the match last jumped to, and its path hash (to find it again
    /// in the next snapshot).
    cursor: Option<usize>,
    cursor_path: Option<u64>,
}

impl SearchMatches {
    pub fn new(regex: Regex, trie: &StackTrie, frames: &FrameTable) -> Self {
        let frame_mask: Vec<bool> = frames.ids().map(|f| regex.is_match(frames.name(f))).collect();
        let is_match = |id: NodeId| {
            trie.node(id)
                .frame()
                .is_some_and(|f| frame_mask.get(f.index()).copied().unwrap_or(false))
        };
        // Node ids run parents before children, so one forward pass knows for every node
        // whether a matching ancestor already counted its samples.
        let mut covered = vec![false; trie.len()];
        // Bucketing by depth during the scan gives (depth, id) order without a sort.
        let mut by_depth: Vec<Vec<NodeId>> = Vec::new();
        let mut matched_weight = 0u64;
        for id in trie.ids() {
            let node = trie.node(id);
            let inherited = node.parent().is_some_and(|p| covered[p.index()]);
            let hit = is_match(id);
            if hit {
                let depth = node.depth as usize;
                if by_depth.len() <= depth {
                    by_depth.resize_with(depth + 1, Vec::new);
                }
                by_depth[depth].push(id);
                if !inherited {
                    matched_weight += node.total_weight;
                }
            }
            covered[id.index()] = inherited || hit;
        }
        SearchMatches {
            regex,
            frame_mask,
            nodes: by_depth.concat(),
            ordered: false,
            matched_weight,
            total_weight: trie.total_weight(),
            cursor: None,
            cursor_path: None,
        }
    }

    /// The same pattern over a newer trie; the cursor follows its node by path hash.
    pub fn rebuild(&self, trie: &StackTrie, frames: &FrameTable) -> Self {
        let mut fresh = Self::new(self.regex.clone(), trie, frames);
        if self.cursor_path.is_none() {
            return fresh;
        }
        fresh.order(trie, frames);
        fresh.cursor = self
            .cursor_path
            .and_then(|h| fresh.nodes.iter().position(|&n| trie.node(n).path_hash == h));
        fresh.cursor_path = fresh.cursor.and(self.cursor_path);
        fresh
    }

    pub fn regex(&self) -> &Regex {
        &self.regex
    }

    /// Whether frames of this function are highlighted.
    pub fn matches_frame(&self, frame: FrameId) -> bool {
        self.frame_mask.get(frame.index()).copied().unwrap_or(false)
    }

    /// How many nodes match.
    pub fn count(&self) -> usize {
        self.nodes.len()
    }

    /// Matching nodes by depth, then left to right.
    pub fn ordered_nodes(&mut self, trie: &StackTrie, frames: &FrameTable) -> &[NodeId] {
        self.order(trie, frames);
        &self.nodes
    }

    fn order(&mut self, trie: &StackTrie, frames: &FrameTable) {
        if !self.ordered {
            order_by_x(trie, frames, &mut self.nodes);
            self.ordered = true;
        }
    }

    /// Share of the samples whose stack contains a match, in percent (0 without samples).
    pub fn percent(&self) -> f64 {
        if self.total_weight == 0 {
            return 0.0;
        }
        self.matched_weight as f64 * 100.0 / self.total_weight as f64
    }

    pub fn matched_weight(&self) -> u64 {
        self.matched_weight
    }

    /// 1-based position of the match last jumped to.
    pub fn position(&self) -> Option<usize> {
        self.cursor.map(|c| c + 1)
    }

    /// Move the cursor forward (or back) from `from`, wrapping around; returns the match.
    /// Without a cursor it starts from the first match after (or before) `from` in the
    /// (depth, x) order, so `n` after a click continues from the clicked frame.
    pub fn step(
        &mut self,
        forward: bool,
        from: NodeId,
        trie: &StackTrie,
        frames: &FrameTable,
    ) -> Option<NodeId> {
        let n = self.nodes.len();
        if n == 0 {
            return None;
        }
        self.order(trie, frames);
        let next = match self.cursor.filter(|&c| self.nodes[c] == from) {
            Some(c) if forward => (c + 1) % n,
            Some(c) => (c + n - 1) % n,
            None => {
                let after = self
                    .nodes
                    .partition_point(|&m| depth_x_order(trie, frames, m, from) != Ordering::Greater);
                let before = self
                    .nodes
                    .partition_point(|&m| depth_x_order(trie, frames, m, from) == Ordering::Less);
                if forward { after % n } else { (before + n - 1) % n }
            }
        };
        self.cursor = Some(next);
        self.cursor_path = Some(trie.node(self.nodes[next]).path_hash);
        Some(self.nodes[next])
    }
}

/// Order of two nodes by depth, then by x in the unzoomed graph: children are laid out in
/// name order, so at equal depth x order is the order of the name paths from the root,
/// decided by the first pair of ancestors that share a parent.
fn depth_x_order(trie: &StackTrie, frames: &FrameTable, a: NodeId, b: NodeId) -> Ordering {
    let (da, db) = (trie.node(a).depth, trie.node(b).depth);
    if da != db {
        return da.cmp(&db);
    }
    let (mut a, mut b) = (a, b);
    while a != b {
        let (pa, pb) = (trie.node(a).parent(), trie.node(b).parent());
        if pa == pb {
            let name = |n: NodeId| trie.node(n).frame().map_or("", |f| frames.name(f));
            return name(a).cmp(name(b)).then(a.cmp(&b));
        }
        match (pa, pb) {
            (Some(x), Some(y)) => (a, b) = (x, y),
            _ => break,
        }
    }
    Ordering::Equal
}

/// `nodes` come by (depth, id). Bulk-built tries number nodes in name-order preorder, so
/// that is already the x order; the check confirms it and the exact sort runs only when it
/// fails (a trie grown by live inserts).
fn order_by_x(trie: &StackTrie, frames: &FrameTable, nodes: &mut [NodeId]) {
    let ordered = nodes
        .windows(2)
        .all(|w| depth_x_order(trie, frames, w[0], w[1]) != Ordering::Greater);
    if !ordered {
        nodes.sort_by(|&a, &b| depth_x_order(trie, frames, a, b));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Selection;
    use crate::model::sample_list::test_support::profile_from;

    fn name(p: &crate::model::sample_list::SampleList, t: &StackTrie, n: NodeId) -> String {
        t.path(n)
            .iter()
            .map(|&f| p.frames.name(f))
            .collect::<Vec<_>>()
            .join(";")
    }

    #[test]
    fn coverage_counts_each_sample_once() {
        // Recursion: work → work; the nested match must not count the 3 samples twice.
        let p = profile_from(&[
            (&["main", "work", "work", "leaf"], 3, None),
            (&["main", "idle"], 5, None),
            (&["main", "work"], 2, None),
        ]);
        let t = StackTrie::from_selection(&p, &Selection::all());
        let s = SearchMatches::new(Regex::new("^work$").unwrap(), &t, &p.frames);
        assert_eq!(s.count(), 2);
        assert_eq!(s.matched_weight(), 5);
        assert!((s.percent() - 50.0).abs() < 1e-9);
        assert!(s.matches_frame(p.frames.get("work").unwrap()));
        assert!(!s.matches_frame(p.frames.get("idle").unwrap()));
        let none = SearchMatches::new(Regex::new("nothing").unwrap(), &t, &p.frames);
        assert_eq!((none.count(), none.percent()), (0, 0.0));
    }

    #[test]
    fn matches_are_ordered_by_depth_then_x_and_cycle() {
        let p = profile_from(&[
            (&["main", "b", "hit"], 1, None),
            (&["main", "a", "hit"], 1, None),
            (&["main", "hit"], 1, None),
            (&["other", "hit"], 1, None),
        ]);
        let t = StackTrie::from_selection(&p, &Selection::all());
        let mut s = SearchMatches::new(Regex::new("hit").unwrap(), &t, &p.frames);
        let order: Vec<String> = s
            .ordered_nodes(&t, &p.frames)
            .iter()
            .map(|&n| name(&p, &t, n))
            .collect();
        assert_eq!(order, ["main;hit", "other;hit", "main;a;hit", "main;b;hit"]);
        let mut seen = Vec::new();
        let mut at = NodeId::ROOT;
        for _ in 0..5 {
            at = s.step(true, at, &t, &p.frames).unwrap();
            seen.push(name(&p, &t, at));
        }
        assert_eq!(seen[0], "main;hit");
        assert_eq!(seen[3], "main;b;hit");
        assert_eq!(seen[4], "main;hit", "wraps around");
        assert_eq!(s.position(), Some(1));
        let first = s.ordered_nodes(&t, &p.frames)[0];
        let back = s.step(false, first, &t, &p.frames).unwrap();
        assert_eq!(name(&p, &t, back), "main;b;hit");
        assert_eq!(s.position(), Some(4));
    }

    #[test]
    fn live_inserted_tries_are_sorted_exactly() {
        let p = profile_from(&[(&["main"], 1, None)]);
        let mut frames = p.frames.clone();
        let main = frames.get("main").unwrap();
        let (z, a, hit) = (
            frames.intern("zeta", None),
            frames.intern("alpha", None),
            frames.intern("hit", None),
        );
        let mut t = StackTrie::new();
        t.insert([main, z, hit], 1, &frames);
        t.insert([main, a, hit], 1, &frames);
        let mut s = SearchMatches::new(Regex::new("hit").unwrap(), &t, &frames);
        let parents: Vec<&str> = s
            .ordered_nodes(&t, &frames)
            .iter()
            .map(|&n| {
                let parent = t.node(n).parent().unwrap();
                frames.name(t.node(parent).frame().unwrap())
            })
            .collect();
        assert_eq!(parents, ["alpha", "zeta"]);
    }
}
