//! The timeline view: samples per time slice over the whole run as vertical bars, the
//! start / stop markers, the selected window, and a cursor to mark a new window with.
//!
//! The view owns the cursor (a column of its last width) and the pending, not yet applied
//! range (in nanoseconds, so it survives a resize). Applying a range is an
//! [`Effect::SetWindow`]: the model thread rebuilds the snapshot for it.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;

use crate::config::{Action, KeyContext};
use crate::model::{PhaseMarkers, TimeWindow, Timeline};
use crate::views::text::{display_width, truncate_end};
use crate::views::widgets::bars::{centered_hint, frame, scaled_eighths, vertical_cell};
use crate::views::{Effect, View, ViewContext};

const EMPTY_HINT: &str = "no timestamped samples or events yet (folded input has no times)";

/// Columns the cursor moves with PageUp / PageDown.
const PAGE_COLUMNS: usize = 10;

/// The width assumed before the first render (an 80-column terminal inside a border).
const DEFAULT_COLUMNS: usize = 78;

/// Timeline with a cursor and a pending range.
#[derive(Debug, Default)]
pub struct TimelineView {
    cursor: usize,
    /// The width `cursor` refers to; 0 before the first render.
    columns: usize,
    pending_start_ns: Option<u64>,
    pending_stop_ns: Option<u64>,
    /// The inside of the frame at the last render (for clicks).
    inner: Rect,
}

/// Decimals that tell apart times `step_ns` apart (at least one digit of the step).
fn decimals_for(step_ns: f64) -> usize {
    let step_s = step_ns / 1e9;
    if step_s <= 0.0 || !step_s.is_finite() {
        return 3;
    }
    ((-step_s.log10()).ceil() + 1.0).clamp(0.0, 9.0) as usize
}

/// Seconds on the sample clock from `origin_ns` ("2.50s"), as `--start-sec` takes them
/// (the origin is 0 there; a host session counts from its start).
fn seconds(ns: u64, origin_ns: u64, decimals: usize) -> String {
    format!("{:.*}s", decimals, ns.saturating_sub(origin_ns) as f64 / 1e9)
}

/// Whether column `[start, end)` overlaps the window.
fn overlaps(window: &TimeWindow, start: u64, end: u64) -> bool {
    window.stop_ns.is_none_or(|s| start < s) && window.start_ns.is_none_or(|s| end > s)
}

impl TimelineView {
    pub fn new() -> Self {
        Self::default()
    }

    /// The cursor column of the current width.
    fn width(&self) -> usize {
        if self.columns == 0 {
            DEFAULT_COLUMNS
        } else {
            self.columns
        }
    }

    fn move_cursor(&mut self, delta: i64) {
        let last = self.width() as i64 - 1;
        self.cursor = (self.cursor as i64 + delta).clamp(0, last) as usize;
    }

    /// The pending range as a window, or why it cannot be applied.
    fn pending_window(&self) -> Result<TimeWindow, &'static str> {
        match (self.pending_start_ns, self.pending_stop_ns) {
            (None, None) => Err("no range marked: mark a start and/or a stop at the cursor first"),
            (Some(a), Some(b)) if a >= b => Err("the marked start is not before the stop: mark again"),
            (a, b) => Ok(TimeWindow::new(a, b)),
        }
    }

    fn detail_line(
        &self,
        timeline: &Timeline,
        columns: &[u64],
        window: &TimeWindow,
        origin_ns: u64,
    ) -> String {
        let n = columns.len();
        let decimals = decimals_for(timeline.duration_ns() as f64 / n as f64);
        let seconds = |ns: u64, decimals: usize| seconds(ns, origin_ns, decimals);
        let cursor_ns = timeline.time_at_column(self.cursor, n);
        let noun = timeline.counted.noun();
        let mut parts = vec![format!(
            "cursor {} · {} {noun}",
            seconds(cursor_ns, decimals),
            columns[self.cursor]
        )];
        if self.pending_start_ns.is_some() || self.pending_stop_ns.is_some() {
            let bound = |b: Option<u64>| b.map_or("…".to_string(), |t| seconds(t, decimals));
            let weight = timeline.weight_in(&TimeWindow::new(self.pending_start_ns, self.pending_stop_ns));
            parts.push(format!(
                "pending {} → {} · {weight} {noun}",
                bound(self.pending_start_ns),
                bound(self.pending_stop_ns)
            ));
        }
        if window.is_all() {
            parts.push("window: all".into());
        } else {
            let bound = |b: Option<u64>| b.map_or("…".to_string(), |t| seconds(t, decimals));
            parts.push(format!(
                "window {} → {}",
                bound(window.start_ns),
                bound(window.stop_ns)
            ));
        }
        parts.join("  │  ")
    }
}

