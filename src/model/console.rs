//! The console log: lines a guest printed, with the time each line was completed, for
//! scrollback and search.
//!
//! A guest left running prints without end, and every snapshot carries the log, so lines
//! are kept in sealed chunks shared between copies (a snapshot copies only the chunk being
//! filled) and only the newest [`DEFAULT_KEPT_LINES`] stay: lines are numbered from the
//! first ever printed, and the oldest leave in whole chunks.

use std::collections::VecDeque;
use std::sync::Arc;

/// Lines per sealed chunk.
const CHUNK: usize = 1024;

/// Lines the engine's log keeps for scrollback (about 10 MB of typical console text).
pub const DEFAULT_KEPT_LINES: usize = 128 * CHUNK;

/// The longest line kept whole (the console log's line cap, [`crate::input`]): a guest that
/// prints without a newline gets its text split into lines this long instead of one line
/// that grows without end.
pub const MAX_LINE_BYTES: usize = crate::input::InputKind::ConsoleLog.limits().max_line_bytes;

/// One console line without its line terminator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConsoleLine {
    /// When the line ended, on the sample clock, if the source knows.
    pub time_ns: Option<u64>,
    pub text: String,
}

/// Lines in arrival order plus the unfinished last line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConsoleLog {
    /// Full chunks of [`CHUNK`] lines, oldest first.
    sealed: VecDeque<Arc<[ConsoleLine]>>,
    /// The chunk being filled.
    tail: Vec<ConsoleLine>,
    /// The number of the oldest kept line (lines before it were dropped).
    first: usize,
    /// Lines kept at most (rounded up to whole chunks).
    kept: usize,
    partial: String,
    escape: Escape,
}

impl Default for ConsoleLog {
    fn default() -> Self {
        Self::keeping(DEFAULT_KEPT_LINES)
    }
}

/// Where we are in an ANSI escape sequence (colours, cursor moves) that must not show.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
enum Escape {
    #[default]
    None,
    /// After ESC.
    Start,
    /// Inside `ESC [ … final`.
    Csi,
}

impl ConsoleLog {
    pub fn new() -> Self {
        Self::default()
    }

    /// A log keeping the newest `lines` lines (`usize::MAX`: all, for an artifact).
    pub fn keeping(lines: usize) -> Self {
        Self {
            sealed: VecDeque::new(),
            tail: Vec::new(),
            first: 0,
            kept: lines.max(CHUNK),
            partial: String::new(),
            escape: Escape::None,
        }
    }

    fn push(&mut self, line: ConsoleLine) {
        self.tail.push(line);
        if self.tail.len() == CHUNK {
            self.sealed.push_back(Arc::from(std::mem::take(&mut self.tail)));
            if self.sealed.len().saturating_mul(CHUNK) > self.kept {
                self.sealed.pop_front();
                self.first += CHUNK;
            }
        }
    }

    /// Append raw console output. Bytes are split on `\n`; `\r` and other control bytes
    /// except tab are dropped (a serial console sends `\r\n` and echo noise); invalid
    /// UTF-8 is replaced, not rejected; ANSI escape sequences are removed (also when split
    /// across chunks). Returns how many lines were completed.
    pub fn push_bytes(&mut self, time_ns: Option<u64>, bytes: &[u8]) -> usize {
        let text = String::from_utf8_lossy(bytes);
        let mut completed = 0;
        for ch in text.chars() {
            match self.escape {
                Escape::Start => {
                    self.escape = if ch == '[' { Escape::Csi } else { Escape::None };
                    continue;
                }
                Escape::Csi => {
                    if ('@'..='~').contains(&ch) {
                        self.escape = Escape::None;
                    }
                    continue;
                }
                Escape::None => {}
            }
            match ch {
                '\x1b' => self.escape = Escape::Start,
                '\n' => {
                    let text = std::mem::take(&mut self.partial);
                    self.push(ConsoleLine { time_ns, text });
                    completed += 1;
                }
                '\t' => self.partial.push(ch),
                c if c.is_control() => {}
                c => self.partial.push(c),
            }
            if self.partial.len() >= MAX_LINE_BYTES {
                let text = std::mem::take(&mut self.partial);
                self.push(ConsoleLine { time_ns, text });
                completed += 1;
            }
        }
        completed
    }

    /// Append one whole line (file replay).
    pub fn push_line(&mut self, time_ns: Option<u64>, text: &str) {
        self.push(ConsoleLine {
            time_ns,
            text: text.trim_end_matches(['\r', '\n']).to_string(),
        });
    }

