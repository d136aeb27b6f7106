//! The table view: the analyzer's table of the snapshot (syscalls, multi-trace delay and
//! pair, rundelay, top) laid out exactly as `--no-tui` prints it — perf-prof's columns —
//! so what a script reads and what the screen shows are the same text. Rows carry typed
//! cells: `s` sorts by the next column (largest first), `S` reverses, and the search regex
//! keeps the rows whose line matches.
//!
//! The header stays on screen while the rows scroll; a table wider than the terminal
//! (syscalls with its percentiles is ~130 columns) scrolls sideways a column at a time,
//! the key column frozen, and shows only whole columns: a number is never cut. The view
//! owns only its sort, filter, scroll offsets and the selected line.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;

use crate::config::{Action, KeyContext, Theme};
use crate::engine::Snapshot;
use crate::model::present::AnalysisTable;
use crate::views::text::{display_width, skip_columns};
use crate::views::{Effect, View, ViewContext};

use super::offenders::OffendersPane;
use super::widgets::bars::{centered_hint, frame};

const EMPTY_HINT: &str =
    "no analyzer tables: run `perfscope syscalls` / `rundelay` / `multi-trace` / `top -e EVENT`";

/// Columns one Left/Right moves.
const SIDE_STEP: usize = 8;
/// The key column stays put only if this much width is left for the columns that scroll.
const MIN_SCROLLED_COLUMNS: usize = 12;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum LineKind {
    Title,
    Header,
    Row,
}

/// The table as one list of lines: title, header, then the rows in `order`.
fn lines_of<'a>(table: Option<&'a AnalysisTable>, order: &[usize]) -> Vec<(LineKind, &'a str)> {
    let Some(table) = table.filter(|t| !t.is_empty() || !t.header.is_empty()) else {
        return Vec::new();
    };
    let mut lines = Vec::new();
    if !table.title.is_empty() {
        lines.push((LineKind::Title, table.title.as_str()));
    }
    lines.extend(table.header.iter().map(|h| (LineKind::Header, h.as_str())));
    lines.extend(
        order
            .iter()
            .filter_map(|&i| table.rows.get(i))
            .map(|r| (LineKind::Row, r.text.as_str())),
    );
    lines
}

/// perf-prof's dash line under the column names (`-------- ------`): one run per column.
fn dash_line(table: Option<&AnalysisTable>) -> Option<&str> {
    table?
        .header
        .iter()
        .find(|h| h.contains('-') && h.chars().all(|c| c == '-' || c == ' '))
        .map(String::as_str)
}

/// The key column's width with its separating blank (`syscalls`, `comm`…): the first run
/// of perf-prof's dash line. It stays on screen when the rest scrolls sideways.
fn key_columns(table: Option<&AnalysisTable>) -> usize {
    dash_line(table).map_or(0, |dashes| dashes.chars().take_while(|&c| c == '-').count() + 1)
}

/// Where each column starts (display columns of a line), read from the dash line.
fn column_starts(table: Option<&AnalysisTable>) -> Vec<usize> {
    let Some(dashes) = dash_line(table) else {
        return Vec::new();
    };
    let mut starts = Vec::new();
    let mut previous = ' ';
    for (i, c) in dashes.chars().enumerate() {
        if c == '-' && previous != '-' {
            starts.push(i);
        }
        previous = c;
    }
    starts
}

/// The offsets sideways scrolling stops at, in the columns after the frozen `key` ones:
/// each a column's start, so no number is ever cut at the left edge.
fn side_stops(starts: &[usize], key: usize) -> Vec<usize> {
    let mut stops = vec![0];
    stops.extend(starts.iter().filter(|&&s| s > key).map(|&s| s - key));
    stops
}

/// `text` with its first `key` columns kept and the rest scrolled by `left` columns.
fn scrolled(text: &str, key: usize, left: usize) -> String {
    if left == 0 || key == 0 {
        return skip_columns(text, left).to_string();
    }
    let rest = skip_columns(text, key);
    let kept = &text[..text.len() - rest.len()];
    format!("{kept}{}", skip_columns(rest, left))
}

