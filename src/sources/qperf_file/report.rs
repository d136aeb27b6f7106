//! How a read of a `qperf.bin` ended, in words a user can act on.
//!
//! The reference analyzer ends every read with the same "UnexpectedEof" text, whether the
//! file was perfect or lost its last record (spec §7 item 1). Here each ending is its own
//! variant with the byte offset and the bytes lost.

use std::fmt;

use super::FormatVersion;
use super::error::{CorruptKind, DecodeError};

/// Why reading stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadEnd {
    /// The last record ended exactly at the end of the file.
    CleanEof,
    /// The file has no bytes at all.
    Empty,
    /// The file ends inside a record, typically QEMU killed mid-write.
    Truncated {
        /// File offset where the partial record starts.
        offset: u64,
        bytes_lost: u64,
    },
    /// A record that can never be valid; the records before it are kept.
    Corrupt {
        /// File offset where the corrupt record starts.
        offset: u64,
        /// Bytes from `offset` to the end of the input (for a tail: seen so far).
        bytes_lost: u64,
        reason: CorruptKind,
    },
    /// The first record fails as every version (spec §1.6 item 2).
    Undetectable {
        v3: DecodeError,
        v2: DecodeError,
        v1: DecodeError,
    },
    /// Reading the input failed ([`QperfReader`](super::QperfReader) only).
    Io { offset: u64, message: String },
    /// The file became shorter than what was already read: truncated or rewritten
    /// ([`QperfTail`](super::QperfTail) only).
    Shrunk { offset: u64, len: u64 },
    /// Another file now has the path, e.g. QEMU restarted after removing the old one
    /// ([`QperfTail`](super::QperfTail) only, Unix only).
    Replaced { offset: u64 },
}

/// The outcome of reading a whole file: what was kept and how it ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadReport {
    pub version: Option<FormatVersion>,
    /// Records decoded and handed out.
    pub records: u64,
    /// Bytes read from the input, including any lost ones.
    pub bytes_read: u64,
    pub end: ReadEnd,
    /// After a bad record, the rest of a stream (a pipe, a device: its length unknown) was
    /// counted only up to [`MAX_DRAINED_BYTES`](super::MAX_DRAINED_BYTES) and not read
    /// past it: the bytes lost are a lower bound.
    pub rest_unread: bool,
}

impl ReadReport {
    /// Bytes that did not become records; 0 after a clean end.
    pub fn bytes_lost(&self) -> u64 {
        match &self.end {
            ReadEnd::Truncated { bytes_lost, .. } | ReadEnd::Corrupt { bytes_lost, .. } => *bytes_lost,
            ReadEnd::Undetectable { .. } => self.bytes_read,
            ReadEnd::CleanEof | ReadEnd::Empty => 0,
            ReadEnd::Io { offset, .. } | ReadEnd::Shrunk { offset, .. } | ReadEnd::Replaced { offset } => {
                self.bytes_read.saturating_sub(*offset)
            }
        }
    }
}

impl ReadReport {
    /// `n` bytes, a lower bound when the rest of a stream was not read.
    fn at_least(&self, n: u64) -> String {
        match self.rest_unread {
            true => format!("at least {}", bytes(n)),
            false => bytes(n),
        }
    }

    /// Why a count is a lower bound: the rest of a stream was not read.
    fn stream_limit() -> String {
        format!(
            "a stream, read no further than {} past the bad record",
            bytes(super::MAX_DRAINED_BYTES)
        )
    }

    /// "`n` bytes lost", saying why it is a lower bound when it is one.
    fn lost(&self, n: u64) -> String {
        match self.rest_unread {
            true => format!("{} lost ({})", self.at_least(n), Self::stream_limit()),
            false => format!("{} lost", bytes(n)),
        }
    }
}

impl fmt::Display for ReadReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let size = self.at_least(self.bytes_read);
        match &self.end {
            ReadEnd::Empty => {
                return write!(
                    f,
                    "empty file (0 bytes): no records; did QEMU run with the qperf plugin?"
                );
            }
            ReadEnd::Undetectable { v3, v2, v1 } => {
                let size = match self.rest_unread {
                    true => format!("{size}: {}", Self::stream_limit()),
                    false => size,
                };
                return write!(
                    f,
                    "not a qperf.bin file ({size}): its first record fails as v3 ({v3}), \
                     as v2 ({v2}) and as v1 ({v1}); check that the qperf plugin wrote it"
                );
            }
            _ => {}
        }
        write!(f, "read {} ({size}); ", records(self.records, self.version))?;
        match &self.end {
            ReadEnd::CleanEof => f.write_str("clean end of file"),
            ReadEnd::Truncated { offset, bytes_lost } => write!(
                f,
                "truncated last record at byte {offset}: {} lost",
                bytes(*bytes_lost)
            ),
            ReadEnd::Corrupt {
                offset,
                bytes_lost,
                reason,
            } => write!(
                f,
                "corrupt record at byte {offset} ({reason}): {}",
                self.lost(*bytes_lost)
            ),
            ReadEnd::Io { offset, message } => write!(f, "I/O error at byte {offset}: {message}"),
            ReadEnd::Shrunk { offset, len } => write!(
                f,
                "the file shrank to {} after {} had been read; it was truncated or rewritten, \
                 start a new read",
                bytes(*len),
                bytes(*offset)
            ),
            ReadEnd::Replaced { offset } => write!(
                f,
                "the file was replaced after {} had been read; start a new read",
                bytes(*offset)
            ),
            ReadEnd::Empty | ReadEnd::Undetectable { .. } => Ok(()),
        }
    }
}

