//! Shorter forms of a function name, by meaning. StarryOS frames are long generic Rust
//! paths (`<ax_fs_ng::file::handle::FileHandle<M> as ax_io::Write>::write_at::<&mut dyn
//! starry_kernel::file::ReadBuf>`); cut by columns they lose the method and keep a generic
//! argument. Here a name sheds what a reader needs least first — the generic arguments
//! (`<…>`), then the crate and module path (the last type and the method stay), then the
//! `<…>` markers — and says where its method starts, so a cut that is still needed keeps
//! it. A C name (no `::`, no generics) has no shorter form.
//!
//! Plain text in, plain text out (no widths): `views::text::fit_name` fits a cell with
//! these forms and the SVG flamegraph's script picks among them.

use unicode_width::UnicodeWidthStr;

/// A name's shorter forms and where the last one's method starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NameForms {
    /// Each strictly shorter than the one before (the name itself not included): generic
    /// arguments elided, then module paths dropped, then the `<…>` markers dropped. Empty
    /// for a name with nothing to shed (a C name) or one whose brackets do not pair up.
    pub forms: Vec<String>,
    /// The byte offset of the `::` before the method in the last form (or in the name when
    /// there is no form): `form[tail..]` is what a cut keeps (`::write_at`,
    /// `::spawn::{{closure}}`). `None` for a single-segment name.
    pub tail: Option<usize>,
}

impl NameForms {
    /// The shortest form by meaning (the name itself when there is none).
    pub fn shortest<'a>(&'a self, name: &'a str) -> &'a str {
        self.forms.last().map_or(name, String::as_str)
    }

    /// What a cut of [`shortest`](Self::shortest) keeps: its method with the `::` before
    /// it, and any closure after it.
    pub fn tail<'a>(&'a self, name: &'a str) -> Option<&'a str> {
        let shortest = self.shortest(name);
        self.tail.and_then(|at| shortest.get(at..))
    }
}

/// The shorter forms of `name`, longest first.
pub fn name_forms(name: &str) -> NameForms {
    if !balanced(name) {
        return NameForms {
            forms: Vec::new(),
            tail: method_start(name),
        };
    }
    let mut forms: Vec<String> = Vec::new();
    let elided = elide_generics(name);
    let paths_dropped = drop_module_paths(&elided);
    let markers_dropped = drop_generic_markers(&paths_dropped);
    for form in [elided, paths_dropped, markers_dropped] {
        let previous = forms.last().map_or(name, String::as_str);
        // Columns, not bytes: `<u8>` → `<…>` is shorter on screen, longer in UTF-8.
        if form.width() < previous.width() {
            forms.push(form);
        }
    }
    let tail = method_start(forms.last().map_or(name, String::as_str));
    NameForms { forms, tail }
}

/// Identifier bytes (non-ASCII bytes are parts of Unicode identifiers).
fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

fn opens(b: u8) -> bool {
    matches!(b, b'<' | b'(' | b'[' | b'{')
}

/// A closing bracket at `i` (the `>` of an arrow `->` is not one).
fn closes(s: &[u8], i: usize) -> bool {
    match s[i] {
        b'>' => i == 0 || s[i - 1] != b'-',
        b')' | b']' | b'}' => true,
        _ => false,
    }
}

/// Every bracket closes, none before it opened (C++ `operator<` does not: no forms).
fn balanced(name: &str) -> bool {
    let s = name.as_bytes();
    let mut depth = 0usize;
    for i in 0..s.len() {
        if opens(s[i]) {
            depth += 1;
        } else if closes(s, i) {
            let Some(d) = depth.checked_sub(1) else {
                return false;
            };
            depth = d;
        }
    }
    depth == 0
}

/// The index of the bracket that closes the one at `open`.
fn closing(s: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for i in open..s.len() {
        if opens(s[i]) {
            depth += 1;
        } else if closes(s, i) {
            depth = depth.checked_sub(1)?;
            if depth == 0 {
                return Some(i);
            }
        }
    }
    None
}

/// Generic arguments as `<…>`: a `<` right after an identifier (`Vec<u8>`) or a `::`
/// (`write_at::<T>`). A `<` anywhere else opens a qualified path (`<A as B>::m`) whose
/// own generics are elided inside it. A legacy symbol's `::h0123…` hash goes too.
fn elide_generics(name: &str) -> String {
    let (name, offset) = split_offset(name);
    let name = strip_hash(name);
    let s = name.as_bytes();
    let mut out = String::with_capacity(name.len());
    let mut copied = 0;
    let mut i = 0;
    while i < s.len() {
        if s[i] == b'<'
            && i > 0
            && (is_ident(s[i - 1]) || s[i - 1] == b':')
            && let Some(close) = closing(s, i)
        {
            out.push_str(&name[copied..i]);
            out.push_str("<…>");
            i = close + 1;
            copied = i;
            continue;
        }
        i += 1;
    }
    out.push_str(&name[copied..]);
    out.push_str(offset);
    out
}

