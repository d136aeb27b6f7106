//! Small inputs held whole — configuration, sidecars, `/proc` and tracefs files — read
//! through [`BoundedLines`], so their caps hold whatever the file is.

use std::io::{BufRead, Read};
use std::path::Path;

use super::error::InputError;
use super::file::InputFile;
use super::kind::InputKind;
use super::lines::BoundedLines;

/// The bytes of `path`, within `kind`'s caps.
pub fn read_bytes(path: &Path, kind: InputKind) -> Result<Vec<u8>, InputError> {
    read_all(BoundedLines::new(InputFile::open(path)?, path, kind))
}

/// The text of `path`, within `kind`'s caps; bytes that are not UTF-8 are an error naming
/// their line.
pub fn read_text(path: &Path, kind: InputKind) -> Result<String, InputError> {
    let mut lines = BoundedLines::new(InputFile::open(path)?, path, kind);
    let mut text = String::new();
    while let Some(line) = lines.next_line()? {
        match std::str::from_utf8(line) {
            Ok(line) => text.push_str(line),
            Err(_) => {
                return Err(InputError::NotText {
                    path: path.to_path_buf(),
                    kind,
                    line_number: lines.line_number(),
                });
            }
        }
    }
    Ok(text)
}

/// A `/proc`, `/sys` or tracefs file's text within the system caps, as an `io::Result`:
/// what `std::fs::read_to_string` was for these files, with a bound.
pub fn read_system_text(path: impl AsRef<Path>) -> std::io::Result<String> {
    Ok(read_text(path.as_ref(), InputKind::System)?)
}

/// The first bytes of a stream that must be read to its end (a child's stderr: a full pipe
/// would stall the child), within `kind`'s size cap; what comes after is read and dropped,
/// and counted.
pub fn read_kept(mut input: impl Read, kind: InputKind) -> std::io::Result<(Vec<u8>, u64)> {
    let keep = kind.limits().max_bytes.unwrap_or(0);
    let mut kept = Vec::new();
    (&mut input).take(keep).read_to_end(&mut kept)?;
    let dropped = std::io::copy(&mut input, &mut std::io::sink())?;
    Ok((kept, dropped))
}

/// Everything `lines` yields, joined as it was.
pub fn read_all<R: BufRead>(mut lines: BoundedLines<R>) -> Result<Vec<u8>, InputError> {
    let mut bytes = Vec::new();
    while let Some(line) = lines.next_line()? {
        bytes.extend_from_slice(line);
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_read_to_its_end_keeps_only_its_cap() {
        let stream = std::io::Read::take(std::io::repeat(b'e'), 3 << 20);
        let (kept, dropped) = read_kept(stream, InputKind::ChildOutput).unwrap();
        assert_eq!((kept.len(), dropped), (1 << 20, 2 << 20));
    }

    #[test]
    fn a_small_file_is_read_whole_and_dev_zero_stops_at_the_line_cap() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("keymap.toml");
        std::fs::write(&path, "a = 1\nb = \"ü\"").unwrap();
        assert_eq!(read_text(&path, InputKind::Config).unwrap(), "a = 1\nb = \"ü\"");
        std::fs::write(&path, b"a = 1\n\xff\n").unwrap();
        let e = read_text(&path, InputKind::Config).unwrap_err().to_string();
        assert!(e.starts_with("line 2 of "), "{e}");
        assert_eq!(read_bytes(&path, InputKind::Config).unwrap(), b"a = 1\n\xff\n");
        let e = read_text(Path::new("/dev/zero"), InputKind::Config).unwrap_err();
        assert!(
            matches!(
                e,
                InputError::LineTooLong {
                    line_number: 1,
                    cap: 65536,
                    ..
                }
            ),
            "{e:?}"
        );
        let e = read_bytes(&dir.path().join("missing"), InputKind::Config).unwrap_err();
        assert_eq!(e.io_kind(), Some(std::io::ErrorKind::NotFound));
    }
}