/// `35812` → `35 812 bytes`.
fn bytes(n: u64) -> String {
    let plural = if n == 1 { "" } else { "s" };
    format!("{} byte{plural}", group_thousands(n))
}

/// `1234` → `1234 v3 records`: ungrouped, as in the analyzer's own message.
fn records(n: u64, version: Option<FormatVersion>) -> String {
    let plural = if n == 1 { "" } else { "s" };
    match version {
        Some(version) => format!("{n} {version} record{plural}"),
        None => format!("{n} record{plural}"),
    }
}

/// `35812` → `35 812`: sizes read better grouped. Offsets stay ungrouped so they can be
/// pasted into `xxd -s` or `dd skip=`.
fn group_thousands(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(digit);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::qperf_file::Field;

    fn report(records: u64, bytes_read: u64, end: ReadEnd) -> ReadReport {
        ReadReport {
            version: Some(FormatVersion::V3),
            records,
            bytes_read,
            end,
            rest_unread: false,
        }
    }

    #[test]
    fn thousands_are_grouped_with_spaces() {
        assert_eq!(group_thousands(0), "0");
        assert_eq!(group_thousands(999), "999");
        assert_eq!(group_thousands(1000), "1 000");
        assert_eq!(group_thousands(35_812), "35 812");
        assert_eq!(group_thousands(1_234_567), "1 234 567");
        assert_eq!(group_thousands(u64::MAX), "18 446 744 073 709 551 615");
    }

    #[test]
    fn clean_and_truncated_endings_read_precisely() {
        let clean = report(1234, 35_812, ReadEnd::CleanEof);
        assert_eq!(
            clean.to_string(),
            "read 1234 v3 records (35 812 bytes); clean end of file"
        );
        assert_eq!(clean.bytes_lost(), 0);
        let truncated = report(
            1234,
            35_812,
            ReadEnd::Truncated {
                offset: 35_800,
                bytes_lost: 12,
            },
        );
        assert_eq!(
            truncated.to_string(),
            "read 1234 v3 records (35 812 bytes); truncated last record at byte 35800: 12 bytes lost"
        );
        assert_eq!(truncated.bytes_lost(), 12);
    }

    #[test]
    fn corrupt_ending_names_the_offset_and_reason() {
        let reason = CorruptKind::ReservedMarker {
            field: Field::ElapsedNs,
            at: 0,
        };
        let corrupt = report(
            2,
            1056,
            ReadEnd::Corrupt {
                offset: 56,
                bytes_lost: 1000,
                reason,
            },
        );
        assert_eq!(
            corrupt.to_string(),
            "read 2 v3 records (1 056 bytes); corrupt record at byte 56 \
             (reserved varint marker 0xFF in elapsed_ns at byte 0 of the record): 1 000 bytes lost"
        );
        assert_eq!(corrupt.bytes_lost(), 1000);
    }

    #[test]
    fn empty_and_undetectable_say_what_to_check() {
        let empty = ReadReport {
            version: None,
            records: 0,
            bytes_read: 0,
            end: ReadEnd::Empty,
            rest_unread: false,
        };
        assert_eq!(
            empty.to_string(),
            "empty file (0 bytes): no records; did QEMU run with the qperf plugin?"
        );
        let reserved = |field| DecodeError::Corrupt(CorruptKind::ReservedMarker { field, at: 0 });
        let end = ReadEnd::Undetectable {
            v3: reserved(Field::ElapsedNs),
            v2: reserved(Field::ElapsedNs),
            v1: DecodeError::Incomplete { needed_at_least: 3 },
        };
        let undetectable = ReadReport {
            version: None,
            records: 0,
            bytes_read: 1,
            end,
            rest_unread: false,
        };
        assert_eq!(
            undetectable.to_string(),
            "not a qperf.bin file (1 byte): its first record fails as v3 (reserved varint marker 0xFF \
             in elapsed_ns at byte 0 of the record), as v2 (reserved varint marker 0xFF in elapsed_ns \
             at byte 0 of the record) and as v1 (the record is incomplete: at least 3 more bytes are \
             needed); check that the qperf plugin wrote it"
        );
        assert_eq!(undetectable.bytes_lost(), 1);
    }

    #[test]
    fn tail_endings_count_the_bytes_after_their_offset() {
        let shrunk = report(3, 84, ReadEnd::Shrunk { offset: 84, len: 0 });
        assert_eq!(
            shrunk.to_string(),
            "read 3 v3 records (84 bytes); the file shrank to 0 bytes after 84 bytes had been read; \
             it was truncated or rewritten, start a new read"
        );
        assert_eq!(shrunk.bytes_lost(), 0);
        let io = ReadReport {
            version: None,
            records: 0,
            bytes_read: 10,
            end: ReadEnd::Io {
                offset: 4,
                message: "boom".into(),
            },
            rest_unread: false,
        };
        assert_eq!(
            io.to_string(),
            "read 0 records (10 bytes); I/O error at byte 4: boom"
        );
        assert_eq!(io.bytes_lost(), 6);
    }
}
