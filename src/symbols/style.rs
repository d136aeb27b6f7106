//! Symbol styles: how much of a (demangled) path to show.
//!
//! - `full`: the name unchanged.
//! - `short`: the last path segment (`a::b::c` → `c`).
//! - `module`: names of more than four segments become `first::third-last::second-last::last`
//!   (`a::b::c::d::e` → `a::c::d::e`); shorter names are unchanged.
//!
//! Segments are split on `::` only outside `<…>`, `(…)`, `[…]` and `{…}`, so generic
//! arguments and trait impls stay whole (`<a::B as c::D>::f` has two segments). The
//! reference analyzer splits naively, which cuts generics apart; this is deliberate.

/// Name style for reports and views.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum SymbolStyle {
    #[default]
    Full,
    Short,
    Module,
}

impl SymbolStyle {
    pub fn name(self) -> &'static str {
        match self {
            SymbolStyle::Full => "full",
            SymbolStyle::Short => "short",
            SymbolStyle::Module => "module",
        }
    }

    pub fn apply(self, name: &str) -> String {
        match self {
            SymbolStyle::Full => name.to_string(),
            SymbolStyle::Short => short(name),
            SymbolStyle::Module => module(name),
        }
    }
}

impl std::str::FromStr for SymbolStyle {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "full" => Ok(SymbolStyle::Full),
            "short" => Ok(SymbolStyle::Short),
            "module" => Ok(SymbolStyle::Module),
            other => Err(format!(
                "unknown symbol style {other:?} (use full, short or module)"
            )),
        }
    }
}

/// Split on `::` at nesting depth 0.
pub fn segments(name: &str) -> Vec<&str> {
    let bytes = name.as_bytes();
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'<' | b'(' | b'[' | b'{' => depth += 1,
            // `->` in a fn pointer type is not a closing bracket.
            b'>' if i > 0 && bytes[i - 1] == b'-' => {}
            b'>' | b')' | b']' | b'}' => depth = (depth - 1).max(0),
            b':' if depth == 0 && bytes.get(i + 1) == Some(&b':') => {
                out.push(&name[start..i]);
                i += 2;
                start = i;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out.push(&name[start..]);
    out
}

fn short(name: &str) -> String {
    let parts = segments(name);
    let last = parts.len() - 1;
    // A closure or shim segment alone says nothing; keep its owner.
    if last > 0 && parts[last].starts_with("{{") {
        return format!("{}::{}", parts[last - 1], parts[last]);
    }
    parts[last].to_string()
}

fn module(name: &str) -> String {
    let parts = segments(name);
    if parts.len() <= 4 {
        return name.to_string();
    }
    let n = parts.len();
    format!(
        "{}::{}::{}::{}",
        parts[0],
        parts[n - 3],
        parts[n - 2],
        parts[n - 1]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_is_unchanged() {
        assert_eq!(SymbolStyle::Full.apply("a::b::c"), "a::b::c");
    }

    #[test]
    fn short_takes_the_last_segment() {
        assert_eq!(SymbolStyle::Short.apply("a::b::c"), "c");
        assert_eq!(SymbolStyle::Short.apply("mix_leaf"), "mix_leaf");
        assert_eq!(SymbolStyle::Short.apply("<a::B as c::D>::method"), "method");
        assert_eq!(
            SymbolStyle::Short.apply("core::ptr::drop_in_place<alloc::vec::Vec<u8>>"),
            "drop_in_place<alloc::vec::Vec<u8>>"
        );
        assert_eq!(
            SymbolStyle::Short.apply("axtask::run_queue::spawn::{{closure}}"),
            "spawn::{{closure}}"
        );
    }

    #[test]
    fn module_keeps_first_and_last_three() {
        assert_eq!(SymbolStyle::Module.apply("a::b::c::d::e"), "a::c::d::e");
        assert_eq!(SymbolStyle::Module.apply("a::b::c::d"), "a::b::c::d");
        assert_eq!(
            SymbolStyle::Module.apply("core::ptr::drop_in_place<x::y::z::w::v>"),
            "core::ptr::drop_in_place<x::y::z::w::v>",
            "generic arguments are not segments"
        );
        assert_eq!(
            SymbolStyle::Module.apply("k::a::<impl x::Y<T> for z::W>::f"),
            "k::a::<impl x::Y<T> for z::W>::f"
        );
        assert_eq!(
            SymbolStyle::Module.apply("k::a::b::<impl x::Y<T> for z::W>::f"),
            "k::b::<impl x::Y<T> for z::W>::f"
        );
    }

    #[test]
    fn fn_pointer_arrows_do_not_close_generics() {
        assert_eq!(segments("a::b<fn() -> u8>::c"), ["a", "b<fn() -> u8>", "c"]);
    }

    #[test]
    fn styles_parse_case_insensitively() {
        assert_eq!("Short".parse::<SymbolStyle>(), Ok(SymbolStyle::Short));
        assert!("bogus".parse::<SymbolStyle>().is_err());
    }
}
