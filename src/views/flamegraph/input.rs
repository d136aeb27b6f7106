//! The flamegraph's keys, search, mouse and wheel: each turns into a change of its state
//! (selection, zoom, scroll, search), over the layout the keys move in.

use regex::Regex;

use super::FlameGraphView;
use super::layout::{CellKind, FlameLayout, layout, row_of};
use super::nav::Move;
use super::state::{active_trie, is_within};
use crate::config::Action;
use crate::model::{FrameTable, StackTrie};
use crate::views::{Effect, ViewContext};

impl FlameGraphView {
    /// The layout the keys move over: the rows on screen, and one more below the selection.
    fn nav_layout(&self, trie: &StackTrie, frames: &FrameTable) -> FlameLayout {
        let zoom = self.state.zoom(trie);
        let selected_row = row_of(trie, zoom, self.state.selected(trie));
        let rows = (usize::from(self.state.scroll()) + usize::from(self.graph.height)).max(selected_row + 2);
        layout(
            trie,
            frames,
            zoom,
            self.graph.width,
            rows.min(usize::from(u16::MAX)) as u16,
        )
    }

    fn page(&self) -> i32 {
        i32::from(self.graph.height.max(2) - 1)
    }

    fn scroll_rows(&mut self, lines: i32, trie: &StackTrie, frames: &FrameTable) {
        let zoom = self.state.zoom(trie);
        let want = i32::from(self.state.scroll()) + lines.max(0) + i32::from(self.graph.height);
        let lay = layout(trie, frames, zoom, self.graph.width, want.clamp(0, 4096) as u16);
        let max = lay.rows().len().saturating_sub(usize::from(self.graph.height));
        self.state.scroll_by(lines, max.min(usize::from(u16::MAX)) as u16);
    }

    /// After a jump: a match too narrow for a cell gets its parent zoomed, then itself.
    fn reveal_selection(&mut self, trie: &StackTrie, frames: &FrameTable) {
        let selected = self.state.selected(trie);
        if self.nav_layout(trie, frames).find(trie, selected).is_some() {
            return;
        }
        if let Some(parent) = trie.node(selected).parent() {
            self.state.zoom_to(trie, parent);
            self.state.select(trie, selected);
            if self.nav_layout(trie, frames).find(trie, selected).is_some() {
                return;
            }
        }
        self.state.zoom_to(trie, selected);
    }

    /// A key's action.
    pub(super) fn act(&mut self, action: Action, ctx: &ViewContext) -> Effect {
        let snapshot = ctx.snapshot;
        if action == Action::ToggleInverted {
            self.state.toggle_inverted(snapshot);
            return Effect::None;
        }
        let Some(trie) = active_trie(snapshot, self.state.is_inverted()) else {
            return Effect::None;
        };
        let frames = &snapshot.frames;
        let movement = match action {
            Action::Up | Action::Parent => Some(Move::Parent),
            Action::Down | Action::Child => Some(Move::WidestChild),
            Action::Left => Some(Move::Left),
            Action::Right => Some(Move::Right),
            Action::PrevSibling => Some(Move::PrevSibling),
            Action::NextSibling => Some(Move::NextSibling),
            Action::Bottom => Some(Move::Deepest),
            _ => None,
        };
        if let Some(m) = movement {
            let lay = if m == Move::Deepest {
                // Layout stops at the first empty row, so this costs the real depth only.
                let zoom = self.state.zoom(trie);
                layout(trie, frames, zoom, self.graph.width, u16::MAX)
            } else {
                self.nav_layout(trie, frames)
            };
            self.state.move_selection(trie, &lay, m);
            return Effect::None;
        }
        match action {
            Action::ZoomIn | Action::Activate => {
                let selected = self.state.selected(trie);
                self.state.zoom_to(trie, selected);
            }
            Action::Back if self.state.clear_search() => {}
            Action::ZoomOut | Action::Back => {
                self.state.zoom_out(trie);
            }
            Action::ZoomReset => self.state.reset_zoom(),
            Action::Top => {
                let zoom = self.state.zoom(trie);
                self.state.select(trie, zoom);
            }
            Action::PageDown => self.scroll_rows(self.page(), trie, frames),
            Action::PageUp => self.scroll_rows(-self.page(), trie, frames),
            Action::NextMatch | Action::PrevMatch => {
                if self.state.step_match(action == Action::NextMatch, trie, frames) {
                    self.reveal_selection(trie, frames);
                } else if self.state.search().is_some() {
                    return Effect::Message("no frame matches the search".into());
                }
            }
            Action::ClearSearch => {
                self.state.clear_search();
            }
            Action::Focus => {
                let selected = self.state.selected(trie);
                return match trie.node(selected).frame() {
                    Some(f) => Effect::SetFocus(Some(format!("^{}$", regex::escape(frames.name(f))))),
                    None => Effect::Message("select a function to focus on".into()),
                };
            }
            Action::Unfocus => return Effect::SetFocus(None),
            _ => {}
        }
        Effect::None
    }