/// A scrolled line cut to `width` at a column's end, never inside a column (a number is
/// shown whole or not at all); a line that fits, or whose first column alone is wider
/// than the screen, is left to the plain cut.
fn whole_columns(shown: String, width: usize, key: usize, left: usize, stops: &[usize]) -> String {
    if display_width(&shown) <= width {
        return shown;
    }
    // A column ends at the blank before the next one starts.
    let end = stops
        .iter()
        .filter(|&&s| s > left)
        .map(|&s| key + (s - left) - 1)
        .filter(|&end| end > key && end <= width)
        .max();
    match end {
        Some(end) => {
            let rest = skip_columns(&shown, end);
            shown[..shown.len() - rest.len()].to_string()
        }
        None => shown,
    }
}

fn table_of(snapshot: &Snapshot) -> Option<&AnalysisTable> {
    snapshot.analysis.as_ref().map(|a| &a.table)
}

/// The analyzer's table, sorted, filtered and scrolled.
#[derive(Debug, Default)]
pub struct TableView {
    /// The column rows are sorted by (`None`: the analyzer's order), and reversed.
    sort: Option<usize>,
    /// The sorted column's name, for the status line.
    sort_name: Option<String>,
    reversed: bool,
    filter: Option<regex::Regex>,
    /// Index of the selected line among all lines (rows only are selectable).
    selected: usize,
    top: usize,
    /// Columns scrolled sideways (after the frozen key column): always a column's start.
    left: usize,
    /// Where sideways scrolling stops, and how far it may go, at the last draw.
    stops: Vec<usize>,
    max_left: usize,
    /// Lines that fit below the frozen header at the last draw (for paging).
    body_rows: usize,
    body_area: Rect,
    /// `o`: the `--than` offenders are listed instead of the table.
    offenders: Option<OffendersPane>,
}

impl TableView {
    pub fn new() -> Self {
        Self::default()
    }

    /// The rows shown, in order: filtered by the regex, sorted by the chosen column.
    fn order(&self, table: Option<&AnalysisTable>) -> Vec<usize> {
        let Some(table) = table else {
            return Vec::new();
        };
        let mut order: Vec<usize> = (0..table.rows.len())
            .filter(|&i| {
                self.filter
                    .as_ref()
                    .is_none_or(|r| r.is_match(&table.rows[i].text))
            })
            .collect();
        if let Some(column) = self.sort {
            order.sort_by(|&a, &b| {
                let cell = |i: usize| table.rows[i].cells.get(column);
                match (cell(b), cell(a)) {
                    (Some(x), Some(y)) => x.compare(y),
                    _ => std::cmp::Ordering::Equal,
                }
            });
        }
        if self.reversed {
            order.reverse();
        }
        order
    }

    fn lines<'a>(&self, snapshot: &'a Snapshot) -> Vec<(LineKind, &'a str)> {
        let table = table_of(snapshot);
        lines_of(table, &self.order(table))
    }

    /// The nearest row line at or after (`forward`) / before `from`.
    fn row_near(lines: &[(LineKind, &str)], from: usize, forward: bool) -> Option<usize> {
        let is_row = |i: &usize| lines[*i].0 == LineKind::Row;
        // Every range below lies inside `lines`, empty ones included (a mouse wheel over a
        // table without lines).
        let from = from.min(lines.len());
        if forward {
            (from..lines.len())
                .find(is_row)
                .or_else(|| (0..from).rev().find(is_row))
        } else {
            (0..(from + 1).min(lines.len()))
                .rev()
                .find(is_row)
                .or_else(|| (from..lines.len()).find(is_row))
        }
    }

    fn move_to(&mut self, lines: &[(LineKind, &str)], target: usize, forward: bool) {
        if let Some(i) = Self::row_near(lines, target, forward) {
            self.selected = i;
        }
    }
}

fn style_of(kind: LineKind, theme: &Theme) -> Style {
    match kind {
        LineKind::Title => theme.title,
        LineKind::Header => theme.header,
        LineKind::Row => theme.text,
    }
}

impl View for TableView {
    fn key_context(&self) -> KeyContext {
        KeyContext::Table
    }

