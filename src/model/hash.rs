//! Stable hashing for names and stack paths.
//!
//! Colours and selection identities must not change between runs or builds, so they use
//! FNV-1a (fixed, documented) rather than `DefaultHasher` (randomly seeded per process).

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// FNV-1a over bytes.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    fnv1a_continue(FNV_OFFSET, bytes)
}

/// Continue an FNV-1a hash with more bytes.
pub fn fnv1a_continue(mut hash: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(FNV_PRIME);
    }
    hash
}

/// The path hash of a child: depends on the parent's path hash and the child's name hash,
/// so the same call path gets the same hash in any profile, live or recorded.
pub fn child_path_hash(parent_path: u64, name_hash: u64) -> u64 {
    let h = fnv1a_continue(parent_path, &name_hash.to_le_bytes());
    // A final avalanche step: FNV's low bits mix poorly for 8-byte inputs.
    let mut x = h ^ (h >> 33);
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^ (x >> 33)
}

/// The path hash of the (nameless) root.
pub const ROOT_PATH_HASH: u64 = FNV_OFFSET;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_matches_reference_vectors() {
        // Published FNV-1a 64-bit test vectors.
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn path_hash_depends_on_order() {
        let a = fnv1a(b"a");
        let b = fnv1a(b"b");
        let ab = child_path_hash(child_path_hash(ROOT_PATH_HASH, a), b);
        let ba = child_path_hash(child_path_hash(ROOT_PATH_HASH, b), a);
        assert_ne!(ab, ba);
        assert_eq!(ab, child_path_hash(child_path_hash(ROOT_PATH_HASH, a), b));
    }
}
