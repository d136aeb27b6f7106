//! Why one record did not decode. Offsets here are relative to the record's first byte;
//! the readers add the record's file offset.

use std::fmt;

/// A record field, named the way the spec names it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Field {
    ElapsedNs,
    Pc,
    Sp,
    Fp,
    Cpu,
    TraceLen,
    /// The trace entry at this index (leaf = 0).
    TraceEntry(u32),
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Field::ElapsedNs => f.write_str("elapsed_ns"),
            Field::Pc => f.write_str("pc"),
            Field::Sp => f.write_str("sp"),
            Field::Fp => f.write_str("fp"),
            Field::Cpu => f.write_str("cpu"),
            Field::TraceLen => f.write_str("trace length"),
            Field::TraceEntry(index) => write!(f, "trace[{index}]"),
        }
    }
}

/// Bytes that can never be part of a valid record, whatever follows them.
#[derive(Copy, Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CorruptKind {
    /// `0xFF` is reserved by bincode; no integer starts with it.
    #[error("reserved varint marker 0xFF in {field} at byte {at} of the record")]
    ReservedMarker { field: Field, at: usize },
    /// `0xFE` announces a u128, wider than every field of every version.
    #[error("u128 varint marker 0xFE in {field} at byte {at} of the record (fields are at most u64)")]
    U128Marker { field: Field, at: usize },
    /// `0xFD` announces a u64 where the field is a u32 (`cpu`).
    #[error("u64 varint marker 0xFD in the u32 field {field} at byte {at} of the record")]
    U64MarkerOnU32 { field: Field, at: usize },
    /// The trace length would take the record past the 256 KiB claim limit. Checked before
    /// any entry is read or allocated.
    #[error(
        "trace length {len} exceeds the limit of {limit} entries per record \
         (256 KiB), at byte {at} of the record"
    )]
    TraceTooLong { len: u64, limit: u64, at: usize },
    /// A run of zero bytes where a record starts ([`ZERO_RUN_BYTES`](super::ZERO_RUN_BYTES)
    /// or more). Zeros decode as empty records, but the plugin never writes one (every
    /// trace holds at least the pc): this is a hole — a preallocated file, blocks a crash
    /// left zeroed, `/dev/zero` — and reading it as records would never end.
    #[error(
        "{bytes} zero bytes where a record starts: a hole — a preallocated file, or blocks a \
         crash left zeroed — not records the plugin wrote"
    )]
    ZeroRun { bytes: usize },
}

impl CorruptKind {
    /// Where in the record the bad bytes start.
    pub fn at(&self) -> usize {
        match *self {
            CorruptKind::ReservedMarker { at, .. }
            | CorruptKind::U128Marker { at, .. }
            | CorruptKind::U64MarkerOnU32 { at, .. }
            | CorruptKind::TraceTooLong { at, .. } => at,
            CorruptKind::ZeroRun { .. } => 0,
        }
    }
}

/// Why [`decode_record`](super::decode_record) returned no record.
#[derive(Copy, Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The buffer ends inside the record. Not an error while a file is still growing; at
    /// the end of a file it is a truncated last record.
    #[error("the record is incomplete: at least {needed_at_least} more bytes are needed")]
    Incomplete {
        /// A lower bound, never 0: every field still missing counts its smallest form.
        needed_at_least: usize,
    },
    #[error("{0}")]
    Corrupt(CorruptKind),
}

impl DecodeError {
    /// Add the smallest size of the fields after the one that ran out, so the hint covers
    /// the whole record.
    pub(super) fn plus_rest(self, rest_bytes: usize) -> Self {
        match self {
            DecodeError::Incomplete { needed_at_least } => DecodeError::Incomplete {
                needed_at_least: needed_at_least.saturating_add(rest_bytes),
            },
            corrupt => corrupt,
        }
    }
}

impl From<CorruptKind> for DecodeError {
    fn from(kind: CorruptKind) -> Self {
        DecodeError::Corrupt(kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corrupt_kinds_say_field_and_offset() {
        let reserved = CorruptKind::ReservedMarker {
            field: Field::Pc,
            at: 9,
        };
        assert_eq!(
            reserved.to_string(),
            "reserved varint marker 0xFF in pc at byte 9 of the record"
        );
        let wide = CorruptKind::U64MarkerOnU32 {
            field: Field::Cpu,
            at: 28,
        };
        assert_eq!(
            wide.to_string(),
            "u64 varint marker 0xFD in the u32 field cpu at byte 28 of the record"
        );
        let long = CorruptKind::TraceTooLong {
            len: 32763,
            limit: 32762,
            at: 30,
        };
        assert_eq!(
            long.to_string(),
            "trace length 32763 exceeds the limit of 32762 entries per record (256 KiB), \
             at byte 30 of the record"
        );
        assert_eq!(long.at(), 30);
        let entry = CorruptKind::U128Marker {
            field: Field::TraceEntry(4),
            at: 40,
        };
        assert!(entry.to_string().contains("in trace[4] at byte 40"));
    }

    #[test]
    fn plus_rest_grows_only_incomplete() {
        let short = DecodeError::Incomplete { needed_at_least: 3 };
        assert_eq!(short.plus_rest(4), DecodeError::Incomplete { needed_at_least: 7 });
        let corrupt = DecodeError::Corrupt(CorruptKind::ReservedMarker {
            field: Field::Sp,
            at: 1,
        });
        assert_eq!(corrupt.plus_rest(4), corrupt);
    }
}
