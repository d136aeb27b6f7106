//! Colours for the terminal at hand: how many it can show (detected from the environment),
//! how a theme file spells a colour, and the nearest colour a 256- or 16-colour terminal
//! has for a truecolor one (ratatui sends `Color::Rgb` as-is, so the mapping is ours).

use ratatui::style::{Color, Style};

/// How many colours the terminal shows.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ColorDepth {
    /// 24-bit RGB.
    TrueColor,
    /// The xterm 256-colour palette.
    Ansi256,
    /// The 16 ANSI colours.
    Ansi16,
    /// No colour at all: modifiers (bold, reversed, …) only.
    Mono,
}

/// The colour depth the environment asks for: `NO_COLOR` set and non-empty means none
/// (no-color.org); `COLORTERM=truecolor|24bit` means RGB; a `TERM` with "256color" means
/// 256; `TERM=dumb` means none; anything else gets the 16 colours every terminal has.
pub fn detect_color_depth(get_env: impl Fn(&str) -> Option<String>) -> ColorDepth {
    if get_env("NO_COLOR").is_some_and(|v| !v.is_empty()) {
        return ColorDepth::Mono;
    }
    if let Some(colorterm) = get_env("COLORTERM") {
        let colorterm = colorterm.to_ascii_lowercase();
        if colorterm == "truecolor" || colorterm == "24bit" {
            return ColorDepth::TrueColor;
        }
    }
    let term = get_env("TERM").unwrap_or_default();
    if term.contains("256color") {
        ColorDepth::Ansi256
    } else if term == "dumb" {
        ColorDepth::Mono
    } else {
        ColorDepth::Ansi16
    }
}

/// The 16 ANSI colours with xterm's default RGB values, in index order.
const ANSI16: [(Color, (u8, u8, u8)); 16] = [
    (Color::Black, (0, 0, 0)),
    (Color::Red, (205, 0, 0)),
    (Color::Green, (0, 205, 0)),
    (Color::Yellow, (205, 205, 0)),
    (Color::Blue, (0, 0, 238)),
    (Color::Magenta, (205, 0, 205)),
    (Color::Cyan, (0, 205, 205)),
    (Color::Gray, (229, 229, 229)),
    (Color::DarkGray, (127, 127, 127)),
    (Color::LightRed, (255, 0, 0)),
    (Color::LightGreen, (0, 255, 0)),
    (Color::LightYellow, (255, 255, 0)),
    (Color::LightBlue, (92, 92, 255)),
    (Color::LightMagenta, (255, 0, 255)),
    (Color::LightCyan, (0, 255, 255)),
    (Color::White, (255, 255, 255)),
];

/// The names a theme file may use for the 16 colours (ANSI spelling; ratatui's
/// "gray"/"dark gray"/"light red" spellings are accepted too).
const NAMES: [(&str, Color); 24] = [
    ("black", Color::Black),
    ("red", Color::Red),
    ("green", Color::Green),
    ("yellow", Color::Yellow),
    ("blue", Color::Blue),
    ("magenta", Color::Magenta),
    ("cyan", Color::Cyan),
    ("white", Color::Gray),
    ("bright black", Color::DarkGray),
    ("bright red", Color::LightRed),
    ("bright green", Color::LightGreen),
    ("bright yellow", Color::LightYellow),
    ("bright blue", Color::LightBlue),
    ("bright magenta", Color::LightMagenta),
    ("bright cyan", Color::LightCyan),
    ("bright white", Color::White),
    ("gray", Color::Gray),
    ("grey", Color::Gray),
    ("dark gray", Color::DarkGray),
    ("dark grey", Color::DarkGray),
    ("light red", Color::LightRed),
    ("light yellow", Color::LightYellow),
    ("light blue", Color::LightBlue),
    ("light cyan", Color::LightCyan),
];

