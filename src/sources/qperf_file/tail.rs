//! Incremental reading of a `qperf.bin` that QEMU is still writing.
//!
//! The plugin flushes after every record, but a poll can still land inside one; such a
//! partial record is kept and completed by later polls, it is not an error. The version is
//! detected as in [`detect_version`] with "the file may grow", so the tail waits on a v3
//! prefix instead of falling back to v2, and on the finished file agrees with the
//! whole-file reader.
//!
//! Tailing stops for good, and every later poll repeats why, on a corrupt record, an
//! undetectable first record, or a file that shrank or was replaced (QEMU restarted):
//! resyncing inside a stream with no record boundaries would guess, and a guess gives
//! plausible but wrong samples.

use std::fs::{File, Metadata};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use super::error::DecodeError;
use super::reader::{Detection, QperfReader, detect_version};
use super::record::decode_record;
use super::report::{ReadEnd, ReadReport};
use super::{FormatVersion, MAX_RECORD_WIRE_BYTES, QperfRecord};

const CHUNK_BYTES: usize = 64 * 1024;
/// Bytes one poll reads at most, so catching up on a large file stays responsive.
const DEFAULT_POLL_BUDGET_BYTES: usize = 8 * 1024 * 1024;

/// What one [`QperfTail::poll`] found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TailBatch {
    /// Complete records appended since the last poll, in file order.
    pub records: Vec<QperfRecord>,
    /// Bytes of an incomplete record waiting for the rest.
    pub pending_bytes: usize,
    /// The poll budget ran out before the end of the file: poll again without waiting.
    pub more: bool,
    /// Set when tailing has ended for good; `records` of this batch are still valid.
    pub end: Option<ReadEnd>,
}

/// Follows a growing `qperf.bin` from the start.
pub struct QperfTail {
    path: PathBuf,
    file: File,
    /// (device, inode) of the opened file, to notice another file taking its path.
    identity: Option<(u64, u64)>,
    /// Bytes read from the file so far.
    read_offset: u64,
    /// Bytes after the last complete record, at file offset `pending_offset`.
    pending: Vec<u8>,
    pending_offset: u64,
    version: Option<FormatVersion>,
    records: u64,
    end: Option<ReadEnd>,
    poll_budget_bytes: usize,
}

