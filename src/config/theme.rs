//! Themes: the styles every view draws with, by role, as data. The builtin themes are
//! themes/dark.toml (the default, also `Theme::builtin_dark`), themes/light.toml and
//! themes/mono.toml, compiled in so a view or a test never depends on a file being
//! present; a user theme file uses the same format. Loading fits the colours to the
//! terminal ([`ColorDepth`]): truecolor as written, else the nearest 256 or 16 colours,
//! or the mono theme when colour is off.
//!
//! This module owns theme parsing, colour fitting and the flamegraph cell colours; views
//! only read the resulting styles.

mod color;
mod file;

use std::path::Path;
use std::sync::LazyLock;

use ratatui::style::{Color, Modifier, Style};

use crate::config::keymap::did_you_mean;
pub use color::{ColorDepth, detect_color_depth, downgrade_color, downgrade_style, nearest_16, nearest_256};

const DARK_TOML: &str = include_str!("../../themes/dark.toml");
const LIGHT_TOML: &str = include_str!("../../themes/light.toml");
const MONO_TOML: &str = include_str!("../../themes/mono.toml");

/// The builtin theme names, for `--theme` and `base = "…"`.
pub const BUILTIN_THEMES: [&str; 3] = ["dark", "light", "mono"];

/// The role tables a theme file may have, in `Theme` field order.
pub const ROLE_NAMES: [&str; 15] = [
    "text",
    "dim",
    "border",
    "border_focused",
    "title",
    "header",
    "selected",
    "search_match",
    "status",
    "status_accent",
    "warning",
    "error",
    "bar",
    "marker",
    "window",
];

/// What is wrong with a theme, and where (`file:line:column`).
#[derive(Debug, thiserror::Error)]
pub enum ThemeError {
    #[error("no theme {name:?}: use dark, light, mono or a path to a .toml theme file")]
    NotFound { name: String },
    #[error("cannot read theme {path}: {cause}")]
    Io {
        path: std::path::PathBuf,
        cause: crate::input::InputError,
    },
    #[error("{at}: TOML syntax error: {message}")]
    Syntax { at: String, message: String },
    #[error(
        "{at}: unknown role {name:?}{} — roles are text, dim, border, border_focused, title, header, selected, search_match, status, status_accent, warning, error, bar, marker, window",
        did_you_mean(.close)
    )]
    UnknownRole {
        at: String,
        name: String,
        close: Vec<String>,
    },
    #[error("{at}: [{role}] unknown field {name:?}{} — a role has fg, bg and modifiers", did_you_mean(.close))]
    UnknownField {
        at: String,
        role: &'static str,
        name: String,
        close: Vec<String>,
    },
    #[error(
        "{at}: [{role}] {field} = {value}: not a colour — use \"#rrggbb\", a name like \"red\" or \"bright blue\", an index 0-255, or \"default\""
    )]
    BadColor {
        at: String,
        role: &'static str,
        field: &'static str,
        value: String,
    },
    #[error(
        "{at}: [{role}] unknown modifier {name:?} — use bold, dim, italic, underlined, reversed, crossed_out"
    )]
    BadModifier {
        at: String,
        role: &'static str,
        name: String,
    },
    #[error("{at}: {problem}")]
    Invalid { at: String, problem: String },
}

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
    /// The colours the terminal shows; the role styles are already fitted to it, and
    /// `frame_style` fits the flamegraph colours to it.
    pub depth: ColorDepth,
}

impl Default for Theme {
    fn default() -> Self {
        Self::builtin_dark()
    }
}

/// The dark theme parsed once; `builtin_dark` hands out copies.
static DARK: LazyLock<Theme> = LazyLock::new(|| match Theme::builtin("dark") {
    Ok(theme) => theme,
    // Compiled-in data, checked by `every_builtin_theme_parses`.
    Err(e) => panic!("embedded themes/dark.toml is invalid: {e}"),
});

impl Theme {
    /// The compiled-in dark theme, truecolor (themes/dark.toml).
    pub fn builtin_dark() -> Self {
        DARK.clone()
    }

