//! Drawing pieces the histogram, timeline and console views share: eighth-block bars,
//! the bordered frame of a pane and a centred hint for a pane with nothing to show.
//! (They live under the histogram view only because `views/mod.rs` is not ours to extend.)

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::widgets::{Block, Widget};

use crate::config::Theme;
use crate::views::text::{display_width, truncate_end};

/// Horizontal partial blocks, index = eighths filled.
const HORIZONTAL: [&str; 8] = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"];
/// Vertical partial blocks, index = eighths filled (0 = blank).
const VERTICAL: [&str; 9] = [" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"];

/// How many eighths of `cells` cells `value` fills when `max` fills them all. A non-zero
/// value always shows at least one eighth, so a rare bucket never looks empty.
pub fn scaled_eighths(value: u64, max: u64, cells: usize) -> usize {
    if value == 0 || max == 0 || cells == 0 {
        return 0;
    }
    let full = cells as u128 * 8;
    let e = (value.min(max) as u128 * full + max as u128 / 2) / max as u128;
    (e as usize).max(1)
}

/// A horizontal bar of `eighths` eighths of a cell.
pub fn horizontal_bar(eighths: usize) -> String {
    let mut s = "█".repeat(eighths / 8);
    s.push_str(HORIZONTAL[eighths % 8]);
    s
}

/// The symbol of row `row_from_bottom` of a vertical bar `eighths` high.
pub fn vertical_cell(eighths: usize, row_from_bottom: usize) -> &'static str {
    let filled = eighths.saturating_sub(row_from_bottom * 8).min(8);
    VERTICAL[filled]
}

/// Draw the pane's border and title (highlighted when focused); returns the inside.
pub fn frame(area: Rect, buf: &mut Buffer, theme: &Theme, focused: bool, title: &str) -> Rect {
    if area.width < 2 || area.height < 2 {
        return Rect::new(area.x, area.y, 0, 0);
    }
    let border = if focused {
        theme.border_focused
    } else {
        theme.border
    };
    let title = truncate_end(title, area.width.saturating_sub(2) as usize).into_owned();
    let block = Block::bordered()
        .border_style(border)
        .title(title)
        .title_style(theme.title);
    let inner = block.inner(area);
    block.render(area, buf);
    inner
}

/// A one-line message centred in `area` (cut to fit, dim).
pub fn centered_hint(area: Rect, buf: &mut Buffer, text: &str, style: Style) {
    if area.width == 0 || area.height == 0 {
        return;
    }
    let text = truncate_end(text, area.width as usize);
    let w = display_width(&text) as u16;
    let x = area.x + (area.width - w) / 2;
    let y = area.y + area.height.saturating_sub(1) / 2;
    buf.set_stringn(x, y, &text, area.width as usize, style);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_use_eighths_and_never_hide_small_values() {
        assert_eq!(scaled_eighths(0, 10, 4), 0);
        assert_eq!(scaled_eighths(10, 10, 4), 32);
        assert_eq!(scaled_eighths(5, 10, 4), 16);
        assert_eq!(scaled_eighths(1, 1_000_000, 4), 1);
        assert_eq!(horizontal_bar(19), "██▍");
        assert_eq!(horizontal_bar(0), "");
        assert_eq!(vertical_cell(11, 0), "█");
        assert_eq!(vertical_cell(11, 1), "▃");
        assert_eq!(vertical_cell(11, 2), " ");
    }
}
