//! Text that fits a width in terminal columns: display width (wide CJK, combining marks)
//! and truncation with an ellipsis — at the end for prose, in the middle for labels, by
//! meaning for function names ([`fit_name`]: the method survives) and by components for
//! paths ([`truncate_path`]: the file name survives). The views draw with it and the SVG
//! flamegraph labels its frames with it, so a name reads the same in both.

use std::borrow::Cow;

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use super::name_forms::name_forms;
use super::text::escape_controls;

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

/// `s` cut to at most `width` columns with `…` in the middle, keeping both ends (a
/// title, a label). Control characters are shown as escapes. Function names go through
/// [`fit_name`], paths through [`truncate_path`].
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
    let tail = tail_fitting(s, (width - 1) / 2);
    Cow::Owned(head_ellipsis_tail(s, tail, width))
}

/// The longest prefix of `s` that leaves room for `…` and `tail` in `width` columns,
/// then `…`, then `tail` (which must fit in `width - 1`).
fn head_ellipsis_tail(s: &str, tail: &str, width: usize) -> String {
    let head_width = width.saturating_sub(1 + display_width(tail));
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
    out
}

/// A function name in at most `width` columns, shortened by meaning
/// ([`name_forms`]): the first of its forms that fits — generic arguments elided, then
/// crate and module paths dropped, then the `<…>` markers — else the shortest form cut
/// in the middle so its method stays (`<FileHa…::write_at`), else the method cut at its
/// end. A name without forms (a C name) is cut in the middle, both ends kept. Every
/// place that cuts a function name to a width goes through here.
pub fn fit_name(name: &str, width: usize) -> Cow<'_, str> {
    escaped_then(name, width, cut_name)
}

fn cut_name(name: &str, width: usize) -> Cow<'_, str> {
    if display_width(name) <= width {
        return Cow::Borrowed(name);
    }
    let forms = name_forms(name);
    if let Some(form) = forms.forms.iter().find(|f| display_width(f) <= width) {
        return Cow::Owned(form.clone());
    }
    let shortest = forms.shortest(name);
    match forms.tail(name) {
        _ if width <= 1 => Cow::Owned(cut_end(shortest, width).into_owned()),
        Some(tail) if display_width(tail) < width => Cow::Owned(head_ellipsis_tail(shortest, tail, width)),
        // Not even `…::method` fits: the method, cut at its end.
        Some(tail) => Cow::Owned(cut_end(&tail[2..], width).into_owned()),
        None => Cow::Owned(cut_middle(shortest, width).into_owned()),
    }
}

/// A function name at its shortest by meaning ([`name_forms`]), uncut: where several
/// names share one line (the zoom breadcrumb) each gives way before the line is cut.
pub fn shortest_name(name: &str) -> Cow<'_, str> {
    let escaped = escape_controls(name);
    match name_forms(&escaped).forms.pop() {
        Some(form) => Cow::Owned(form),
        None => escaped,
    }
}

/// `s` in rows of at most `width` columns (a wide character that would straddle a row's
/// end starts the next); nothing for an empty `s` or a zero width.
pub fn wrap_columns(s: &str, width: usize) -> Vec<String> {
    let mut rows = Vec::new();
    if width == 0 {
        return rows;
    }
    let mut row = String::new();
    let mut used = 0;
    for ch in s.chars() {
        let w = ch.width().unwrap_or(0);
        if used + w > width && !row.is_empty() {
            rows.push(std::mem::take(&mut row));
            used = 0;
        }
        row.push(ch);
        used += w;
    }
    if !row.is_empty() {
        rows.push(row);
    }
    rows
}

/// A `/`-separated path in at most `width` columns with `…` in the middle: the head, and
/// the last component whole (the file or directory it names), with as many components
/// before it as fit in two thirds of the width; a last component too long for the width
/// is cut in the middle itself. Control characters are shown as escapes.
pub fn truncate_path(path: &str, width: usize) -> Cow<'_, str> {
    escaped_then(path, width, cut_path)
}

