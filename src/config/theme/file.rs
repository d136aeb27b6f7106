//! Reading one theme file into the roles it sets, with every mistake reported at its
//! line: TOML syntax, unknown roles and fields, bad colours and modifiers. Filling the
//! roles it leaves out (from its base) is the caller's job.

use ratatui::style::{Color, Modifier, Style};
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::color::parse_color;
use super::{FlamePalette, ROLE_NAMES, ThemeError};
use crate::config::keymap::{close_names, location};

/// What a theme file says.
pub(crate) struct ThemeFile {
    pub name: Option<String>,
    /// `base = "light"` and where it was written.
    pub base: Option<(String, String)>,
    pub palette: Option<FlamePalette>,
    /// Indexed like `ROLE_NAMES`.
    pub roles: Vec<Option<Style>>,
}

const MODIFIERS: [(&str, Modifier); 6] = [
    ("bold", Modifier::BOLD),
    ("dim", Modifier::DIM),
    ("italic", Modifier::ITALIC),
    ("underlined", Modifier::UNDERLINED),
    ("reversed", Modifier::REVERSED),
    ("crossed_out", Modifier::CROSSED_OUT),
];

pub(crate) fn parse(origin: &str, text: &str) -> Result<ThemeFile, ThemeError> {
    let document = DeTable::parse(text).map_err(|e| ThemeError::Syntax {
        at: location(origin, text, e.span().map_or(0, |s| s.start)),
        message: e.message().trim().to_string(),
    })?;
    let at = |offset: usize| location(origin, text, offset);
    let mut file = ThemeFile {
        name: None,
        base: None,
        palette: None,
        roles: vec![None; ROLE_NAMES.len()],
    };
    for (key, value) in document.get_ref().iter() {
        let name: &str = key.get_ref();
        let key_at = at(key.span().start);
        match name {
            "name" => file.name = Some(string_value(name, value, &at)?.to_string()),
            "base" => file.base = Some((string_value(name, value, &at)?.to_string(), key_at)),
            "palette" => {
                file.palette = Some(match string_value(name, value, &at)? {
                    "hot" => FlamePalette::Hot,
                    "mono" => FlamePalette::Mono,
                    other => {
                        return Err(ThemeError::Invalid {
                            at: at(value.span().start),
                            problem: format!("palette = {other:?}: use \"hot\" or \"mono\""),
                        });
                    }
                })
            }
            _ => {
                let Some(index) = ROLE_NAMES.iter().position(|r| *r == name) else {
                    return Err(ThemeError::UnknownRole {
                        at: key_at,
                        name: name.to_string(),
                        close: close_names(name, ROLE_NAMES),
                    });
                };
                let DeValue::Table(table) = value.get_ref() else {
                    return Err(ThemeError::Invalid {
                        at: key_at,
                        problem: format!(
                            "{name} must be a table [{name}] with fg, bg, modifiers, not {}",
                            value.get_ref().type_str()
                        ),
                    });
                };
                file.roles[index] = Some(parse_role(ROLE_NAMES[index], table, &at)?);
            }
        }
    }
    Ok(file)
}

fn string_value<'a>(
    key: &str,
    value: &'a Spanned<DeValue<'_>>,
    at: &impl Fn(usize) -> String,
) -> Result<&'a str, ThemeError> {
    match value.get_ref() {
        DeValue::String(s) => Ok(s),
        other => Err(ThemeError::Invalid {
            at: at(value.span().start),
            problem: format!("{key} must be a string, not {}", other.type_str()),
        }),
    }
}

fn parse_role(
    role: &'static str,
    table: &DeTable<'_>,
    at: &impl Fn(usize) -> String,
) -> Result<Style, ThemeError> {
    let mut style = Style::new();
    for (key, value) in table.iter() {
        let field: &str = key.get_ref();
        match field {
            "fg" => style.fg = Some(parse_color_value(role, "fg", value, at)?),
            "bg" => style.bg = Some(parse_color_value(role, "bg", value, at)?),
            "modifiers" => {
                let DeValue::Array(items) = value.get_ref() else {
                    return Err(ThemeError::Invalid {
                        at: at(value.span().start),
                        problem: format!(
                            "[{role}] modifiers must be a list like [\"bold\"], not {}",
                            value.get_ref().type_str()
                        ),
                    });
                };
                for item in items.iter() {
                    let name = match item.get_ref() {
                        DeValue::String(s) => s.as_ref(),
                        other => other.type_str(),
                    };
                    let Some((_, modifier)) = MODIFIERS.iter().find(|(n, _)| *n == name) else {
                        return Err(ThemeError::BadModifier {
                            at: at(item.span().start),
                            role,
                            name: name.to_string(),
                        });
                    };
                    style = style.add_modifier(*modifier);
                }
            }
            _ => {
                return Err(ThemeError::UnknownField {
                    at: at(key.span().start),
                    role,
                    name: field.to_string(),
                    close: close_names(field, ["fg", "bg", "modifiers"]),
                });
            }
        }
    }
    Ok(style)
}

fn parse_color_value(
    role: &'static str,
    field: &'static str,
    value: &Spanned<DeValue<'_>>,
    at: &impl Fn(usize) -> String,
) -> Result<Color, ThemeError> {
    let parsed = match value.get_ref() {
        DeValue::String(s) => parse_color(s),
        DeValue::Integer(i) => i64::from_str_radix(i.as_str(), i.radix())
            .ok()
            .and_then(|n| u8::try_from(n).ok())
            .map(Color::Indexed),
        _ => None,
    };
    parsed.ok_or_else(|| ThemeError::BadColor {
        at: at(value.span().start),
        role,
        field,
        value: match value.get_ref() {
            DeValue::String(s) => format!("{s:?}"),
            DeValue::Integer(i) => i.as_str().to_string(),
            other => other.type_str().to_string(),
        },
    })
}