    fn render(&mut self, area: Rect, buf: &mut Buffer, ctx: &ViewContext) {
        let theme = ctx.theme;
        if let Some(pane) = &mut self.offenders {
            let empty = Default::default();
            let offenders = ctx.snapshot.analysis.as_ref().map_or(&empty, |a| &*a.offenders);
            pane.render(area, buf, offenders, theme, ctx.keys, ctx.focused);
            return;
        }
        let inner = frame(area, buf, theme, ctx.focused, " analyzer tables ");
        let lines = self.lines(ctx.snapshot);
        if lines.is_empty() {
            self.body_area = Rect::default();
            // An analysis whose selection holds no rows yet says so, not "run an analyzer".
            let hint = match table_of(ctx.snapshot) {
                Some(table) => format!(
                    "{}: no events yet (or none in this selection: a reset, a window or the sliding mode narrows it)",
                    table.title
                ),
                None => EMPTY_HINT.to_string(),
            };
            centered_hint(inner, buf, &hint, theme.dim);
            return;
        }
        if inner.width == 0 || inner.height == 0 {
            return;
        }
        let width = inner.width as usize;
        let widest = lines.iter().map(|(_, l)| display_width(l)).max().unwrap_or(0);
        let table = table_of(ctx.snapshot);
        let starts = column_starts(table);
        // The key column stays unless it leaves too little room to scroll the rest in: at
        // least the widest of the other columns, whole.
        let widest_column = starts
            .iter()
            .zip(starts.iter().skip(1).chain(std::iter::once(&widest)))
            .skip(1)
            .map(|(start, next)| next.saturating_sub(*start))
            .max()
            .unwrap_or(0);
        let key = Some(key_columns(table))
            .filter(|&k| k + MIN_SCROLLED_COLUMNS.max(widest_column) <= width)
            .unwrap_or(0);
        self.max_left = widest.saturating_sub(width);
        if starts.is_empty() {
            // No dash line to tell the columns by: plain columns of text.
            self.stops.clear();
            self.left = self.left.min(self.max_left);
        } else {
            self.stops = side_stops(&starts, key);
            // The furthest stop needed to show the last column, and never between stops.
            let furthest = self
                .stops
                .iter()
                .copied()
                .find(|&s| s >= self.max_left)
                .unwrap_or_else(|| self.stops.last().copied().unwrap_or(0));
            let wanted = self.left.min(furthest);
            self.left = self
                .stops
                .iter()
                .copied()
                .filter(|&s| s <= wanted)
                .max()
                .unwrap_or(0);
        }
        let left = self.left;
        let stops = self.stops.clone();
        let shown = move |kind: LineKind, text: &str| match kind {
            // The title says what the table is: it stays whole, whatever the scroll.
            LineKind::Title => text.to_string(),
            LineKind::Header | LineKind::Row => {
                whole_columns(scrolled(text, key, left), width, key, left, &stops)
            }
        };
        // The first table's title and header stay put while everything below scrolls.
        let frozen = lines
            .iter()
            .take_while(|(k, _)| matches!(k, LineKind::Title | LineKind::Header))
            .count()
            .min(inner.height as usize - 1);
        for (row, (kind, text)) in lines.iter().take(frozen).enumerate() {
            let y = inner.y + row as u16;
            buf.set_style(Rect::new(inner.x, y, inner.width, 1), style_of(*kind, theme));
            buf.set_stringn(inner.x, y, shown(*kind, text), width, style_of(*kind, theme));
        }
        let body = Rect::new(
            inner.x,
            inner.y + frozen as u16,
            inner.width,
            inner.height - frozen as u16,
        );
        self.body_area = body;
        self.body_rows = body.height as usize;
        if !lines.iter().any(|(kind, _)| *kind == LineKind::Row) {
            // A filter that matches nothing, or a table with a header and no row yet: the
            // header stays, the body says why it is empty, and nothing is selected.
            (self.selected, self.top) = (0, 0);
            let hint = match &self.filter {
                Some(r) => format!("no rows match /{}/", r.as_str()),
                None => "no events yet".to_string(),
            };
            centered_hint(body, buf, &hint, theme.dim);
            return;
        }
        let body_lines = &lines[frozen..];
        // Some line is a row, and rows come after the frozen title and header: the range
        // is not empty.
        self.selected = self.selected.clamp(frozen, lines.len() - 1);
        if lines[self.selected].0 != LineKind::Row {
            self.move_to(&lines, self.selected, true);
        }
        let selected = self.selected - frozen;
        if selected < self.top {
            self.top = selected;
        } else if selected >= self.top + self.body_rows {
            self.top = selected + 1 - self.body_rows;
        }
        self.top = self.top.min(body_lines.len().saturating_sub(self.body_rows));
        for (row, (i, (kind, text))) in body_lines
            .iter()
            .enumerate()
            .skip(self.top)
            .take(self.body_rows)
            .enumerate()
        {
            let y = body.y + row as u16;
            let style = if i == selected && *kind == LineKind::Row {
                theme.selected
            } else {
                style_of(*kind, theme)
            };
            buf.set_style(Rect::new(body.x, y, body.width, 1), style);
            buf.set_stringn(body.x, y, shown(*kind, text), width, style);
        }
    }

