//! The `--than` offenders pane of the Tables view (`o`): every over-threshold pair as the
//! two raw event lines perf-prof prints, oldest first. It follows the newest pairs until
//! the user scrolls up; End follows again. Owns only its scroll position.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use crate::config::{Action, Theme};
use crate::engine::offenders::OffenderLines;
use crate::views::text::skip_columns;

use super::widgets::bars::{centered_hint, frame};

const NONE_HINT: &str = "no --than offenders: none over the threshold yet, or no --than given";

/// Scroll state of the offenders list.
#[derive(Debug, Default)]
pub struct OffendersPane {
    /// First line shown, when the user scrolled away from the newest.
    top: Option<usize>,
    left: usize,
    /// Lines that fit at the last draw (paging).
    rows: usize,
}

impl OffendersPane {
    pub fn render(
        &mut self,
        area: Rect,
        buf: &mut Buffer,
        offenders: &OffenderLines,
        theme: &Theme,
        focused: bool,
    ) {
        let title = format!(
            " --than offenders: {} pairs · {} dropped (o: back to the table) ",
            offenders.pairs, offenders.dropped
        );
        let inner = frame(area, buf, theme, focused, &title);
        if inner.width == 0 || inner.height == 0 {
            return;
        }
        if offenders.lines.is_empty() {
            centered_hint(inner, buf, NONE_HINT, theme.dim);
            return;
        }
        self.rows = inner.height as usize;
        let last_top = offenders.lines.len().saturating_sub(self.rows);
        let top = self.top.map_or(last_top, |t| t.min(last_top));
        for (row, line) in offenders.lines.iter().skip(top).take(self.rows).enumerate() {
            buf.set_stringn(
                inner.x,
                inner.y + row as u16,
                skip_columns(line, self.left),
                inner.width as usize,
                theme.text,
            );
        }
        // Scrolled to the end: follow the newest again.
        self.top = (top < last_top).then_some(top);
    }

    pub fn handle(&mut self, action: Action, lines: usize) {
        let last_top = lines.saturating_sub(self.rows);
        let top = self.top.unwrap_or(last_top);
        let page = self.rows.max(1);
        self.top = match action {
            Action::Up => Some(top.saturating_sub(1)),
            Action::Down => Some(top + 1),
            Action::PageUp => Some(top.saturating_sub(page)),
            Action::PageDown => Some(top + page),
            Action::Top => Some(0),
            Action::Bottom => None,
            _ => self.top,
        };
        if self.top.is_some_and(|t| t >= last_top) {
            self.top = None;
        }
        match action {
            Action::Left => self.left = self.left.saturating_sub(8),
            Action::Right => self.left += 8,
            _ => {}
        }
    }
}
