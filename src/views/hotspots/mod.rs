//! The hotspot table: one row per function with self and total weight, sortable by
//! column, filtered by the search regex and by a percent limit. The selection is a
//! [`FrameId`] (frame ids are stable: the frame table only grows), so it survives new
//! snapshots; Enter asks the app to show the function in the flamegraph.
//!
//! Owns only its view state; reads nothing but the snapshot.

mod draw;
mod rows;
#[cfg(test)]
mod tests;

use std::sync::Arc;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::{Block, Borders, Widget};
use regex::Regex;

use self::draw::{ColumnLayout, RowContext, draw_header, draw_line, draw_row};
use self::rows::row_shape;
pub use self::rows::{PERCENT_LIMITS, RowQuery, SortColumn, VisibleRows, visible_rows};
use super::{Effect, View, ViewContext};
use crate::config::{Action, KeyContext};
use crate::engine::Snapshot;
use crate::model::FrameId;

/// Rows a page key moves when the table has not been drawn yet.
const DEFAULT_PAGE: usize = 10;

/// The hotspot table's state.
#[derive(Debug, Default)]
pub struct HotspotsView {
    query: RowQuery,
    /// The selected function; kept across snapshots.
    selected: Option<FrameId>,
    /// Where the selection was, for when its function leaves the table (filter, limit).
    selected_index: usize,
    /// First row drawn.
    offset: usize,
    /// Body rows drawn last time (page size, wheel and click mapping).
    body: Rect,
    rows: VisibleRows,
    /// What `rows` was computed from: snapshot generation and hotspots identity.
    rows_key: Option<(u64, usize)>,
}

impl HotspotsView {
    pub fn new() -> Self {
        Self::default()
    }

    /// The sort column and whether it is reversed.
    pub fn sort(&self) -> (SortColumn, bool) {
        (self.query.sort, self.query.reversed)
    }

    /// The percent limit in effect.
    pub fn limit_percent(&self) -> f64 {
        self.query.limit_percent()
    }

    /// The selected function, if the table has rows.
    pub fn selected(&self) -> Option<FrameId> {
        self.selected
    }

    /// The functions on screen (after filter and limit), in display order.
    pub fn visible_frames(&mut self, snapshot: &Snapshot) -> Vec<FrameId> {
        self.refresh(snapshot);
        let rows = &snapshot.hotspots.rows;
        self.rows.order.iter().map(|&i| rows[i].frame).collect()
    }

    fn invalidate(&mut self) {
        self.rows_key = None;
    }

    /// Recompute the visible rows when the snapshot or the query changed, and re-anchor
    /// the selection on its function.
    fn refresh(&mut self, snapshot: &Snapshot) {
        let key = (snapshot.generation, Arc::as_ptr(&snapshot.hotspots) as usize);
        if self.rows_key == Some(key) {
            return;
        }
        self.rows = visible_rows(&snapshot.hotspots, &snapshot.frames, &self.query);
        self.rows_key = Some(key);
        let rows = &snapshot.hotspots.rows;
        let found = self
            .selected
            .and_then(|f| self.rows.order.iter().position(|&i| rows[i].frame == f));
        match found {
            Some(index) => self.selected_index = index,
            None => self.select_index(snapshot, self.selected_index),
        }
    }

    /// Select the row at `index` (clamped); nothing when the table is empty.
    fn select_index(&mut self, snapshot: &Snapshot, index: usize) {
        let len = self.rows.order.len();
        if len == 0 {
            self.selected = None;
            self.selected_index = 0;
            return;
        }
        let index = index.min(len - 1);
        self.selected_index = index;
        self.selected = Some(snapshot.hotspots.rows[self.rows.order[index]].frame);
    }

    fn page(&self) -> usize {
        if self.body.height == 0 {
            DEFAULT_PAGE
        } else {
            self.body.height as usize
        }
    }

    /// Move the selection by `delta` rows.
    fn move_by(&mut self, snapshot: &Snapshot, delta: isize) {
        let index = self.selected_index.saturating_add_signed(delta);
        self.select_index(snapshot, index);
    }

    /// Keep the selected row inside the `height` rows drawn from `offset`.
    fn scroll_to_selection(&mut self, height: usize) {
        let len = self.rows.order.len();
        self.offset = self.offset.min(len.saturating_sub(height.max(1)));
        if self.selected_index < self.offset {
            self.offset = self.selected_index;
        } else if height > 0 && self.selected_index >= self.offset + height {
            self.offset = self.selected_index + 1 - height;
        }
    }

    fn activate(&self) -> Effect {
        match self.selected {
            Some(frame) => Effect::ShowFunction(frame),
            None => Effect::None,
        }
    }

    fn footer(&self) -> String {
        let mut parts = Vec::new();
        if let Some(re) = &self.query.filter {
            parts.push(format!(
                "filter: {} · {} of {}",
                re.as_str(),
                self.rows.order.len(),
                self.rows.total
            ));
        }
        if self.query.limit > 0 {
            parts.push(format!(
                "limit {}% · {} hidden",
                self.query.limit_percent(),
                self.rows.hidden
            ));
        }
        if parts.is_empty() {
            parts.push(format!("{} functions", self.rows.total));
        }
        parts.join(" · ")
    }
}

impl View for HotspotsView {
    fn key_context(&self) -> KeyContext {
        KeyContext::Hotspots
    }

