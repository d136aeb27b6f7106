//! The call tree: top-down from the snapshot's trie, bottom-up from its inverted trie,
//! drawn with tui-tree-widget. Items are built lazily (only opened nodes' children) and
//! rebuilt only when the snapshot, the open set, the search or the width changed.
//! Identifiers are path hashes, so the open nodes and the selection survive new
//! snapshots.
//!
//! Owns only its view state; reads nothing but the snapshot.

mod items;
mod search;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::sync::Arc;

use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::widgets::{Block, Borders, StatefulWidget, Widget};
use regex::Regex;
use tui_tree_widget::{Tree, TreeState};

use self::items::{BuildContext, Columns, Item, build_items, draw_header, sorted_children};
pub use self::items::{CHILD_CAP, SYNTHETIC_ID};
use self::search::MatchIndex;
use super::{Effect, View, ViewContext};
use crate::config::{Action, KeyContext, Theme};
use crate::engine::Snapshot;
use crate::model::{FrameId, NodeId, StackTrie};
use crate::views::text::truncate_end;

/// Levels of the hottest path opened when a tree is first shown (perf report does this).
const OPEN_HOT_LEVELS: usize = 3;
/// Rows a page key moves before the first render.
const DEFAULT_PAGE: usize = 10;
/// Width items are laid out for before the first render.
const DEFAULT_WIDTH: u16 = 78;

/// The state of one direction (top-down or bottom-up).
#[derive(Debug, Default)]
struct Pane {
    tree: TreeState<u64>,
    /// The hottest path was opened once; later snapshots keep what the user did.
    initialized: bool,
    /// Raised child caps ("… more" opened), by parent path hash.
    caps: HashMap<u64, usize>,
}

/// What the items were built from.
#[derive(Clone, Debug, PartialEq)]
struct ItemsKey {
    generation: u64,
    trie: usize,
    bottom_up: bool,
    version: u64,
    width: u16,
}

/// The call tree's state.
#[derive(Debug, Default)]
pub struct CallTreeView {
    bottom_up: bool,
    panes: [Pane; 2],
    items: Vec<Item>,
    columns: Option<Columns>,
    items_key: Option<ItemsKey>,
    /// Bumped by every change of the open set, the caps or the search.
    version: u64,
    search: Option<Regex>,
    /// Bumped by every new search pattern.
    search_version: u64,
    matches: Option<MatchIndex>,
    /// `(generation, trie identity, search version)` the matches were computed for: a
    /// walk over every node, so opening and closing nodes must not redo it.
    matches_key: Option<(u64, usize, u64)>,
    tree_area: Rect,
}

impl CallTreeView {
    pub fn new() -> Self {
        Self::default()
    }

    /// Showing the bottom-up (inverted) tree.
    pub fn is_bottom_up(&self) -> bool {
        self.bottom_up
    }

    /// The selected line: path hashes from the first level down (empty for none).
    pub fn selected_path(&self) -> &[u64] {
        self.pane().tree.selected()
    }

    /// The function of the selected line (for a status line showing its full name);
    /// `None` on "… more" or without a tree.
    pub fn selected_frame(&self, snapshot: &Snapshot) -> Option<FrameId> {
        let trie = self.trie(snapshot)?;
        let &hash = self.selected_path().last()?;
        trie.node(trie.find_path(hash)?).frame()
    }

    /// Is the node with this identifier path open.
    pub fn is_open(&self, path: &[u64]) -> bool {
        self.pane().tree.opened().contains(path)
    }

    /// Identifier paths of the lines on screen, top to bottom (as of the last build).
    pub fn visible_paths(&self) -> Vec<Vec<u64>> {
        self.pane()
            .tree
            .flatten(&self.items)
            .into_iter()
            .map(|f| f.identifier)
            .collect()
    }

    /// Matching nodes of the current search in the shown tree.
    pub fn match_count(&self) -> usize {
        self.matches.as_ref().map_or(0, |m| m.count)
    }

    fn pane(&self) -> &Pane {
        &self.panes[usize::from(self.bottom_up)]
    }

    fn pane_mut(&mut self) -> &mut Pane {
        &mut self.panes[usize::from(self.bottom_up)]
    }