/// The columns of the markers that fall inside the timeline, with their names.
fn marker_columns(n: usize, timeline: &Timeline, markers: &PhaseMarkers) -> Vec<(usize, &'static str)> {
    let inside = |t: &u64| *t >= timeline.start_ns && *t < timeline.end_ns;
    [(markers.start_ns, "start"), (markers.stop_ns, "stop")]
        .into_iter()
        .filter_map(|(time, name)| time.filter(inside).map(|t| (timeline.column_of(t, n), name)))
        .collect()
}

/// A marker label at `column`: "▼ stop" to the right when it fits, "stop ▼" to the left
/// otherwise, a bare "▼" when neither fits; cut at `limit` (the next label's column).
fn marker_label(name: &str, column: usize, limit: usize) -> (usize, String) {
    let right = format!("▼ {name}");
    let w = display_width(&right);
    if column + w <= limit {
        (column, right)
    } else if column + 1 >= w {
        (column + 1 - w, format!("{name} ▼"))
    } else {
        (column, "▼".into())
    }
}

impl View for TimelineView {
    fn key_context(&self) -> KeyContext {
        KeyContext::Timeline
    }

    fn render(&mut self, area: Rect, buf: &mut Buffer, ctx: &ViewContext) {
        let theme = ctx.theme;
        let Some(timeline) = ctx.snapshot.timeline.as_deref() else {
            self.inner = frame(area, buf, theme, ctx.focused, " timeline ");
            centered_hint(self.inner, buf, EMPTY_HINT, theme.dim);
            return;
        };
        // The y scale: what a full-height bar counts (columns are as wide as the frame's
        // inside); the records the source lost, marked × above their columns.
        let n = area.width.saturating_sub(2) as usize;
        let columns = timeline.columns(n);
        let max = columns.iter().copied().max().unwrap_or(0);
        let lost = timeline.lost_columns(n);
        let lost_total: u64 = lost.iter().sum();
        let mut title = format!(" timeline · full bar = {max} {} ", timeline.counted.noun());
        if lost_total > 0 {
            title.push_str(&format!("· × lost {lost_total} "));
        }
        if display_width(&title) + 2 > area.width as usize {
            title = " timeline ".into();
        }
        let inner = frame(area, buf, theme, ctx.focused, &title);
        self.inner = inner;
        if n == 0 || inner.height == 0 {
            return;
        }
        if self.columns != n {
            // Keep the cursor near the same time when the width changes.
            if let Some(rescaled) = (self.cursor * n).checked_div(self.columns) {
                self.cursor = rescaled;
            }
            self.columns = n;
        }
        self.cursor = self.cursor.min(n - 1);

        let h = inner.height;
        let has_detail = h >= 2;
        let has_axis = h >= 3;
        let has_markers = h >= 4;
        let bar_rows = (h - has_detail as u16 - has_axis as u16 - has_markers as u16) as usize;
        let bars_y = inner.y + has_markers as u16;
        let axis_y = bars_y + bar_rows as u16;
        let detail_y = axis_y + has_axis as u16;

        let window = ctx.snapshot.selection.window;
        let markers = marker_columns(n, timeline, &ctx.snapshot.markers);
        let cursor_bg = theme.selected.bg;
        let pending = TimeWindow::new(self.pending_start_ns, self.pending_stop_ns);
        let has_pending = !pending.is_all();

        for (c, &weight) in columns.iter().enumerate() {
            let x = inner.x + c as u16;
            let start = timeline.time_at_column(c, n);
            let end = timeline.time_at_column(c + 1, n);
            let shaded = !window.is_all() && overlaps(&window, start, end);
            let is_marker = markers.iter().any(|&(mc, _)| mc == c);
            let eighths = scaled_eighths(weight, max, bar_rows);
            for r in 0..bar_rows {
                let y = bars_y + (bar_rows - 1 - r) as u16;
                let mut symbol = vertical_cell(eighths, r);
                let mut style = theme.bar;
                if shaded {
                    style = style.patch(theme.window);
                }
                if is_marker {
                    if symbol == " " {
                        symbol = "│";
                    }
                    style = style.patch(theme.marker);
                }
                if c == self.cursor {
                    style = match cursor_bg {
                        Some(bg) => style.bg(bg),
                        None => style.add_modifier(Modifier::REVERSED),
                    };
                }
                buf[(x, y)].set_symbol(symbol).set_style(style);
            }
        }

        if has_markers {
            for (c, &l) in lost.iter().enumerate() {
                if l > 0 {
                    buf[(inner.x + c as u16, inner.y)]
                        .set_symbol("×")
                        .set_style(theme.warning);
                }
            }
            let mut sorted = markers.clone();
            sorted.sort();
            // Where the previous label ends: a label turned left must not run into it.
            let mut taken = 0;
            for (i, &(column, name)) in sorted.iter().enumerate() {
                let limit = sorted.get(i + 1).map_or(n, |&(next, _)| next);
                let (mut x, mut label) = marker_label(name, column, limit.max(column + 1));
                if x < taken {
                    (x, label) = (column, "▼".into());
                }
                buf.set_stringn(inner.x + x as u16, inner.y, &label, n - x, theme.marker);
                taken = x + display_width(&label);
            }
        }

        if has_axis {
            // Room for the widest label (tick, whole seconds of the end, ".ddd") plus a gap.
            let origin = ctx.snapshot.time_origin_ns;
            let label_width = seconds(timeline.end_ns, origin, 0).len() + 4;
            let step = (label_width + 2).max(10);
            let decimals = decimals_for(timeline.duration_ns() as f64 * step as f64 / n as f64);
            for c in (0..n).step_by(step) {
                let label = format!("╵{}", seconds(timeline.time_at_column(c, n), origin, decimals));
                if c + display_width(&label) <= n {
                    let x = inner.x + c as u16;
                    buf.set_stringn(x, axis_y, &label, n - c, theme.dim);
                }
            }
            // The pending range is a band on the axis row, over the labels.
            if has_pending {
                for c in 0..n {
                    let start = timeline.time_at_column(c, n);
                    let end = timeline.time_at_column(c + 1, n);
                    if overlaps(&pending, start, end) {
                        buf[(inner.x + c as u16, axis_y)].set_style(theme.selected);
                    }
                }
            }
        }

        if has_detail {
            let line = self.detail_line(timeline, &columns, &window, ctx.snapshot.time_origin_ns);
            let line = truncate_end(&line, n);
            buf.set_stringn(inner.x, detail_y, &line, n, theme.text);
        }
    }

