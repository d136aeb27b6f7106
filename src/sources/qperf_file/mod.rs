//! The `qperf.bin` codec: the raw sample file the qperf QEMU plugin writes, and its
//! `*.summary.txt` sidecar.
//!
//! This module owns the bytes on disk and nothing else. It decodes and encodes records by
//! hand from the bincode 2 `standard()` rules (so the format is pinned here, not by a
//! dependency's version), detects the record version the way the reference analyzer does,
//! and says precisely how a read ended: a clean end of file is not an error, a truncated or
//! corrupt record is reported with its byte offset and the bytes lost. It knows nothing of
//! symbols, the model or views; `ingest` maps [`QperfRecord`]s onto model samples.
//!
//! - Varints and record layouts: [`decode_record`], [`encode_v3`].
//! - Whole files, streamed in bounded chunks: [`QperfReader`], [`read_file`],
//!   [`read_file_with`], ending in a [`ReadReport`].
//! - A file QEMU is still writing: [`QperfTail`].
//! - The plugin's summary sidecar: [`sidecar_path`], [`PluginSummary`].
//! - Files that are something else (an ELF, a session…): [`foreign_format`].
//!
//! Everything here takes untrusted bytes: no input can make it panic, and no length read
//! from the file is allocated before it has been checked against the per-record limit.

use std::fmt;

mod error;
mod foreign;
mod reader;
mod record;
mod report;
mod sidecar;
mod stream;
mod tail;
mod varint;

pub use error::{CorruptKind, DecodeError, Field};
pub use foreign::foreign_format;
pub use reader::{Detection, QperfReader, detect_version, read_file, read_file_with};
pub use record::{decode_record, encode_record, encode_v3};
pub use report::{ReadEnd, ReadReport};
pub use sidecar::{PluginSummary, sidecar_path};
pub use stream::StreamDecoder;
pub use tail::{QperfTail, TailBatch};

/// The analyzer decodes each record with `with_limit::<262144>()`: bincode charges the
/// in-memory size of every field (u64 = 8, u32 = 4, u8 = 1, Vec length 8, contents
/// `len * 8`) against it, per record.
pub const MAX_RECORD_CLAIM_BYTES: u64 = 262_144;

/// The most wire bytes any record of any version can take (a v1 or v2 record with the
/// longest trace, every integer in its 9-byte form). A buffer this long always holds a
/// whole record or proves it corrupt, which is what bounds the readers' buffers.
pub const MAX_RECORD_WIRE_BYTES: usize = 294_912;

/// A run of this many zero bytes where a record starts ends a read as a hole
/// ([`CorruptKind::ZeroRun`]): one filesystem block, 585 empty v3 records in a row, which the
/// plugin never writes (every trace holds at least the pc).
pub const ZERO_RUN_BYTES: usize = 4096;

/// After a bad record, the rest of a stream whose length is unknown (a pipe, a device) is
/// counted this far at most, so an endless one (`/dev/urandom`) ends; a regular file's
/// rest is its size, not read at all.
pub const MAX_DRAINED_BYTES: u64 = 64 << 20;

/// The record layout of a `qperf.bin` file. The file itself does not say; see
/// [`detect_version`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FormatVersion {
    /// A bare `Vec<u64>` trace (the original qperf).
    V1,
    /// `{ elapsed_ns: u64, trace: Vec<u64> }`.
    V2,
    /// `{ elapsed_ns, pc, sp, fp: u64, cpu: u32, callchain: u8, trace: Vec<u64> }`, the only
    /// version the current plugin writes.
    V3,
}

impl FormatVersion {
    /// The order the reference analyzer tries versions in; the first whose first record
    /// decodes wins.
    pub const DETECTION_ORDER: [FormatVersion; 3] = [FormatVersion::V3, FormatVersion::V2, FormatVersion::V1];

    pub fn as_u8(self) -> u8 {
        match self {
            FormatVersion::V1 => 1,
            FormatVersion::V2 => 2,
            FormatVersion::V3 => 3,
        }
    }

    pub fn from_u8(version: u8) -> Option<Self> {
        match version {
            1 => Some(FormatVersion::V1),
            2 => Some(FormatVersion::V2),
            3 => Some(FormatVersion::V3),
            _ => None,
        }
    }

    /// Claimed bytes of the fields before the trace, plus the trace's length (8).
    fn fixed_claim_bytes(self) -> u64 {
        match self {
            FormatVersion::V1 => 8,
            FormatVersion::V2 => 8 + 8,
            FormatVersion::V3 => 8 + 8 + 8 + 8 + 4 + 1 + 8,
        }
    }

    /// The longest trace a record of this version may carry under the per-record limit:
    /// 32762 for v3, 32766 for v2, 32767 for v1.
    pub fn max_trace_len(self) -> u64 {
        (MAX_RECORD_CLAIM_BYTES - self.fixed_claim_bytes()) / 8
    }