/// A symbol-table name's `+0x1a` offset, kept apart so the hash before it can go.
fn split_offset(name: &str) -> (&str, &str) {
    match name.rfind("+0x") {
        Some(at) if name[at + 3..].bytes().all(|b| b.is_ascii_hexdigit()) && name.len() > at + 3 => {
            name.split_at(at)
        }
        _ => (name, ""),
    }
}

/// `core::fmt::write::h0123456789abcdef` → `core::fmt::write`: rustc's legacy hash.
fn strip_hash(name: &str) -> &str {
    match name.rsplit_once("::h") {
        Some((head, hash))
            if !head.is_empty() && hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()) =>
        {
            head
        }
        _ => name,
    }
}

/// The top-level `::`-separated segments (a `::` inside brackets belongs to a segment).
fn segments(name: &str) -> Vec<&str> {
    let s = name.as_bytes();
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    let mut i = 0;
    while i < s.len() {
        if opens(s[i]) {
            depth += 1;
        } else if closes(s, i) {
            depth = depth.saturating_sub(1);
        } else if depth == 0 && s[i] == b':' && s.get(i + 1) == Some(&b':') {
            out.push(&name[start..i]);
            i += 2;
            start = i;
            continue;
        }
        i += 1;
    }
    out.push(&name[start..]);
    out
}

/// A segment that names something: not a qualified path or turbofish (`<…>`) and not a
/// closure or shim (`{{closure}}`, `{closure#0}`, `{shim:vtable#0}`).
fn is_named(segment: &str) -> bool {
    !segment.starts_with('<') && !segment.starts_with('{') && !segment.is_empty()
}

/// Which segment is the method: the last one that names something.
fn method_index(segments: &[&str]) -> Option<usize> {
    segments.iter().rposition(|s| is_named(s))
}

/// Byte offset of the `::` before the method, when the method has anything before it.
fn method_start(name: &str) -> Option<usize> {
    let parts = segments(name);
    let method = method_index(&parts)?;
    if method == 0 {
        return None;
    }
    let before: usize = parts[..method].iter().map(|p| p.len() + 2).sum();
    Some(before - 2)
}

/// Keep the method and the one segment before it (its type, or its module for a free
/// function; a qualified path `<A as B>` counts as that segment), with paths inside
/// brackets cut to their last segment (`<ax_io::Write>` → `<Write>`).
fn drop_module_paths(name: &str) -> String {
    let parts = segments(name);
    let from = method_index(&parts).map_or(0, |m| m.saturating_sub(1));
    parts[from..]
        .iter()
        .map(|p| last_segments_inside(p))
        .collect::<Vec<_>>()
        .join("::")
}

/// Every `a::b::C` inside `segment` as `C` (a run's trailing `::` before a turbofish
/// stays: `c::<…>`).
fn last_segments_inside(segment: &str) -> String {
    let s = segment.as_bytes();
    let mut out = String::with_capacity(segment.len());
    let mut i = 0;
    while i < s.len() {
        if !is_ident(s[i]) {
            // Non-identifier bytes are ASCII: a whole character each.
            out.push(char::from(s[i]));
            i += 1;
            continue;
        }
        let mut last = i;
        loop {
            while i < s.len() && is_ident(s[i]) {
                i += 1;
            }
            if s.get(i) == Some(&b':') && s.get(i + 1) == Some(&b':') {
                i += 2;
                if s.get(i).is_some_and(|&b| is_ident(b)) {
                    last = i;
                    continue;
                }
            }
            break;
        }
        out.push_str(&segment[last..i]);
    }
    out
}