/// A colour as a theme file writes it: `"#rrggbb"`, one of the 16 names (`"red"`,
/// `"bright blue"`), or `"default"`/`"reset"` for the terminal's own colour.
pub(crate) fn parse_color(text: &str) -> Option<Color> {
    if let Some(hex) = text.strip_prefix('#') {
        if hex.len() != 6 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let channel = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).ok();
        return Some(Color::Rgb(channel(0)?, channel(2)?, channel(4)?));
    }
    let name = text.trim().to_ascii_lowercase().replace(['_', '-'], " ");
    if name == "default" || name == "reset" {
        return Some(Color::Reset);
    }
    NAMES.iter().find(|(n, _)| *n == name).map(|(_, c)| *c)
}

/// The six levels of each channel in the xterm 6×6×6 cube (indices 16–231).
const CUBE_LEVELS: [u8; 6] = [0, 95, 135, 175, 215, 255];

fn distance((r1, g1, b1): (u8, u8, u8), (r2, g2, b2): (u8, u8, u8)) -> u32 {
    let d = |a: u8, b: u8| (i32::from(a) - i32::from(b)).unsigned_abs();
    d(r1, r2).pow(2) + d(g1, g2).pow(2) + d(b1, b2).pow(2)
}

/// The RGB an xterm-256 index stands for.
pub(crate) fn indexed_rgb(index: u8) -> (u8, u8, u8) {
    match index {
        0..=15 => ANSI16[usize::from(index)].1,
        16..=231 => {
            let i = index - 16;
            let level = |n: u8| CUBE_LEVELS[usize::from(n)];
            (level(i / 36), level(i / 6 % 6), level(i % 6))
        }
        _ => {
            let grey = 8 + 10 * (index - 232);
            (grey, grey, grey)
        }
    }
}

/// The nearest xterm-256 index (cube or grey ramp; the first 16 are left out because
/// terminals redefine them) by Euclidean RGB distance.
pub fn nearest_256(rgb: (u8, u8, u8)) -> u8 {
    // The cube is a separable grid, so the nearest level per channel is the nearest cube
    // colour; only the grey ramp needs comparing against it.
    let nearest_level = |v: u8| -> u8 {
        let mut best = 0u8;
        for (i, level) in CUBE_LEVELS.iter().enumerate() {
            let better = (i32::from(*level) - i32::from(v)).abs()
                < (i32::from(CUBE_LEVELS[usize::from(best)]) - i32::from(v)).abs();
            if better {
                best = i as u8;
            }
        }
        best
    };
    let cube = 16 + 36 * nearest_level(rgb.0) + 6 * nearest_level(rgb.1) + nearest_level(rgb.2);
    let mean = (u32::from(rgb.0) + u32::from(rgb.1) + u32::from(rgb.2)) / 3;
    let grey_step = (mean.saturating_sub(3) / 10).min(23) as u8;
    let grey = 232 + grey_step;
    // The ramp step nearest the mean may be off by one for non-grey colours: check both.
    let mut best = cube;
    for candidate in [grey.saturating_sub(1).max(232), grey, grey.saturating_add(1)] {
        if distance(indexed_rgb(candidate), rgb) < distance(indexed_rgb(best), rgb) {
            best = candidate;
        }
    }
    best
}