    fn handle(&mut self, action: Action, ctx: &ViewContext) -> Effect {
        if action == Action::ToggleOffenders {
            self.offenders = match self.offenders {
                Some(_) => None,
                None => Some(OffendersPane::default()),
            };
            return Effect::None;
        }
        if let Some(pane) = &mut self.offenders {
            let empty = Default::default();
            let offenders = ctx.snapshot.analysis.as_ref().map_or(&empty, |a| &*a.offenders);
            pane.handle(action, offenders);
            return Effect::None;
        }
        if let Some(table) = table_of(ctx.snapshot) {
            match action {
                Action::SortNext if !table.columns.is_empty() => {
                    let next = self.sort.map_or(0, |c| c + 1);
                    self.sort = (next < table.columns.len()).then_some(next);
                    self.sort_name = self.sort.map(|c| table.columns[c].name.clone());
                    self.reversed = false;
                    return Effect::Message(match self.sort {
                        Some(c) => format!("sorted by {}", table.columns[c].name),
                        None => "the analyzer's order".into(),
                    });
                }
                Action::SortReverse => {
                    self.reversed = !self.reversed;
                    return Effect::None;
                }
                Action::ClearSearch => return self.search(None, ctx),
                _ => {}
            }
        }
        let lines = self.lines(ctx.snapshot);
        if lines.is_empty() {
            return Effect::None;
        }
        let page = self.body_rows.max(1);
        match action {
            Action::Up => self.move_to(&lines, self.selected.saturating_sub(1), false),
            Action::Down => self.move_to(&lines, self.selected + 1, true),
            Action::PageUp => self.move_to(&lines, self.selected.saturating_sub(page), false),
            Action::PageDown => self.move_to(&lines, self.selected + page, true),
            Action::Top => self.move_to(&lines, 0, true),
            Action::Bottom => self.move_to(&lines, lines.len(), false),
            // By whole columns where the dash line tells them, else by a few characters.
            Action::Left => {
                self.left = match self.stops.iter().rev().find(|&&s| s < self.left) {
                    Some(&stop) => stop,
                    None => self.left.saturating_sub(SIDE_STEP),
                }
            }
            Action::Right if self.left < self.max_left => {
                self.left = match self.stops.iter().find(|&&s| s > self.left) {
                    Some(&stop) => stop,
                    None if self.stops.is_empty() => self.left + SIDE_STEP,
                    None => self.left,
                }
            }
            _ => {}
        }
        Effect::None
    }

    fn click(&mut self, column: u16, row: u16, _double: bool, ctx: &ViewContext) -> Effect {
        let a = self.body_area;
        if column >= a.x && column < a.right() && row >= a.y && row < a.bottom() {
            let lines = self.lines(ctx.snapshot);
            let frozen = lines
                .iter()
                .take_while(|(k, _)| matches!(k, LineKind::Title | LineKind::Header))
                .count();
            let index = frozen + self.top + (row - a.y) as usize;
            if lines.get(index).is_some_and(|(k, _)| *k == LineKind::Row) {
                self.selected = index;
            }
        }
        Effect::None
    }

    fn search(&mut self, pattern: Option<&regex::Regex>, ctx: &ViewContext) -> Effect {
        self.filter = pattern.cloned();
        let shown = self.order(table_of(ctx.snapshot)).len();
        match &self.filter {
            Some(r) => Effect::Message(format!("{shown} rows match /{}/", r.as_str())),
            None => Effect::None,
        }
    }

    fn hint(&self, _keys: &crate::config::keymap::Keymap) -> Option<String> {
        let mut parts = Vec::new();
        if let Some(name) = &self.sort_name {
            parts.push(format!(
                "sorted by {name}{}",
                if self.reversed { " ↑" } else { "" }
            ));
        } else if self.reversed {
            parts.push("the analyzer's order ↑".into());
        }
        if let Some(r) = &self.filter {
            parts.push(format!("filter /{}/", r.as_str()));
        }
        if self.offenders.is_some() {
            parts.push("--than offenders".into());
        }
        (!parts.is_empty()).then(|| parts.join(" · "))
    }

