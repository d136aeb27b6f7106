//! Reading one keymap file into the overrides it names, with every mistake reported at
//! its line: TOML syntax, unknown sections, unknown actions, bad key names, wrong types.
//! Merging the overrides into a base keymap (and the conflict check) is the caller's job.

use toml::de::{DeTable, DeValue};

use super::KeymapError;
use super::diagnostics::{close_names, location};
use super::key::KeySpec;
use crate::config::{Action, KeyContext};

/// One `action = ["key", …]` line.
pub(crate) struct Override {
    pub context: KeyContext,
    pub action: Action,
    pub keys: Vec<KeySpec>,
    /// `origin:line:column` of the action name, for conflict messages.
    pub at: String,
}

/// What a keymap file says.
pub(crate) struct KeymapFile {
    /// `base = "vim"`: the builtin keymap the file starts from.
    pub base: Option<String>,
    pub overrides: Vec<Override>,
}

pub(crate) fn parse(origin: &str, text: &str) -> Result<KeymapFile, KeymapError> {
    let document = DeTable::parse(text).map_err(|e| {
        let offset = e.span().map_or(0, |s| s.start);
        KeymapError::Syntax {
            at: location(origin, text, offset),
            message: e.message().trim().to_string(),
        }
    })?;
    let at = |offset: usize| location(origin, text, offset);
    let mut file = KeymapFile {
        base: None,
        overrides: Vec::new(),
    };
    for (key, value) in document.get_ref().iter() {
        let name: &str = key.get_ref();
        let key_at = at(key.span().start);
        if name == "base" {
            match value.get_ref() {
                DeValue::String(s) => file.base = Some(s.to_string()),
                other => {
                    return Err(KeymapError::Invalid {
                        at: key_at,
                        problem: format!(
                            "base must be a string (\"default\" or \"vim\"), not {}",
                            other.type_str()
                        ),
                    });
                }
            }
            continue;
        }
        let context = KeyContext::ALL.iter().copied().find(|c| c.name() == name);
        let table = match (context, value.get_ref()) {
            (Some(context), DeValue::Table(table)) => (context, table),
            (Some(_), other) => {
                return Err(KeymapError::Invalid {
                    at: key_at,
                    problem: format!("{name} must be a section [{name}], not {}", other.type_str()),
                });
            }
            (None, _) if Action::from_name(name).is_some() => {
                return Err(KeymapError::Invalid {
                    at: key_at,
                    problem: format!(
                        "{name} is outside any section: put it under [global] or a view's section"
                    ),
                });
            }
            (None, _) => {
                return Err(KeymapError::UnknownSection {
                    at: key_at,
                    name: name.to_string(),
                    close: close_names(name, KeyContext::ALL.iter().map(|c| c.name())),
                });
            }
        };
        let (context, table) = table;
        for (action_key, keys_value) in table.iter() {
            let action_name: &str = action_key.get_ref();
            let action_at = at(action_key.span().start);
            let Some(action) = Action::from_name(action_name) else {
                return Err(KeymapError::UnknownAction {
                    at: action_at,
                    section: context.name(),
                    name: action_name.to_string(),
                    close: close_names(action_name, Action::ALL.iter().map(|a| a.name())),
                });
            };
            let keys = parse_keys(context, action, keys_value, &at)?;
            file.overrides.push(Override {
                context,
                action,
                keys,
                at: action_at,
            });
        }
    }
    Ok(file)
}

/// `["q", "ctrl-c"]` (a lone string is accepted too; `[]` unbinds).
fn parse_keys(
    context: KeyContext,
    action: Action,
    value: &toml::Spanned<DeValue<'_>>,
    at: &impl Fn(usize) -> String,
) -> Result<Vec<KeySpec>, KeymapError> {
    let items: Vec<&toml::Spanned<DeValue<'_>>> = match value.get_ref() {
        DeValue::Array(array) => array.iter().collect(),
        DeValue::String(_) => vec![value],
        other => {
            return Err(KeymapError::Invalid {
                at: at(value.span().start),
                problem: format!(
                    "[{}] {}: expected a list of keys like [\"q\", \"ctrl-c\"], not {}",
                    context.name(),
                    action.name(),
                    other.type_str()
                ),
            });
        }
    };
    let mut keys = Vec::new();
    for item in items {
        let DeValue::String(text) = item.get_ref() else {
            return Err(KeymapError::Invalid {
                at: at(item.span().start),
                problem: format!(
                    "[{}] {}: keys are strings like \"q\", not {}",
                    context.name(),
                    action.name(),
                    item.get_ref().type_str()
                ),
            });
        };
        let key = KeySpec::parse(text).map_err(|e| KeymapError::BadKey {
            at: at(item.span().start),
            section: context.name(),
            action: action.name(),
            problem: e.to_string(),
        })?;
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    Ok(keys)
}