impl QperfTail {
    /// Fails with `NotFound` while QEMU has not created the file yet; retry then.
    pub fn open(path: impl AsRef<Path>) -> io::Result<Self> {
        let path = path.as_ref().to_path_buf();
        let file = File::open(&path)?;
        let identity = identity(&file.metadata()?);
        Ok(QperfTail {
            path,
            file,
            identity,
            read_offset: 0,
            pending: Vec::new(),
            pending_offset: 0,
            version: None,
            records: 0,
            end: None,
            poll_budget_bytes: DEFAULT_POLL_BUDGET_BYTES,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Known once the first complete record has arrived.
    pub fn version(&self) -> Option<FormatVersion> {
        self.version
    }

    /// Records delivered so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    pub fn bytes_read(&self) -> u64 {
        self.read_offset
    }

    /// Bytes one poll may read (at least 1).
    pub fn set_poll_budget(&mut self, bytes: usize) {
        self.poll_budget_bytes = bytes.max(1);
    }

    /// Read what was appended since the last poll and return every complete record.
    ///
    /// An I/O error is returned only if no record was decoded in this poll; otherwise the
    /// records are returned and the error, if it persists, comes with the next poll.
    pub fn poll(&mut self) -> io::Result<TailBatch> {
        let mut records = Vec::new();
        let mut more = false;
        if self.end.is_none() {
            let len = self.check_file()?;
            if self.end.is_none() {
                more = self.read_appended(len, &mut records)?;
            }
        }
        Ok(TailBatch {
            records,
            pending_bytes: self.pending.len(),
            more,
            end: self.end.clone(),
        })
    }

    /// Treat the current end of the file as final: read the rest, and report a partial
    /// last record as truncated, exactly as [`QperfReader`] would on the whole file. Also
    /// returns the records not yet delivered.
    pub fn finish(mut self) -> io::Result<(Vec<QperfRecord>, ReadReport)> {
        if self.end.is_none() {
            self.check_file()?;
        }
        if let Some(end) = self.end.take() {
            let report = ReadReport {
                version: self.version,
                records: self.records,
                bytes_read: self.read_offset,
                end,
                rest_unread: false,
            };
            return Ok((Vec::new(), report));
        }
        let input = io::Cursor::new(self.pending).chain(self.file);
        let mut reader = QperfReader::resume(input, self.pending_offset, self.version, self.records);
        let mut records = Vec::new();
        while let Some(record) = reader.next_record()? {
            records.push(record);
        }
        Ok((records, reader.finish()))
    }

    /// Notice a file that shrank or was replaced; returns its current length.
    fn check_file(&mut self) -> io::Result<u64> {
        let len = self.file.metadata()?.len();
        if len < self.read_offset {
            self.end = Some(ReadEnd::Shrunk {
                offset: self.read_offset,
                len,
            });
        } else if let (Some(ours), Ok(now)) = (self.identity, std::fs::metadata(&self.path)) {
            // A path that cannot be stat'ed may be mid-replacement; the next poll looks again.
            if identity(&now).is_some_and(|theirs| theirs != ours) {
                self.end = Some(ReadEnd::Replaced {
                    offset: self.read_offset,
                });
            }
        }
        Ok(len)
    }

    /// Returns whether the budget ran out before `len`.
    fn read_appended(&mut self, len: u64, records: &mut Vec<QperfRecord>) -> io::Result<bool> {
        let mut budget = self.poll_budget_bytes;
        while budget > 0 {
            let old_len = self.pending.len();
            self.pending.resize(old_len + budget.min(CHUNK_BYTES), 0);
            let result = self.file.read(&mut self.pending[old_len..]);
            self.pending.truncate(old_len + *result.as_ref().unwrap_or(&0));
            match result {
                Ok(0) => return Ok(false),
                Ok(n) => {
                    self.read_offset += n as u64;
                    budget -= n;
                    self.decode_pending(records);
                    if self.end.is_some() {
                        return Ok(false);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if records.is_empty() => return Err(e),
                Err(_) => return Ok(false),
            }
        }
        Ok(self.read_offset < len)
    }

    fn decode_pending(&mut self, records: &mut Vec<QperfRecord>) {
        let before = records.len();
        let (used, end) = decode_available(&self.pending, &mut self.version, self.pending_offset, records);
        self.records += (records.len() - before) as u64;
        if end.is_some() {
            self.end = end;
        }
        self.pending.drain(..used);
        self.pending_offset += used as u64;
        // A buffer this long holds a whole record or proves it corrupt (tested in record.rs).
        debug_assert!(self.end.is_some() || self.pending.len() < MAX_RECORD_WIRE_BYTES);
    }
}

/// Decode every complete record at the front of `bytes` (which start at stream offset
/// `offset`), detecting the version first if it is not known. Returns the bytes used and,
/// when decoding cannot go on, why (corrupt record, undetectable format). An incomplete
/// record at the end is not an error: it waits for more bytes.
pub(crate) fn decode_available(
    bytes: &[u8],
    version: &mut Option<FormatVersion>,
    offset: u64,
    records: &mut Vec<QperfRecord>,
) -> (usize, Option<ReadEnd>) {
    let mut used = 0;
    loop {
        let rest = &bytes[used..];
        let v = match *version {
            Some(v) => v,
            None => match detect_version(rest, false) {
                Detection::Found(v) => *version.insert(v),
                Detection::NeedMore { .. } | Detection::Empty => return (used, None),
                Detection::Undetectable { v3, v2, v1 } => {
                    return (used, Some(ReadEnd::Undetectable { v3, v2, v1 }));
                }
            },
        };
        match decode_record(rest, v) {
            Ok((record, n)) => {
                used += n;
                records.push(record);
            }
            Err(DecodeError::Incomplete { .. }) => return (used, None),
            Err(DecodeError::Corrupt(reason)) => {
                let end = ReadEnd::Corrupt {
                    offset: offset + used as u64,
                    bytes_lost: rest.len() as u64,
                    reason,
                };
                return (used, Some(end));
            }
        }
    }
}

#[cfg(unix)]
fn identity(metadata: &Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    Some((metadata.dev(), metadata.ino()))
}

#[cfg(not(unix))]
fn identity(_metadata: &Metadata) -> Option<(u64, u64)> {
    None
}

#[cfg(test)]
#[path = "tail_tests.rs"]
mod tests;
