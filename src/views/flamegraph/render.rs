//! Drawing a flamegraph into a buffer, and the [`View`] implementation that turns actions,
//! clicks and wheel events into state changes.
//!
//! Screen, top to bottom: a breadcrumb line naming the zoom root's ancestors (only when
//! zoomed and at least 3 rows), the graph rows, and the detail lines about the selected
//! frame (at least 2 rows): its full name — wrapped over more rows when one is too narrow,
//! up to half the area, since a cell shows it shortened — then its numbers. Cells at least
//! 3 columns wide leave their last column blank so neighbours with similar colours stay
//! apart; a name too long for its cell is shortened by meaning (`fit_name`).

use std::borrow::Cow;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use regex::Regex;

use super::FlameGraphView;
use super::layout::{CellKind, FlameLayout, layout};
use super::nav::Move;
use super::state::{FlameState, active_trie, is_within};
use crate::config::{Action, KeyContext, Theme};
use crate::model::hash::fnv1a;
use crate::model::text::escape_controls;
use crate::model::{FrameTable, NodeId, StackTrie};
use crate::views::text::{
    display_width, fit_name, shortest_name, truncate_end, truncate_middle, wrap_columns,
};
use crate::views::{Effect, View, ViewContext};

/// The label of the trie root.
const ROOT_LABEL: &str = "all";

/// Where the parts of a flamegraph go inside its area.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Regions {
    area: Rect,
    breadcrumb: Option<Rect>,
    graph: Rect,
    detail: Option<Rect>,
}

/// `detail_rows`: rows the selected frame's name needs at this width ([`name_rows`]).
fn regions(area: Rect, zoomed: bool, detail_rows: u16) -> Regions {
    let mut graph = area;
    let detail = (area.height >= 2 && area.width > 0).then(|| {
        // The graph keeps at least half the area.
        let rows = detail_rows.clamp(1, (area.height / 2).max(1));
        graph.height -= rows;
        Rect::new(area.x, area.bottom() - rows, area.width, rows)
    });
    let breadcrumb = (zoomed && area.height >= 3 && area.width > 0).then(|| {
        graph.y += 1;
        graph.height -= 1;
        Rect::new(area.x, area.y, area.width, 1)
    });
    Regions {
        area,
        breadcrumb,
        graph,
        detail,
    }
}

/// Rows between the zoom root and `node`.
fn row_of(trie: &StackTrie, zoom: NodeId, node: NodeId) -> usize {
    trie.node(node).depth.saturating_sub(trie.node(zoom).depth) as usize
}

/// Draw the flamegraph of `trie` with `state` (per-instance panes; the full view also
/// names the focus in its detail line).
pub fn render_flamegraph(
    trie: &StackTrie,
    frames: &FrameTable,
    state: &FlameState,
    area: Rect,
    buf: &mut Buffer,
    theme: &Theme,
) {
    render_flamegraph_with_focus(trie, frames, state, area, buf, theme, None);
}

/// [`render_flamegraph`], naming the active focus pattern in the detail line.
pub fn render_flamegraph_with_focus(
    trie: &StackTrie,
    frames: &FrameTable,
    state: &FlameState,
    area: Rect,
    buf: &mut Buffer,
    theme: &Theme,
    focus: Option<&str>,
) {
    let r = regions(
        area,
        state.is_zoomed(),
        name_rows(trie, frames, state, area.width),
    );
    let zoom = state.zoom(trie);
    let scroll = state.scroll();
    let lay = layout(trie, frames, zoom, r.graph.width, scroll + r.graph.height);
    // A trie that became shallower than the scroll shows its last rows.
    let scroll = scroll.min(lay.rows().len().saturating_sub(usize::from(r.graph.height)) as u16);
    draw(trie, frames, state, &lay, scroll, r, buf, theme, focus);
}

