//! One key as a keymap file writes it (`"ctrl-c"`, `"G"`, `"pagedown"`): parsing, the
//! normal form both bindings and terminal events are reduced to, and the display string
//! the help overlay shows.
//!
//! Terminals disagree about SHIFT: most send `G` with SHIFT, some without, and Shift-Tab
//! arrives as `BackTab` with or without SHIFT. The normal form drops SHIFT wherever the key
//! code already carries it, so a binding written either way matches every terminal.

use std::fmt;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Named keys a keymap file may use, with the code each stands for. Aliases come after
/// the canonical name so error messages list the canonical one first.
const NAMED_KEYS: &[(&str, KeyCode)] = &[
    ("enter", KeyCode::Enter),
    ("esc", KeyCode::Esc),
    ("backspace", KeyCode::Backspace),
    ("tab", KeyCode::Tab),
    ("backtab", KeyCode::BackTab),
    ("space", KeyCode::Char(' ')),
    ("up", KeyCode::Up),
    ("down", KeyCode::Down),
    ("left", KeyCode::Left),
    ("right", KeyCode::Right),
    ("home", KeyCode::Home),
    ("end", KeyCode::End),
    ("pageup", KeyCode::PageUp),
    ("pagedown", KeyCode::PageDown),
    ("delete", KeyCode::Delete),
    ("insert", KeyCode::Insert),
    ("return", KeyCode::Enter),
    ("escape", KeyCode::Esc),
    ("pgup", KeyCode::PageUp),
    ("pgdn", KeyCode::PageDown),
    ("pgdown", KeyCode::PageDown),
    ("del", KeyCode::Delete),
    ("ins", KeyCode::Insert),
];

/// The names listed in "unknown key" errors.
pub(crate) fn named_key_list() -> String {
    let mut names: Vec<&str> = NAMED_KEYS.iter().take(16).map(|(n, _)| *n).collect();
    names.push("f1..f12");
    names.join(", ")
}

/// A key in normal form: a code plus only the CONTROL, ALT and SHIFT modifiers, with
/// SHIFT removed where the code already says it (characters, BackTab).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KeySpec {
    code: KeyCodeOrd,
    modifiers: u8,
}

/// `KeyCode` has no `Ord`; keys are sorted for stable display, so keep an orderable copy.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum KeyCodeOrd {
    Char(char),
    F(u8),
    Named(u8),
}

const CTRL: u8 = 1;
const ALT: u8 = 2;
const SHIFT: u8 = 4;

/// Named codes in a fixed order (the index is the `KeyCodeOrd::Named` payload).
const NAMED_CODES: &[(KeyCode, &str)] = &[
    (KeyCode::Enter, "Enter"),
    (KeyCode::Esc, "Esc"),
    (KeyCode::Backspace, "Backspace"),
    (KeyCode::Tab, "Tab"),
    (KeyCode::BackTab, "Shift-Tab"),
    (KeyCode::Up, "Up"),
    (KeyCode::Down, "Down"),
    (KeyCode::Left, "Left"),
    (KeyCode::Right, "Right"),
    (KeyCode::Home, "Home"),
    (KeyCode::End, "End"),
    (KeyCode::PageUp, "PageUp"),
    (KeyCode::PageDown, "PageDown"),
    (KeyCode::Delete, "Delete"),
    (KeyCode::Insert, "Insert"),
];

/// Why a key string was rejected (the caller adds where).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum KeyParseError {
    Empty,
    UnknownName(String),
    ShiftOnSymbol(char),
}

impl fmt::Display for KeyParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyParseError::Empty => write!(f, "empty key name"),
            KeyParseError::UnknownName(name) => write!(
                f,
                "unknown key name {name:?} (use a single character or one of: {}; \
                 modifiers ctrl-, alt-, shift-)",
                named_key_list()
            ),
            KeyParseError::ShiftOnSymbol(c) => write!(
                f,
                "\"shift-{c}\": terminals send the shifted character itself, \
                 write that character instead (e.g. \"!\" for shift-1)"
            ),
        }
    }
}

