//! Flamegraph view state: what is selected, what is zoomed, which trie (icicle or
//! inverted), the search and the vertical scroll. Nodes are held by their path hashes (the
//! whole root-first chain), so a live update re-finds them in the new trie and a vanished
//! path falls back to its nearest surviving ancestor.
//!
//! Movement that needs the on-screen cells lives in `nav.rs`; drawing in `render.rs`.

use regex::Regex;

use super::search::SearchMatches;
use crate::engine::Snapshot;
use crate::model::{FrameTable, NodeId, StackTrie};

/// A node held by identity rather than by index.
#[derive(Clone, Debug, PartialEq)]
struct Anchor {
    /// Path hashes from the root's first child down to the node; empty for the root.
    path: Vec<u64>,
    /// The node in the trie the anchor was last resolved against (a hint, checked).
    id: NodeId,
}

impl Anchor {
    fn root() -> Self {
        Anchor {
            path: Vec::new(),
            id: NodeId::ROOT,
        }
    }

    fn of(trie: &StackTrie, id: NodeId) -> Self {
        let mut path = Vec::with_capacity(trie.node(id).depth as usize);
        let mut cur = id;
        while let Some(parent) = trie.node(cur).parent() {
            path.push(trie.node(cur).path_hash);
            cur = parent;
        }
        path.reverse();
        Anchor { path, id }
    }

    /// The node in `trie`, or its deepest ancestor that exists there.
    fn resolve(&self, trie: &StackTrie) -> NodeId {
        let Some(&last) = self.path.last() else {
            return NodeId::ROOT;
        };
        if self.id.index() < trie.len() && trie.node(self.id).path_hash == last {
            return self.id;
        }
        self.path
            .iter()
            .rev()
            .find_map(|&h| trie.find_path(h))
            .unwrap_or(NodeId::ROOT)
    }
}

/// Whether `node` is `ancestor` or below it.
pub fn is_within(trie: &StackTrie, node: NodeId, ancestor: NodeId) -> bool {
    let target = trie.node(ancestor).depth;
    let mut cur = node;
    while trie.node(cur).depth > target {
        match trie.node(cur).parent() {
            Some(p) => cur = p,
            None => return false,
        }
    }
    cur == ancestor
}

/// The trie a flamegraph in this orientation draws: `None` while the inverted trie is
/// still being built.
pub fn active_trie(snapshot: &Snapshot, inverted: bool) -> Option<&StackTrie> {
    if inverted {
        snapshot.inverted.as_deref()
    } else {
        Some(&snapshot.trie)
    }
}

/// State of one flamegraph (the full view or a per-instance pane).
#[derive(Clone, Debug)]
pub struct FlameState {
    selected: Anchor,
    zoom: Anchor,
    inverted: bool,
    search: Option<SearchMatches>,
    /// Rows of the graph scrolled off the top.
    scroll: u16,
    /// The selection moved: the next render scrolls it into view.
    follow_selection: bool,
    /// A switch of orientation waiting for its trie.
    pending_switch: Option<PendingSwitch>,
}

/// What to select once the other trie exists.
#[derive(Clone, Debug)]
struct PendingSwitch {
    /// The selected function's name; `None` when the root was selected.
    function: Option<String>,
}

impl Default for FlameState {
    fn default() -> Self {
        Self::new()
    }
}

impl FlameState {
    pub fn new() -> Self {
        FlameState {
            selected: Anchor::root(),
            zoom: Anchor::root(),
            inverted: false,
            search: None,
            scroll: 0,
            follow_selection: true,
            pending_switch: None,
        }
    }

    /// The selected node in `trie` (its nearest surviving ancestor if the path is gone),
    /// never outside the zoomed subtree.
    pub fn selected(&self, trie: &StackTrie) -> NodeId {
        let selected = self.selected.resolve(trie);
        let zoom = self.zoom(trie);
        if is_within(trie, selected, zoom) {
            selected
        } else {
            zoom
        }
    }

    /// The zoom root in `trie`.
    pub fn zoom(&self, trie: &StackTrie) -> NodeId {
        self.zoom.resolve(trie)
    }

    pub fn is_zoomed(&self) -> bool {
        !self.zoom.path.is_empty()
    }

    /// Leaf functions on top, callers below.
    pub fn is_inverted(&self) -> bool {
        self.inverted
    }

    pub fn search(&self) -> Option<&SearchMatches> {
        self.search.as_ref()
    }

    pub fn scroll(&self) -> u16 {
        self.scroll
    }

    pub fn select(&mut self, trie: &StackTrie, node: NodeId) {
        self.selected = Anchor::of(trie, node);
        self.follow_selection = true;
    }

    /// Zoom so `node` spans the width; the selection moves into the subtree if outside.
    pub fn zoom_to(&mut self, trie: &StackTrie, node: NodeId) {
        self.zoom = Anchor::of(trie, node);
        if !is_within(trie, self.selected.resolve(trie), node) {
            self.selected = self.zoom.clone();
        }
        self.scroll = 0;
        self.follow_selection = true;
    }

    /// Zoom to the zoom root's parent; false when not zoomed.
    pub fn zoom_out(&mut self, trie: &StackTrie) -> bool {
        match trie.node(self.zoom(trie)).parent() {
            Some(parent) => {
                self.zoom_to(trie, parent);
                true
            }
            None => false,
        }
    }

