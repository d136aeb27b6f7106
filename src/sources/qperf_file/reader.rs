//! Whole-file reading: version detection (spec §1.6) and a streaming record reader.
//!
//! The reader holds at most one partial record plus one read chunk, however big the file
//! is: a buffer of [`MAX_RECORD_WIRE_BYTES`](super::MAX_RECORD_WIRE_BYTES) always holds a
//! whole record or proves it corrupt. Decode failures are not errors here: like the
//! reference, reading stops at the first bad record and keeps what came before, and the
//! [`ReadReport`] says exactly how it ended. Only I/O failures are `Err`.
//!
//! Every read ends, whatever the input: a run of zero bytes where a record starts is a hole
//! ([`ZERO_RUN_BYTES`](super::ZERO_RUN_BYTES)), not endless empty records, and the rest
//! after a bad record is a regular file's size (not read) or at most
//! [`MAX_DRAINED_BYTES`](super::MAX_DRAINED_BYTES) of a stream.

use std::io::{self, Read};
use std::path::Path;

use crate::input::InputFile;

use super::error::{CorruptKind, DecodeError};
use super::record::decode_record;
use super::report::{ReadEnd, ReadReport};
use super::{FormatVersion, MAX_DRAINED_BYTES, QperfRecord, ZERO_RUN_BYTES};

/// Bytes asked of the input per read.
const CHUNK_BYTES: usize = 64 * 1024;

/// What the first bytes of a file say about its version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Detection {
    /// The first version in [`FormatVersion::DETECTION_ORDER`] whose first record decodes.
    Found(FormatVersion),
    /// A version tried earlier is still a valid prefix: more bytes decide it.
    NeedMore { needed_at_least: usize },
    /// No bytes, at the end of the input.
    Empty,
    /// The first record fails as every version.
    Undetectable {
        v3: DecodeError,
        v2: DecodeError,
        v1: DecodeError,
    },
}

/// Decide the version from the start of a file, exactly as the reference: v3, then v2,
/// then v1, and the first whose first record decodes wins.
///
/// With `at_end` false (a file still being written) an incomplete first record stops the
/// search instead of falling back, because the missing bytes may still make it valid; on
/// the finished file the outcome is then the same as the reference's.
pub fn detect_version(bytes: &[u8], at_end: bool) -> Detection {
    if bytes.is_empty() && at_end {
        return Detection::Empty;
    }
    let mut failures = [DecodeError::Incomplete { needed_at_least: 1 }; 3];
    for (failure, version) in failures.iter_mut().zip(FormatVersion::DETECTION_ORDER) {
        match decode_record(bytes, version) {
            Ok(_) => return Detection::Found(version),
            Err(DecodeError::Incomplete { needed_at_least }) if !at_end => {
                return Detection::NeedMore { needed_at_least };
            }
            Err(error) => *failure = error,
        }
    }
    let [v3, v2, v1] = failures;
    Detection::Undetectable { v3, v2, v1 }
}

/// Streams the records of a `qperf.bin` from any reader, in bounded memory.
///
/// ```no_run
/// # use perfscope::sources::qperf_file::QperfReader;
/// let mut reader = QperfReader::open("qperf.bin")?;
/// while let Some(record) = reader.next_record()? {
///     println!("{:#x}", record.pc);
/// }
/// eprintln!("{}", reader.finish());
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct QperfReader<R: Read> {
    input: R,
    /// Zeroed once as it grows; `buf[pos..filled]` are the bytes not yet decoded. Reading
    /// into the zeroed spare space avoids clearing a chunk on every (possibly short) read.
    buf: Vec<u8>,
    pos: usize,
    filled: usize,
    /// Input offset of `buf[0]`.
    buf_offset: u64,
    bytes_read: u64,
    input_done: bool,
    version: Option<FormatVersion>,
    records: u64,
    end: Option<ReadEnd>,
    /// The input's whole length, when it is a regular file: the rest after a bad record is
    /// then known without reading it.
    input_len: Option<u64>,
    rest_unread: bool,
}

impl QperfReader<InputFile> {
    /// Open `path` (once: a pipe is read as it comes) and read it within the caps.
    pub fn open(path: impl AsRef<Path>) -> io::Result<Self> {
        let input = InputFile::open(path.as_ref())?;
        Ok(QperfReader::of_input(input))
    }

