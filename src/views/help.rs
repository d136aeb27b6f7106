//! The `?` help overlay: a centred popup listing the keys of the ACTIVE keymap (the
//! focused view's section first, then the global keys it does not shadow, then the other
//! views), so the help never drifts from what the keys do. It scrolls when the list is
//! longer than the screen. It owns only its scroll position; the keymap and theme are
//! passed in at each draw.

use ratatui::buffer::Buffer;
use ratatui::layout::{Alignment, Rect};
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Block, Clear, Widget};

use crate::config::keymap::Keymap;
use crate::config::{Action, KeyContext, Theme};
use crate::views::text::{display_width, truncate_end};

/// The widest the popup gets: beyond this the descriptions are easier to read narrow.
const MAX_WIDTH: u16 = 76;
/// The key column never takes more than this; longer key lists are cut with "…".
const MAX_KEY_WIDTH: usize = 20;

/// What a key did to the open overlay.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum HelpInput {
    /// The overlay scrolled (or was already at that end); redraw.
    Scrolled,
    /// Close the overlay (Help again or Back).
    Close,
    /// Not for the overlay; the app may handle it (Quit) or drop it.
    Ignored,
}

/// The help popup's state.
#[derive(Clone, Debug, Default)]
pub struct HelpOverlay {
    /// The first list line shown.
    offset: usize,
    /// The largest useful offset at the last draw (`None` before the first draw).
    max_offset: Option<usize>,
    /// List rows visible at the last draw.
    page_rows: usize,
}

/// One line of the list.
enum HelpLine {
    Heading(&'static str),
    Entry { keys: String, help: &'static str },
    Blank,
}

fn context_title(context: KeyContext) -> &'static str {
    match context {
        KeyContext::Global => "Everywhere",
        KeyContext::Hotspots => "Hotspots",
        KeyContext::Flamegraph => "Flamegraph",
        KeyContext::CallTree => "Call tree",
        KeyContext::Histogram => "Histograms",
        KeyContext::Table => "Tables",
        KeyContext::Timeline => "Timeline",
        KeyContext::Console => "Console",
        KeyContext::Instances => "Instances",
    }
}

impl HelpOverlay {
    /// A fresh overlay, scrolled to the top (create one each time help opens).
    pub fn new() -> Self {
        Self::default()
    }

    /// The first list line shown (0 = top).
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Scroll by `lines` (positive = down), kept within the list.
    pub fn scroll(&mut self, lines: i32) {
        let moved = if lines < 0 {
            self.offset.saturating_sub(lines.unsigned_abs() as usize)
        } else {
            self.offset.saturating_add(lines as usize)
        };
        self.offset = match self.max_offset {
            Some(max) => moved.min(max),
            None => moved,
        };
    }

    /// React to an action while the overlay is open.
    pub fn handle(&mut self, action: Action) -> HelpInput {
        let page = self.page_rows.saturating_sub(1).max(1) as i32;
        match action {
            Action::Up => self.scroll(-1),
            Action::Down => self.scroll(1),
            Action::PageUp => self.scroll(-page),
            Action::PageDown => self.scroll(page),
            Action::Top => self.offset = 0,
            Action::Bottom => self.offset = self.max_offset.unwrap_or(self.offset),
            Action::Help | Action::Back => return HelpInput::Close,
            _ => return HelpInput::Ignored,
        }
        HelpInput::Scrolled
    }