    fn trie<'a>(&self, snapshot: &'a Snapshot) -> Option<&'a Arc<StackTrie>> {
        if self.bottom_up {
            snapshot.inverted.as_ref()
        } else {
            Some(&snapshot.trie)
        }
    }

    fn changed(&mut self) {
        self.version += 1;
    }

    /// Open the hottest path a few levels and select the first line, once per direction.
    fn initialize(&mut self, trie: &StackTrie, snapshot: &Snapshot) {
        if self.pane().initialized || trie.is_empty() {
            return;
        }
        let frames = &snapshot.frames;
        let mut node = NodeId::ROOT;
        let mut path = Vec::new();
        let mut first = None;
        for _ in 0..OPEN_HOT_LEVELS {
            let Some(&hottest) = sorted_children(trie, frames, node).first() else {
                break;
            };
            path.push(trie.node(hottest).path_hash);
            first = first.or_else(|| Some(path.clone()));
            if trie.children(hottest).next().is_none() {
                break;
            }
            self.pane_mut().tree.open(path.clone());
            node = hottest;
        }
        let pane = self.pane_mut();
        if let Some(first) = first {
            pane.tree.select(first);
        }
        pane.initialized = true;
        self.changed();
    }

    /// Rebuild matches and items when what they depend on changed.
    fn ensure_items(&mut self, snapshot: &Snapshot, theme: &Theme, width: u16) {
        let Some(trie) = self.trie(snapshot).cloned() else {
            self.items.clear();
            self.columns = None;
            self.items_key = None;
            self.matches = None;
            return;
        };
        self.initialize(&trie, snapshot);
        let trie_id = Arc::as_ptr(&trie) as usize;
        let matches_key = (snapshot.generation, trie_id, self.search_version);
        if self.matches_key != Some(matches_key) {
            self.matches = self
                .search
                .as_ref()
                .map(|re| MatchIndex::build(&trie, &snapshot.frames, re));
            self.matches_key = Some(matches_key);
        }
        let key = ItemsKey {
            generation: snapshot.generation,
            trie: trie_id,
            bottom_up: self.bottom_up,
            version: self.version,
            width,
        };
        if self.items_key.as_ref() == Some(&key) {
            return;
        }
        let columns = Columns::fit(width, trie.total_weight(), self.bottom_up);
        let pane = &self.panes[usize::from(self.bottom_up)];
        let ctx = BuildContext {
            trie: &trie,
            frames: &snapshot.frames,
            opened: pane.tree.opened(),
            caps: &pane.caps,
            columns: &columns,
            tree_width: width,
            matches: self.matches.as_ref().map(|m| m.frames.as_slice()),
            theme,
        };
        self.items = build_items(&ctx);
        self.columns = Some(columns);
        self.items_key = Some(key);
        self.keep_selection_visible();
    }

    /// A selection that vanished (a new snapshot without its path, a closed ancestor)
    /// moves to its nearest visible ancestor, or to the first line.
    fn keep_selection_visible(&mut self) {
        let visible = self.visible_paths();
        let mut selected = self.selected_path().to_vec();
        while !selected.is_empty() && !visible.contains(&selected) {
            selected.pop();
        }
        if selected.is_empty() {
            selected = visible.first().cloned().unwrap_or_default();
        }
        if selected != self.selected_path() {
            self.pane_mut().tree.select(selected);
        }
    }

    fn width(&self) -> u16 {
        self.items_key.as_ref().map_or(DEFAULT_WIDTH, |k| k.width)
    }

    fn page(&self) -> usize {
        match self.tree_area.height {
            0 => DEFAULT_PAGE,
            h => h as usize,
        }
    }

    /// Select the visible line `f(current index, line count)`.
    fn move_to(&mut self, f: impl FnOnce(Option<usize>, usize) -> usize) {
        let visible = self.visible_paths();
        if visible.is_empty() {
            return;
        }
        let current = visible.iter().position(|p| p == self.selected_path());
        let index = f(current, visible.len()).min(visible.len() - 1);
        let target = visible[index].clone();
        self.pane_mut().tree.select(target);
    }

    /// Open or close the selected node; on "… more", show more of its siblings.
    fn activate(&mut self, snapshot: &Snapshot) {
        let selected = self.selected_path().to_vec();
        if selected.last() == Some(&SYNTHETIC_ID) {
            self.show_more(snapshot, &selected);
        } else {
            self.pane_mut().tree.toggle_selected();
        }
        self.changed();
    }

    fn show_more(&mut self, snapshot: &Snapshot, more: &[u64]) {
        let Some(trie) = self.trie(snapshot).cloned() else {
            return;
        };
        let parent_hash = match more.len() {
            0 | 1 => trie.root().path_hash,
            n => more[n - 2],
        };
        let pane = self.pane_mut();
        let cap = pane.caps.entry(parent_hash).or_insert(CHILD_CAP);
        *cap += CHILD_CAP;
    }

    fn step_match(&mut self, snapshot: &Snapshot, forward: bool) -> Effect {
        let (Some(trie), Some(matches)) = (self.trie(snapshot).cloned(), self.matches.as_ref()) else {
            return Effect::None;
        };
        let selected: Vec<u64> = self
            .selected_path()
            .iter()
            .copied()
            .filter(|&h| h != SYNTHETIC_ID)
            .collect();
        let current = selected.last().copied();
        let Some(found) = matches.step(&trie, &snapshot.frames, current, &selected, forward) else {
            let re = self.search.as_ref().map_or("", |r| r.as_str());
            return Effect::Message(format!("no match for {re}"));
        };
        self.reveal(&trie, snapshot, found);
        Effect::None
    }

    /// Open the ancestors of `node`, raise caps that would hide it, and select it.
    fn reveal(&mut self, trie: &StackTrie, snapshot: &Snapshot, node: NodeId) {
        let mut chain = vec![node];
        while let Some(parent) = trie.node(chain[chain.len() - 1]).parent() {
            chain.push(parent);
        }
        chain.reverse(); // root first
        let frames = &snapshot.frames;
        let pane = &mut self.panes[usize::from(self.bottom_up)];
        let mut path = Vec::with_capacity(chain.len());
        for pair in chain.windows(2) {
            let (parent, child) = (pair[0], pair[1]);
            let rank = sorted_children(trie, frames, parent)
                .iter()
                .position(|&k| k == child)
                .unwrap_or(0);
            let parent_hash = trie.node(parent).path_hash;
            let cap = pane.caps.get(&parent_hash).copied().unwrap_or(CHILD_CAP);
            if rank >= cap {
                pane.caps.insert(parent_hash, rank + 1);
            }
            if !path.is_empty() {
                pane.tree.open(path.clone());
            }
            path.push(trie.node(child).path_hash);
        }
        pane.tree.select(path);
        self.changed();
    }
}