fn cut_path(path: &str, width: usize) -> Cow<'_, str> {
    if display_width(path) <= width {
        return Cow::Borrowed(path);
    }
    if width <= 1 {
        return cut_end(path, width);
    }
    let room = (width - 1) * 2 / 3;
    // Suffixes that start at a `/`, shortest first: the last component may take all but
    // one column of head, more components two thirds of the width.
    let mut tail = None;
    for (i, (at, _)) in path.rmatch_indices('/').enumerate() {
        let limit = if i == 0 { width - 2 } else { room };
        if display_width(&path[at..]) > limit {
            break;
        }
        tail = Some(&path[at..]);
    }
    match tail {
        Some(tail) => Cow::Owned(head_ellipsis_tail(path, tail, width)),
        None => cut_middle(path, width),
    }
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

    /// A StarryOS frame as rustc-demangle writes it (125 columns).
    const WRITE_AT: &str = "<ax_fs_ng::file::handle::FileHandle<ax_sync::mutex::RawMutex> as ax_io::Write>::write_at::<&mut dyn starry_kernel::file::ReadBuf>";

    #[test]
    fn names_shed_generics_then_paths_and_keep_the_method() {
        let at = |w| fit_name(WRITE_AT, w).into_owned();
        assert_eq!(at(200), WRITE_AT);
        assert_eq!(
            at(100),
            "<ax_fs_ng::file::handle::FileHandle<…> as ax_io::Write>::write_at::<…>"
        );
        assert_eq!(at(60), "<FileHandle<…> as Write>::write_at::<…>");
        assert_eq!(at(35), "<FileHandle as Write>::write_at");
        assert_eq!(at(20), "<FileHand…::write_at");
        assert_eq!(at(11), "…::write_at");
        assert_eq!(at(10), "write_at");
        assert_eq!(at(5), "writ…");
        assert_eq!(at(1), "…");
        assert_eq!(at(0), "");
        for w in 0..130 {
            assert!(display_width(&at(w)) <= w, "{w}: {}", at(w));
        }
    }

    #[test]
    fn closures_keep_their_function_and_c_names_keep_both_ends() {
        let name = "starry_kernel::task::spawn_user_task::{{closure}}";
        assert_eq!(fit_name(name, 45), "task::spawn_user_task::{{closure}}");
        assert_eq!(fit_name(name, 33), "ta…::spawn_user_task::{{closure}}");
        assert_eq!(fit_name(name, 31), "…::spawn_user_task::{{closure}}");
        assert_eq!(fit_name(name, 30), "spawn_user_task::{{closure}}");
        assert_eq!(fit_name("do_syscall_64_long_c_function", 10), "do_sy…tion");
        assert_eq!(fit_name("do_syscall_64", 13), "do_syscall_64");
        assert_eq!(fit_name("kernel::sched::schedule", 15), "sched::schedule");
        assert_eq!(fit_name("kernel::sched::schedule", 12), "s…::schedule");
    }

    #[test]
    fn wide_and_hostile_names_fit_their_columns() {
        let name = "模块::类型<参数>::方法";
        assert_eq!(fit_name(name, 13), "类型<…>::方法");
        assert_eq!(fit_name(name, 10), "类型::方法");
        assert_eq!(fit_name(name, 8), "…::方法");
        for w in 0..24 {
            assert!(display_width(&fit_name(name, w)) <= w, "{w}");
        }
        // Control characters are drawn, never obeyed.
        assert_eq!(fit_name("evil\x1b[2J::run", 40), "evil\\e[2J::run");
    }

    /// Bracket soups, arrows, closures and wide characters: every width is kept, every
    /// form is narrower than the one before, every tail starts at a `::` — and nothing
    /// panics.
    #[test]
    fn random_names_always_fit() {
        use crate::model::name_forms::name_forms;
        use crate::model::test_rng::TestRng;
        const PIECES: [&str; 16] = [
            "a",
            "Type",
            "::",
            "<",
            ">",
            "(",
            ")",
            "{{closure}}",
            " as ",
            "->",
            "&mut ",
            "日本",
            "…",
            "_",
            "[",
            "]",
        ];
        let mut rng = TestRng::new(0x5eed);
        for _ in 0..3000 {
            let len = rng.next_u64() % 24;
            let name: String = (0..len)
                .map(|_| PIECES[(rng.next_u64() % PIECES.len() as u64) as usize])
                .collect();
            let forms = name_forms(&name);
            let mut previous = display_width(&name);
            for form in &forms.forms {
                assert!(display_width(form) < previous, "{name:?}: {forms:?}");
                previous = display_width(form);
            }
            if let Some(tail) = forms.tail(&name) {
                assert!(tail.starts_with("::"), "{name:?}: {forms:?}");
            }
            for width in 0..=display_width(&name) + 1 {
                let fitted = fit_name(&name, width);
                assert!(display_width(&fitted) <= width, "{name:?} at {width}: {fitted:?}");
            }
        }
    }

    #[test]
    fn breadcrumb_names_shorten_and_long_names_wrap() {
        assert_eq!(shortest_name(WRITE_AT), "<FileHandle as Write>::write_at");
        assert_eq!(shortest_name("do_syscall_64"), "do_syscall_64");
        assert_eq!(wrap_columns("abcdefg", 3), ["abc", "def", "g"]);
        assert_eq!(wrap_columns("a日本", 2), ["a", "日", "本"]);
        assert!(wrap_columns("abc", 0).is_empty());
        assert_eq!(wrap_columns(WRITE_AT, 100).concat(), WRITE_AT);
    }

    #[test]
    fn paths_keep_their_last_components() {
        let dir = "/work/wt-names/target/tmp/export-long-name/perf/x86_64/latest";
        assert_eq!(truncate_path(dir, 80), dir);
        assert_eq!(truncate_path(dir, 40), "/work/wt-names/targe…/perf/x86_64/latest");
        assert_eq!(truncate_path(dir, 12), "/wor…/latest");
        assert_eq!(truncate_path("libc.so.6", 5), "li….6");
        for w in 0..70 {
            assert!(display_width(&truncate_path(dir, w)) <= w, "{w}");
        }
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
