//! How every artifact reaches the disk: the whole file is written under a temporary name in
//! the same directory and renamed over the artifact's name only once it is complete, so a
//! failed write (a full disk) leaves no half file and no 0-byte `profile.pb.gz` behind.
//!
//! A symbolic link at an artifact's path is refused, never followed: the output directory
//! may be shared or planted (`ln -s ../victim D/diff.csv`), and writing through a link would
//! overwrite a file outside the output. The temporary file is created with `O_EXCL` and
//! `O_NOFOLLOW`, and `rename` replaces the name itself, never what a link points at.

use std::fs::OpenOptions;
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A write that failed, with the file it was for.
///
/// The cause is formatted into the message and deliberately not a `#[source]`: error
/// chains print every source after the message, and the OS error would be said twice.
#[derive(Debug, thiserror::Error)]
#[error("cannot write {}: {cause}", path.display())]
pub struct ExportError {
    pub path: PathBuf,
    pub cause: io::Error,
}

impl ExportError {
    pub fn new(path: &Path, cause: io::Error) -> Self {
        Self {
            path: path.to_path_buf(),
            cause,
        }
    }
}

/// Write a whole file, creating its directory.
pub fn write_file(path: &Path, contents: &[u8]) -> Result<(), ExportError> {
    write_with(path, |out| out.write_all(contents))
}

/// Write a file through `fill`, creating its directory; the file appears under `path` only
/// when `fill` and the flush to disk succeeded.
pub fn write_with(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<(), ExportError> {
    let err = |cause| ExportError::new(path, cause);
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(err)?;
    refuse_symlink(path).map_err(err)?;
    let temp = temporary_name(path);
    let written = (|| {
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_NOFOLLOW)
            .mode(0o644)
            .open(&temp)?;
        let mut out = io::BufWriter::with_capacity(256 * 1024, file);
        fill(&mut out)?;
        let file = out.into_inner().map_err(io::IntoInnerError::into_error)?;
        // Delayed allocation may report a full disk only here.
        file.sync_all()?;
        std::fs::rename(&temp, path)
    })();
    if let Err(cause) = written {
        let _ = std::fs::remove_file(&temp);
        return Err(err(cause));
    }
    Ok(())
}

/// Open `path` to append to it (perf-prof's `-o`, a growing `--flame-graph` file), created
/// if missing (mode 0644), never through a symbolic link: a link there, dangling or not, is
/// refused as [`write_file`] refuses it.
pub fn open_append(path: &Path) -> io::Result<std::fs::File> {
    refuse_symlink(path)?;
    OpenOptions::new()
        .append(true)
        .create(true)
        .custom_flags(libc::O_NOFOLLOW)
        .mode(0o644)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            // A link made between the check and the open.
            Some(libc::ELOOP) => refuse_symlink(path).err().unwrap_or(e),
            _ => e,
        })
}

/// An error when `path` is a symbolic link (dangling or not).
pub fn refuse_symlink(path: &Path) -> io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            "it is a symbolic link and perfscope does not write through links; \
             remove it or choose another output directory",
        )),
        _ => Ok(()),
    }
}

/// `dir/.name.tmp-<pid>-<n>`: hidden, unique within this process and beside the target,
/// so the final rename stays on one filesystem.
fn temporary_name(path: &Path) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.tmp-{}-{n}", std::process::id()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_symlink_at_the_path_is_refused_and_its_target_kept() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        let link = dir.path().join("out").join("diff.csv");
        std::fs::create_dir_all(link.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let e = write_file(&link, b"new").unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    }

    #[test]
    fn appending_refuses_a_link_dangling_or_not_and_creates_a_missing_file() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        let link = dir.path().join("log");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let e = open_append(&link).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        let dangling = dir.path().join("dangling");
        std::os::unix::fs::symlink(dir.path().join("made-by-a-link"), &dangling).unwrap();
        assert!(open_append(&dangling).is_err());
        assert!(
            !dir.path().join("made-by-a-link").exists(),
            "the link's target was not created"
        );
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        let plain = dir.path().join("plain.log");
        open_append(&plain).unwrap().write_all(b"a").unwrap();
        open_append(&plain).unwrap().write_all(b"b").unwrap();
        assert_eq!(std::fs::read_to_string(&plain).unwrap(), "ab");
    }

    #[test]
    fn a_failed_fill_leaves_neither_the_file_nor_a_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("profile.pb.gz");
        let e = write_with(&path, |out| {
            out.write_all(b"half")?;
            Err(io::Error::from_raw_os_error(libc::ENOSPC))
        })
        .unwrap_err();
        assert_eq!(
            e.to_string().matches("os error 28").count(),
            1,
            "the cause is said once: {e}"
        );
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        write_file(&path, b"whole").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"whole");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