impl View for CallTreeView {
    fn key_context(&self) -> KeyContext {
        KeyContext::CallTree
    }

    fn render(&mut self, area: Rect, buf: &mut Buffer, ctx: &ViewContext) {
        let theme = ctx.theme;
        let border = if ctx.focused {
            theme.border_focused
        } else {
            theme.border
        };
        let direction = if self.bottom_up { "bottom-up" } else { "top-down" };
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(border)
            .title(format!(" Call tree · {direction} "))
            .title_style(theme.title);
        let inner = block.inner(area);
        block.render(area, buf);
        if inner.width == 0 || inner.height == 0 {
            self.tree_area = Rect::default();
            return;
        }
        buf.set_style(inner, theme.text);
        self.ensure_items(ctx.snapshot, theme, inner.width);
        let message = match self.trie(ctx.snapshot) {
            None => Some("building bottom-up view…"),
            Some(trie) if trie.is_empty() => Some("no samples yet"),
            Some(_) => None,
        };
        if let Some(message) = message {
            self.tree_area = Rect::default();
            let text = truncate_end(message, inner.width as usize);
            buf.set_stringn(inner.x, inner.y, text, inner.width as usize, theme.dim);
            return;
        }
        let header_rows = u16::from(inner.height >= 2);
        if header_rows > 0
            && let Some(columns) = &self.columns
        {
            draw_header(buf, Rect { height: 1, ..inner }, columns, theme.header);
        }
        let tree_area = Rect {
            y: inner.y + header_rows,
            height: inner.height - header_rows,
            ..inner
        };
        self.tree_area = tree_area;
        let Ok(tree) = Tree::new(&self.items) else {
            // Unreachable: top-level ids are deduplicated when the items are built.
            return;
        };
        let tree = tree.style(theme.text).highlight_style(theme.selected);
        let state = &mut self.panes[usize::from(self.bottom_up)].tree;
        StatefulWidget::render(tree, tree_area, buf, state);
    }

