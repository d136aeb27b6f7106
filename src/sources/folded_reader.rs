//! A folded file read line by line, in memory bounded by its longest line: a million-line
//! file streams through instead of being held as text and as parsed lines at once. Lines
//! come through the bounded reader ([`crate::input::BoundedLines`]), so a line past the
//! folded cap (16 MiB) is an error naming it, and a line of more than
//! [`MAX_FRAMES`](super::folded::MAX_FRAMES) frames is skipped and counted before its
//! frames are made.
//!
//! The reader keeps the tallies the end of a read reports (stacks, samples, frames, the
//! skipped lines) and refuses a file whose counts add up past [`MAX_TOTAL_COUNT`], naming
//! the line: a total that wraps around reads as "0 samples", and pprof stores values as
//! signed 64-bit integers.

use std::io::BufRead;
use std::path::PathBuf;

use crate::input::{BoundedLines, InputError, InputKind};

use super::folded::{FoldedLine, FoldedParse, SkippedLine, parse_line};

/// The largest total sample count a folded file may have: pprof's signed 64-bit values.
pub const MAX_TOTAL_COUNT: u64 = i64::MAX as u64;

/// Why a folded file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FoldedReadError {
    #[error(transparent)]
    Input(#[from] InputError),
    #[error(
        "{}: line {line_number}: the total sample count passes {MAX_TOTAL_COUNT} (2^63 - 1, the \
         most pprof can hold): check the counts on that line, or split the file",
        path.display()
    )]
    TotalTooLarge { path: PathBuf, line_number: usize },
}

/// Streams the stacks of a folded file.
pub struct FoldedReader<R: BufRead> {
    lines: BoundedLines<R>,
    /// Good lines so far.
    pub stacks: u64,
    /// Sum of their counts (at most [`MAX_TOTAL_COUNT`]).
    pub total_count: u64,
    /// Sum of frames × count (saturating: only a statistic).
    pub total_frames: u64,
    /// The first skipped lines and how many were skipped in all.
    pub skipped: FoldedParse,
}

impl<R: BufRead> FoldedReader<R> {
    /// `path` names the file in errors.
    pub fn new(input: R, path: impl Into<PathBuf>) -> Self {
        Self {
            lines: BoundedLines::new(input, path, InputKind::Folded),
            stacks: 0,
            total_count: 0,
            total_frames: 0,
            skipped: FoldedParse::default(),
        }
    }

    /// The next good line, skipping (and counting) blank, comment and malformed ones.
    /// Invalid UTF-8 is replaced rather than refused, so one bad byte loses one name.
    pub fn next_line(&mut self) -> Result<Option<FoldedLine>, FoldedReadError> {
        loop {
            // The number of the line about to be read (the reader counts it when it does).
            let line_number = self.lines.line_number() as usize + 1;
            let Some(bytes) = self.lines.next_line()? else {
                return Ok(None);
            };
            let text = String::from_utf8_lossy(bytes);
            match parse_line(&text) {
                Ok(None) => {}
                Ok(Some(line)) => {
                    self.total_count = self
                        .total_count
                        .checked_add(line.count)
                        .filter(|&t| t <= MAX_TOTAL_COUNT)
                        .ok_or_else(|| FoldedReadError::TotalTooLarge {
                            path: self.lines.path().to_path_buf(),
                            line_number,
                        })?;
                    self.stacks += 1;
                    self.total_frames = self
                        .total_frames
                        .saturating_add((line.frames.len() as u64).saturating_mul(line.count));
                    return Ok(Some(line));
                }
                Err(error) => {
                    let s = &mut self.skipped;
                    s.skipped_count += 1;
                    if s.skipped.len() < FoldedParse::MAX_REPORTED {
                        s.skipped.push(SkippedLine { line_number, error });
                    }
                }
            }
        }
    }

    /// A one-line summary of what was skipped, or `None` when nothing was.
    pub fn skipped_summary(&self) -> Option<String> {
        self.skipped.skipped_summary()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(text: &[u8]) -> (FoldedReader<&[u8]>, Result<Vec<FoldedLine>, FoldedReadError>) {
        let mut r = FoldedReader::new(text, "x.folded");
        let mut lines = Vec::new();
        let result = loop {
            match r.next_line() {
                Ok(Some(l)) => lines.push(l),
                Ok(None) => break Ok(lines),
                Err(e) => break Err(e),
            }
        };
        (r, result)
    }

    #[test]
    fn reads_the_same_lines_as_parse_and_tallies_them() {
        let text = b"main;work;leaf 12\n\n# comment\nno-count\nmain;idle 3\r\nmain;b\xff 1";
        let (r, lines) = read_all(text);
        let lines = lines.unwrap();
        let parsed = crate::sources::folded::parse(&String::from_utf8_lossy(text));
        assert_eq!(lines, parsed.lines);
        assert_eq!((r.stacks, r.total_count, r.total_frames), (3, 16, 36 + 6 + 2));
        assert_eq!(r.skipped.skipped_count, 1);
        assert!(r.skipped_summary().unwrap().contains("line 4"));
    }

    #[test]
    fn a_total_past_the_limit_names_its_line() {
        let (_, e) = read_all(b"a;b 18446744073709551615\n");
        assert!(matches!(
            e,
            Err(FoldedReadError::TotalTooLarge { line_number: 1, .. })
        ));
        let (_, e) = read_all(b"a 9223372036854775807\n\nb 1\n");
        let e = e.unwrap_err();
        assert!(e.to_string().starts_with("x.folded: line 3: "), "{e}");
        let (r, ok) = read_all(b"a 9223372036854775806\nb 1\n");
        assert_eq!(ok.unwrap().len(), 2);
        assert_eq!(r.total_count, MAX_TOTAL_COUNT);
    }
}