    /// The most wire bytes a record of this version can take.
    pub fn max_record_wire_bytes(self) -> usize {
        let fixed = match self {
            FormatVersion::V1 => 0,
            FormatVersion::V2 => varint::MAX_VARINT_BYTES,
            // cpu is at most FC + 4 bytes, callchain one raw byte.
            FormatVersion::V3 => 4 * varint::MAX_VARINT_BYTES + 5 + 1,
        };
        let max_len = usize::try_from(self.max_trace_len()).unwrap_or(usize::MAX);
        fixed + varint::MAX_VARINT_BYTES * (1 + max_len)
    }
}

impl fmt::Display for FormatVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}", self.as_u8())
    }
}

/// How a v3 record's trace was collected (its raw `callchain` byte).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Callchain {
    /// 0: only the sampled address.
    Leaf,
    /// 1: frame-pointer unwinding.
    Fp,
    /// 2: DWARF CFI unwinding (perfscope's plugin, `callchain=dwarf`; the reference knows
    /// no such byte and treats it as unknown).
    Dwarf,
    /// 3: no trace, the vCPU was halted (WFI, HLT) when the plugin's tick came: an idle
    /// sample (perfscope's plugin; the reference knows no such byte).
    Idle,
    /// Any other byte; the reference analyzer ignores it, we keep the value.
    Unknown(u8),
}

impl Callchain {
    pub fn from_byte(byte: u8) -> Self {
        match byte {
            0 => Callchain::Leaf,
            1 => Callchain::Fp,
            2 => Callchain::Dwarf,
            3 => Callchain::Idle,
            other => Callchain::Unknown(other),
        }
    }

    pub fn as_byte(self) -> u8 {
        match self {
            Callchain::Leaf => 0,
            Callchain::Fp => 1,
            Callchain::Dwarf => 2,
            Callchain::Idle => 3,
            Callchain::Unknown(byte) => byte,
        }
    }
}

impl fmt::Display for Callchain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Callchain::Leaf => f.write_str("leaf"),
            Callchain::Fp => f.write_str("fp"),
            Callchain::Dwarf => f.write_str("dwarf"),
            Callchain::Idle => f.write_str("idle"),
            Callchain::Unknown(byte) => write!(f, "unknown({byte})"),
        }
    }
}

/// One decoded sample, whatever version it came from. Fields a version does not carry are
/// `None`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QperfRecord {
    /// Host monotonic ns since the plugin was installed; `None` for v1.
    pub elapsed_ns: Option<u64>,
    /// The sampled (canonical) leaf address. v1/v2 have no field for it, so it is
    /// `trace[0]`, or 0 for an empty trace.
    pub pc: u64,
    /// Guest SP at sample time; v3 writes 0 for "not read", which decodes as `None`.
    pub sp: Option<u64>,
    /// Guest frame pointer; 0 in v3 means absent, as for `sp`.
    pub fp: Option<u64>,
    /// QEMU vCPU index (v3 only; 0 is a real vCPU, so it stays `Some(0)`).
    pub cpu: Option<u32>,
    /// v3 only.
    pub callchain: Option<Callchain>,
    /// Leaf first: `[leaf, return_1, return_2, …]`.
    pub trace: Vec<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_trace_len_per_version_matches_the_claim_limit() {
        assert_eq!(FormatVersion::V3.max_trace_len(), 32762);
        assert_eq!(FormatVersion::V2.max_trace_len(), 32766);
        assert_eq!(FormatVersion::V1.max_trace_len(), 32767);
    }

    #[test]
    fn max_record_wire_bytes_is_the_largest_over_versions() {
        assert_eq!(FormatVersion::V3.max_record_wire_bytes(), 294_909);
        assert_eq!(FormatVersion::V2.max_record_wire_bytes(), 294_912);
        assert_eq!(FormatVersion::V1.max_record_wire_bytes(), 294_912);
        let largest = FormatVersion::DETECTION_ORDER
            .iter()
            .map(|v| v.max_record_wire_bytes())
            .max();
        assert_eq!(largest, Some(MAX_RECORD_WIRE_BYTES));
    }

    #[test]
    fn version_display_and_numbers_round_trip() {
        for (version, n, text) in [
            (FormatVersion::V1, 1, "v1"),
            (FormatVersion::V2, 2, "v2"),
            (FormatVersion::V3, 3, "v3"),
        ] {
            assert_eq!(version.as_u8(), n);
            assert_eq!(FormatVersion::from_u8(n), Some(version));
            assert_eq!(version.to_string(), text);
        }
        assert_eq!(FormatVersion::from_u8(0), None);
        assert_eq!(FormatVersion::from_u8(4), None);
    }

    #[test]
    fn callchain_maps_bytes_and_keeps_unknown_values() {
        assert_eq!(Callchain::from_byte(0), Callchain::Leaf);
        assert_eq!(Callchain::from_byte(1), Callchain::Fp);
        assert_eq!(Callchain::from_byte(7), Callchain::Unknown(7));
        for byte in [0u8, 1, 2, 255] {
            assert_eq!(Callchain::from_byte(byte).as_byte(), byte);
        }
        assert_eq!(Callchain::Unknown(9).to_string(), "unknown(9)");
        assert_eq!(Callchain::Fp.to_string(), "fp");
    }
}