    fn handle(&mut self, action: Action, ctx: &ViewContext) -> Effect {
        let snapshot = ctx.snapshot;
        if action == Action::ToggleBottomUp {
            self.bottom_up = !self.bottom_up;
            self.changed();
            self.ensure_items(snapshot, ctx.theme, self.width());
            return Effect::None;
        }
        self.ensure_items(snapshot, ctx.theme, self.width());
        let page = self.page();
        match action {
            Action::Up => self.move_to(|i, _| i.map_or(0, |i| i.saturating_sub(1))),
            Action::Down => self.move_to(|i, _| i.map_or(0, |i| i + 1)),
            Action::PageUp => self.move_to(|i, _| i.map_or(0, |i| i.saturating_sub(page))),
            Action::PageDown => self.move_to(|i, _| i.map_or(0, |i| i + page)),
            Action::Top => self.move_to(|_, _| 0),
            Action::Bottom => self.move_to(|_, n| n - 1),
            Action::Expand | Action::Right => {
                if self.selected_path().last() == Some(&SYNTHETIC_ID) {
                    self.activate(snapshot);
                } else {
                    self.pane_mut().tree.key_right();
                    self.changed();
                }
            }
            Action::Collapse | Action::Left => {
                self.pane_mut().tree.key_left();
                self.changed();
            }
            Action::Activate => self.activate(snapshot),
            Action::NextMatch | Action::PrevMatch => {
                let effect = self.step_match(snapshot, action == Action::NextMatch);
                self.ensure_items(snapshot, ctx.theme, self.width());
                return effect;
            }
            Action::ClearSearch => return self.search(None, ctx),
            _ => return Effect::None,
        }
        self.ensure_items(snapshot, ctx.theme, self.width());
        Effect::None
    }

    fn search(&mut self, pattern: Option<&Regex>, ctx: &ViewContext) -> Effect {
        self.search = pattern.cloned();
        self.search_version += 1;
        self.changed();
        self.ensure_items(ctx.snapshot, ctx.theme, self.width());
        Effect::None
    }

    fn click(&mut self, column: u16, row: u16, double: bool, ctx: &ViewContext) -> Effect {
        let position = Position::new(column, row);
        let Some(path) = self.pane().tree.rendered_at(position).map(<[u64]>::to_vec) else {
            return Effect::None;
        };
        self.pane_mut().tree.select(path);
        if double {
            self.activate(ctx.snapshot);
            self.ensure_items(ctx.snapshot, ctx.theme, self.width());
        }
        Effect::None
    }

    fn scroll(&mut self, lines: i32, _ctx: &ViewContext) {
        let tree = &mut self.pane_mut().tree;
        let amount = lines.unsigned_abs() as usize;
        if lines > 0 {
            tree.scroll_down(amount);
        } else {
            tree.scroll_up(amount);
        }
    }

    fn snapshot_changed(&mut self, ctx: &ViewContext) {
        self.ensure_items(ctx.snapshot, ctx.theme, self.width());
    }

    fn wants_inverted(&self) -> bool {
        self.is_bottom_up()
    }

    fn hint(&self, _keys: &crate::config::keymap::Keymap) -> Option<String> {
        let direction = if self.bottom_up { "bottom-up" } else { "top-down" };
        Some(match (&self.search, &self.matches) {
            (Some(_), Some(m)) if m.count == 1 => format!("{direction} · 1 match"),
            (Some(_), Some(m)) => format!("{direction} · {} matches", m.count),
            _ => direction.to_string(),
        })
    }
}
