//! Files that are certainly not a `qperf.bin`. The format has no magic number of its own
//! (records start at byte 0), so almost any bytes decode as a few records: an ELF passed
//! by mistake read as 3 "samples". Other formats do have magic numbers; a file that starts
//! with one is refused before decoding, naming what it is.

/// Magic numbers of the files a user may pass instead of a `qperf.bin`, and their names.
const MAGICS: &[(&[u8], &str)] = &[
    (b"\x7fELF", "an ELF file"),
    (b"\x1f\x8b", "a gzip file"),
    (
        b"SQLite format 3\0",
        "an SQLite file (a recorded session? open it as the input of `report`/`open`)",
    ),
    (b"PERFILE2", "a perf.data file"),
    (b"PK\x03\x04", "a zip file"),
    (b"\xfd7zXZ\0", "an xz file"),
    (b"\x28\xb5\x2f\xfd", "a zstd file"),
    (b"<?xml", "an XML/SVG file"),
];

/// What `head` (the first bytes of a file) says the file is, when it is a known format
/// other than `qperf.bin`.
pub fn foreign_format(head: &[u8]) -> Option<&'static str> {
    MAGICS
        .iter()
        .find(|(magic, _)| head.starts_with(magic))
        .map(|&(_, name)| name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::qperf_file::{QperfRecord, encode_v3};

    #[test]
    fn known_formats_are_named_and_real_records_pass() {
        assert_eq!(foreign_format(b"\x7fELF\x02\x01\x01\0"), Some("an ELF file"));
        assert!(
            foreign_format(b"SQLite format 3\0...")
                .unwrap()
                .starts_with("an SQLite file")
        );
        let mut bytes = Vec::new();
        let record = QperfRecord {
            elapsed_ns: Some(127),
            pc: 0xffff_ffc0_8020_01e4,
            trace: vec![0xffff_ffc0_8020_0100],
            ..QperfRecord::default()
        };
        encode_v3(&record, &mut bytes);
        assert_eq!(foreign_format(&bytes), None);
        assert_eq!(foreign_format(b""), None);
    }
}