    fn handle(&mut self, action: Action, ctx: &ViewContext) -> Effect {
        match action {
            Action::ClearWindow => return Effect::SetWindow(TimeWindow::ALL),
            Action::ApplyWorkload => {
                let m = ctx.snapshot.markers;
                if m.start_ns.is_none() && m.stop_ns.is_none() {
                    return Effect::Message(
                        "no start/stop markers in this run: mark a range on the timeline instead".into(),
                    );
                }
                return Effect::SetWindow(m.main_window());
            }
            _ => {}
        }
        let Some(timeline) = ctx.snapshot.timeline.as_deref() else {
            return Effect::None;
        };
        let n = self.width();
        match action {
            Action::Left => self.move_cursor(-1),
            Action::Right => self.move_cursor(1),
            Action::PageUp => self.move_cursor(-(PAGE_COLUMNS as i64)),
            Action::PageDown => self.move_cursor(PAGE_COLUMNS as i64),
            Action::Top => self.cursor = 0,
            Action::Bottom => self.cursor = n - 1,
            Action::MarkStart => self.pending_start_ns = Some(timeline.time_at_column(self.cursor, n)),
            // The stop is the cursor column's end, so start and stop on one column select it.
            Action::MarkStop => self.pending_stop_ns = Some(timeline.time_at_column(self.cursor + 1, n)),
            Action::Back => {
                self.pending_start_ns = None;
                self.pending_stop_ns = None;
            }
            Action::Activate => {
                return match self.pending_window() {
                    Ok(window) => {
                        self.pending_start_ns = None;
                        self.pending_stop_ns = None;
                        Effect::SetWindow(window)
                    }
                    Err(why) => Effect::Message(why.into()),
                };
            }
            _ => {}
        }
        Effect::None
    }

    fn click(&mut self, column: u16, row: u16, _double: bool, _ctx: &ViewContext) -> Effect {
        let a = self.inner;
        if column >= a.x && column < a.right() && row >= a.y && row < a.bottom() {
            self.cursor = (column - a.x) as usize;
        }
        Effect::None
    }

    fn scroll(&mut self, lines: i32, _ctx: &ViewContext) {
        self.move_cursor(lines as i64);
    }
}

#[cfg(test)]
mod tests;