#[allow(clippy::too_many_arguments)]
fn draw(
    trie: &StackTrie,
    frames: &FrameTable,
    state: &FlameState,
    lay: &FlameLayout,
    scroll: u16,
    r: Regions,
    buf: &mut Buffer,
    theme: &Theme,
    focus: Option<&str>,
) {
    clear(buf, r.area, theme.text);
    if trie.total_weight() == 0 {
        put(buf, r.graph, 0, "no samples yet", theme.dim);
        return;
    }
    let zoom = state.zoom(trie);
    let selected = state.selected(trie);
    // A selection too narrow to have a cell is shown on its nearest visible ancestor.
    let mut shown = selected;
    while lay.find(trie, shown).is_none() && shown != zoom {
        match trie.node(shown).parent() {
            Some(p) => shown = p,
            None => break,
        }
    }
    let search = state.search();
    for (i, row) in lay
        .rows()
        .iter()
        .skip(usize::from(scroll))
        .take(usize::from(r.graph.height))
        .enumerate()
    {
        let y = r.graph.y + i as u16;
        for (index, cell) in row.iter().enumerate() {
            let x = r.graph.x + cell.x;
            let text_width = if cell.width >= 3 {
                cell.width - 1
            } else {
                cell.width
            };
            let cell_area = Rect::new(x, y, text_width, 1);
            match (cell.kind, cell.node) {
                (CellKind::Merged { count, .. }, _) => {
                    // One column says "more here" with the plus, not an ellipsis.
                    let label = match text_width {
                        1 => "+".to_string(),
                        w => truncate_end(&format!("+{count}"), usize::from(w)).into_owned(),
                    };
                    fill(buf, cell_area, &label, theme.dim);
                }
                (CellKind::Frame, Some(node)) => {
                    let frame = trie.node(node).frame();
                    let name = frame.map_or(ROOT_LABEL, |f| frames.name(f));
                    let style = if node == shown {
                        theme.selected
                    } else if frame.is_some_and(|f| search.is_some_and(|s| s.matches_frame(f))) {
                        theme.search_match
                    } else {
                        let hash =
                            frame.map_or_else(|| fnv1a(ROOT_LABEL.as_bytes()), |f| frames.name_hash(f));
                        theme.frame_style(hash, index % 2 == 1)
                    };
                    fill(buf, cell_area, &fit_name(name, usize::from(text_width)), style);
                }
                (CellKind::Frame, None) => {}
            }
        }
    }
    if let Some(line) = r.breadcrumb {
        let names = trie.path(zoom);
        let breadcrumb = |name: &dyn Fn(&str) -> String| {
            let path: Vec<String> = std::iter::once(ROOT_LABEL.to_string())
                .chain(names.iter().map(|&f| name(frames.name(f))))
                .collect();
            format!("zoom: {}", path.join(" › "))
        };
        let mut text = breadcrumb(&|n| n.to_string());
        if display_width(&text) > usize::from(line.width) {
            // Many names share the line: each at its shortest by meaning first.
            text = breadcrumb(&|n| shortest_name(n).into_owned());
        }
        put(
            buf,
            line,
            0,
            &truncate_middle(&text, usize::from(line.width)),
            theme.dim,
        );
    }
    if let Some(area) = r.detail {
        let lines = detail_lines(trie, frames, state, selected, zoom, focus, area, theme);
        for (row, line) in lines.iter().enumerate().take(usize::from(area.height)) {
            buf.set_line(area.x, area.y + row as u16, line, area.width);
        }
    }
}

/// The selected frame's name as the detail lines show it: whole, control characters
/// spelt out.
fn selected_name<'a>(trie: &StackTrie, frames: &'a FrameTable, selected: NodeId) -> Cow<'a, str> {
    let name = trie.node(selected).frame().map_or(ROOT_LABEL, |f| frames.name(f));
    escape_controls(name)
}

/// Rows the selected frame's full name takes at `width` columns.
fn name_rows(trie: &StackTrie, frames: &FrameTable, state: &FlameState, width: u16) -> u16 {
    if trie.total_weight() == 0 || width == 0 {
        return 1;
    }
    let name = selected_name(trie, frames, state.selected(trie));
    display_width(&name)
        .div_ceil(usize::from(width))
        .clamp(1, usize::from(u16::MAX)) as u16
}

/// "name · total 120 (60.0%) · self 20 (10.0%) · depth 3 · zoom work · inverted · focus /x/":
/// the name whole, wrapped over the rows of `area` (shortened by meaning only when even
/// they are too few), the numbers after it on its last row, cut at the end.
#[allow(clippy::too_many_arguments)]
fn detail_lines(
    trie: &StackTrie,
    frames: &FrameTable,
    state: &FlameState,
    selected: NodeId,
    zoom: NodeId,
    focus: Option<&str>,
    area: Rect,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let node = trie.node(selected);
    let all = trie.total_weight();
    let pct = |w: u64| {
        if all == 0 {
            0.0
        } else {
            w as f64 * 100.0 / all as f64
        }
    };
    let mut rest = format!(
        " · total {} ({:.1}%) · self {} ({:.1}%) · depth {}",
        group_thousands(node.total_weight),
        pct(node.total_weight),
        group_thousands(node.self_weight),
        pct(node.self_weight),
        node.depth,
    );
    if state.is_zoomed() {
        let z = trie.node(zoom);
        let name = z.frame().map_or(ROOT_LABEL, |f| frames.name(f));
        let name = shortest_name(name);
        rest.push_str(&format!(" · zoom {name} ({:.1}%)", pct(z.total_weight)));
    }
    if state.is_inverted() {
        rest.push_str(" · inverted");
    }
    if let Some(pattern) = focus {
        rest.push_str(&format!(" · focus /{pattern}/"));
    }
    let width = usize::from(area.width);
    let rows = usize::from(area.height.max(1));
    let full = selected_name(trie, frames, selected);
    let name = fit_name(&full, width * rows);
    let mut lines: Vec<Line<'static>> = wrap_columns(&name, width)
        .into_iter()
        .map(|part| Line::from(Span::styled(part, theme.title)))
        .collect();
    let used = lines.last().map_or(0, Line::width);
    let rest = truncate_end(&rest, width.saturating_sub(used)).into_owned();
    match lines.last_mut() {
        Some(last) => last.spans.push(Span::styled(rest, theme.text)),
        None => lines.push(Line::from(Span::styled(rest, theme.text))),
    }
    lines
}