    /// A builtin theme ("dark", "light", "mono") in truecolor.
    pub fn builtin(name: &str) -> Result<Theme, ThemeError> {
        let text = match name {
            "dark" => DARK_TOML,
            "light" => LIGHT_TOML,
            "mono" => MONO_TOML,
            _ => {
                return Err(ThemeError::NotFound {
                    name: name.to_string(),
                });
            }
        };
        // Builtin files must name every role: there is nothing to fall back on.
        Theme::parse(&format!("themes/{name}.toml"), text, name, false)
    }

    /// A theme from TOML text; roles it leaves out come from its `base` (default dark).
    /// `default_name` names it when the text has no `name`.
    pub fn from_toml(text: &str, default_name: &str) -> Result<Theme, ThemeError> {
        Theme::parse("theme", text, default_name, true)
    }

    fn parse(origin: &str, text: &str, default_name: &str, allow_base: bool) -> Result<Theme, ThemeError> {
        let parsed = file::parse(origin, text)?;
        let mut theme = if parsed.roles.iter().all(Option::is_some) && parsed.base.is_none() {
            // Every role is given: the base would be overwritten entirely.
            Theme::empty()
        } else if !allow_base {
            let missing: Vec<&str> = ROLE_NAMES
                .iter()
                .zip(&parsed.roles)
                .filter(|(_, r)| r.is_none())
                .map(|(n, _)| *n)
                .collect();
            return Err(ThemeError::Invalid {
                at: origin.to_string(),
                problem: format!("missing roles: {}", missing.join(", ")),
            });
        } else {
            match &parsed.base {
                Some((name, at)) => Theme::builtin(name).map_err(|_| ThemeError::Invalid {
                    at: at.clone(),
                    problem: format!("base = {name:?}: use \"dark\", \"light\" or \"mono\""),
                })?,
                None => Theme::builtin_dark(),
            }
        };
        theme.name = parsed.name.unwrap_or_else(|| default_name.to_string());
        if let Some(palette) = parsed.palette {
            theme.flame = palette;
        }
        for (index, style) in parsed.roles.into_iter().enumerate() {
            if let Some(style) = style {
                *theme.role_mut(index) = style;
            }
        }
        Ok(theme)
    }

    /// A theme with plain styles, filled in by `parse`.
    fn empty() -> Theme {
        Theme {
            name: String::new(),
            text: Style::new(),
            dim: Style::new(),
            border: Style::new(),
            border_focused: Style::new(),
            title: Style::new(),
            header: Style::new(),
            selected: Style::new(),
            search_match: Style::new(),
            status: Style::new(),
            status_accent: Style::new(),
            warning: Style::new(),
            error: Style::new(),
            bar: Style::new(),
            marker: Style::new(),
            window: Style::new(),
            flame: FlamePalette::Hot,
            depth: ColorDepth::TrueColor,
        }
    }

    /// The theme file `path`; named after the file unless it says `name = …`.
    pub fn load_file(path: &Path) -> Result<Theme, ThemeError> {
        let text = crate::input::read_text(path, crate::input::InputKind::Config).map_err(|source| {
            ThemeError::Io {
                path: path.to_path_buf(),
                cause: source,
            }
        })?;
        let stem = path
            .file_stem()
            .map_or_else(|| "theme".to_string(), |s| s.to_string_lossy().into_owned());
        Theme::parse(&path.display().to_string(), &text, &stem, true)
    }

    /// A builtin theme by name or a theme file by path, fitted to `depth`. At
    /// `ColorDepth::Mono` the mono theme's styles are used whatever was asked for (the
    /// file is still read, so its mistakes are reported the same on every terminal).
    pub fn load(name_or_path: &str, depth: ColorDepth) -> Result<Theme, ThemeError> {
        let theme = if BUILTIN_THEMES.contains(&name_or_path) {
            Theme::builtin(name_or_path)?
        } else {
            let path = Path::new(name_or_path);
            if !path.exists() {
                return Err(ThemeError::NotFound {
                    name: name_or_path.to_string(),
                });
            }
            Theme::load_file(path)?
        };
        theme.fitted(depth)
    }