    /// Draw the popup centred in `area`, listing `keymap` for `focused_context`.
    pub fn render(
        &mut self,
        area: Rect,
        buf: &mut Buffer,
        keymap: &Keymap,
        theme: &Theme,
        focused_context: KeyContext,
    ) {
        let lines = help_lines(keymap, focused_context);
        let key_width = lines
            .iter()
            .filter_map(|l| match l {
                HelpLine::Entry { keys, .. } => Some(display_width(keys)),
                _ => None,
            })
            .max()
            .unwrap_or(0)
            .min(MAX_KEY_WIDTH);
        let content_width = lines
            .iter()
            .map(|l| match l {
                HelpLine::Entry { help, .. } => 1 + key_width + 2 + display_width(help),
                HelpLine::Heading(h) => display_width(h),
                HelpLine::Blank => 0,
            })
            .max()
            .unwrap_or(0);
        let width = u16::try_from(content_width + 3)
            .unwrap_or(u16::MAX)
            .clamp(40, MAX_WIDTH)
            .min(area.width);
        let height = u16::try_from(lines.len() + 2)
            .unwrap_or(u16::MAX)
            .min(area.height);
        if width == 0 || height == 0 {
            return;
        }
        let popup = Rect::new(
            area.x + (area.width - width) / 2,
            area.y + (area.height - height) / 2,
            width,
            height,
        );
        Clear.render(popup, buf);

        let inner_rows = usize::from(height.saturating_sub(2));
        let max_offset = lines.len().saturating_sub(inner_rows);
        self.max_offset = Some(max_offset);
        self.page_rows = inner_rows;
        self.offset = self.offset.min(max_offset);

        let close_key = keymap
            .keys_for(KeyContext::Global, Action::Help)
            .into_iter()
            .next()
            .unwrap_or_else(|| "Esc".to_string());
        let mut block = Block::bordered()
            .border_style(theme.border_focused)
            .title(format!(" perfscope — keys ({close_key} closes) "))
            .title_style(theme.title);
        let hint = match (self.offset > 0, self.offset < max_offset) {
            (true, true) => Some(" ↑↓ more "),
            (false, true) => Some(" ↓ more "),
            (true, false) => Some(" ↑ more "),
            (false, false) => None,
        };
        if let Some(hint) = hint {
            block = block.title_bottom(Line::styled(hint, theme.dim).alignment(Alignment::Right));
        }
        let inner = block.inner(popup);
        block.render(popup, buf);
        // The border and title styles cover the frame; the body gets the text style.
        buf.set_style(inner, theme.text);

        let body_width = usize::from(inner.width);
        for (row, line) in lines.iter().skip(self.offset).take(inner_rows).enumerate() {
            let y = inner.y + row as u16;
            match line {
                HelpLine::Heading(title) => {
                    put(buf, inner.x, y, title, body_width, theme.header);
                }
                HelpLine::Entry { keys, help } => {
                    let keys = truncate_end(keys, key_width);
                    let padded = format!(" {}  ", crate::model::text::left_aligned(keys, key_width));
                    let used = put(buf, inner.x, y, &padded, body_width, theme.title);
                    let rest = body_width.saturating_sub(used);
                    let x = inner.x + used as u16;
                    put(buf, x, y, &truncate_end(help, rest), rest, theme.text);
                }
                HelpLine::Blank => {}
            }
        }
    }
}

/// Write `text` (at most `width` columns) at (x, y); returns the columns used.
fn put(buf: &mut Buffer, x: u16, y: u16, text: &str, width: usize, style: Style) -> usize {
    let (end, _) = buf.set_stringn(x, y, text, width, style);
    usize::from(end - x)
}

fn help_lines(keymap: &Keymap, focused: KeyContext) -> Vec<HelpLine> {
    let mut lines = Vec::new();
    for (context, actions) in keymap.help_sections(focused) {
        if !lines.is_empty() {
            lines.push(HelpLine::Blank);
        }
        lines.push(HelpLine::Heading(context_title(context)));
        for (action, keys) in actions {
            lines.push(HelpLine::Entry {
                keys: keys.join(", "),
                help: action.help(),
            });
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use ratatui::style::Modifier;

    use super::*;

    fn keymap(name: &str) -> Keymap {
        Keymap::builtin(name).unwrap_or_else(|e| panic!("{e}"))
    }

    fn draw(help: &mut HelpOverlay, w: u16, h: u16, map: &Keymap, ctx: KeyContext) -> Buffer {
        let mut buf = Buffer::empty(Rect::new(0, 0, w, h));
        // Something underneath, to check the popup clears it.
        for y in 0..h {
            buf.set_string(0, y, "#".repeat(usize::from(w)), Style::new());
        }
        help.render(buf.area, &mut buf, map, &Theme::builtin_dark(), ctx);
        buf
    }

    fn rows(buf: &Buffer) -> Vec<String> {
        (0..buf.area.height)
            .map(|y| {
                (0..buf.area.width)
                    .map(|x| buf[(x, y)].symbol())
                    .collect::<String>()
            })
            .collect()
    }

    #[test]
    fn flamegraph_help_at_80x24() {
        let map = keymap("default");
        let mut help = HelpOverlay::new();
        let buf = draw(&mut help, 80, 24, &map, KeyContext::Flamegraph);
        // The whole screen, pinned: the focused section first, then global, a "↓ more"
        // hint because the list is longer than 24 rows, and the view behind kept outside.
        assert_eq!(rows(&buf), EXPECTED_FLAMEGRAPH);
        // Headings and keys are styled by the theme.
        let theme = Theme::builtin_dark();
        assert_eq!(buf[(8, 1)].fg, theme.header.fg.unwrap_or_default());
        assert!(buf[(8, 1)].modifier.contains(Modifier::BOLD));
        assert_eq!(buf[(9, 2)].fg, theme.title.fg.unwrap_or_default());
    }

    const EXPECTED_FLAMEGRAPH: [&str; 24] = [
        "#######┌ perfscope — keys (? closes) ───────────────────────────────────┐#######",
        "#######│Flamegraph                                                      │#######",
        "#######│ p          select the parent frame                             │#######",
        "#######│ c          select the widest child frame                       │#######",
        "#######│ ,          select the previous sibling                         │#######",
        "#######│ .          select the next sibling                             │#######",
        "#######│ Enter      zoom into the selected frame                        │#######",
        "#######│ Backspace  zoom out one level                                  │#######",
        "#######│ 0, z       show the whole graph                                │#######",
        "#######│ f          keep only stacks through the selected function      │#######",
        "#######│ F          drop the focus                                      │#######",
        "#######│ I          inverted: callers of the selected leaf              │#######",
        "#######│                                                                │#######",
        "#######│Everywhere                                                      │#######",
        "#######│ q, Ctrl-c  quit and restore the terminal                       │#######",
        "#######│ ?, F1      show or hide this help                              │#######",
        "#######│ Tab        next view                                           │#######",
        "#######│ Shift-Tab  previous view                                       │#######",
        "#######│ 1          hotspot table                                       │#######",
        "#######│ 2          flamegraph                                          │#######",
        "#######│ 3          call tree                                           │#######",
        "#######│ 4          latency histograms                                  │#######",
        "#######│ 8          analyzer tables (perf-prof's columns)               │#######",
        "#######└──────────────────────────────────────────────────────── ↓ more ┘#######",
    ];

    #[test]
    fn vim_map_shows_j_for_down() {
        let map = keymap("vim");
        let mut help = HelpOverlay::new();
        help.scroll(12);
        let buf = draw(&mut help, 80, 24, &map, KeyContext::Hotspots);
        let text = rows(&buf).join("\n");
        assert!(text.contains(" j, Down "), "{text}");
    }

    #[test]
    fn scrolling_changes_the_first_visible_line() {
        let map = keymap("default");
        let mut help = HelpOverlay::new();
        let first = rows(&draw(&mut help, 80, 24, &map, KeyContext::Flamegraph))[1].clone();
        assert_eq!(help.handle(Action::Down), HelpInput::Scrolled);
        let second = rows(&draw(&mut help, 80, 24, &map, KeyContext::Flamegraph))[1].clone();
        assert_ne!(first, second);
        assert_eq!(help.offset(), 1);
        help.handle(Action::Bottom);
        let buf = draw(&mut help, 80, 24, &map, KeyContext::Flamegraph);
        let bottom = rows(&buf)[23].clone();
        assert!(bottom.contains("↑ more") && !bottom.contains("↓"), "{bottom}");
        help.scroll(-1000);
        assert_eq!(help.offset(), 0);
        assert_eq!(help.handle(Action::Help), HelpInput::Close);
        assert_eq!(help.handle(Action::Back), HelpInput::Close);
        assert_eq!(help.handle(Action::Quit), HelpInput::Ignored);
    }

    #[test]
    fn tiny_areas_do_not_panic() {
        let map = keymap("default");
        let mut help = HelpOverlay::new();
        let buf = draw(&mut help, 10, 3, &map, KeyContext::Global);
        assert_eq!(rows(&buf)[1], "│Everywhe│");
        draw(&mut help, 0, 10, &map, KeyContext::Global);
        draw(&mut help, 10, 0, &map, KeyContext::Global);
        draw(&mut help, 1, 1, &map, KeyContext::Global);
    }
}