    fn render(&mut self, area: Rect, buf: &mut Buffer, ctx: &ViewContext) {
        let theme = ctx.theme;
        let snapshot = ctx.snapshot;
        self.refresh(snapshot);
        let border = if ctx.focused {
            theme.border_focused
        } else {
            theme.border
        };
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(border)
            .title(" Hotspots ")
            .title_style(theme.title);
        let inner = block.inner(area);
        block.render(area, buf);
        if inner.width == 0 || inner.height == 0 {
            self.body = Rect::default();
            return;
        }
        buf.set_style(inner, theme.text);
        // Header, body, footer, dropping the footer and then the header when short.
        let header_rows = u16::from(inner.height >= 2);
        let footer_rows = u16::from(inner.height >= 3);
        let body = Rect {
            y: inner.y + header_rows,
            height: inner.height - header_rows - footer_rows,
            ..inner
        };
        self.body = body;
        let hotspots = &snapshot.hotspots;
        let max_weight = hotspots.rows.iter().map(|r| r.total_weight).max();
        let shape = row_shape(&snapshot.frames, hotspots, &self.rows.order);
        let layout = ColumnLayout::fit(inner.width, max_weight.unwrap_or(0), self.query.sort, shape);
        if header_rows > 0 {
            let header = Rect { height: 1, ..inner };
            draw_header(buf, header, &layout, self.query.sort, self.query.reversed, theme);
        }
        if footer_rows > 0 {
            let footer = Rect {
                y: inner.y + inner.height - 1,
                height: 1,
                ..inner
            };
            draw_line(buf, footer, &self.footer(), theme.dim);
        }
        if hotspots.rows.is_empty() {
            draw_line(buf, Rect { height: 1, ..body }, "no samples yet", theme.dim);
            return;
        }
        self.scroll_to_selection(body.height as usize);
        let max_self = hotspots.rows.iter().map(|r| r.self_weight).max();
        let row_ctx = |selected| RowContext {
            frames: &snapshot.frames,
            total_weight: hotspots.total_weight,
            max_self: max_self.unwrap_or(0),
            selected,
            theme,
        };
        for (line, index) in (self.offset..self.rows.order.len())
            .take(body.height as usize)
            .enumerate()
        {
            let row = &hotspots.rows[self.rows.order[index]];
            let area = Rect {
                y: body.y + line as u16,
                height: 1,
                ..body
            };
            draw_row(buf, area, &layout, row, &row_ctx(index == self.selected_index));
        }
    }

    fn handle(&mut self, action: Action, ctx: &ViewContext) -> Effect {
        let snapshot = ctx.snapshot;
        self.refresh(snapshot);
        let page = self.page() as isize;
        match action {
            Action::Up => self.move_by(snapshot, -1),
            Action::Down => self.move_by(snapshot, 1),
            Action::PageUp => self.move_by(snapshot, -page),
            Action::PageDown => self.move_by(snapshot, page),
            Action::Top => self.select_index(snapshot, 0),
            Action::Bottom => self.select_index(snapshot, usize::MAX),
            Action::Activate => return self.activate(),
            Action::SortNext => {
                self.query.sort = self.query.sort.next();
                self.query.reversed = false;
                self.invalidate();
            }
            Action::SortReverse => {
                self.query.reversed = !self.query.reversed;
                self.invalidate();
            }
            Action::PercentUp => {
                self.query.limit = (self.query.limit + 1).min(PERCENT_LIMITS.len() - 1);
                self.invalidate();
            }
            Action::PercentDown => {
                self.query.limit = self.query.limit.saturating_sub(1);
                self.invalidate();
            }
            Action::ClearSearch => return self.search(None, ctx),
            _ => return Effect::None,
        }
        self.refresh(snapshot);
        self.scroll_to_selection(self.page());
        Effect::None
    }

    fn search(&mut self, pattern: Option<&Regex>, ctx: &ViewContext) -> Effect {
        self.query.filter = pattern.cloned();
        self.invalidate();
        self.refresh(ctx.snapshot);
        Effect::None
    }

    fn click(&mut self, column: u16, row: u16, double: bool, ctx: &ViewContext) -> Effect {
        let body = self.body;
        let inside =
            column >= body.x && column < body.x + body.width && row >= body.y && row < body.y + body.height;
        if !inside {
            return Effect::None;
        }
        self.refresh(ctx.snapshot);
        let index = self.offset + (row - body.y) as usize;
        if index >= self.rows.order.len() {
            return Effect::None;
        }
        self.select_index(ctx.snapshot, index);
        if double { self.activate() } else { Effect::None }
    }

    fn scroll(&mut self, lines: i32, ctx: &ViewContext) {
        self.refresh(ctx.snapshot);
        let height = self.page();
        let max_offset = self.rows.order.len().saturating_sub(height);
        self.offset = self.offset.saturating_add_signed(lines as isize).min(max_offset);
        // The wheel moves the view; the selection follows only to stay on screen.
        let last = self.offset + height - 1;
        let index = self.selected_index.clamp(self.offset, last);
        if index != self.selected_index {
            self.select_index(ctx.snapshot, index);
        }
    }

    fn snapshot_changed(&mut self, ctx: &ViewContext) {
        self.invalidate();
        self.refresh(ctx.snapshot);
    }

    fn hint(&self, _keys: &crate::config::keymap::Keymap) -> Option<String> {
        let mut hint = format!("sorted by {}", self.query.sort.label());
        if self.query.reversed {
            hint.push_str(" (reversed)");
        }
        if self.query.limit > 0 {
            hint.push_str(&format!(" · limit {}%", self.query.limit_percent()));
        }
        Some(hint)
    }
}