    pub fn reset_zoom(&mut self) {
        self.zoom = Anchor::root();
        self.scroll = 0;
        self.follow_selection = true;
    }

    /// Search `trie` for frames matching `regex` (`None` clears the search).
    pub fn set_search(&mut self, regex: Option<&Regex>, trie: &StackTrie, frames: &FrameTable) {
        self.search = regex.map(|r| SearchMatches::new(r.clone(), trie, frames));
    }

    /// Drop the search; false when there was none.
    pub fn clear_search(&mut self) -> bool {
        self.search.take().is_some()
    }

    /// Step to the next (or previous) match, zooming out to the lowest ancestor of the
    /// zoom root that contains it when it lies outside the zoomed subtree.
    pub fn step_match(&mut self, forward: bool, trie: &StackTrie, frames: &FrameTable) -> bool {
        let from = self.selected(trie);
        let Some(found) = self
            .search
            .as_mut()
            .and_then(|s| s.step(forward, from, trie, frames))
        else {
            return false;
        };
        let mut zoom = self.zoom(trie);
        while !is_within(trie, found, zoom) {
            match trie.node(zoom).parent() {
                Some(p) => zoom = p,
                None => break,
            }
        }
        if zoom != self.zoom(trie) {
            self.zoom_to(trie, zoom);
        }
        self.select(trie, found);
        true
    }

    /// A newer snapshot: re-find selection and zoom, redo the search, and finish a pending
    /// switch to the inverted trie once it exists.
    pub fn snapshot_changed(&mut self, snapshot: &Snapshot) {
        let Some(trie) = active_trie(snapshot, self.inverted) else {
            return;
        };
        let frames = &snapshot.frames;
        if let Some(switch) = self.pending_switch.take() {
            let target = switch
                .function
                .and_then(|name| frames.get(&name))
                .and_then(|f| function_node(trie, f))
                .unwrap_or(NodeId::ROOT);
            self.zoom = Anchor::root();
            self.select(trie, target);
            self.scroll = 0;
        } else {
            let zoom = self.zoom.resolve(trie);
            self.zoom = Anchor::of(trie, zoom);
            let selected = self.selected(trie);
            self.selected = Anchor::of(trie, selected);
        }
        self.search = self.search.as_ref().map(|s| s.rebuild(trie, frames));
    }

    /// Switch between the icicle and the inverted trie, selecting the same function at
    /// depth 1 of the other one. While the inverted trie is not built the flag flips and
    /// the rest of the state waits for `snapshot_changed`.
    pub fn toggle_inverted(&mut self, snapshot: &Snapshot) {
        let current = active_trie(snapshot, self.inverted);
        let function = current.and_then(|t| {
            let frame = t.node(self.selected(t)).frame()?;
            Some(snapshot.frames.name(frame).to_string())
        });
        self.inverted = !self.inverted;
        if current.is_none() {
            // Back before the inverted trie arrived: the old anchors still hold.
            self.pending_switch = None;
            self.follow_selection = true;
            return;
        }
        self.pending_switch = Some(PendingSwitch { function });
        if active_trie(snapshot, self.inverted).is_some() {
            self.snapshot_changed(snapshot);
        }
    }

    /// Mouse wheel or page keys: scroll without moving the selection.
    pub fn scroll_by(&mut self, lines: i32, max_scroll: u16) {
        let to = (i32::from(self.scroll) + lines).clamp(0, i32::from(max_scroll));
        self.scroll = to as u16;
        self.follow_selection = false;
    }

    /// Before drawing `rows` rows of a graph `total_rows` deep: scroll so the selected row
    /// shows if the selection moved, and never past the last row.
    pub fn fit_scroll(&mut self, selected_row: usize, rows: usize, total_rows: usize) {
        if rows == 0 {
            return;
        }
        let mut scroll = usize::from(self.scroll);
        if self.follow_selection {
            if selected_row < scroll {
                scroll = selected_row;
            } else if selected_row >= scroll + rows {
                scroll = selected_row + 1 - rows;
            }
            self.follow_selection = false;
        }
        scroll = scroll.min(total_rows.saturating_sub(rows));
        self.scroll = u16::try_from(scroll).unwrap_or(u16::MAX);
    }

    /// "match 12.3% · 4/17" while searching.
    pub fn hint(&self) -> Option<String> {
        let s = self.search.as_ref()?;
        let n = s.count();
        Some(match s.position() {
            Some(at) => format!("match {:.1}% · {at}/{n}", s.percent()),
            None => format!("match {:.1}% · {n} frames", s.percent()),
        })
    }
}

/// The node of `frame` at depth 1, else its shallowest (then leftmost-built) node.
fn function_node(trie: &StackTrie, frame: crate::model::FrameId) -> Option<NodeId> {
    if let Some(top) = trie
        .children(NodeId::ROOT)
        .find(|&c| trie.node(c).frame() == Some(frame))
    {
        return Some(top);
    }
    trie.ids()
        .filter(|&id| trie.node(id).frame() == Some(frame))
        .min_by_key(|&id| (trie.node(id).depth, id))
}