    /// Read an opened input from where it is (bytes only peeked at are read again).
    pub fn of_input(input: InputFile) -> Self {
        let len = input.remaining_len();
        QperfReader::new(input).with_input_len(len)
    }
}

impl<R: Read> QperfReader<R> {
    pub fn new(input: R) -> Self {
        Self::resume(input, 0, None, 0)
    }

    /// Continue a read that someone else started: `input` yields the bytes from file
    /// offset `offset` on, and `records` records came before them.
    pub(super) fn resume(input: R, offset: u64, version: Option<FormatVersion>, records: u64) -> Self {
        QperfReader {
            input,
            buf: Vec::new(),
            pos: 0,
            filled: 0,
            buf_offset: offset,
            bytes_read: offset,
            input_done: false,
            version,
            records,
            end: None,
            input_len: None,
            rest_unread: false,
        }
    }

    /// The input holds `len` bytes from where this reader starts (a regular file), so the
    /// rest after a bad record is counted without reading it.
    pub fn with_input_len(mut self, len: Option<u64>) -> Self {
        self.input_len = len.map(|len| len + self.bytes_read);
        self
    }

    /// The detected version; known once the first record has been read.
    pub fn version(&self) -> Option<FormatVersion> {
        self.version
    }

    /// File offset of the next undecoded byte.
    fn offset(&self) -> u64 {
        self.buf_offset + self.pos as u64
    }

    /// The next record, or `None` once reading has ended (see [`Self::finish`] for how).
    /// An I/O error ends the read too; it is returned once.
    pub fn next_record(&mut self) -> io::Result<Option<QperfRecord>> {
        loop {
            if self.end.is_some() {
                return Ok(None);
            }
            let version = match self.version {
                Some(version) => version,
                None => {
                    self.detect()?;
                    continue;
                }
            };
            if let Some(bytes) = self.zero_run()? {
                let offset = self.offset();
                let bytes_lost = self.discard_rest()?;
                self.end = Some(ReadEnd::Corrupt {
                    offset,
                    bytes_lost,
                    reason: CorruptKind::ZeroRun { bytes },
                });
                continue;
            }
            match decode_record(&self.buf[self.pos..self.filled], version) {
                Ok((record, used)) => {
                    self.pos += used;
                    self.records += 1;
                    return Ok(Some(record));
                }
                Err(DecodeError::Incomplete { needed_at_least }) if !self.input_done => {
                    self.fill(needed_at_least)?;
                }
                Err(DecodeError::Incomplete { .. }) => {
                    let bytes_lost = (self.filled - self.pos) as u64;
                    self.end = Some(if bytes_lost == 0 {
                        ReadEnd::CleanEof
                    } else {
                        ReadEnd::Truncated {
                            offset: self.offset(),
                            bytes_lost,
                        }
                    });
                }
                Err(DecodeError::Corrupt(reason)) => {
                    let offset = self.offset();
                    let bytes_lost = self.discard_rest()?;
                    self.end = Some(ReadEnd::Corrupt {
                        offset,
                        bytes_lost,
                        reason,
                    });
                }
            }
        }
    }

    /// Read to the end (decoding and counting records nobody asked for yet) so the report
    /// describes the whole input, then report.
    pub fn finish(mut self) -> ReadReport {
        // An I/O error is recorded in `end`; nothing else to do with it here.
        while let Ok(Some(_)) = self.next_record() {}
        ReadReport {
            version: self.version,
            records: self.records,
            bytes_read: self.bytes_read,
            end: self.end.unwrap_or(ReadEnd::CleanEof),
            rest_unread: self.rest_unread,
        }
    }

    /// The zero bytes at the next record's start when they make a hole (at least
    /// [`ZERO_RUN_BYTES`]). Looked for only where a record starts with a zero byte, which a
    /// plugin record seldom does (a time of 0) and never 4096 times in a row.
    fn zero_run(&mut self) -> io::Result<Option<usize>> {
        if self.buf.get(self.pos) != Some(&0) || self.pos >= self.filled {
            return Ok(None);
        }
        let buffered = self.filled - self.pos;
        if buffered < ZERO_RUN_BYTES && !self.input_done {
            self.fill(ZERO_RUN_BYTES - buffered)?;
        }
        let zeros = self.buf[self.pos..self.filled]
            .iter()
            .take(ZERO_RUN_BYTES)
            .take_while(|&&b| b == 0)
            .count();
        Ok((zeros == ZERO_RUN_BYTES).then_some(zeros))
    }

