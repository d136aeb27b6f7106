//! Folded stacks — `root;caller;leaf 12` per line — the flamegraph interchange format.
//!
//! This module owns the text format in both directions: parsing, and the escape that keeps
//! a `;` inside a name (Rust array types such as `[u8; 32]`) from splitting the frame.
//! A `;` in a name is written as U+FF1B FULLWIDTH SEMICOLON, which every folded consumer
//! (inferno, flamegraph.pl, speedscope) keeps inside one frame; the parser maps it back.

use std::borrow::Cow;
use std::fmt;

/// The character a `;` inside a frame name is written as.
pub const ESCAPED_SEMICOLON: char = '\u{ff1b}';

/// The most frames a line may have: above the deepest stack any recorder writes (a qperf
/// record holds at most 32,762, perf's `kernel.perf_event_max_stack` at most 65,535). A
/// deeper line is skipped and counted before its frames are made: a 16 MiB line of `a;`
/// would otherwise become 8 million names and as many nodes of the stack trie.
pub const MAX_FRAMES: usize = 65_536;

/// Escape a frame name for a folded line.
pub fn escape_frame(name: &str) -> Cow<'_, str> {
    if name.contains(';') {
        Cow::Owned(name.replace(';', &ESCAPED_SEMICOLON.to_string()))
    } else {
        Cow::Borrowed(name)
    }
}

/// Undo [`escape_frame`].
pub fn unescape_frame(name: &str) -> Cow<'_, str> {
    if name.contains(ESCAPED_SEMICOLON) {
        Cow::Owned(name.replace(ESCAPED_SEMICOLON, ";"))
    } else {
        Cow::Borrowed(name)
    }
}

/// Join frames (root first) and a count into one folded line, without the newline.
pub fn format_line<S: AsRef<str>>(root_first: &[S], count: u64) -> String {
    let mut line = String::new();
    for (i, frame) in root_first.iter().enumerate() {
        if i > 0 {
            line.push(';');
        }
        line.push_str(&escape_frame(frame.as_ref()));
    }
    line.push(' ');
    line.push_str(&count.to_string());
    line
}

/// One parsed line: frames root first, and the sample count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FoldedLine {
    pub frames: Vec<String>,
    pub count: u64,
}

/// Why a line could not be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LineError {
    /// No space separates the stack from the count.
    MissingCount,
    /// The text after the last space is not a non-negative integer.
    BadCount(String),
    /// Only separators before the count.
    NoFrames,
    /// More than [`MAX_FRAMES`] frames.
    TooDeep { frames: usize },
}

impl fmt::Display for LineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LineError::MissingCount => write!(f, "no count after the stack (expected `a;b;c 12`)"),
            LineError::BadCount(t) => write!(f, "count {t:?} is not a non-negative integer"),
            LineError::NoFrames => write!(f, "the stack has no frames"),
            LineError::TooDeep { frames } => write!(
                f,
                "the stack has {frames} frames, more than the {MAX_FRAMES} perfscope reads"
            ),
        }
    }
}

/// A line that was skipped, for the error report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkippedLine {
    /// 1-based line number.
    pub line_number: usize,
    pub error: LineError,
}

/// The result of parsing a folded file: good lines are kept even when others are bad.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FoldedParse {
    pub lines: Vec<FoldedLine>,
    /// The first few skipped lines (up to [`FoldedParse::MAX_REPORTED`]).
    pub skipped: Vec<SkippedLine>,
    /// How many lines were skipped in all.
    pub skipped_count: usize,
}

impl FoldedParse {
    pub const MAX_REPORTED: usize = 10;

    /// Total sample count of the good lines.
    pub fn total_count(&self) -> u64 {
        self.lines.iter().map(|l| l.count).sum()
    }

    /// A one-line summary of what was skipped, or `None` when nothing was.
    pub fn skipped_summary(&self) -> Option<String> {
        let first = self.skipped.first()?;
        Some(format!(
            "skipped {} malformed line(s); first at line {}: {}",
            self.skipped_count, first.line_number, first.error
        ))
    }
}

/// Parse one line; `Ok(None)` for blank lines and `#` comments. A line starting with `#`
/// that does parse as a stack is a stack (a frame may start with `#`), so every line this
/// accepts reads back the same after [`format_line`].
pub fn parse_line(line: &str) -> Result<Option<FoldedLine>, LineError> {
    let line = line.trim_end_matches(['\r', '\n']);
    if line.trim().is_empty() {
        return Ok(None);
    }
    match parse_stack(line) {
        Err(_) if line.starts_with('#') => Ok(None),
        other => other.map(Some),
    }
}

fn parse_stack(line: &str) -> Result<FoldedLine, LineError> {
    let (stack, count_text) = line.rsplit_once(' ').ok_or(LineError::MissingCount)?;
    let count_text = count_text.trim();
    let count: u64 = count_text
        .parse()
        .map_err(|_| LineError::BadCount(count_text.chars().take(40).collect()))?;
    let frames = stack.bytes().filter(|&b| b == b';').count() + 1;
    if frames > MAX_FRAMES {
        return Err(LineError::TooDeep { frames });
    }
    // Frames are trimmed and blank ones dropped: whitespace at a frame's ends cannot
    // survive a write/parse round trip (the count separator is a space), so it is not
    // part of a name (the fuzzer found this).
    let frames: Vec<String> = stack
        .split(';')
        .map(str::trim)
        .filter(|f| !f.is_empty())
        .map(|f| unescape_frame(f).into_owned())
        .collect();
    if frames.is_empty() {
        return Err(LineError::NoFrames);
    }
    Ok(FoldedLine { frames, count })
}

