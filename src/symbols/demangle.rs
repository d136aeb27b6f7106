//! Demangling: Rust (legacy and v0) and C++ (Itanium), always to the plain form.
//!
//! Rust names are printed in rustc-demangle's alternate form, which has no `::h<hash>`;
//! a hash left on an already-demangled name (symbol tables, kallsyms) is stripped too, so
//! every path through the symbolizer gives the same name for the same function.

use std::borrow::Cow;

/// Demangle `raw` if it is a mangled Rust or C++ name; return it unchanged otherwise.
pub fn demangle(raw: &str) -> String {
    if looks_like_rust(raw)
        && let Ok(d) = rustc_demangle::try_demangle(raw)
    {
        return strip_rust_hash(&format!("{d:#}")).into_owned();
    }
    if raw.starts_with("_Z")
        && let Some(name) = demangle_cpp(raw)
    {
        return name;
    }
    // Not recognised above, but rustc-demangle may still know it (e.g. `__ZN` on Mach-O).
    if let Ok(d) = rustc_demangle::try_demangle(raw) {
        return strip_rust_hash(&format!("{d:#}")).into_owned();
    }
    strip_rust_hash(raw).into_owned()
}

/// Rust v0 (`_R…`) or legacy (`_ZN…17h<16 hex>E`) mangling.
fn looks_like_rust(raw: &str) -> bool {
    if raw.starts_with("_R") {
        return true;
    }
    // Legacy Rust names end their path with a `17h` + 16 hex digits hash segment; a C++
    // name with a nested name (`_ZN…E…`) does not.
    raw.starts_with("_ZN")
        && raw.match_indices("17h").any(|(i, _)| {
            let hex = &raw[i + 3..];
            hex.len() > 16
                && hex.as_bytes()[..16].iter().all(u8::is_ascii_hexdigit)
                && hex.as_bytes()[16] == b'E'
        })
}

fn demangle_cpp(raw: &str) -> Option<String> {
    let symbol = cpp_demangle::Symbol::new(raw).ok()?;
    symbol.demangle().ok()
}

/// Remove a trailing `::h` + 16 hex digits (the legacy Rust symbol hash).
pub fn strip_rust_hash(name: &str) -> Cow<'_, str> {
    let bytes = name.as_bytes();
    if bytes.len() > 19 {
        let tail = &bytes[bytes.len() - 19..];
        if tail.starts_with(b"::h") && tail[3..].iter().all(u8::is_ascii_hexdigit) {
            return Cow::Borrowed(&name[..name.len() - 19]);
        }
    }
    Cow::Borrowed(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_legacy_loses_its_hash() {
        assert_eq!(
            demangle("_ZN4core3fmt9Formatter3pad17h0123456789abcdefE"),
            "core::fmt::Formatter::pad"
        );
    }

    #[test]
    fn rust_legacy_with_llvm_suffix() {
        assert_eq!(demangle("_ZN3foo3bar17h05af221e174051e9E.llvm.1234"), "foo::bar");
    }

    #[test]
    fn rust_v0_is_plain() {
        // From the rustc-demangle test suite: `<i32 as core::fmt::Debug>::fmt`-like names.
        let v0 = "_RNvCs1234_7mycrate3foo";
        assert_eq!(demangle(v0), "mycrate::foo");
    }

    #[test]
    fn already_demangled_hash_is_stripped() {
        assert_eq!(
            demangle("axruntime::rust_main::h1a2b3c4d5e6f7081"),
            "axruntime::rust_main"
        );
        assert_eq!(strip_rust_hash("short::hab"), "short::hab");
        assert_eq!(strip_rust_hash("x::h0123456789abcdeg"), "x::h0123456789abcdeg");
    }

    #[test]
    fn cpp_names_demangle() {
        assert_eq!(demangle("_ZN3foo3barEv"), "foo::bar()");
        assert_eq!(demangle("_Z4funcPKci"), "func(char const*, int)");
    }

    #[test]
    fn c_names_pass_through() {
        assert_eq!(demangle("mix_leaf"), "mix_leaf");
        assert_eq!(demangle("_start"), "_start");
    }
}
