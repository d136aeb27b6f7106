//! Text that fits: display width (wide CJK, combining marks) and truncation with an
//! ellipsis — at the end for prose, in the middle for `a::b::c` paths so the function
//! name, the part a profiler user reads, survives.

use std::borrow::Cow;

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use crate::model::text::escape_controls;

const ELLIPSIS: char = '…';

/// Columns `s` takes on a terminal.
pub fn display_width(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

/// `s` without its first `columns` display columns (a table scrolled sideways). A wide
/// character cut in half is dropped whole.
pub fn skip_columns(s: &str, columns: usize) -> &str {
    let mut skipped = 0;
    for (i, c) in s.char_indices() {
        if skipped >= columns {
            return &s[i..];
        }
        skipped += UnicodeWidthChar::width(c).unwrap_or(0);
    }
    ""
}

/// `s` with its control characters made visible (`\e[31m`), then `cut` to `width`: names
/// come from outside (a thread's comm, a symbol, an alias, a console line), and what they
/// hold is drawn as text, never obeyed by the terminal.
fn escaped_then(s: &str, width: usize, cut: impl Fn(&str, usize) -> Cow<'_, str>) -> Cow<'_, str> {
    match escape_controls(s) {
        Cow::Borrowed(plain) => cut(plain, width),
        Cow::Owned(escaped) => Cow::Owned(cut(&escaped, width).into_owned()),
    }
}

/// `s` cut to at most `width` columns, ending in `…` when cut (control characters shown
/// as escapes).
pub fn truncate_end(s: &str, width: usize) -> Cow<'_, str> {
    escaped_then(s, width, cut_end)
}

fn cut_end(s: &str, width: usize) -> Cow<'_, str> {
    if display_width(s) <= width {
        return Cow::Borrowed(s);
    }
    if width == 0 {
        return Cow::Borrowed("");
    }
    let mut out = String::new();
    let mut used = 0;
    for ch in s.chars() {
        let w = ch.width().unwrap_or(0);
        if used + w > width - 1 {
            break;
        }
        out.push(ch);
        used += w;
    }
    out.push(ELLIPSIS);
    Cow::Owned(out)
}

/// The longest suffix of `s` that fits in `width` columns.
fn tail_fitting(s: &str, width: usize) -> &str {
    let mut used = 0;
    let mut start = s.len();
    for (i, ch) in s.char_indices().rev() {
        let w = ch.width().unwrap_or(0);
        if used + w > width {
            break;
        }
        used += w;
        start = i;
    }
    &s[start..]
}

/// Where the last `::` outside generic brackets starts, if any.
fn last_path_separator(s: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut depth = 0i32;
    let mut i = bytes.len();
    while i > 1 {
        i -= 1;
        match bytes[i] {
            b'>' => depth += 1,
            b'<' => depth -= 1,
            b':' if depth == 0 && bytes[i - 1] == b':' => return Some(i - 1),
            _ => {}
        }
    }
    None
}

/// `s` cut to at most `width` columns with `…` in the middle: a `a::b::c` path keeps its
/// head and its last segment (`core::…::drop_in_place`); when even the last segment does
/// not fit, it is cut at its end. Other text keeps both ends. Control characters are
/// shown as escapes.
pub fn truncate_middle(s: &str, width: usize) -> Cow<'_, str> {
    escaped_then(s, width, cut_middle)
}

fn cut_middle(s: &str, width: usize) -> Cow<'_, str> {
    if display_width(s) <= width {
        return Cow::Borrowed(s);
    }
    if width <= 1 {
        return cut_end(s, width);
    }
    let tail = match last_path_separator(s) {
        Some(sep) => {
            let last = &s[sep..];
            if display_width(last) + 1 > width {
                return cut_end(&s[sep + 2..], width);
            }
            last
        }
        None => tail_fitting(s, (width - 1) / 2),
    };
    let head_width = width - 1 - display_width(tail);
    let mut out = String::new();
    let mut used = 0;
    for ch in s.chars() {
        let w = ch.width().unwrap_or(0);
        if used + w > head_width {
            break;
        }
        out.push(ch);
        used += w;
    }
    out.push(ELLIPSIS);
    out.push_str(tail);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn end_truncation_counts_columns_not_bytes() {
        assert_eq!(truncate_end("hello", 5), "hello");
        assert_eq!(truncate_end("hello", 4), "hel…");
        assert_eq!(truncate_end("hello", 0), "");
        // Each CJK character is two columns wide.
        assert_eq!(truncate_end("日本語テキスト", 7), "日本語…");
        assert_eq!(display_width(&truncate_end("日本語テキスト", 7)), 7);
    }

    #[test]
    fn paths_keep_the_function_name() {
        let s = "core::ptr::drop_in_place<alloc::vec::Vec<u8>>::inner";
        let t = truncate_middle(s, 20);
        assert_eq!(t, "core::ptr::d…::inner");
        assert!(display_width(&t) <= 20);
        assert_eq!(truncate_middle("kernel::sched::schedule", 12), "k…::schedule");
        assert_eq!(truncate_middle("f<a::b>", 5), "f<…b>");
        assert_eq!(truncate_middle("a::very_long_function_name", 10), "very_long…");
    }

    #[test]
    fn plain_text_keeps_both_ends() {
        assert_eq!(truncate_middle("abcdefghij", 7), "abc…hij");
        assert_eq!(truncate_middle("abc", 7), "abc");
        assert_eq!(display_width(&truncate_middle("日本語テキストです", 9)), 9);
    }

    #[test]
    fn skipping_columns_counts_display_width() {
        assert_eq!(skip_columns("abcdef", 2), "cdef");
        assert_eq!(skip_columns("abc", 5), "");
        assert_eq!(skip_columns("日本x", 2), "本x");
        assert_eq!(
            skip_columns("日本x", 1),
            "本x",
            "half a wide character goes whole"
        );
    }
}