/// 1234567 → "1,234,567".
pub(super) fn group_thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

fn clear(buf: &mut Buffer, area: Rect, style: Style) {
    let area = area.intersection(buf.area);
    for y in area.top()..area.bottom() {
        for x in area.left()..area.right() {
            buf[(x, y)].reset();
            buf[(x, y)].set_style(style);
        }
    }
}

/// Paint `area` (one row) with `style` and write `text` from its left.
fn fill(buf: &mut Buffer, area: Rect, text: &str, style: Style) {
    let area = area.intersection(buf.area);
    if area.is_empty() {
        return;
    }
    buf.set_style(area, style);
    buf.set_stringn(area.x, area.y, text, usize::from(area.width), style);
}

/// Write `text` on row `dy` of `area`, clipped to its width.
fn put(buf: &mut Buffer, area: Rect, dy: u16, text: &str, style: Style) {
    if area.is_empty() || dy >= area.height {
        return;
    }
    buf.set_stringn(area.x, area.y + dy, text, usize::from(area.width), style);
}

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
}

impl View for FlameGraphView {
    fn key_context(&self) -> KeyContext {
        KeyContext::Flamegraph
    }

    fn render(&mut self, area: Rect, buf: &mut Buffer, ctx: &ViewContext) {
        let snapshot = ctx.snapshot;
        let Some(trie) = active_trie(snapshot, self.state.is_inverted()) else {
            clear(buf, area, ctx.theme.text);
            put(buf, area, 0, "building inverted view…", ctx.theme.dim);
            return;
        };
        let r = regions(
            area,
            self.state.is_zoomed(),
            name_rows(trie, &snapshot.frames, &self.state, area.width),
        );
        self.graph = r.graph;
        self.breadcrumb = r.breadcrumb;
        let zoom = self.state.zoom(trie);
        let selected_row = row_of(trie, zoom, self.state.selected(trie));
        let rows = usize::from(r.graph.height);
        self.state.fit_scroll(selected_row, rows, usize::MAX);
        let lay = layout(
            trie,
            &snapshot.frames,
            zoom,
            r.graph.width,
            self.state.scroll() + r.graph.height,
        );
        if lay.rows().len() < usize::from(self.state.scroll()) + rows {
            self.state.fit_scroll(selected_row, rows, lay.rows().len());
        }
        let focus = snapshot.selection.focus.as_ref().map(|f| f.pattern());
        draw(
            trie,
            &snapshot.frames,
            &self.state,
            &lay,
            self.state.scroll(),
            r,
            buf,
            ctx.theme,
            focus,
        );
    }

    fn handle(&mut self, action: Action, ctx: &ViewContext) -> Effect {
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

    fn search(&mut self, pattern: Option<&Regex>, ctx: &ViewContext) -> Effect {
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

    fn click(&mut self, column: u16, row: u16, double: bool, ctx: &ViewContext) -> Effect {
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

    fn scroll(&mut self, lines: i32, ctx: &ViewContext) {
        if let Some(trie) = active_trie(ctx.snapshot, self.state.is_inverted()) {
            self.scroll_rows(lines, trie, &ctx.snapshot.frames);
        }
    }

    fn snapshot_changed(&mut self, ctx: &ViewContext) {
        self.state.snapshot_changed(ctx.snapshot);
    }

    fn wants_inverted(&self) -> bool {
        self.state.is_inverted()
    }

    /// Select the widest node of `frame` (the shallowest among equals), zooming out if it
    /// lies outside the zoomed subtree: where hotspots' Enter lands.
    fn show_function(&mut self, frame: crate::model::FrameId, ctx: &ViewContext) {
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

    fn hint(&self, _keys: &crate::config::keymap::Keymap) -> Option<String> {
        self.state.hint()
    }
}