/// The closest of the 16 ANSI colours, by hue and lightness rather than plain RGB
/// distance: the muted colours themes use (`#bf616a` for errors) are nearer to grey than
/// to xterm's saturated red in RGB, and an error drawn grey is no error at all. Colours
/// with little chroma map to the grey ladder (black, bright black, white, bright white);
/// others to the nearest of the six hues, bright when light.
pub fn nearest_16((r, g, b): (u8, u8, u8)) -> Color {
    let (r, g, b) = (i32::from(r), i32::from(g), i32::from(b));
    let max = r.max(g).max(b);
    let min = r.min(g).min(b);
    let chroma = max - min;
    let lightness = (max + min) / 2;
    if chroma < 32 {
        return match lightness {
            0..64 => Color::Black,
            64..160 => Color::DarkGray,
            160..232 => Color::Gray,
            _ => Color::White,
        };
    }
    // Hue in degrees, from the usual hexagonal projection.
    let hue = if max == r {
        (60 * (g - b) / chroma).rem_euclid(360)
    } else if max == g {
        60 * (b - r) / chroma + 120
    } else {
        60 * (r - g) / chroma + 240
    };
    let sector = ((hue + 30) / 60) % 6;
    let bright = lightness >= 150 || max >= 230;
    let hues = if bright {
        [
            Color::LightRed,
            Color::LightYellow,
            Color::LightGreen,
            Color::LightCyan,
            Color::LightBlue,
            Color::LightMagenta,
        ]
    } else {
        [
            Color::Red,
            Color::Yellow,
            Color::Green,
            Color::Cyan,
            Color::Blue,
            Color::Magenta,
        ]
    };
    hues[sector as usize]
}

/// `color` as the terminal at `depth` can show it (`None` at `Mono`).
pub fn downgrade_color(color: Color, depth: ColorDepth) -> Option<Color> {
    match (depth, color) {
        (ColorDepth::Mono, _) => None,
        (ColorDepth::TrueColor, c) => Some(c),
        (ColorDepth::Ansi256, Color::Rgb(r, g, b)) => Some(Color::Indexed(nearest_256((r, g, b)))),
        (ColorDepth::Ansi16, Color::Rgb(r, g, b)) => Some(nearest_16((r, g, b))),
        (ColorDepth::Ansi16, Color::Indexed(i)) if i < 16 => Some(ANSI16[usize::from(i)].0),
        (ColorDepth::Ansi16, Color::Indexed(i)) => Some(nearest_16(indexed_rgb(i))),
        (_, c) => Some(c),
    }
}