/// The `<…>` markers gone: `FileHandle<…>::write_at::<…>` → `FileHandle::write_at`.
fn drop_generic_markers(name: &str) -> String {
    name.replace("::<…>", "").replace("<…>", "")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A StarryOS frame as rustc-demangle writes it.
    const WRITE_AT: &str = "<ax_fs_ng::file::handle::FileHandle<ax_sync::mutex::RawMutex> as ax_io::Write>::write_at::<&mut dyn starry_kernel::file::ReadBuf>";

    #[test]
    fn a_qualified_method_sheds_generics_then_paths_then_markers() {
        let f = name_forms(WRITE_AT);
        assert_eq!(
            f.forms,
            [
                "<ax_fs_ng::file::handle::FileHandle<…> as ax_io::Write>::write_at::<…>",
                "<FileHandle<…> as Write>::write_at::<…>",
                "<FileHandle as Write>::write_at",
            ]
        );
        assert_eq!(f.tail(WRITE_AT), Some("::write_at"));
        assert_eq!(f.shortest(WRITE_AT), "<FileHandle as Write>::write_at");
    }

    #[test]
    fn inherent_methods_keep_their_type() {
        let name = "alloc::vec::Vec<u8, alloc::alloc::Global>::extend_from_slice";
        assert_eq!(
            name_forms(name).forms,
            [
                "alloc::vec::Vec<…>::extend_from_slice",
                "Vec<…>::extend_from_slice",
                "Vec::extend_from_slice"
            ]
        );
        let name = "<starry_kernel::task::Thread>::exit";
        assert_eq!(name_forms(name).forms, ["<Thread>::exit"]);
    }

    #[test]
    fn free_functions_keep_their_module_and_closures_their_function() {
        let f = name_forms("axtask::run_queue::AxRunQueue::resched");
        assert_eq!(f.forms, ["AxRunQueue::resched"]);
        assert_eq!(f.tail, Some("AxRunQueue".len()));
        let name = "starry_kernel::task::spawn_user_task::{{closure}}::{{closure}}";
        let f = name_forms(name);
        assert_eq!(f.forms, ["task::spawn_user_task::{{closure}}::{{closure}}"]);
        assert_eq!(f.tail(name), Some("::spawn_user_task::{{closure}}::{{closure}}"));
        let name = "axfs::fops::File::read::{closure#0}";
        let f = name_forms(name);
        assert_eq!(f.forms, ["File::read::{closure#0}"]);
        assert_eq!(f.tail(name), Some("::read::{closure#0}"));
    }

    #[test]
    fn nested_generics_and_turbofish_collapse_whole() {
        let name = "core::ptr::drop_in_place<alloc::sync::Arc<spin::Mutex<alloc::vec::Vec<u8>>>>";
        assert_eq!(
            name_forms(name).forms,
            [
                "core::ptr::drop_in_place<…>",
                "ptr::drop_in_place<…>",
                "ptr::drop_in_place"
            ]
        );
        let name = "core::iter::traits::iterator::Iterator::fold::<core::slice::Iter<u8>, usize, fn(usize, &u8) -> usize>";
        assert_eq!(
            name_forms(name).forms,
            [
                "core::iter::traits::iterator::Iterator::fold::<…>",
                "Iterator::fold::<…>",
                "Iterator::fold"
            ]
        );
    }

    #[test]
    fn legacy_hashes_go_and_offsets_stay() {
        let name = "core::fmt::write::h0123456789abcdef+0x1a";
        assert_eq!(
            name_forms(name).forms,
            ["core::fmt::write+0x1a", "fmt::write+0x1a"]
        );
        // `<T>` → `<…>` saves no column: that form is left out, the next ones built on it.
        let name = "<impl core::fmt::Debug for alloc::vec::Vec<T>>::fmt";
        assert_eq!(
            name_forms(name).forms,
            ["<impl Debug for Vec<…>>::fmt", "<impl Debug for Vec>::fmt"]
        );
    }

    #[test]
    fn c_names_and_odd_text_have_no_form() {
        for name in [
            "do_syscall_64",
            "__x64_sys_read",
            "[unknown]",
            "0xffffffff81000000",
            "",
        ] {
            assert_eq!(
                name_forms(name),
                NameForms {
                    forms: vec![],
                    tail: None
                },
                "{name}"
            );
        }
        // C++'s operator< leaves a bracket open: nothing is guessed.
        let f = name_forms("std::operator<(int, int)");
        assert!(f.forms.is_empty());
        assert_eq!(f.tail, Some("std".len()));
        // An arrow is not a bracket.
        assert_eq!(
            name_forms("a::b::call<fn() -> u8>").forms,
            ["a::b::call<…>", "b::call<…>", "b::call"]
        );
    }

    #[test]
    fn wide_characters_survive_every_stage() {
        let name = "模块::类型<参数>::方法";
        assert_eq!(
            name_forms(name).forms,
            ["模块::类型<…>::方法", "类型<…>::方法", "类型::方法"]
        );
    }
}