    /// What was read so far, without reading on: a read stopped before its end (an endless
    /// pipe interrupted by a signal).
    pub fn so_far(&self) -> ReadReport {
        ReadReport {
            version: self.version,
            records: self.records,
            bytes_read: self.bytes_read,
            end: self.end.clone().unwrap_or(ReadEnd::CleanEof),
            rest_unread: self.rest_unread,
        }
    }

    fn detect(&mut self) -> io::Result<()> {
        match detect_version(&self.buf[self.pos..self.filled], self.input_done) {
            Detection::Found(version) => self.version = Some(version),
            Detection::NeedMore { needed_at_least } => self.fill(needed_at_least)?,
            Detection::Empty => self.end = Some(ReadEnd::Empty),
            Detection::Undetectable { v3, v2, v1 } => {
                self.discard_rest()?;
                self.end = Some(ReadEnd::Undetectable { v3, v2, v1 });
            }
        }
        Ok(())
    }

    /// Read until at least `needed` more bytes are buffered or the input ends.
    fn fill(&mut self, needed: usize) -> io::Result<()> {
        if self.pos > 0 {
            self.buf.copy_within(self.pos..self.filled, 0);
            self.filled -= self.pos;
            self.buf_offset += self.pos as u64;
            self.pos = 0;
        }
        let target = self.filled + needed.max(1);
        // The partial record plus one chunk: bounded by the largest record, not the file.
        let room = target.max(self.filled + CHUNK_BYTES);
        if self.buf.len() < room {
            self.buf.resize(room, 0);
        }
        while self.filled < target {
            match self.input.read(&mut self.buf[self.filled..]) {
                Ok(0) => {
                    self.input_done = true;
                    break;
                }
                Ok(n) => {
                    self.filled += n;
                    self.bytes_read += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.stop_on(e)),
            }
        }
        Ok(())
    }

    /// After a fatal record, count (without keeping) the rest of the input so the report
    /// can say how many bytes were lost: a regular file's from its length, a stream's by
    /// reading it, up to [`MAX_DRAINED_BYTES`].
    fn discard_rest(&mut self) -> io::Result<u64> {
        let buffered = (self.filled - self.pos) as u64;
        let rest = match self.input_len.filter(|&len| len >= self.bytes_read) {
            Some(len) => len - self.bytes_read,
            None => {
                let mut limited = (&mut self.input).take(MAX_DRAINED_BYTES + 1);
                match io::copy(&mut limited, &mut io::sink()) {
                    Ok(drained) if drained > MAX_DRAINED_BYTES => {
                        self.rest_unread = true;
                        MAX_DRAINED_BYTES
                    }
                    Ok(drained) => drained,
                    Err(e) => return Err(self.stop_on(e)),
                }
            }
        };
        self.bytes_read += rest;
        self.input_done = true;
        self.buf_offset += self.pos as u64;
        self.buf = Vec::new();
        self.pos = 0;
        self.filled = 0;
        Ok(buffered + rest)
    }

    fn stop_on(&mut self, error: io::Error) -> io::Error {
        self.end = Some(ReadEnd::Io {
            offset: self.offset(),
            message: error.to_string(),
        });
        error
    }
}

impl<R: Read> Iterator for QperfReader<R> {
    type Item = io::Result<QperfRecord>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_record().transpose()
    }
}

/// Read a whole file into memory. Decode problems are in the report, not the `Err`.
pub fn read_file(path: impl AsRef<Path>) -> io::Result<(Vec<QperfRecord>, ReadReport)> {
    let mut records = Vec::new();
    let report = read_file_with(path, |record| records.push(record))?;
    Ok((records, report))
}

/// Stream a file through `on_record`, for files too big to hold as records.
pub fn read_file_with(
    path: impl AsRef<Path>,
    mut on_record: impl FnMut(QperfRecord),
) -> io::Result<ReadReport> {
    let mut reader = QperfReader::open(path)?;
    while let Some(record) = reader.next_record()? {
        on_record(record);
    }
    Ok(reader.finish())
}

#[cfg(test)]
#[path = "reader_tests.rs"]
mod tests;
