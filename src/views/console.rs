//! The console view: the guest's console lines as scrollback that follows the tail until
//! the user scrolls up, with the unfinished last line (a shell prompt) at the bottom and a
//! regex search that highlights and jumps between matching lines.
//!
//! Long lines are cut at the pane's width with `…` (not wrapped): one console line is one
//! row, so scrolling and "match 3/12" count the lines the guest printed. Tabs expand to
//! 8-column stops. The view only displays; typing into the guest is the app's business.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use regex::Regex;
use unicode_width::UnicodeWidthChar;

use crate::config::{Action, KeyContext};
use crate::model::ConsoleLog;
use crate::views::text::truncate_end;
use crate::views::widgets::bars::{centered_hint, frame};
use crate::views::{Effect, View, ViewContext};

const EMPTY_HINT: &str = "no console: this source has none (`perfscope qemu` shows the guest console here)";

const TAB_STOP: usize = 8;

/// Rows per page assumed before the first render (24 rows minus border and status row).
const DEFAULT_PAGE: usize = 21;

/// Scrollback of the console log.
#[derive(Debug)]
pub struct ConsoleView {
    /// The first visible row (a line number; the partial line is row `log.len()`; rows
    /// before `log.first()` were dropped from the log).
    top: usize,
    /// Stick to the tail as lines arrive.
    follow: bool,
    /// Rows there were when following stopped ("↓ N new lines" counts from here).
    rows_when_paused: usize,
    /// Text rows of the last render.
    page: usize,
    pattern: Option<Regex>,
    /// Numbers of complete lines that match, ascending.
    matches: Vec<usize>,
    /// Lines already searched (new lines are searched as they arrive).
    scanned: usize,
    /// Index into `matches` of the current match.
    current: Option<usize>,
}

impl Default for ConsoleView {
    fn default() -> Self {
        Self::new()
    }
}

/// Lines plus the partial line, when there is one.
fn row_count(log: &ConsoleLog) -> usize {
    log.len() + usize::from(!log.partial().is_empty())
}

fn row_text(log: &ConsoleLog, row: usize) -> &str {
    if row >= log.len() {
        return log.partial();
    }
    log.get(row).map_or("", |l| l.text.as_str())
}

/// Draw `text` in `width` columns at (x, y): tabs expanded, byte ranges in `ranges` in
/// `highlight`, cut with `…` when too wide.
fn draw_line(
    buf: &mut Buffer,
    (x, y, width): (u16, u16, usize),
    text: &str,
    ranges: &[(usize, usize)],
    base: Style,
    highlight: Style,
) {
    let char_width = |ch: char, col: usize| {
        if ch == '\t' {
            TAB_STOP - col % TAB_STOP
        } else {
            ch.width().unwrap_or(0)
        }
    };
    let mut total = 0;
    for ch in text.chars() {
        total += char_width(ch, total);
    }
    let cut = total > width;
    let limit = if cut { width.saturating_sub(1) } else { width };
    let mut col = 0;
    for (i, ch) in text.char_indices() {
        let w = char_width(ch, col);
        if w == 0 {
            continue;
        }
        if col + w > limit {
            break;
        }
        let style = if ranges.iter().any(|&(a, b)| i >= a && i < b) {
            highlight
        } else {
            base
        };
        let cell_x = x + col as u16;
        if ch == '\t' {
            buf.set_stringn(cell_x, y, " ".repeat(w), w, style);
        } else {
            let mut s = [0u8; 4];
            buf.set_stringn(cell_x, y, ch.encode_utf8(&mut s), w, style);
        }
        col += w;
    }
    if cut && width > 0 {
        buf.set_stringn(x + col as u16, y, "…", 1, base);
    }
}

impl ConsoleView {
    pub fn new() -> Self {
        ConsoleView {
            top: 0,
            follow: true,
            rows_when_paused: 0,
            page: DEFAULT_PAGE,
            pattern: None,
            matches: Vec::new(),
            scanned: 0,
            current: None,
        }
    }

    fn max_top(&self, rows: usize) -> usize {
        rows.saturating_sub(self.page.max(1))
    }

    /// Keep `top` on kept rows.
    fn clamp_top(&mut self, log: &ConsoleLog) {
        let rows = row_count(log);
        self.top = self.top.max(log.first()).min(self.max_top(rows).max(log.first()));
    }

    fn pause(&mut self, rows: usize) {
        if self.follow {
            self.follow = false;
            self.rows_when_paused = rows;
        }
    }

    /// Scroll by `delta` rows; reaching the end resumes following.
    fn scroll_by(&mut self, delta: i64, rows: usize) {
        let max = self.max_top(rows);
        if self.follow {
            self.top = max;
        }
        let top = (self.top as i64 + delta).clamp(0, max as i64) as usize;
        if top >= max {
            self.follow = true;
            self.top = max;
        } else {
            self.pause(rows);
            self.top = top;
        }
    }

    /// Search lines that arrived since the last scan (all of them after a reset); forget
    /// matches on lines the log dropped.
    fn rescan(&mut self, log: &ConsoleLog) {
        if self.scanned > log.len() {
            self.matches.clear();
            self.scanned = 0;
            self.current = None;
        }
        let gone = self.matches.partition_point(|&n| n < log.first());
        if gone > 0 {
            self.matches.drain(..gone);
            self.current = self
                .current
                .and_then(|c| c.checked_sub(gone))
                .filter(|_| !self.matches.is_empty());
        }
        let Some(re) = &self.pattern else { return };
        for (n, line) in log.lines_from(self.scanned) {
            if re.is_match(&line.text) {
                self.matches.push(n);
            }
        }
        self.scanned = log.len();
    }