    /// `with_depth`, except that `Mono` replaces the styles with the mono theme's.
    fn fitted(self, depth: ColorDepth) -> Result<Theme, ThemeError> {
        if depth == ColorDepth::Mono {
            return Ok(Theme::builtin("mono")?.with_depth(ColorDepth::Mono));
        }
        Ok(self.with_depth(depth))
    }

    /// This theme with every role's colours fitted to `depth` (`Mono` drops them and
    /// switches the flamegraph to the mono palette).
    pub fn with_depth(mut self, depth: ColorDepth) -> Theme {
        for index in 0..ROLE_NAMES.len() {
            let style = self.role_mut(index);
            *style = downgrade_style(*style, depth);
        }
        if depth == ColorDepth::Mono {
            self.flame = FlamePalette::Mono;
        }
        self.depth = depth;
        self
    }

    /// The role styles by name, in `ROLE_NAMES` order.
    pub fn roles(&self) -> [(&'static str, Style); 15] {
        let styles = [
            self.text,
            self.dim,
            self.border,
            self.border_focused,
            self.title,
            self.header,
            self.selected,
            self.search_match,
            self.status,
            self.status_accent,
            self.warning,
            self.error,
            self.bar,
            self.marker,
            self.window,
        ];
        std::array::from_fn(|i| (ROLE_NAMES[i], styles[i]))
    }

    fn role_mut(&mut self, index: usize) -> &mut Style {
        match index {
            0 => &mut self.text,
            1 => &mut self.dim,
            2 => &mut self.border,
            3 => &mut self.border_focused,
            4 => &mut self.title,
            5 => &mut self.header,
            6 => &mut self.selected,
            7 => &mut self.search_match,
            8 => &mut self.status,
            9 => &mut self.status_accent,
            10 => &mut self.warning,
            11 => &mut self.error,
            12 => &mut self.bar,
            13 => &mut self.marker,
            _ => &mut self.window,
        }
    }

    /// The style of a flamegraph cell for a function whose name hashes to `name_hash`
    /// (FNV, stable across runs). `parity` alternates along a row for the mono palette.
    pub fn frame_style(&self, name_hash: u64, parity: bool) -> Style {
        match (&self.flame, self.depth) {
            (FlamePalette::Mono, _) | (_, ColorDepth::Mono) => {
                if parity {
                    Style::new().add_modifier(Modifier::REVERSED)
                } else {
                    Style::new()
                }
            }
            (FlamePalette::Hot, ColorDepth::Ansi16) => {
                // Four warm colours only; parity picks the family (red or yellow) so
                // neighbours along a row always differ, the hash picks the shade.
                let shades = if parity {
                    [Color::Yellow, Color::LightYellow]
                } else {
                    [Color::Red, Color::LightRed]
                };
                Style::new().fg(Color::Black).bg(shades[(name_hash & 1) as usize])
            }
            (FlamePalette::Hot, depth) => {
                // flamegraph.pl's "hot" palette: red 205–255, green 0–230, blue 0–55.
                let v1 = (name_hash & 0xff) as f32 / 255.0;
                let v2 = ((name_hash >> 8) & 0xff) as f32 / 255.0;
                let v3 = ((name_hash >> 16) & 0xff) as f32 / 255.0;
                let r = 205.0 + 50.0 * v3;
                let g = 230.0 * v1;
                let b = 55.0 * v2;
                let style = Style::new()
                    .fg(Color::Rgb(0x10, 0x10, 0x10))
                    .bg(Color::Rgb(r as u8, g as u8, b as u8));
                downgrade_style(style, depth)
            }
        }
    }
}

/// The theme to use: `explicit` (`--theme`: a builtin name or a path), else
/// `<config_dir>/theme.toml` when it exists, else dark; fitted to `depth`.
pub fn resolve_theme(
    explicit: Option<&str>,
    config_dir: Option<&Path>,
    depth: ColorDepth,
) -> Result<Theme, ThemeError> {
    if let Some(explicit) = explicit {
        return Theme::load(explicit, depth);
    }
    if let Some(dir) = config_dir {
        let path = dir.join("theme.toml");
        if path.is_file() {
            return Theme::load_file(&path)?.fitted(depth);
        }
    }
    Theme::load("dark", depth)
}

#[cfg(test)]
mod tests;