    fn scroll(&mut self, lines: i32, ctx: &ViewContext) {
        let all = self.lines(ctx.snapshot);
        let target = (self.selected as i64 + lines as i64).max(0) as usize;
        self.move_to(&all, target, lines > 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::present::{Cell, Column, ColumnKind, TableRow};
    use crate::views::test_support::{snapshot_with_table, text};

    fn table() -> AnalysisTable {
        AnalysisTable {
            title: "syscalls".into(),
            header: vec![
                "syscalls                calls        total(us)".into(),
                "-------------------- -------- ----------------".into(),
            ],
            columns: vec![
                Column::new("syscall", ColumnKind::Text),
                Column::new("calls", ColumnKind::Count),
            ],
            rows: (0..30)
                .map(|i| TableRow {
                    text: format!("{:<20} {:>8} {:>16.3}", format!("call{i}(0)"), 100 - i, 1.5),
                    cells: vec![Cell::Text(format!("call{i}(0)")), Cell::Int(100 - i as i128)],
                })
                .collect(),
        }
    }

    fn draw(view: &mut TableView, table: Option<AnalysisTable>, w: u16, h: u16, keys: &[Action]) -> String {
        let snapshot = snapshot_with_table(table);
        let theme = Theme::builtin_dark();
        let ctx = ViewContext {
            snapshot: &snapshot,
            theme: &theme,
            focused: true,
            keys: crate::config::keymap::Keymap::standard(),
        };
        let mut buf = Buffer::empty(Rect::new(0, 0, w, h));
        view.render(buf.area, &mut buf, &ctx);
        for &key in keys {
            view.handle(key, &ctx);
        }
        let mut buf = Buffer::empty(Rect::new(0, 0, w, h));
        view.render(buf.area, &mut buf, &ctx);
        text(&buf)
    }

    #[test]
    fn the_header_stays_while_rows_scroll() {
        let mut view = TableView::new();
        let s = draw(&mut view, Some(table()), 60, 10, &[Action::Bottom]);
        let lines: Vec<&str> = s.lines().collect();
        assert!(lines[1].contains("syscalls"), "{s}");
        assert!(lines[2].contains("calls        total(us)"), "{s}");
        assert!(lines[3].starts_with("│----"), "{s}");
        // The last row is on screen and selected; the first rows scrolled away.
        assert!(s.contains("call29(0)"), "{s}");
        assert!(!s.contains("call0(0)"), "{s}");
    }

    #[test]
    fn wide_tables_scroll_sideways_and_rows_are_selected_with_the_arrows() {
        let mut view = TableView::new();
        let s = draw(&mut view, Some(table()), 30, 12, &[Action::Right, Action::Down]);
        // One column on: the key column goes too (at 30 columns it leaves too little room
        // to stay put); the title stays whole.
        let lines: Vec<&str> = s.lines().collect();
        assert!(lines[1].starts_with("│syscalls "), "{s}");
        assert!(lines[2].starts_with("│   calls") && !s.contains("call0"), "{s}");
        assert!(s.contains("100"), "{s}");
        assert_eq!(
            view.selected, 4,
            "the second row (title, 2 header lines, row 0, row 1)"
        );
        let s = draw(&mut view, Some(table()), 30, 12, &[Action::Left, Action::Up]);
        assert!(s.contains("call0(0)"), "{s}");
        assert_eq!(view.selected, 3);
    }

    #[test]
    fn the_key_column_stays_when_scrolling_sideways() {
        let mut view = TableView::new();
        let before = draw(&mut view, Some(table()), 40, 12, &[]);
        let s = draw(&mut view, Some(table()), 40, 12, &[Action::Right]);
        let line = |s: &str, key: &str| -> String {
            s.lines()
                .find(|l| l.starts_with(key))
                .unwrap_or_default()
                .to_string()
        };
        // Before: key and calls (total(us) does not fit whole, so it is not shown in part);
        // after: key, then the next column.
        assert_eq!(
            line(&before, "│call0(0)"),
            "│call0(0)                  100         │"
        );
        assert_eq!(
            before.lines().nth(2).unwrap(),
            "│syscalls                calls         │"
        );
        assert_eq!(
            line(&s, "│call0(0)"),
            "│call0(0)                        1.500 │",
            "{s}"
        );
        assert_eq!(
            s.lines().nth(2).unwrap(),
            "│syscalls                    total(us) │"
        );
        assert_eq!(line(&s, "│-----"), "│-------------------- ---------------- │");
        // Right again goes nowhere (the last column is whole on screen); Left comes back.
        let again = draw(&mut view, Some(table()), 40, 12, &[Action::Right]);
        assert_eq!(again, s);
        let back = draw(&mut view, Some(table()), 40, 12, &[Action::Left]);
        assert_eq!(back, before);
    }

    #[test]
    fn rows_sort_by_any_column_and_filter_by_regex() {
        let mut view = TableView::new();
        // Sort by the first column (text), then reverse: call9(0) sorts last as text.
        let s = draw(
            &mut view,
            Some(table()),
            60,
            8,
            &[Action::SortNext, Action::SortReverse],
        );
        let first_row = s.lines().nth(4).unwrap();
        assert!(first_row.contains("call0(0)"), "{s}");
        let s = draw(&mut view, Some(table()), 60, 8, &[Action::SortReverse]);
        assert!(s.lines().nth(4).unwrap().contains("call9(0)"), "{s}");
        // The second column (calls): largest first.
        let s = draw(&mut view, Some(table()), 60, 8, &[Action::SortNext]);
        assert!(s.lines().nth(4).unwrap().contains("call0(0)"), "{s}");
        let snapshot = snapshot_with_table(Some(table()));
        let theme = Theme::builtin_dark();
        let ctx = ViewContext {
            snapshot: &snapshot,
            theme: &theme,
            focused: true,
            keys: crate::config::keymap::Keymap::standard(),
        };
        let effect = view.search(Some(&regex::Regex::new(r"call2\d").unwrap()), &ctx);
        assert_eq!(effect, Effect::Message("10 rows match /call2\\d/".into()));
        let mut buf = Buffer::empty(Rect::new(0, 0, 60, 20));
        view.render(buf.area, &mut buf, &ctx);
        let s = text(&buf);
        assert!(s.contains("call25(0)") && !s.contains("call5(0)"), "{s}");
    }

    /// Issue 25: a `/` filter that matched no row panicked (`min > max`) at the next draw.
    #[test]
    fn a_filter_that_matches_nothing_keeps_the_header_and_says_so() {
        let mut view = TableView::new();
        let snapshot = snapshot_with_table(Some(table()));
        let theme = Theme::builtin_dark();
        let ctx = ViewContext {
            snapshot: &snapshot,
            theme: &theme,
            focused: true,
            keys: crate::config::keymap::Keymap::standard(),
        };
        let effect = view.search(Some(&regex::Regex::new("zzz").unwrap()), &ctx);
        assert_eq!(effect, Effect::Message("0 rows match /zzz/".into()));
        let s = draw(&mut view, Some(table()), 60, 10, &[Action::Down, Action::Bottom]);
        let lines: Vec<&str> = s.lines().collect();
        assert!(lines[1].contains("syscalls"), "{s}");
        assert!(lines[2].contains("calls        total(us)"), "{s}");
        assert!(lines[3].starts_with("│----"), "{s}");
        assert!(lines[6].contains("no rows match /zzz/"), "{s}");
        assert!(!s.contains("call0(0)"), "{s}");
    }

    /// Every action on a table without rows, with one row, filtered to nothing or not, at
    /// every height from one line up: the view draws, and a row, when there is one, is the
    /// selected line.
    #[test]
    fn every_key_on_empty_one_row_and_filtered_tables_draws() {
        let mut one = table();
        one.rows.truncate(1);
        let mut header_only = table();
        header_only.rows.clear();
        let untitled = AnalysisTable {
            title: String::new(),
            ..one.clone()
        };
        let cases = [
            (None, None),
            (Some(header_only), None),
            (Some(one.clone()), None),
            (Some(untitled), None),
            (Some(table()), Some("zzz")),
            (Some(one), Some("call0")),
        ];
        for (table, filter) in cases {
            for height in 1..12 {
                let mut view = TableView::new();
                let snapshot = snapshot_with_table(table.clone());
                let theme = Theme::builtin_dark();
                let ctx = ViewContext {
                    snapshot: &snapshot,
                    theme: &theme,
                    focused: true,
                    keys: crate::config::keymap::Keymap::standard(),
                };
                view.search(filter.map(|f| regex::Regex::new(f).unwrap()).as_ref(), &ctx);
                for &action in Action::ALL {
                    view.handle(action, &ctx);
                    let mut buf = Buffer::empty(Rect::new(0, 0, 40, height));
                    view.render(buf.area, &mut buf, &ctx);
                }
                // The mouse wheel, both ways (it panicked over a table without lines).
                for lines in [3, -3, i32::MAX, i32::MIN] {
                    view.scroll(lines, &ctx);
                }
                // Action::ALL toggled the offenders pane on; back to the table.
                view.offenders = None;
                let mut buf = Buffer::empty(Rect::new(0, 0, 40, height));
                view.render(buf.area, &mut buf, &ctx);
                let lines = view.lines(&snapshot);
                let has_rows = lines.iter().any(|(k, _)| *k == LineKind::Row);
                if !has_rows {
                    assert_eq!((view.selected, view.top), (0, 0), "{filter:?} at {height}");
                } else if height >= 6 {
                    // Room for the frame, the title, the header and a row.
                    assert_eq!(
                        lines[view.selected].0,
                        LineKind::Row,
                        "{filter:?} at {height}: {lines:?}"
                    );
                }
            }
        }
    }

    /// At every width where the widest column fits, scrolled to every stop, the first row
    /// shows its values whole or not at all.
    #[test]
    fn sideways_scrolling_never_cuts_a_number() {
        for width in 18..60u16 {
            let mut view = TableView::new();
            for step in 0..6 {
                let keys: &[Action] = if step == 0 { &[] } else { &[Action::Right] };
                let s = draw(&mut view, Some(table()), width, 8, keys);
                // Frame, title, column names, dashes, then the first row.
                let row = s.lines().nth(4).unwrap();
                let inner = row.trim_start_matches('│').trim_end_matches('│');
                for token in inner.split_whitespace() {
                    assert!(
                        ["call0(0)", "100", "1.500"].contains(&token),
                        "width {width}, step {step}: {token:?} cut in {row:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_status_line_names_the_sorted_column() {
        let mut view = TableView::new();
        draw(
            &mut view,
            Some(table()),
            60,
            8,
            &[Action::SortNext, Action::SortNext],
        );
        assert_eq!(
            view.hint(crate::config::keymap::Keymap::standard()).as_deref(),
            Some("sorted by calls")
        );
        draw(&mut view, Some(table()), 60, 8, &[Action::SortReverse]);
        assert_eq!(
            view.hint(crate::config::keymap::Keymap::standard()).as_deref(),
            Some("sorted by calls ↑")
        );
        draw(&mut view, Some(table()), 60, 8, &[Action::SortNext]);
        assert_eq!(
            view.hint(crate::config::keymap::Keymap::standard()),
            None,
            "back to the analyzer's order"
        );
    }

    #[test]
    fn a_table_without_events_says_so() {
        let mut empty = table();
        empty.rows.clear();
        let s = draw(&mut TableView::new(), Some(empty), 60, 10, &[]);
        assert!(s.contains("no events yet"), "{s}");
    }

    /// Hints name the keys the user's keymap binds, not the default ones.
    #[test]
    fn the_offenders_pane_names_the_keys_of_the_keymap_in_use() {
        use crate::config::keymap::Keymap;
        let rebound = Keymap::from_toml(
            "[table]\ntoggle_offenders = [\"x\"]\nactivate = [\"space\"]\n",
            Some(Keymap::standard()),
        )
        .unwrap();
        let snapshot = snapshot_with_table(Some(table()));
        let theme = Theme::builtin_dark();
        for (keys, want) in [
            (Keymap::standard(), "(Enter: one pair · o: the table)"),
            (&rebound, "(Space: one pair · x: the table)"),
        ] {
            let ctx = ViewContext {
                snapshot: &snapshot,
                theme: &theme,
                focused: true,
                keys,
            };
            let mut view = TableView::new();
            view.handle(Action::ToggleOffenders, &ctx);
            let mut buf = Buffer::empty(Rect::new(0, 0, 90, 8));
            view.render(buf.area, &mut buf, &ctx);
            let s = text(&buf);
            assert!(s.contains(want), "{s}");
        }
    }

    #[test]
    fn no_tables_shows_how_to_get_some() {
        let mut view = TableView::new();
        let s = draw(&mut view, None, 100, 8, &[Action::Down]);
        assert!(s.contains("no analyzer tables"), "{s}");
    }
}
