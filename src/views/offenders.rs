//! The `--than` offenders pane of the Tables view (`o`): every over-threshold pair as the
//! raw event lines perf-prof prints (with `--detail` the events between them, with a
//! `stack` event its stacks), oldest first. Up/Down select a pair (the newest is followed
//! until the user moves; End follows again); Enter shows the selected pair alone — its
//! detail events and symbolized stacks — and Esc goes back to the list. Owns only its
//! selection and scroll positions.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use crate::config::keymap::Keymap;
use crate::config::{Action, KeyContext, Theme};
use crate::engine::offenders::OffenderLines;
use crate::views::text::skip_columns;

use super::widgets::bars::{centered_hint, frame};

const NONE_HINT: &str = "no --than offenders: none over the threshold yet, or no --than given";

/// Selection and scroll state of the offenders list.
#[derive(Debug, Default)]
pub struct OffendersPane {
    /// The selected pair, when the user moved away from the newest.
    selected: Option<usize>,
    /// Enter: the pair shown alone, and the first of its lines shown.
    opened: Option<(usize, usize)>,
    /// First line of the list shown.
    top: usize,
    left: usize,
    /// Lines that fit at the last draw (paging).
    rows: usize,
}

/// The lines of pair `index`: `[start, end)` in `offenders.lines`.
fn pair_range(offenders: &OffenderLines, index: usize) -> Option<(usize, usize)> {
    let start = *offenders.pair_starts.get(index)?;
    let end = offenders
        .pair_starts
        .get(index + 1)
        .copied()
        .unwrap_or(offenders.lines.len());
    Some((start, end))
}

impl OffendersPane {
    /// Whether a pair is open (Esc closes it rather than leaving the pane).
    pub fn is_open(&self) -> bool {
        self.opened.is_some()
    }

    fn current(&self, offenders: &OffenderLines) -> Option<usize> {
        let last = offenders.pair_starts.len().checked_sub(1)?;
        Some(self.selected.map_or(last, |s| s.min(last)))
    }

    pub fn render(
        &mut self,
        area: Rect,
        buf: &mut Buffer,
        offenders: &OffenderLines,
        theme: &Theme,
        keys: &Keymap,
        focused: bool,
    ) {
        // The pane lives in the Tables view: its keys are that section's.
        let key = |action| keys.label(KeyContext::Table, action);
        if let Some((pair, top)) = self.opened
            && let Some((start, end)) = pair_range(offenders, pair)
        {
            let title = format!(
                " --than offender {} of {}: events and stacks ({}: back to the list) ",
                pair + 1,
                offenders.pairs,
                key(Action::Back)
            );
            let inner = frame(area, buf, theme, focused, &title);
            self.rows = inner.height as usize;
            let top = top.min((end - start).saturating_sub(self.rows));
            self.opened = Some((pair, top));
            self.draw_lines(inner, buf, &offenders.lines[start + top..end], None, theme);
            return;
        }
        self.opened = None;
        let title = format!(
            " --than offenders: {} pairs · {} dropped ({}: one pair · {}: the table) ",
            offenders.pairs,
            offenders.dropped,
            key(Action::Activate),
            key(Action::ToggleOffenders)
        );
        let inner = frame(area, buf, theme, focused, &title);
        if inner.width == 0 || inner.height == 0 {
            return;
        }
        let Some(current) = self.current(offenders) else {
            centered_hint(inner, buf, NONE_HINT, theme.dim);
            return;
        };
        self.rows = inner.height as usize;
        let (start, end) = pair_range(offenders, current).unwrap_or((0, 0));
        // Keep the selected pair in sight: its first line, and as much of it as fits.
        let last_top = offenders.lines.len().saturating_sub(self.rows);
        if start < self.top {
            self.top = start;
        } else if end > self.top + self.rows {
            self.top = (end - self.rows).min(start);
        }
        self.top = self.top.min(last_top);
        let shown = &offenders.lines[self.top..];
        let selected = (start.saturating_sub(self.top), end.saturating_sub(self.top));
        self.draw_lines(inner, buf, shown, Some(selected), theme);
    }

    fn draw_lines(
        &self,
        inner: Rect,
        buf: &mut Buffer,
        lines: &[std::sync::Arc<str>],
        selected: Option<(usize, usize)>,
        theme: &Theme,
    ) {
        for (row, line) in lines.iter().take(inner.height as usize).enumerate() {
            let style = match selected {
                Some((start, end)) if (start..end).contains(&row) => theme.selected,
                _ => theme.text,
            };
            let y = inner.y + row as u16;
            buf.set_style(Rect::new(inner.x, y, inner.width, 1), style);
            buf.set_stringn(
                inner.x,
                y,
                skip_columns(line, self.left),
                inner.width as usize,
                style,
            );
        }
    }

    pub fn handle(&mut self, action: Action, offenders: &OffenderLines) {
        match action {
            Action::Left => self.left = self.left.saturating_sub(8),
            Action::Right => self.left += 8,
            _ => {}
        }
        let page = self.rows.max(1);
        if let Some((pair, top)) = self.opened {
            let top = match action {
                Action::Back => {
                    self.opened = None;
                    return;
                }
                Action::Up => top.saturating_sub(1),
                Action::Down => top + 1,
                Action::PageUp => top.saturating_sub(page),
                Action::PageDown => top + page,
                Action::Top => 0,
                Action::Bottom => usize::MAX / 2,
                _ => top,
            };
            // render clamps it to the pair's lines.
            self.opened = Some((pair, top));
            return;
        }
        let Some(current) = self.current(offenders) else {
            return;
        };
        let last = offenders.pair_starts.len() - 1;
        self.selected = match action {
            Action::Up => Some(current.saturating_sub(1)),
            Action::Down => Some(current + 1),
            // A page of lines, in pairs: at least one pair.
            Action::PageUp => Some(current.saturating_sub((page / 2).max(1))),
            Action::PageDown => Some(current + (page / 2).max(1)),
            Action::Top => Some(0),
            Action::Bottom => None,
            Action::Activate => {
                self.opened = Some((current, 0));
                self.selected
            }
            _ => self.selected,
        };
        // Moved to the newest: follow the newest again.
        if self.selected.is_some_and(|s| s >= last) {
            self.selected = None;
        }
    }
}
