//! The flamegraph view: an icicle of the stack trie (root on top, one row per depth),
//! or of the inverted trie (leaf functions on top, their callers below).
//!
//! - `layout` — pure cell geometry (largest-remainder widths, "+N" merges);
//! - `state` — selection, zoom, orientation, search and scroll, held by path hash;
//! - `nav` — keyboard movement over the laid-out cells;
//! - `search` — regex matches, their order and the match coverage;
//! - `render` — drawing (also for per-instance panes);
//! - `input` — keys, search, mouse and wheel into state changes;
//! - here, the [`View`] implementation: each method hands over to one of them.
//!
//! It reads only the [`Snapshot`](crate::engine::Snapshot) it is given.

mod input;
mod layout;
mod nav;
mod render;
mod search;
mod state;

#[cfg(test)]
mod tests_keys;
#[cfg(test)]
mod tests_render;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use regex::Regex;

use crate::config::keymap::Keymap;
use crate::config::{Action, KeyContext};
use crate::views::{Effect, View, ViewContext};

pub use layout::{Cell, CellKind, FlameLayout, largest_remainder, layout};
pub use nav::Move;
pub use render::{render_flamegraph, render_flamegraph_with_focus};
pub use search::SearchMatches;
pub use state::{FlameState, active_trie};

/// The full-screen flamegraph.
#[derive(Clone, Debug)]
pub struct FlameGraphView {
    state: FlameState,
    /// Where the graph rows were last drawn (mouse hit-test, page size, layout width).
    graph: Rect,
    /// Where the breadcrumb line was last drawn (a click there zooms out).
    breadcrumb: Option<Rect>,
}

impl Default for FlameGraphView {
    fn default() -> Self {
        Self::new()
    }
}

impl FlameGraphView {
    pub fn new() -> Self {
        FlameGraphView {
            state: FlameState::new(),
            // Until the first draw, assume an 80×24 terminal minus the detail line.
            graph: Rect::new(0, 0, 80, 23),
            breadcrumb: None,
        }
    }

    pub fn state(&self) -> &FlameState {
        &self.state
    }
}

impl View for FlameGraphView {
    fn key_context(&self) -> KeyContext {
        KeyContext::Flamegraph
    }

    fn render(&mut self, area: Rect, buf: &mut Buffer, ctx: &ViewContext) {
        self.draw_view(area, buf, ctx);
    }

    fn handle(&mut self, action: Action, ctx: &ViewContext) -> Effect {
        self.act(action, ctx)
    }

    fn search(&mut self, pattern: Option<&Regex>, ctx: &ViewContext) -> Effect {
        self.find(pattern, ctx)
    }

    fn click(&mut self, column: u16, row: u16, double: bool, ctx: &ViewContext) -> Effect {
        self.clicked(column, row, double, ctx)
    }

    fn scroll(&mut self, lines: i32, ctx: &ViewContext) {
        self.wheel(lines, ctx);
    }

    fn snapshot_changed(&mut self, ctx: &ViewContext) {
        self.state.snapshot_changed(ctx.snapshot);
    }

    fn wants_inverted(&self) -> bool {
        self.state.is_inverted()
    }

    fn show_function(&mut self, frame: crate::model::FrameId, ctx: &ViewContext) {
        self.show(frame, ctx);
    }

    fn hint(&self, _keys: &Keymap) -> Option<String> {
        self.state.hint()
    }
}
