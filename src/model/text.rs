//! Plain text that is safe to print whatever it holds: padding of any width (`fmt`'s own
//! `{:width$}` panics past 65,535 columns, and a width can come from user input — an
//! `alias=`, a caret under a long selector, a column of a session file), and untrusted
//! names (aliases, command names, symbols, console lines) with their control characters
//! made visible, so an escape sequence in them never reaches the terminal.

use std::borrow::Cow;
use std::fmt;

/// `count` copies of `fill` (`{}` of it writes them; no width limit).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Repeat(pub char, pub usize);

impl fmt::Display for Repeat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut chunk = [0u8; 4];
        let one = self.0.encode_utf8(&mut chunk);
        for _ in 0..self.1 {
            f.write_str(one)?;
        }
        Ok(())
    }
}

/// `count` spaces.
pub fn spaces(count: usize) -> Repeat {
    Repeat(' ', count)
}

/// `value` padded with spaces on the right to `width` characters (`{:<width$}`).
pub fn left_aligned(value: impl fmt::Display, width: usize) -> String {
    let mut text = value.to_string();
    let fill = width.saturating_sub(text.chars().count());
    text.extend(std::iter::repeat_n(' ', fill));
    text
}

/// `value` padded with spaces on the left to `width` characters (`{:>width$}`).
pub fn right_aligned(value: impl fmt::Display, width: usize) -> String {
    let text = value.to_string();
    let fill = width.saturating_sub(text.chars().count());
    let mut out = String::with_capacity(text.len() + fill);
    out.extend(std::iter::repeat_n(' ', fill));
    out.push_str(&text);
    out
}

/// [`escape_controls`] line by line: the line breaks of a multi-line text (an error with a
/// caret under the bad character, a report) stay, every other control character is
/// spelled out.
pub fn escape_controls_keeping_lines(text: &str) -> String {
    text.split('\n')
        .map(escape_controls)
        .collect::<Vec<_>>()
        .join("\n")
}

/// `text` with every control character written as a visible escape (`\e`, `\n`, `\t`,
/// `\r`, `\x07`, `\u{9b}`), so text from outside perfscope — an alias, a thread's
/// command name, a symbol, a guest's console line — can be drawn or printed without the
/// terminal obeying it. Ordinary text comes back borrowed.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\u{1b}' => out.push_str("\\e"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x80 && c.is_control() => {
                let _ = fmt::Write::write_fmt(&mut out, format_args!("\\x{:02x}", c as u32));
            }
            c if c.is_control() => {
                let _ = fmt::Write::write_fmt(&mut out, format_args!("\\u{{{:x}}}", c as u32));
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Words split as a shell splits them for '…' and "…" quotes: blanks separate, quotes
/// group and are dropped (no escapes, no variables). For the lines of `QPERF_METRIC`
/// and of the perf-prof command catalogue.
pub fn shell_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote = None;
    let mut in_word = false;
    for c in text.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padding_past_the_fmt_width_limit_does_not_panic() {
        let wide = 70_000;
        assert_eq!(spaces(wide).to_string().len(), wide);
        assert_eq!(Repeat('-', 3).to_string(), "---");
        assert_eq!(left_aligned("ab", 4), "ab  ");
        assert_eq!(right_aligned(42, 5), "   42");
        assert_eq!(left_aligned("abcdef", 2), "abcdef", "never cut");
        assert_eq!(right_aligned("x", wide).len(), wide);
        assert_eq!(left_aligned("é", 3), "é  ", "characters, as fmt counts");
    }

    #[test]
    fn control_characters_become_visible_and_plain_text_is_borrowed() {
        assert!(matches!(escape_controls("plain ü"), Cow::Borrowed("plain ü")));
        assert_eq!(escape_controls("\u{1b}[31mred\u{7}"), "\\e[31mred\\x07");
        assert_eq!(escape_controls("a\nb\tc\r"), "a\\nb\\tc\\r");
        assert_eq!(escape_controls("\u{9b}2J"), "\\u{9b}2J", "the 8-bit CSI too");
        assert!(
            !escape_controls("\u{1b}\u{9b}\u{7f}")
                .chars()
                .any(char::is_control)
        );
    }
}
