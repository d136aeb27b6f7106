//! Lines no longer than a cap, from at most a cap of bytes: a file without a newline, or
//! one that never ends, stops at the cap with an error naming the file, the line and the
//! cap, never after holding it.

use std::io::{BufRead, Read};
use std::path::PathBuf;

use super::error::InputError;
use super::kind::{InputKind, Limits};

/// Reads `input` line by line within `kind`'s caps.
pub struct BoundedLines<R> {
    input: R,
    path: PathBuf,
    kind: InputKind,
    limits: Limits,
    /// The current line; it grows to the longest line read, at most the cap.
    line: Vec<u8>,
    line_number: u64,
    bytes_read: u64,
}

impl<R: BufRead> BoundedLines<R> {
    /// `path` names the input in errors.
    pub fn new(input: R, path: impl Into<PathBuf>, kind: InputKind) -> Self {
        Self::with_limits(input, path, kind, kind.limits())
    }

    /// With caps of the caller's (tests, and a reader that streams past the usual size).
    pub fn with_limits(input: R, path: impl Into<PathBuf>, kind: InputKind, limits: Limits) -> Self {
        Self {
            input,
            path: path.into(),
            kind,
            limits,
            line: Vec::new(),
            line_number: 0,
            bytes_read: 0,
        }
    }

    /// The next line with its `\n` (the last line of an input may have none), or `None` at
    /// the end of the input.
    pub fn next_line(&mut self) -> Result<Option<&[u8]>, InputError> {
        self.line.clear();
        // One byte past each cap is read to tell "at the cap" from "past it".
        let mut want = self.limits.max_line_bytes as u64 + 1;
        if let Some(max) = self.limits.max_bytes {
            want = want.min((max + 1).saturating_sub(self.bytes_read));
        }
        let n = (&mut self.input)
            .take(want)
            .read_until(b'\n', &mut self.line)
            .map_err(|cause| InputError::Read {
                path: self.path.clone(),
                cause,
            })?;
        if n == 0 {
            return Ok(None);
        }
        self.line_number += 1;
        self.bytes_read += n as u64;
        if let Some(cap) = self.limits.max_bytes.filter(|&cap| self.bytes_read > cap) {
            return Err(InputError::TooLarge {
                path: self.path.clone(),
                kind: self.kind,
                cap,
            });
        }
        let text_len = self.line.len() - usize::from(self.line.last() == Some(&b'\n'));
        if text_len > self.limits.max_line_bytes {
            return Err(InputError::LineTooLong {
                path: self.path.clone(),
                kind: self.kind,
                line_number: self.line_number,
                cap: self.limits.max_line_bytes,
            });
        }
        Ok(Some(&self.line))
    }

    /// The number of the line last returned (1-based).
    pub fn line_number(&self) -> u64 {
        self.line_number
    }

    pub fn bytes_read(&self) -> u64 {
        self.bytes_read
    }

    pub fn path(&self) -> &std::path::Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(max_bytes: Option<u64>, max_line_bytes: usize) -> Limits {
        Limits {
            max_bytes,
            max_line_bytes,
        }
    }

    fn lines(text: &[u8], l: Limits) -> (Vec<Vec<u8>>, Option<InputError>) {
        let mut r = BoundedLines::with_limits(text, "x.txt", InputKind::Config, l);
        let mut out = Vec::new();
        loop {
            match r.next_line() {
                Ok(Some(line)) => out.push(line.to_vec()),
                Ok(None) => return (out, None),
                Err(e) => return (out, Some(e)),
            }
        }
    }

    #[test]
    fn lines_up_to_the_cap_pass_and_the_last_may_lack_a_newline() {
        let (got, e) = lines(b"abcd\nef\r\n\nxyz", limits(None, 4));
        assert!(e.is_none(), "{e:?}");
        assert_eq!(got, [&b"abcd\n"[..], b"ef\r\n", b"\n", b"xyz"]);
    }

    #[test]
    fn a_line_past_the_cap_names_its_number_and_the_cap() {
        let (got, e) = lines(b"ok\nabcde\nmore\n", limits(None, 4));
        assert_eq!(got, [b"ok\n"]);
        let e = e.unwrap();
        assert!(
            matches!(
                e,
                InputError::LineTooLong {
                    line_number: 2,
                    cap: 4,
                    ..
                }
            ),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            "line 2 of x.txt is longer than 4 bytes (the longest line perfscope reads in a \
             TOML file): is it a TOML file?"
        );
        // Without a newline at all: the cap is hit after cap + 1 bytes, whatever follows.
        let endless = std::io::repeat(0).take(1 << 40);
        let mut r = BoundedLines::with_limits(
            std::io::BufReader::new(endless),
            "/dev/zero",
            InputKind::Folded,
            limits(None, 1 << 20),
        );
        assert!(matches!(
            r.next_line(),
            Err(InputError::LineTooLong { line_number: 1, .. })
        ));
        assert_eq!(r.bytes_read(), (1 << 20) + 1);
    }

    #[test]
    fn an_input_past_the_size_cap_is_refused_after_cap_plus_one_bytes() {
        let (got, e) = lines(b"ab\ncd\n", limits(Some(6), 10));
        assert!(e.is_none());
        assert_eq!(got.len(), 2);
        let (got, e) = lines(b"ab\ncd\nx", limits(Some(6), 10));
        assert_eq!(got.len(), 2);
        assert!(matches!(e, Some(InputError::TooLarge { cap: 6, .. })), "{e:?}");
        // `yes`: endless short lines end at the size cap.
        let yes = std::io::BufReader::new(YesReader);
        let mut r = BoundedLines::with_limits(yes, "-", InputKind::ConsoleLog, limits(Some(1000), 10));
        let mut n = 0;
        let e = loop {
            match r.next_line() {
                Ok(Some(_)) => n += 1,
                Ok(None) => panic!("yes ended"),
                Err(e) => break e,
            }
        };
        assert_eq!(n, 500);
        assert!(e.to_string().contains("larger than 1000 bytes"), "{e}");
    }

    /// `yes`'s output, forever.
    struct YesReader;

    impl std::io::Read for YesReader {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            for pair in buf.chunks_mut(2) {
                pair[0] = b'y';
                if pair.len() == 2 {
                    pair[1] = b'\n';
                }
            }
            Ok(buf.len() - buf.len() % 2)
        }
    }
}
