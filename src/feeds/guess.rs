//! Which format reads a recorded input, told from the first bytes of the one reader that
//! then reads it on: as inferno's `collapse::guess`, each format says whether it can read
//! the input, so a pipe is never opened twice and nothing is sniffed by name.
//!
//! The order: a session's SQLite header (refused here: SQLite reads a session in place, so
//! it is opened by path before a feed is made), folded text (its first stack line parses),
//! another format's magic number (refused, naming it), and else a qperf.bin — which has no
//! magic number; its reader detects the record version and says how the read ended.

use anyhow::bail;

use crate::input::{InputFile, InputKind, size_text};
use crate::sources::folded::{FoldedStart, folded_start};
use crate::sources::qperf_file::foreign_format;

/// What a recorded input is.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Format {
    Folded,
    Qperf,
}

/// The SQLite header every session file starts with.
const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// The first peek; it grows (×8) while the line that decides is not complete.
const FIRST_PEEK_BYTES: usize = 64 * 1024;

/// The most bytes looked at before deciding: the longest folded line, its newline, and one
/// byte to tell a line at the cap from a longer one.
fn max_peek_bytes() -> usize {
    InputKind::Folded.limits().max_line_bytes + 2
}

/// Tell the format of `input` from its first bytes, consuming none.
pub fn guess(input: &mut InputFile) -> anyhow::Result<Format> {
    let head = input.peek(SQLITE_MAGIC.len())?;
    if head == SQLITE_MAGIC {
        bail!(
            "{} is a recorded session (SQLite), which is read in place: give the session file \
             itself as the input (it is {}, which cannot be)",
            input.path().display(),
            input.file_type().described()
        );
    }
    if matches!(first_stack_line(input)?, Some(FoldedStart::Stack { utf8: true })) {
        return Ok(Format::Folded);
    }
    refuse_foreign(input)?;
    Ok(Format::Qperf)
}

/// Check that `input`, said to be folded (`--folded`), reads as folded: its first stack
/// line parses. Refusing it here ends `yes | perfscope report --folded /dev/stdin` at its
/// first line instead of counting bad lines forever.
pub fn check_folded(input: &mut InputFile) -> anyhow::Result<()> {
    let path = input.path().display().to_string();
    match first_stack_line(input)? {
        // A file of comments only is read, and says it has no stacks.
        Some(FoldedStart::Stack { .. } | FoldedStart::NoStack) => Ok(()),
        Some(FoldedStart::NotStack { line_number, error }) => bail!(
            "{path} is not a folded file: line {line_number}: {error} (a folded line is \
             `root;caller;leaf COUNT`)"
        ),
        Some(FoldedStart::NeedMore) | None => bail!(
            "{path} is not a folded file: no stack line ends within its first {} (the longest \
             folded line perfscope reads)",
            size_text(InputKind::Folded.limits().max_line_bytes as u64)
        ),
    }
}

/// Refuse an input that starts with another format's magic number, naming it: the qperf
/// format has none, so an ELF would decode as a few nonsense records.
pub fn refuse_foreign(input: &mut InputFile) -> anyhow::Result<()> {
    if let Some(what) = foreign_format(input.peek(16)?) {
        bail!(
            "{} is {what}, not a qperf.bin (the sample file the QEMU plugin writes): give the \
             samples file as the input and the kernel ELF with --elf",
            input.path().display()
        );
    }
    Ok(())
}

/// What the first line that is not blank or a comment says, peeking until that line is
/// complete; `None` when it does not end within [`max_peek_bytes`].
fn first_stack_line(input: &mut InputFile) -> anyhow::Result<Option<FoldedStart>> {
    let mut want = FIRST_PEEK_BYTES;
    loop {
        let prefix = input.peek(want)?;
        let at_end = prefix.len() < want;
        match folded_start(prefix, at_end) {
            FoldedStart::NeedMore if want < max_peek_bytes() => {
                want = want.saturating_mul(8).min(max_peek_bytes());
            }
            FoldedStart::NeedMore => return Ok(None),
            start => return Ok(Some(start)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn opened(bytes: &[u8]) -> (tempfile::TempDir, InputFile) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("input");
        std::fs::write(&path, bytes).unwrap();
        let file = InputFile::open(&path).unwrap();
        (dir, file)
    }

    #[test]
    fn each_format_is_told_from_its_start_and_nothing_is_consumed() {
        let (_d, mut folded) = opened(b"# comment\nmain;leaf 3\n");
        assert_eq!(guess(&mut folded).unwrap(), Format::Folded);
        let mut all = String::new();
        folded.read_to_string(&mut all).unwrap();
        assert_eq!(all, "# comment\nmain;leaf 3\n");
        let (_d, mut binary) = opened(b"\x80\x01\x0a\x05 7\n");
        assert_eq!(
            guess(&mut binary).unwrap(),
            Format::Qperf,
            "not UTF-8: not folded"
        );
        let (_d, mut elf) = opened(b"\x7fELF\x02\x01\x01\0");
        let e = guess(&mut elf).unwrap_err().to_string();
        assert!(e.contains("is an ELF file, not a qperf.bin"), "{e}");
        let (_d, mut session) = opened(b"SQLite format 3\0rest");
        let e = guess(&mut session).unwrap_err().to_string();
        assert!(e.contains("is a recorded session (SQLite)"), "{e}");
    }

    #[test]
    fn dev_zero_is_no_folded_file_and_is_told_within_the_cap() {
        let mut zero = InputFile::open(std::path::Path::new("/dev/zero")).unwrap();
        let e = check_folded(&mut zero).unwrap_err().to_string();
        assert!(e.contains("no stack line ends within its first 16 MiB"), "{e}");
        assert_eq!(guess(&mut zero).unwrap(), Format::Qperf);
        let (_d, mut yes) = opened(&b"y\n".repeat(1000));
        let e = check_folded(&mut yes).unwrap_err().to_string();
        assert!(e.ends_with("is not a folded file: line 1: no count after the stack (expected `a;b;c 12`) (a folded line is `root;caller;leaf COUNT`)"), "{e}");
    }
}
