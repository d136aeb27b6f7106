//! C type names as tracefs format files spell them (`unsigned long`, `u64`, `pid_t`,
//! `__data_loc unsigned int[]`): the size and signedness of an array's element, which the
//! format's `size:`/`signed:` describe only for the whole field.

/// Size in bytes of the scalar C type `name` on a 64-bit kernel, when it is a known one.
/// Pointers are 8 bytes; unknown typedefs give `None`.
pub fn scalar_size(name: &str) -> Option<usize> {
    let name = strip_qualifiers(name);
    if name.ends_with('*') {
        return Some(8);
    }
    Some(match name {
        "char" | "signed char" | "unsigned char" | "u8" | "s8" | "__u8" | "__s8" | "uint8_t" | "int8_t"
        | "bool" | "_Bool" | "uchar" => 1,
        "short" | "unsigned short" | "short int" | "unsigned short int" | "u16" | "s16" | "__u16"
        | "__s16" | "uint16_t" | "int16_t" | "__le16" | "__be16" | "ushort" => 2,
        "int" | "unsigned int" | "unsigned" | "u32" | "s32" | "__u32" | "__s32" | "uint32_t" | "int32_t"
        | "pid_t" | "uid_t" | "gid_t" | "__le32" | "__be32" | "dev_t" | "gfp_t" | "blk_opf_t" | "uint" => 4,
        "long" | "unsigned long" | "long long" | "unsigned long long" | "long int" | "unsigned long int"
        | "u64" | "s64" | "__u64" | "__s64" | "uint64_t" | "int64_t" | "size_t" | "ssize_t" | "loff_t"
        | "sector_t" | "__le64" | "__be64" | "ulong" => 8,
        _ => return None,
    })
}

/// Whether the scalar C type `name` is signed (`char` counts as signed, as on x86).
/// Unknown typedefs count as unsigned.
pub fn is_signed(name: &str) -> bool {
    let name = strip_qualifiers(name);
    if name.starts_with("unsigned") || name.ends_with('*') {
        return false;
    }
    matches!(
        name,
        "char"
            | "signed char"
            | "short"
            | "short int"
            | "int"
            | "long"
            | "long int"
            | "long long"
            | "s8"
            | "s16"
            | "s32"
            | "s64"
            | "__s8"
            | "__s16"
            | "__s32"
            | "__s64"
            | "int8_t"
            | "int16_t"
            | "int32_t"
            | "int64_t"
            | "pid_t"
            | "ssize_t"
            | "loff_t"
    )
}

/// `const volatile char *` → `char *`; `__data_loc u64[]` keeps only `u64`.
fn strip_qualifiers(name: &str) -> &str {
    let mut name = name.trim();
    for prefix in ["__data_loc ", "__rel_loc ", "const ", "volatile "] {
        name = name.strip_prefix(prefix).unwrap_or(name).trim_start();
    }
    name.strip_suffix("[]").unwrap_or(name).trim_end()
}

/// The element type of a field declaration: `unsigned long args[6]` → `unsigned long`,
/// `__data_loc u64[] addrs` → `u64`, `int pid` → `int`.
pub fn element_type(declaration: &str) -> &str {
    let decl = declaration.trim();
    // Drop the field name (and its `[N]` suffix): the last word, unless the type itself ends
    // in `[]` (`__data_loc char[] comm`).
    // The separator may be a multi-byte whitespace (U+0085 in a hostile format file).
    let type_part = match decl.char_indices().rfind(|&(_, c)| c.is_whitespace() || c == '*') {
        Some((i, c)) => &decl[..i + c.len_utf8()],
        None => decl,
    };
    strip_qualifiers(type_part)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn element_types_of_real_declarations() {
        assert_eq!(element_type("unsigned long args[6]"), "unsigned long");
        assert_eq!(element_type("__data_loc u64[] phys_addrs"), "u64");
        assert_eq!(element_type("__data_loc char[] comm"), "char");
        assert_eq!(element_type("const char * name"), "char *");
        assert_eq!(element_type("void * ptr"), "void *");
        assert_eq!(element_type("char prev_comm[16]"), "char");
        // A multi-byte whitespace before the name: no panic (the fuzzer's find).
        assert_eq!(element_type("unsigned char a\u{85}b"), "unsigned char a");
        assert_eq!(scalar_size("unsigned long"), Some(8));
        assert_eq!(scalar_size("u64"), Some(8));
        assert_eq!(scalar_size("unsigned int"), Some(4));
        assert_eq!(scalar_size("void *"), Some(8));
        assert_eq!(scalar_size("xfs_ino_t"), None);
        assert!(is_signed("long"));
        assert!(is_signed("pid_t"));
        assert!(!is_signed("unsigned long"));
        assert!(!is_signed("u8"));
    }
}
