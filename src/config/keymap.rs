//! Keymaps: keys bound to [`Action`]s per [`KeyContext`], as data. The builtin maps are
//! keymaps/default.toml and keymaps/vim.toml (compiled in); a user file overrides only
//! what it names. The help overlay and status hints are generated from the active map,
//! so what they show is what the keys do.
//!
//! This module owns parsing, merging, the conflict check and lookup. It does not decide
//! what an action does (views do) and never reads the terminal.

mod diagnostics;
mod file;
mod key;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use ratatui::crossterm::event::{KeyEvent, KeyEventKind};

use crate::config::{Action, KeyContext};
pub(crate) use diagnostics::{close_names, did_you_mean, location};
use key::KeySpec;

const DEFAULT_TOML: &str = include_str!("../../keymaps/default.toml");
const VIM_TOML: &str = include_str!("../../keymaps/vim.toml");

/// The builtin keymap names, for `--keymap` and `base = "…"`.
pub const BUILTIN_KEYMAPS: [&str; 2] = ["default", "vim"];

/// What is wrong with a keymap, and where (`file:line:column`).
#[derive(Debug, thiserror::Error)]
pub enum KeymapError {
    #[error(
        "cannot read keymap {path}: {cause} (--keymap takes \"default\", \"vim\" or a path to a .toml file)"
    )]
    Io {
        path: PathBuf,
        cause: crate::input::InputError,
    },
    #[error("{at}: TOML syntax error: {message}")]
    Syntax { at: String, message: String },
    #[error(
        "{at}: unknown section [{name}]{} — sections are global, hotspots, flamegraph, call_tree, histogram, timeline, console, instances",
        did_you_mean(.close)
    )]
    UnknownSection {
        at: String,
        name: String,
        close: Vec<String>,
    },
    #[error("{at}: unknown action {name:?} in [{section}]{}", did_you_mean(.close))]
    UnknownAction {
        at: String,
        section: &'static str,
        name: String,
        close: Vec<String>,
    },
    #[error("{at}: [{section}] {action}: {problem}")]
    BadKey {
        at: String,
        section: &'static str,
        action: &'static str,
        problem: String,
    },
    #[error("{at}: {problem}")]
    Invalid { at: String, problem: String },
    #[error(
        "{at}: key {key} in [{section}] is bound to both {first} and {second}: remove it from one of them"
    )]
    Conflict {
        at: String,
        section: &'static str,
        key: String,
        first: &'static str,
        second: &'static str,
    },
    #[error("unknown builtin keymap {name:?}: use \"default\" or \"vim\", or a path to a .toml file")]
    UnknownBuiltin { name: String },
}

/// A keymap section for display: its context and each bound action with its keys as
/// display strings ("Ctrl-c", "Enter").
pub type SectionListing = (KeyContext, Vec<(Action, Vec<String>)>);

/// Keys bound to actions, per context.
#[derive(Clone, Debug, PartialEq)]
pub struct Keymap {
    /// Actions in `Action` order within each section, so listings are stable.
    bindings: BTreeMap<KeyContext, BTreeMap<Action, Vec<KeySpec>>>,
    index: HashMap<(KeyContext, KeySpec), Action>,
}