    /// Show `line`: centred when it is off screen, as a paused view.
    fn reveal(&mut self, line: usize, rows: usize) {
        let max = self.max_top(rows);
        let top = if self.follow { max } else { self.top };
        if line >= top && line < top + self.page {
            return;
        }
        self.pause(rows);
        self.top = line.saturating_sub(self.page / 2).min(max);
    }

    fn jump(&mut self, forward: bool, rows: usize) {
        if self.matches.is_empty() {
            return;
        }
        let n = self.matches.len();
        let next = match self.current {
            None => 0,
            Some(c) if forward => (c + 1) % n,
            Some(c) => (c + n - 1) % n,
        };
        self.current = Some(next);
        self.reveal(self.matches[next], rows);
    }

    fn clear_search(&mut self) {
        self.pattern = None;
        self.matches.clear();
        self.scanned = 0;
        self.current = None;
    }
}

impl View for ConsoleView {
    fn key_context(&self) -> KeyContext {
        KeyContext::Console
    }

    fn render(&mut self, area: Rect, buf: &mut Buffer, ctx: &ViewContext) {
        let theme = ctx.theme;
        let log = ctx.snapshot.console.as_ref();
        let title = match log.first() {
            0 => format!(" console · {} lines ", log.len()),
            first => format!(
                " console · {} lines, the newest {} kept ",
                log.len(),
                log.len() - first
            ),
        };
        let inner = frame(area, buf, theme, ctx.focused, &title);
        if log.is_empty() {
            centered_hint(inner, buf, EMPTY_HINT, theme.dim);
            return;
        }
        if inner.width == 0 || inner.height == 0 {
            return;
        }
        // The last row tells whether the view follows the tail.
        let has_status = inner.height >= 2;
        self.page = (inner.height - u16::from(has_status)) as usize;
        let rows = row_count(log);
        let max = self.max_top(rows);
        if self.follow {
            self.top = max;
        }
        self.clamp_top(log);
        let width = inner.width as usize;
        for (i, row) in (self.top..rows.min(self.top + self.page)).enumerate() {
            let text = row_text(log, row);
            let ranges: Vec<(usize, usize)> = match &self.pattern {
                Some(re) => re
                    .find_iter(text)
                    .filter(|m| !m.is_empty())
                    .map(|m| (m.start(), m.end()))
                    .collect(),
                None => Vec::new(),
            };
            let y = inner.y + i as u16;
            draw_line(
                buf,
                (inner.x, y, width),
                text,
                &ranges,
                theme.text,
                theme.search_match,
            );
        }
        if has_status {
            let below = rows.saturating_sub(self.top + self.page);
            let new = rows.saturating_sub(self.rows_when_paused);
            let (status, style) = if self.follow {
                (format!("following · {} lines", log.len()), theme.dim)
            } else if new > 0 {
                (format!("↓ {new} new lines"), theme.status_accent)
            } else if below > 0 {
                (format!("↓ {below} more lines"), theme.status)
            } else {
                ("↓ paused at the end".to_string(), theme.status)
            };
            let y = inner.bottom() - 1;
            buf.set_style(Rect::new(inner.x, y, inner.width, 1), style);
            buf.set_stringn(inner.x, y, truncate_end(&status, width), width, style);
        }
    }

    fn handle(&mut self, action: Action, ctx: &ViewContext) -> Effect {
        let rows = row_count(&ctx.snapshot.console);
        let page = self.page.saturating_sub(1).max(1) as i64;
        match action {
            Action::Up => self.scroll_by(-1, rows),
            Action::Down => self.scroll_by(1, rows),
            Action::PageUp => self.scroll_by(-page, rows),
            Action::PageDown => self.scroll_by(page, rows),
            Action::Top if self.max_top(rows) > 0 => {
                self.pause(rows);
                self.top = ctx.snapshot.console.first();
            }
            Action::Bottom => {
                self.follow = true;
                self.top = self.max_top(rows);
            }
            Action::NextMatch => self.jump(true, rows),
            Action::PrevMatch => self.jump(false, rows),
            Action::ClearSearch => self.clear_search(),
            _ => {}
        }
        Effect::None
    }

    fn search(&mut self, pattern: Option<&Regex>, ctx: &ViewContext) -> Effect {
        self.clear_search();
        let Some(re) = pattern else {
            return Effect::None;
        };
        self.pattern = Some(re.clone());
        let log = ctx.snapshot.console.as_ref();
        self.rescan(log);
        if self.matches.is_empty() {
            return Effect::Message(format!("no console line matches /{}/", re.as_str()));
        }
        // Start at the newest match on or above the screen's last row: a console is read
        // from the tail.
        let rows = row_count(log);
        let top = if self.follow { self.max_top(rows) } else { self.top };
        let last_visible = top + self.page.max(1) - 1;
        let at = self.matches.partition_point(|&l| l <= last_visible);
        self.current = Some(at.saturating_sub(1));
        if let Some(c) = self.current {
            self.reveal(self.matches[c], rows);
        }
        Effect::None
    }

    fn scroll(&mut self, lines: i32, ctx: &ViewContext) {
        self.scroll_by(lines as i64, row_count(&ctx.snapshot.console));
    }

    fn snapshot_changed(&mut self, ctx: &ViewContext) {
        self.rescan(&ctx.snapshot.console);
    }

    fn hint(&self, _keys: &crate::config::keymap::Keymap) -> Option<String> {
        self.pattern.as_ref()?;
        Some(match self.current {
            Some(c) if !self.matches.is_empty() => format!("match {}/{}", c + 1, self.matches.len()),
            _ => "no match".into(),
        })
    }
}

#[cfg(test)]
mod tests;