    /// Line number `n` (counted from the first line ever printed), if it is kept.
    pub fn get(&self, n: usize) -> Option<&ConsoleLine> {
        let i = n.checked_sub(self.first)?;
        match self.sealed.get(i / CHUNK) {
            Some(chunk) => chunk.get(i % CHUNK),
            None => self.tail.get(i - self.sealed.len() * CHUNK),
        }
    }

    /// The kept lines from number `n` on, with their numbers.
    pub fn lines_from(&self, n: usize) -> impl Iterator<Item = (usize, &ConsoleLine)> {
        let from = n.max(self.first);
        let skip = from - self.first;
        let chunks = self
            .sealed
            .iter()
            .map(|c| &c[..])
            .chain(std::iter::once(&self.tail[..]));
        chunks
            .flatten()
            .skip(skip)
            .enumerate()
            .map(move |(i, line)| (from + i, line))
    }

    /// The number of the oldest kept line: how many older ones were dropped.
    pub fn first(&self) -> usize {
        self.first
    }

    /// The line being typed or printed, not yet ended (a shell prompt sits here).
    pub fn partial(&self) -> &str {
        &self.partial
    }

    /// Complete lines printed, kept or not (the number the next line gets).
    pub fn len(&self) -> usize {
        self.first + self.sealed.len() * CHUNK + self.tail.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0 && self.partial.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_lines_across_chunks_and_keeps_the_prompt_partial() {
        let mut log = ConsoleLog::new();
        assert_eq!(log.push_bytes(Some(1), b"boot ok\r\nhel"), 1);
        assert_eq!(log.push_bytes(Some(2), b"lo\r\nstarry:~# "), 1);
        assert_eq!(log.get(0).unwrap().text, "boot ok");
        assert_eq!(
            log.get(1),
            Some(&ConsoleLine {
                time_ns: Some(2),
                text: "hello".into()
            })
        );
        assert_eq!(log.partial(), "starry:~# ");
        log.push_bytes(None, b"ls\x1b[1;3");
        log.push_bytes(None, b"2mred\x1b[0m \xff\n");
        assert_eq!(log.get(2).unwrap().text, "starry:~# lsred \u{fffd}");
    }

    #[test]
    fn a_line_that_never_ends_is_split_at_the_cap() {
        let mut log = ConsoleLog::new();
        let long = vec![b'a'; MAX_LINE_BYTES * 2 + 5];
        assert_eq!(log.push_bytes(None, &long), 2);
        assert_eq!(log.get(0).unwrap().text.len(), MAX_LINE_BYTES);
        assert_eq!(log.partial().len(), 5);
    }

    #[test]
    fn keeps_the_newest_lines_numbered_from_the_first_and_copies_share_chunks() {
        let mut log = ConsoleLog::keeping(2 * CHUNK);
        for i in 0..5 * CHUNK + 7 {
            log.push_bytes(Some(i as u64), format!("line {i}\n").as_bytes());
        }
        assert_eq!(log.len(), 5 * CHUNK + 7);
        // Two whole chunks plus the one being filled are kept.
        assert_eq!(log.first(), 3 * CHUNK);
        assert_eq!(log.get(3 * CHUNK - 1), None);
        assert_eq!(log.get(3 * CHUNK).unwrap().text, format!("line {}", 3 * CHUNK));
        assert_eq!(
            log.get(5 * CHUNK + 6).unwrap().text,
            format!("line {}", 5 * CHUNK + 6)
        );
        assert_eq!(log.get(5 * CHUNK + 7), None);
        let numbered: Vec<(usize, String)> = log
            .lines_from(5 * CHUNK + 5)
            .map(|(n, l)| (n, l.text.clone()))
            .collect();
        assert_eq!(
            numbered,
            [
                (5 * CHUNK + 5, format!("line {}", 5 * CHUNK + 5)),
                (5 * CHUNK + 6, format!("line {}", 5 * CHUNK + 6))
            ]
        );
        // Asking from a dropped line starts at the oldest kept one.
        assert_eq!(log.lines_from(0).next().unwrap().0, 3 * CHUNK);
        assert_eq!(log.lines_from(0).count(), 2 * CHUNK + 7);
        let copy = log.clone();
        assert!(Arc::ptr_eq(&copy.sealed[0], &log.sealed[0]));
        assert_eq!(copy, log);
    }
}