impl KeySpec {
    /// Parse the keymap-file syntax: `[ctrl-|alt-|shift-]*` then one character or a
    /// named key. Modifier prefixes and names are case-insensitive; a single character
    /// is taken literally (`"G"` is capital G, `"-"` is minus, `"ctrl--"` is Ctrl and minus).
    pub(crate) fn parse(text: &str) -> Result<KeySpec, KeyParseError> {
        let mut rest = text;
        let mut modifiers = 0u8;
        loop {
            let lower = rest.to_ascii_lowercase();
            let (bit, len) = if lower.starts_with("ctrl-") {
                (CTRL, 5)
            } else if lower.starts_with("alt-") {
                (ALT, 4)
            } else if lower.starts_with("shift-") {
                (SHIFT, 6)
            } else {
                break;
            };
            // "ctrl-" followed by nothing: the dash is the key (nothing to strip).
            if rest.len() == len {
                break;
            }
            modifiers |= bit;
            rest = &rest[len..];
        }
        if rest.is_empty() {
            return Err(KeyParseError::Empty);
        }
        let mut chars = rest.chars();
        let code = match (chars.next(), chars.next()) {
            (Some(c), None) => {
                if modifiers & SHIFT != 0 && !c.is_alphabetic() {
                    return Err(KeyParseError::ShiftOnSymbol(c));
                }
                KeyCode::Char(c)
            }
            _ => named_code(rest).ok_or_else(|| KeyParseError::UnknownName(rest.to_string()))?,
        };
        Ok(KeySpec::normal(code, modifiers))
    }

    /// The normal form of a terminal key event (other modifiers such as SUPER are ignored
    /// so a keymap never depends on them).
    pub(crate) fn from_event(event: &KeyEvent) -> Option<KeySpec> {
        let mut modifiers = 0u8;
        if event.modifiers.contains(KeyModifiers::CONTROL) {
            modifiers |= CTRL;
        }
        if event.modifiers.contains(KeyModifiers::ALT) {
            modifiers |= ALT;
        }
        if event.modifiers.contains(KeyModifiers::SHIFT) {
            modifiers |= SHIFT;
        }
        match event.code {
            KeyCode::Char(_) | KeyCode::F(_) => {}
            code if named_index(code).is_some() => {}
            _ => return None,
        }
        Some(KeySpec::normal(event.code, modifiers))
    }

    fn normal(code: KeyCode, mut modifiers: u8) -> KeySpec {
        let code = match code {
            KeyCode::Char(c) => {
                let c = if modifiers & SHIFT != 0 {
                    single_uppercase(c)
                } else {
                    c
                };
                modifiers &= !SHIFT;
                KeyCodeOrd::Char(c)
            }
            KeyCode::Tab if modifiers & SHIFT != 0 => {
                modifiers &= !SHIFT;
                named_ord(KeyCode::BackTab)
            }
            KeyCode::BackTab => {
                modifiers &= !SHIFT;
                named_ord(KeyCode::BackTab)
            }
            KeyCode::F(n) => KeyCodeOrd::F(n),
            other => named_ord(other),
        };
        KeySpec { code, modifiers }
    }
}

/// `c` upper-cased when that is one character (SHIFT reported with a lowercase letter).
fn single_uppercase(c: char) -> char {
    let mut upper = c.to_uppercase();
    match (upper.next(), upper.next()) {
        (Some(u), None) => u,
        _ => c,
    }
}

fn named_code(name: &str) -> Option<KeyCode> {
    let lower = name.to_ascii_lowercase();
    if let Some(n) = lower.strip_prefix('f')
        && let Ok(n) = n.parse::<u8>()
        && (1..=12).contains(&n)
    {
        return Some(KeyCode::F(n));
    }
    NAMED_KEYS
        .iter()
        .find(|(n, _)| *n == lower)
        .map(|(_, code)| *code)
}

fn named_index(code: KeyCode) -> Option<u8> {
    NAMED_CODES
        .iter()
        .position(|(c, _)| *c == code)
        .and_then(|i| u8::try_from(i).ok())
}