/// What the start of an input says about its being folded stacks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FoldedStart {
    /// The first line that is not blank or a comment is a stack; `utf8`: and it is valid
    /// UTF-8, which a binary file's first "line" hardly ever is.
    Stack { utf8: bool },
    /// That line is not a stack.
    NotStack { line_number: usize, error: LineError },
    /// Nothing but blank lines and comments, to the end.
    NoStack,
    /// The bytes end inside the line that decides: more are needed.
    NeedMore,
}

/// Read the first lines of `prefix` (`at_end`: the input ends there) as far as they
/// decide whether the input is folded stacks, as inferno's `collapse::guess` asks each
/// format.
pub fn folded_start(prefix: &[u8], at_end: bool) -> FoldedStart {
    for (i, line) in prefix.split_inclusive(|&b| b == b'\n').enumerate() {
        if line.last() != Some(&b'\n') && !at_end {
            return FoldedStart::NeedMore;
        }
        match parse_line(&String::from_utf8_lossy(line)) {
            Ok(None) => {}
            Ok(Some(_)) => {
                return FoldedStart::Stack {
                    utf8: std::str::from_utf8(line).is_ok(),
                };
            }
            Err(error) => {
                return FoldedStart::NotStack {
                    line_number: i + 1,
                    error,
                };
            }
        }
    }
    if at_end {
        FoldedStart::NoStack
    } else {
        FoldedStart::NeedMore
    }
}

/// Parse folded text, keeping every good line and reporting the bad ones.
pub fn parse(text: &str) -> FoldedParse {
    let mut out = FoldedParse::default();
    for (i, line) in text.lines().enumerate() {
        match parse_line(line) {
            Ok(Some(l)) => out.lines.push(l),
            Ok(None) => {}
            Err(error) => {
                out.skipped_count += 1;
                if out.skipped.len() < FoldedParse::MAX_REPORTED {
                    out.skipped.push(SkippedLine {
                        line_number: i + 1,
                        error,
                    });
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stacks_and_counts() {
        let p = parse("main;work;leaf 12\n\n# comment\nmain;idle 3\r\n#hash;frame 1\n");
        assert_eq!(p.lines.len(), 3);
        assert_eq!(p.lines[2].frames, ["#hash", "frame"]);
        assert_eq!(p.lines[0].frames, ["main", "work", "leaf"]);
        assert_eq!(p.lines[0].count, 12);
        assert_eq!(p.lines[1].count, 3);
        assert_eq!(p.total_count(), 16);
        assert!(p.skipped_summary().is_none());
    }

    #[test]
    fn spaces_in_names_are_fine_because_the_count_is_last() {
        let l = parse_line("main;<T as core::fmt::Debug>::fmt 7")
            .unwrap()
            .unwrap();
        assert_eq!(l.frames, ["main", "<T as core::fmt::Debug>::fmt"]);
    }

    #[test]
    fn bad_lines_are_reported_and_good_ones_kept() {
        let p = parse("a;b 1\nno-count\na;b x\n; 4\na 2\n");
        assert_eq!(p.lines.len(), 2);
        assert_eq!(p.skipped_count, 3);
        assert_eq!(p.skipped[0].line_number, 2);
        assert_eq!(p.skipped[0].error, LineError::MissingCount);
        assert_eq!(p.skipped[1].error, LineError::BadCount("x".into()));
        assert_eq!(p.skipped[2].error, LineError::NoFrames);
        assert!(p.skipped_summary().unwrap().contains("line 2"));
    }

    #[test]
    fn blank_frames_are_dropped_and_names_trimmed() {
        // Found by the folded_parse fuzzer: a whitespace-only frame did not round-trip.
        let l = parse_line(" x 3;   ;  y   22").unwrap().unwrap();
        assert_eq!(l.frames, ["x 3", "y"]);
        assert_eq!(parse_line(&format_line(&l.frames, l.count)).unwrap().unwrap(), l);
        assert_eq!(parse_line("   ;  4"), Err(LineError::NoFrames));
    }

    #[test]
    fn the_first_stack_line_decides_and_a_line_cut_short_asks_for_more() {
        assert_eq!(
            folded_start(b"# c\n\nmain;leaf 3\nx", false),
            FoldedStart::Stack { utf8: true }
        );
        assert_eq!(folded_start(b"# c\nmain;le", false), FoldedStart::NeedMore);
        assert_eq!(
            folded_start(b"y\ny\n", false),
            FoldedStart::NotStack {
                line_number: 1,
                error: LineError::MissingCount
            }
        );
        assert_eq!(folded_start(b"\n# only\n", true), FoldedStart::NoStack);
        assert_eq!(folded_start(b"", true), FoldedStart::NoStack);
        assert_eq!(
            folded_start(b"a;\xff 1", true),
            FoldedStart::Stack { utf8: false }
        );
        assert_eq!(folded_start(&[0u8; 64], false), FoldedStart::NeedMore);
    }

    #[test]
    fn a_line_deeper_than_the_frame_cap_is_refused_before_its_frames_are_made() {
        let at_cap = vec!["f"; MAX_FRAMES].join(";") + " 1";
        assert_eq!(parse_line(&at_cap).unwrap().unwrap().frames.len(), MAX_FRAMES);
        let deeper = vec!["f"; MAX_FRAMES + 1].join(";") + " 1";
        assert_eq!(
            parse_line(&deeper),
            Err(LineError::TooDeep {
                frames: MAX_FRAMES + 1
            })
        );
    }

    #[test]
    fn semicolons_in_names_round_trip() {
        let frames = ["main", "core::array::<impl [u8; 32]>::map", "leaf"];
        let line = format_line(&frames, 5);
        assert_eq!(line.matches(';').count(), 2, "{line}");
        let back = parse_line(&line).unwrap().unwrap();
        assert_eq!(back.frames, frames);
        assert_eq!(back.count, 5);
    }
}