impl Keymap {
    /// The default keymap, built once (for views drawn without a user's keymap: tests,
    /// library callers).
    pub fn standard() -> &'static Keymap {
        static STANDARD: std::sync::OnceLock<Keymap> = std::sync::OnceLock::new();
        STANDARD.get_or_init(|| Keymap::builtin("default").expect("the builtin default keymap parses"))
    }

    /// The key a hint names for `action` in `context`: its first key, or `unbound` when
    /// the user's keymap unbinds it (then the hint says how to reach it another way).
    pub fn label(&self, context: KeyContext, action: Action) -> String {
        self.keys_for(context, action)
            .into_iter()
            .next()
            .unwrap_or_else(|| format!("({} unbound)", action.name()))
    }

    /// A builtin keymap: "default" or "vim".
    pub fn builtin(name: &str) -> Result<Keymap, KeymapError> {
        let text = match name {
            "default" => DEFAULT_TOML,
            "vim" => VIM_TOML,
            _ => {
                return Err(KeymapError::UnknownBuiltin {
                    name: name.to_string(),
                });
            }
        };
        Keymap::parse(&format!("keymaps/{name}.toml"), text, None)
    }

    /// A keymap from TOML text. Each `action = [keys]` it lists replaces that action's
    /// keys in that section of `base` (`[]` unbinds); everything else stays as in `base`.
    /// A top-level `base = "vim"` starts from that builtin instead of `base`.
    pub fn from_toml(text: &str, base: Option<&Keymap>) -> Result<Keymap, KeymapError> {
        Keymap::parse("keymap", text, base)
    }

    /// [`Keymap::from_toml`] on a file; errors name the file.
    pub fn load_file(path: &Path, base: Option<&Keymap>) -> Result<Keymap, KeymapError> {
        let text = crate::input::read_text(path, crate::input::InputKind::Config).map_err(|source| {
            KeymapError::Io {
                path: path.to_path_buf(),
                cause: source,
            }
        })?;
        Keymap::parse(&path.display().to_string(), &text, base)
    }

    fn parse(origin: &str, text: &str, base: Option<&Keymap>) -> Result<Keymap, KeymapError> {
        let parsed = file::parse(origin, text)?;
        let file_base = match parsed.base.as_deref() {
            Some(name) => Some(Keymap::builtin(name).map_err(|_| KeymapError::Invalid {
                at: origin.to_string(),
                problem: format!("base = {name:?}: use \"default\" or \"vim\""),
            })?),
            None => None,
        };
        let mut bindings = file_base
            .as_ref()
            .or(base)
            .map(|k| k.bindings.clone())
            .unwrap_or_default();
        let mut overridden: HashMap<(KeyContext, Action), String> = HashMap::new();
        for o in parsed.overrides {
            bindings.entry(o.context).or_default().insert(o.action, o.keys);
            overridden.insert((o.context, o.action), o.at);
        }
        for section in bindings.values_mut() {
            section.retain(|_, keys| !keys.is_empty());
        }
        let index = build_index(&bindings, |context, first, second| {
            overridden
                .get(&(context, second))
                .or_else(|| overridden.get(&(context, first)))
                .cloned()
                .unwrap_or_else(|| origin.to_string())
        })?;
        Ok(Keymap { bindings, index })
    }

    /// The action `key` triggers when `context` has the keyboard: the context's section
    /// first, then `[global]`. Key releases trigger nothing.
    pub fn lookup(&self, context: KeyContext, key: &KeyEvent) -> Option<Action> {
        if key.kind == KeyEventKind::Release {
            return None;
        }
        let spec = KeySpec::from_event(key)?;
        self.index
            .get(&(context, spec))
            .or_else(|| self.index.get(&(KeyContext::Global, spec)))
            .copied()
    }

    /// The keys that trigger `action` when `context` has the keyboard, as display strings
    /// ("Ctrl-c", "Enter", "/"): the section's own keys, then the global ones the section
    /// does not shadow.
    pub fn keys_for(&self, context: KeyContext, action: Action) -> Vec<String> {
        self.effective_keys(context, action)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    fn effective_keys(&self, context: KeyContext, action: Action) -> Vec<KeySpec> {
        let mut keys = self.section_keys(context, action).to_vec();
        if context != KeyContext::Global {
            for key in self.section_keys(KeyContext::Global, action) {
                if !self.index.contains_key(&(context, *key)) && !keys.contains(key) {
                    keys.push(*key);
                }
            }
        }
        keys
    }

    fn section_keys(&self, context: KeyContext, action: Action) -> &[KeySpec] {
        self.bindings
            .get(&context)
            .and_then(|s| s.get(&action))
            .map_or(&[], Vec::as_slice)
    }

    /// Every section in `KeyContext::ALL` order (empty ones included), each with its
    /// bound actions in `Action::ALL` order and their keys as display strings.
    pub fn sections(&self) -> Vec<SectionListing> {
        KeyContext::ALL
            .iter()
            .map(|&context| (context, self.section_listing(context, |_| true)))
            .collect()
    }

    /// The sections in help order for a focused `context`: its own section, then
    /// `[global]` without the keys the section shadows, then the other sections.
    /// Empty sections are left out.
    pub fn help_sections(&self, focused: KeyContext) -> Vec<SectionListing> {
        let mut order = vec![focused];
        if focused != KeyContext::Global {
            order.push(KeyContext::Global);
        }
        let first = order.clone();
        order.extend(KeyContext::ALL.iter().filter(|c| !first.contains(c)));
        order
            .into_iter()
            .map(|context| {
                let listing = if context == KeyContext::Global && focused != KeyContext::Global {
                    self.section_listing(context, |key| !self.index.contains_key(&(focused, *key)))
                } else {
                    self.section_listing(context, |_| true)
                };
                (context, listing)
            })
            .filter(|(_, listing)| !listing.is_empty())
            .collect()
    }

    fn section_listing(
        &self,
        context: KeyContext,
        keep: impl Fn(&KeySpec) -> bool,
    ) -> Vec<(Action, Vec<String>)> {
        let Some(section) = self.bindings.get(&context) else {
            return Vec::new();
        };
        section
            .iter()
            .filter_map(|(action, keys)| {
                let shown: Vec<String> = keys.iter().filter(|k| keep(k)).map(ToString::to_string).collect();
                (!shown.is_empty()).then_some((*action, shown))
            })
            .collect()
    }
}