    /// A search typed in the app's input line.
    pub(super) fn find(&mut self, pattern: Option<&Regex>, ctx: &ViewContext) -> Effect {
        let Some(trie) = active_trie(ctx.snapshot, self.state.is_inverted()) else {
            return Effect::None;
        };
        self.state.set_search(pattern, trie, &ctx.snapshot.frames);
        match (pattern, self.state.search()) {
            (Some(p), Some(s)) if s.count() == 0 => {
                Effect::Message(format!("no frame matches /{}/", p.as_str()))
            }
            _ => Effect::None,
        }
    }

    /// A click: the breadcrumb zooms out, a cell is selected (zoomed on a double click).
    pub(super) fn clicked(&mut self, column: u16, row: u16, double: bool, ctx: &ViewContext) -> Effect {
        let Some(trie) = active_trie(ctx.snapshot, self.state.is_inverted()) else {
            return Effect::None;
        };
        if self.breadcrumb.is_some_and(|b| b.contains((column, row).into())) {
            self.state.zoom_out(trie);
            return Effect::None;
        }
        if !self.graph.contains((column, row).into()) {
            return Effect::None;
        }
        let frames = &ctx.snapshot.frames;
        let lay = self.nav_layout(trie, frames);
        let depth = usize::from(row - self.graph.y) + usize::from(self.state.scroll());
        let x = column - self.graph.x;
        // A "+N" cell stands for its parent's narrow children: clicking it picks the parent.
        let node = match lay.cell_at(depth, x) {
            Some(c) if c.kind == CellKind::Frame => c.node,
            Some(_) => depth
                .checked_sub(1)
                .and_then(|d| lay.cell_at(d, x))
                .and_then(|c| c.node),
            None => None,
        };
        if let Some(node) = node {
            self.state.select(trie, node);
            if double {
                self.state.zoom_to(trie, node);
            }
        }
        Effect::None
    }

    /// The wheel: rows of the graph.
    pub(super) fn wheel(&mut self, lines: i32, ctx: &ViewContext) {
        if let Some(trie) = active_trie(ctx.snapshot, self.state.is_inverted()) {
            self.scroll_rows(lines, trie, &ctx.snapshot.frames);
        }
    }

    /// Select the widest node of `frame` (the shallowest among equals), zooming out if it
    /// lies outside the zoomed subtree: where hotspots' Enter lands.
    pub(super) fn show(&mut self, frame: crate::model::FrameId, ctx: &ViewContext) {
        let Some(trie) = active_trie(ctx.snapshot, self.state.is_inverted()) else {
            return;
        };
        let best = trie
            .ids()
            .filter(|&id| trie.node(id).frame() == Some(frame))
            .max_by_key(|&id| (trie.node(id).total_weight, std::cmp::Reverse(trie.node(id).depth)));
        if let Some(node) = best {
            if !is_within(trie, node, self.state.zoom(trie)) {
                self.state.reset_zoom();
            }
            self.state.select(trie, node);
        }
    }
}
