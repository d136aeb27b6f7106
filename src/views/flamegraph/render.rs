//! Drawing a flamegraph into a buffer (the full view and the per-instance panes); the keys
//! and the mouse are input.rs's.
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

use super::FlameGraphView;
use super::layout::{CellKind, FlameLayout, layout, row_of};
use super::state::{FlameState, active_trie};
use crate::config::Theme;
use crate::model::hash::fnv1a;
use crate::model::text::escape_controls;
use crate::model::{FrameTable, NodeId, StackTrie};
use crate::views::ViewContext;
use crate::views::text::{
    display_width, fit_name, shortest_name, truncate_end, truncate_middle, wrap_columns,
};

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
    /// Draw the full view: where the graph and breadcrumb land is kept for the keys and
    /// the mouse (input.rs), and the scroll is fitted to the selection.
    pub(super) fn draw_view(&mut self, area: Rect, buf: &mut Buffer, ctx: &ViewContext) {
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
}