/// The lookup table, refusing a key bound to two actions in one section. `conflict_at`
/// says where to point the error (the line that introduced the second binding).
fn build_index(
    bindings: &BTreeMap<KeyContext, BTreeMap<Action, Vec<KeySpec>>>,
    conflict_at: impl Fn(KeyContext, Action, Action) -> String,
) -> Result<HashMap<(KeyContext, KeySpec), Action>, KeymapError> {
    let mut index = HashMap::new();
    for (&context, section) in bindings {
        for (&action, keys) in section {
            for &key in keys {
                if let Some(first) = index.insert((context, key), action) {
                    return Err(KeymapError::Conflict {
                        at: conflict_at(context, first, action),
                        section: context.name(),
                        key: key.to_string(),
                        first: first.name(),
                        second: action.name(),
                    });
                }
            }
        }
    }
    Ok(index)
}

/// Where perfscope's configuration lives: `$XDG_CONFIG_HOME/perfscope`, else
/// `$HOME/.config/perfscope`.
pub fn config_dir() -> Option<PathBuf> {
    config_dir_from(|name| std::env::var(name).ok())
}

/// [`config_dir`] with the environment passed in (for tests).
pub fn config_dir_from(get_env: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    // The XDG spec says a relative XDG_CONFIG_HOME is invalid and must be ignored.
    if let Some(xdg) = get_env("XDG_CONFIG_HOME").filter(|v| Path::new(v).is_absolute()) {
        return Some(PathBuf::from(xdg).join("perfscope"));
    }
    get_env("HOME")
        .filter(|v| !v.is_empty())
        .map(|home| PathBuf::from(home).join(".config").join("perfscope"))
}

/// The keymap to use: `explicit` (`--keymap`: "default", "vim" or a path to a file that
/// overrides the default map, or the one its `base = "…"` names), else
/// `<config_dir>/keymap.toml` when it exists, else the builtin default.
pub fn resolve_keymap(explicit: Option<&Path>, config_dir: Option<&Path>) -> Result<Keymap, KeymapError> {
    if let Some(explicit) = explicit {
        if let Some(name) = explicit.to_str().filter(|n| BUILTIN_KEYMAPS.contains(n)) {
            return Keymap::builtin(name);
        }
        return Keymap::load_file(explicit, Some(&Keymap::builtin("default")?));
    }
    if let Some(dir) = config_dir {
        let path = dir.join("keymap.toml");
        if path.is_file() {
            return Keymap::load_file(&path, Some(&Keymap::builtin("default")?));
        }
    }
    Keymap::builtin("default")
}

#[cfg(test)]
mod tests;
