//! Keyboard movement over the laid-out cells: parent, widest child, siblings, and the
//! row-wise left / right of flamelens (crossing parents). Movement goes to cells a user can
//! see, so it reads the layout, never the whole trie; "+N" cells have no node and are
//! stepped over.

use super::layout::{CellKind, FlameLayout};
use super::state::FlameState;
use crate::model::{NodeId, StackTrie};

/// Where a movement goes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Move {
    Parent,
    WidestChild,
    PrevSibling,
    NextSibling,
    Left,
    Right,
    /// Follow the widest child down to the last laid-out row (the hottest path).
    Deepest,
}

/// The node `movement` leads to from `from`, if any.
pub fn target(trie: &StackTrie, layout: &FlameLayout, from: NodeId, movement: Move) -> Option<NodeId> {
    if movement == Move::Parent {
        return (Some(from) != layout.zoom())
            .then(|| trie.node(from).parent())
            .flatten();
    }
    let (depth, index) = layout.find(trie, from)?;
    let row = layout.row(depth);
    let frame_at = |i: usize| row.get(i).filter(|c| c.kind == CellKind::Frame)?.node;
    match movement {
        Move::Parent => None,
        Move::WidestChild => widest_child(layout, depth, index),
        Move::Left => (0..index).rev().find_map(frame_at),
        Move::Right => (index + 1..row.len()).find_map(frame_at),
        Move::PrevSibling | Move::NextSibling => {
            let parent = trie.node(from).parent();
            let same_parent = |i: usize| frame_at(i).filter(|&n| trie.node(n).parent() == parent);
            if movement == Move::PrevSibling {
                (0..index).rev().find_map(same_parent)
            } else {
                (index + 1..row.len()).find_map(same_parent)
            }
        }
        Move::Deepest => {
            let (mut depth, mut index) = (depth, index);
            let mut last = None;
            while let Some(child) = widest_child(layout, depth, index) {
                last = Some(child);
                (depth, index) = layout.find(trie, child)?;
            }
            last
        }
    }
}

/// The widest frame cell under cell `index` of row `depth` (the leftmost on a tie).
fn widest_child(layout: &FlameLayout, depth: usize, index: usize) -> Option<NodeId> {
    let parent = layout.row(depth).get(index)?;
    let end = parent.x + parent.width;
    layout
        .row(depth + 1)
        .iter()
        .filter(|c| c.kind == CellKind::Frame && c.x >= parent.x && c.x < end)
        .fold(None::<&super::layout::Cell>, |best, c| match best {
            Some(b) if b.width >= c.width => Some(b),
            _ => Some(c),
        })
        .and_then(|c| c.node)
}

impl FlameState {
    /// Move the selection; false when there is nowhere to go. A selection too narrow for a cell (reached by a search) moves from the ancestor
    /// that shows it.
    pub fn move_selection(&mut self, trie: &StackTrie, layout: &FlameLayout, m: Move) -> bool {
        let mut from = self.selected(trie);
        if m != Move::Parent {
            while layout.find(trie, from).is_none() && Some(from) != layout.zoom() {
                match trie.node(from).parent() {
                    Some(p) => from = p,
                    None => break,
                }
            }
        }
        match target(trie, layout, from, m) {
            Some(node) => {
                self.select(trie, node);
                true
            }
            None => false,
        }
    }
}
