//! Themes: the styles every view draws with, by role. Loaded from themes/*.toml (see the
//! loader below); `Theme::builtin_dark` is the compiled-in default so a view or a test
//! never depends on a file being present.

use ratatui::style::{Color, Modifier, Style};

/// How flamegraph cells are coloured.
#[derive(Clone, Debug, PartialEq)]
pub enum FlamePalette {
    /// Warm colours picked by a stable hash of the function name (the flamegraph.pl look).
    Hot,
    /// No colour: cells alternate plain and reversed so neighbours stay distinct.
    Mono,
}

/// Styles by role.
#[derive(Clone, Debug, PartialEq)]
pub struct Theme {
    pub name: String,
    /// Ordinary text.
    pub text: Style,
    /// Secondary text (percent columns, hints).
    pub dim: Style,
    pub border: Style,
    /// The border of the pane that has the keyboard.
    pub border_focused: Style,
    pub title: Style,
    /// Table and tree headers.
    pub header: Style,
    /// The selected row or frame.
    pub selected: Style,
    /// Text matching the current search.
    pub search_match: Style,
    /// The status line.
    pub status: Style,
    /// Emphasised parts of the status line (mode, counts).
    pub status_accent: Style,
    pub warning: Style,
    pub error: Style,
    /// Histogram and timeline bars.
    pub bar: Style,
    /// Start / stop markers on the timeline.
    pub marker: Style,
    /// The selected time window on the timeline.
    pub window: Style,
    pub flame: FlamePalette,
}

impl Default for Theme {
    fn default() -> Self {
        Self::builtin_dark()
    }
}

impl Theme {
    /// The compiled-in dark theme (truecolor; the loader downgrades colours for the terminal).
    pub fn builtin_dark() -> Self {
        let fg = Color::Rgb(0xd8, 0xde, 0xe9);
        Theme {
            name: "dark".into(),
            text: Style::new().fg(fg),
            dim: Style::new().fg(Color::Rgb(0x7a, 0x84, 0x96)),
            border: Style::new().fg(Color::Rgb(0x4c, 0x56, 0x6a)),
            border_focused: Style::new().fg(Color::Rgb(0x88, 0xc0, 0xd0)),
            title: Style::new()
                .fg(Color::Rgb(0x88, 0xc0, 0xd0))
                .add_modifier(Modifier::BOLD),
            header: Style::new()
                .fg(Color::Rgb(0xeb, 0xcb, 0x8b))
                .add_modifier(Modifier::BOLD),
            selected: Style::new()
                .fg(Color::Rgb(0x2e, 0x34, 0x40))
                .bg(Color::Rgb(0x88, 0xc0, 0xd0))
                .add_modifier(Modifier::BOLD),
            search_match: Style::new()
                .fg(Color::Rgb(0x2e, 0x34, 0x40))
                .bg(Color::Rgb(0xb4, 0x8e, 0xad))
                .add_modifier(Modifier::BOLD),
            status: Style::new().fg(fg).bg(Color::Rgb(0x3b, 0x42, 0x52)),
            status_accent: Style::new()
                .fg(Color::Rgb(0xa3, 0xbe, 0x8c))
                .bg(Color::Rgb(0x3b, 0x42, 0x52))
                .add_modifier(Modifier::BOLD),
            warning: Style::new().fg(Color::Rgb(0xeb, 0xcb, 0x8b)),
            error: Style::new()
                .fg(Color::Rgb(0xbf, 0x61, 0x6a))
                .add_modifier(Modifier::BOLD),
            bar: Style::new().fg(Color::Rgb(0x81, 0xa1, 0xc1)),
            marker: Style::new()
                .fg(Color::Rgb(0xd0, 0x87, 0x70))
                .add_modifier(Modifier::BOLD),
            window: Style::new().bg(Color::Rgb(0x43, 0x4c, 0x5e)),
            flame: FlamePalette::Hot,
        }
    }

    /// The style of a flamegraph cell for a function whose name hashes to `name_hash`
    /// (FNV, stable across runs). `parity` alternates along a row for the mono palette.
    pub fn frame_style(&self, name_hash: u64, parity: bool) -> Style {
        match self.flame {
            FlamePalette::Hot => {
                // flamegraph.pl's "hot" palette: red 205–255, green 0–230, blue 0–55.
                let v1 = (name_hash & 0xff) as f32 / 255.0;
                let v2 = ((name_hash >> 8) & 0xff) as f32 / 255.0;
                let v3 = ((name_hash >> 16) & 0xff) as f32 / 255.0;
                let r = 205.0 + 50.0 * v3;
                let g = 230.0 * v1;
                let b = 55.0 * v2;
                Style::new()
                    .fg(Color::Rgb(0x10, 0x10, 0x10))
                    .bg(Color::Rgb(r as u8, g as u8, b as u8))
            }
            FlamePalette::Mono => {
                if parity {
                    Style::new().add_modifier(Modifier::REVERSED)
                } else {
                    Style::new()
                }
            }
        }
    }
}