/// `style` with its colours downgraded to `depth` (modifiers untouched).
pub fn downgrade_style(style: Style, depth: ColorDepth) -> Style {
    let mut out = style;
    out.fg = style.fg.and_then(|c| downgrade_color(c, depth));
    out.bg = style.bg.and_then(|c| downgrade_color(c, depth));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
    }

    #[test]
    fn depth_detection_table() {
        let cases: &[(&[(&str, &str)], ColorDepth)] = &[
            (&[], ColorDepth::Ansi16),
            (&[("NO_COLOR", "1"), ("COLORTERM", "truecolor")], ColorDepth::Mono),
            (
                &[("NO_COLOR", ""), ("COLORTERM", "truecolor")],
                ColorDepth::TrueColor,
            ),
            (&[("COLORTERM", "24bit"), ("TERM", "dumb")], ColorDepth::TrueColor),
            (&[("COLORTERM", "TrueColor")], ColorDepth::TrueColor),
            (
                &[("COLORTERM", "yes"), ("TERM", "xterm-256color")],
                ColorDepth::Ansi256,
            ),
            (&[("TERM", "screen-256color")], ColorDepth::Ansi256),
            (&[("TERM", "dumb")], ColorDepth::Mono),
            (&[("TERM", "xterm")], ColorDepth::Ansi16),
            (&[("TERM", "linux")], ColorDepth::Ansi16),
        ];
        for (vars, want) in cases {
            assert_eq!(detect_color_depth(env(vars)), *want, "{vars:?}");
        }
    }

    #[test]
    fn nearest_colours_are_pinned() {
        assert_eq!(nearest_256((0, 0, 0)), 16);
        assert_eq!(nearest_256((255, 255, 255)), 231);
        assert_eq!(nearest_256((255, 0, 0)), 196);
        assert_eq!(nearest_256((0x88, 0xc0, 0xd0)), 110); // (135,175,215)
        assert_eq!(nearest_256((0x2e, 0x34, 0x40)), 237); // grey 58
        assert_eq!(nearest_256((128, 128, 128)), 244); // grey 128
        assert_eq!(nearest_256((0x10, 0x10, 0x10)), 233);
        // The dark theme's colours keep their hue on a 16-colour terminal.
        assert_eq!(nearest_16((0xbf, 0x61, 0x6a)), Color::Red);
        assert_eq!(nearest_16((0x88, 0xc0, 0xd0)), Color::LightCyan);
        assert_eq!(nearest_16((0xeb, 0xcb, 0x8b)), Color::LightYellow);
        assert_eq!(nearest_16((0xa3, 0xbe, 0x8c)), Color::LightGreen);
        assert_eq!(nearest_16((0xb4, 0x8e, 0xad)), Color::LightMagenta);
        assert_eq!(nearest_16((0x2e, 0x34, 0x40)), Color::Black);
        assert_eq!(nearest_16((0x4c, 0x56, 0x6a)), Color::DarkGray);
        assert_eq!(nearest_16((0xd8, 0xde, 0xe9)), Color::Gray);
        assert_eq!(nearest_16((255, 255, 255)), Color::White);
        assert_eq!(nearest_16((255, 0, 0)), Color::LightRed);
        assert_eq!(nearest_16((205, 0, 0)), Color::Red);
        assert_eq!(nearest_16((250, 250, 10)), Color::LightYellow);
        assert_eq!(nearest_16((0, 0, 200)), Color::Blue);
        assert_eq!(nearest_16((0, 160, 0)), Color::Green);
    }

    #[test]
    fn closed_form_matches_brute_force() {
        for r in (0..=255u8).step_by(17) {
            for g in (0..=255u8).step_by(51) {
                for b in (0..=255u8).step_by(85) {
                    let fast = nearest_256((r, g, b));
                    let best = (16..=255u8)
                        .map(|i| distance(indexed_rgb(i), (r, g, b)))
                        .min()
                        .unwrap_or(u32::MAX);
                    assert_eq!(distance(indexed_rgb(fast), (r, g, b)), best, "{r},{g},{b}");
                }
            }
        }
    }

    #[test]
    fn downgrading_by_depth() {
        let c = Color::Rgb(255, 0, 0);
        assert_eq!(downgrade_color(c, ColorDepth::TrueColor), Some(c));
        assert_eq!(downgrade_color(c, ColorDepth::Ansi256), Some(Color::Indexed(196)));
        assert_eq!(downgrade_color(c, ColorDepth::Ansi16), Some(Color::LightRed));
        assert_eq!(downgrade_color(c, ColorDepth::Mono), None);
        assert_eq!(
            downgrade_color(Color::Indexed(9), ColorDepth::Ansi16),
            Some(Color::LightRed)
        );
        assert_eq!(
            downgrade_color(Color::Indexed(196), ColorDepth::Ansi16),
            Some(Color::LightRed)
        );
        assert_eq!(
            downgrade_color(Color::Reset, ColorDepth::Ansi16),
            Some(Color::Reset)
        );
    }

    #[test]
    fn colour_syntax() {
        assert_eq!(parse_color("#88c0d0"), Some(Color::Rgb(0x88, 0xc0, 0xd0)));
        assert_eq!(parse_color("#88C0D0"), Some(Color::Rgb(0x88, 0xc0, 0xd0)));
        assert_eq!(parse_color("red"), Some(Color::Red));
        assert_eq!(parse_color("bright blue"), Some(Color::LightBlue));
        assert_eq!(parse_color("bright_white"), Some(Color::White));
        assert_eq!(parse_color("white"), Some(Color::Gray));
        assert_eq!(parse_color("default"), Some(Color::Reset));
        assert_eq!(parse_color("reset"), Some(Color::Reset));
        assert_eq!(parse_color("#88c0d"), None);
        assert_eq!(parse_color("#88c0dg"), None);
        assert_eq!(parse_color("purple"), None);
    }
}