fn named_ord(code: KeyCode) -> KeyCodeOrd {
    // Only codes from NAMED_CODES reach here (parse and from_event check first).
    KeyCodeOrd::Named(named_index(code).unwrap_or(0))
}

impl fmt::Display for KeySpec {
    /// The help overlay's spelling: `Ctrl-c`, `Alt-Enter`, `Shift-Up`, `G`, `Space`, `F5`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.modifiers & CTRL != 0 {
            f.write_str("Ctrl-")?;
        }
        if self.modifiers & ALT != 0 {
            f.write_str("Alt-")?;
        }
        if self.modifiers & SHIFT != 0 {
            f.write_str("Shift-")?;
        }
        match self.code {
            KeyCodeOrd::Char(' ') => f.write_str("Space"),
            KeyCodeOrd::Char(c) => write!(f, "{c}"),
            KeyCodeOrd::F(n) => write!(f, "F{n}"),
            KeyCodeOrd::Named(i) => {
                let name = NAMED_CODES.get(usize::from(i)).map_or("?", |(_, n)| *n);
                f.write_str(name)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(code: KeyCode, modifiers: KeyModifiers) -> Option<KeySpec> {
        KeySpec::from_event(&KeyEvent::new(code, modifiers))
    }

    #[test]
    fn parses_and_displays() {
        let cases = [
            ("q", "q"),
            ("?", "?"),
            ("G", "G"),
            ("shift-g", "G"),
            ("ctrl-c", "Ctrl-c"),
            ("CTRL-c", "Ctrl-c"),
            ("ctrl--", "Ctrl--"),
            ("-", "-"),
            ("alt-enter", "Alt-Enter"),
            ("shift-up", "Shift-Up"),
            ("shift-tab", "Shift-Tab"),
            ("backtab", "Shift-Tab"),
            ("space", "Space"),
            ("PageDown", "PageDown"),
            ("pgdn", "PageDown"),
            ("f12", "F12"),
            ("F1", "F1"),
        ];
        for (text, shown) in cases {
            let key = KeySpec::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(key.to_string(), shown, "{text}");
        }
    }

    #[test]
    fn rejects_bad_keys() {
        assert_eq!(
            KeySpec::parse("enterr"),
            Err(KeyParseError::UnknownName("enterr".into()))
        );
        assert_eq!(KeySpec::parse(""), Err(KeyParseError::Empty));
        assert_eq!(
            KeySpec::parse("f13"),
            Err(KeyParseError::UnknownName("f13".into()))
        );
        assert_eq!(KeySpec::parse("shift-1"), Err(KeyParseError::ShiftOnSymbol('1')));
        let message = KeyParseError::UnknownName("enterr".into()).to_string();
        assert!(
            message.contains("pagedown") && message.contains("f1..f12"),
            "{message}"
        );
    }

    #[test]
    fn shift_is_optional_where_the_code_carries_it() {
        let g = KeySpec::parse("G").ok();
        assert_eq!(ev(KeyCode::Char('G'), KeyModifiers::SHIFT), g);
        assert_eq!(ev(KeyCode::Char('G'), KeyModifiers::NONE), g);
        assert_eq!(ev(KeyCode::Char('g'), KeyModifiers::SHIFT), g);
        assert_ne!(ev(KeyCode::Char('g'), KeyModifiers::NONE), g);
        let backtab = KeySpec::parse("backtab").ok();
        assert_eq!(ev(KeyCode::BackTab, KeyModifiers::SHIFT), backtab);
        assert_eq!(ev(KeyCode::BackTab, KeyModifiers::NONE), backtab);
        assert_eq!(ev(KeyCode::Tab, KeyModifiers::SHIFT), backtab);
        // Shift on a named key is meaningful.
        assert_ne!(ev(KeyCode::Up, KeyModifiers::SHIFT), KeySpec::parse("up").ok());
        assert_eq!(
            ev(KeyCode::Char('c'), KeyModifiers::CONTROL | KeyModifiers::SUPER),
            KeySpec::parse("ctrl-c").ok()
        );
        assert_eq!(ev(KeyCode::CapsLock, KeyModifiers::NONE), None);
    }
}
