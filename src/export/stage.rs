//! An export is one set: its files are written under a private staging directory beside
//! `latest/` and replace `latest/` in one exchange once the set is complete.
//!
//! - A failed export (a full disk, a signal) leaves the previous set whole: nothing of it
//!   was touched, and the staging directory goes.
//! - Two runs exporting into one `--out` (the default `perfscope-out` is shared by every
//!   run in a directory) never see each other's files: each stages its own, and the last
//!   to finish is `latest/`, whole.
//! - What the export does not own (the QEMU plugin's `qperf.bin` and its summary, xtask's
//!   `qemu.toml`, a user's notes) is carried from the old set into the new one.
//! - No directory under `--out` that is a symbolic link is written through: a planted
//!   `latest -> /victim` is refused, not followed.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::{ExportError, write_file};

/// An export in progress into `final_dir` (`<out>/perf/<arch>/latest`).
#[derive(Debug)]
pub struct Stage {
    final_dir: PathBuf,
    staging: PathBuf,
    committed: bool,
}

/// The prefix of staging directories (and of an old set on its way out): hidden, and
/// followed by the owner's pid so a dead run's leftovers can be told and removed.
const STAGING_PREFIX: &str = ".latest.tmp-";

impl Stage {
    /// Start an export into `final_dir`, under `out_root` (the user's `--out`): no
    /// directory between them may be a symbolic link.
    pub fn begin(out_root: &Path, final_dir: &Path) -> io::Result<Stage> {
        refuse_linked_dirs(out_root, final_dir)?;
        let parent = final_dir.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(parent)?;
        // Created before it is checked: a link planted between the check and the create
        // would otherwise be followed.
        refuse_linked_dirs(out_root, final_dir)?;
        remove_dead_stagings(parent);
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let staging = parent.join(format!(
            "{STAGING_PREFIX}{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        // `create_dir` fails when the name exists: never a directory someone else made.
        std::fs::create_dir(&staging)?;
        Ok(Stage {
            final_dir: final_dir.to_path_buf(),
            staging,
            committed: false,
        })
    }

    /// Where a file of the set (named by its final path, under `latest/`) is written now.
    pub fn path(&self, final_path: &Path) -> PathBuf {
        match final_path.strip_prefix(&self.final_dir) {
            Ok(rel) => self.staging.join(rel),
            Err(_) => final_path.to_path_buf(),
        }
    }

    /// Write a file of the set, named by its final path (an error names that path).
    pub fn write(&self, final_path: &Path, contents: &[u8]) -> Result<(), ExportError> {
        write_file(&self.path(final_path), contents).map_err(|e| ExportError::new(final_path, e.cause))
    }

    /// A file of the set written so far, by its final path.
    pub fn read(&self, final_path: &Path) -> Result<Vec<u8>, ExportError> {
        std::fs::read(self.path(final_path)).map_err(|e| ExportError::new(final_path, e))
    }

    /// Make the staged set `latest/`: exchanged with the old one in one step, what the
    /// old one held that an export does not own (`owned`) carried over, the old one
    /// removed.
    pub fn commit(mut self, owned: impl Fn(&Path) -> bool) -> io::Result<()> {
        refuse_symlink_dir(&self.final_dir)?;
        match std::fs::symlink_metadata(&self.final_dir) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                match std::fs::rename(&self.staging, &self.final_dir) {
                    Ok(()) => {
                        self.committed = true;
                        return Ok(());
                    }
                    // Another run made `latest/` meanwhile: exchange with it below.
                    Err(e) if matches!(e.raw_os_error(), Some(libc::ENOTEMPTY | libc::EEXIST)) => {}
                    Err(e) => return Err(e),
                }
            }
            Err(e) => return Err(e),
            Ok(_) => {}
        }
        exchange(&self.staging, &self.final_dir)?;
        self.committed = true;
        // `staging` now names the old set.
        carry_over(&self.staging, &self.final_dir, Path::new(""), &owned);
        std::fs::remove_dir_all(&self.staging)
    }
}

impl Drop for Stage {
    /// An export that did not complete leaves nothing behind.
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_dir_all(&self.staging);
        }
    }
}

/// Swap two directories in one step (`renameat2(RENAME_EXCHANGE)`); where the filesystem
/// cannot, move the old one aside, then the new one in.
fn exchange(new: &Path, old: &Path) -> io::Result<()> {
    let c = |p: &Path| {
        CString::new(p.as_os_str().as_bytes()).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
    };
    let (a, b) = (c(new)?, c(old)?);
    // SAFETY: two NUL-terminated paths; AT_FDCWD resolves them as the process does.
    let rc = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if rc == 0 {
        return Ok(());
    }
    let e = io::Error::last_os_error();
    if !matches!(e.raw_os_error(), Some(libc::EINVAL | libc::ENOSYS)) {
        return Err(e);
    }
    // No exchange here: the old set aside under a temporary name, then the new one in,
    // then the old one where the caller expects it (the staging name).
    let aside = new.with_file_name(format!(
        "{}-old",
        new.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    ));
    std::fs::rename(old, &aside)?;
    std::fs::rename(new, old)?;
    std::fs::rename(&aside, new)
}

/// Move what `from` holds at `rel` that the export does not own and `to` lacks into `to`.
fn carry_over(from: &Path, to: &Path, rel: &Path, owned: &dyn Fn(&Path) -> bool) {
    let Ok(entries) = std::fs::read_dir(from.join(rel)) else {
        return;
    };
    for entry in entries.flatten() {
        let rel = rel.join(entry.file_name());
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        let there = std::fs::symlink_metadata(to.join(&rel)).is_ok();
        if is_dir && !owned(&rel) {
            // Into the new set's directory of that name, made if it has none; one left
            // empty (everything in it was owned) goes again.
            let made = !there && std::fs::create_dir(to.join(&rel)).is_ok();
            carry_over(from, to, &rel, owned);
            if made {
                let _ = std::fs::remove_dir(to.join(&rel));
            }
        } else if !there && !owned(&rel) {
            let _ = std::fs::rename(from.join(&rel), to.join(&rel));
        }
    }
}

/// An error when `dir`, or any directory between `root` and it, is a symbolic link
/// (`root` itself is the user's choice).
pub fn refuse_linked_dirs(root: &Path, dir: &Path) -> io::Result<()> {
    let Ok(rel) = dir.strip_prefix(root) else {
        return refuse_symlink_dir(dir);
    };
    let mut at = root.to_path_buf();
    for part in rel.components() {
        at.push(part);
        refuse_symlink_dir(&at)?;
    }
    Ok(())
}

fn refuse_symlink_dir(path: &Path) -> io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!(
                "{} is a symbolic link and perfscope does not write through links; remove it \
                 or choose another --out",
                path.display()
            ),
        )),
        _ => Ok(()),
    }
}

/// Staging directories whose run is gone (killed mid-export) are removed.
fn remove_dead_stagings(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix(STAGING_PREFIX)
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(stage: &Stage, final_dir: &Path, files: &[(&str, &str)]) {
        for (name, text) in files {
            let path = stage.path(&final_dir.join(name));
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
    }

    fn read(path: &Path) -> String {
        std::fs::read_to_string(path).unwrap_or_default()
    }

    #[test]
    fn a_complete_set_replaces_the_old_one_and_keeps_what_the_export_does_not_own() {
        let dir = tempfile::tempdir().unwrap();
        let latest = dir.path().join("perf/x/latest");
        let first = Stage::begin(dir.path(), &latest).unwrap();
        set(
            &first,
            &latest,
            &[("report.json", "1"), ("qperf/stack.folded", "1")],
        );
        first.commit(|_| true).unwrap();
        // The plugin's recording beside the first set.
        std::fs::write(latest.join("qperf/qperf.bin"), "samples").unwrap();
        let second = Stage::begin(dir.path(), &latest).unwrap();
        set(&second, &latest, &[("report.json", "2")]);
        // Nothing of the old set moved while the new one was written.
        assert_eq!(read(&latest.join("report.json")), "1");
        second
            .commit(|rel| rel.extension().is_some_and(|e| e == "json" || e == "folded"))
            .unwrap();
        assert_eq!(read(&latest.join("report.json")), "2");
        assert_eq!(read(&latest.join("qperf/qperf.bin")), "samples", "carried over");
        assert!(
            !latest.join("qperf/stack.folded").exists(),
            "owned and not rewritten: gone"
        );
        let left: Vec<_> = std::fs::read_dir(latest.parent().unwrap()).unwrap().collect();
        assert_eq!(left.len(), 1, "no staging directory left");
    }

    #[test]
    fn an_export_that_does_not_complete_leaves_the_old_set_whole() {
        let dir = tempfile::tempdir().unwrap();
        let latest = dir.path().join("perf/x/latest");
        let first = Stage::begin(dir.path(), &latest).unwrap();
        set(&first, &latest, &[("report.json", "old")]);
        first.commit(|_| true).unwrap();
        let failed = Stage::begin(dir.path(), &latest).unwrap();
        set(&failed, &latest, &[("report.json", "half")]);
        drop(failed);
        assert_eq!(read(&latest.join("report.json")), "old");
        assert_eq!(std::fs::read_dir(latest.parent().unwrap()).unwrap().count(), 1);
    }

    #[test]
    fn a_linked_directory_under_out_is_refused_and_its_target_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::create_dir_all(&victim).unwrap();
        std::fs::write(victim.join("report.json"), "keep").unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir_all(out.join("perf/x")).unwrap();
        std::os::unix::fs::symlink(&victim, out.join("perf/x/latest")).unwrap();
        let e = Stage::begin(&out, &out.join("perf/x/latest")).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        // A link higher up too.
        let out2 = dir.path().join("out2");
        std::fs::create_dir_all(&out2).unwrap();
        std::os::unix::fs::symlink(&victim, out2.join("perf")).unwrap();
        assert!(Stage::begin(&out2, &out2.join("perf/x/latest")).is_err());
        assert_eq!(read(&victim.join("report.json")), "keep");
    }

    #[test]
    fn two_exports_at_once_each_leave_a_whole_set() {
        let dir = tempfile::tempdir().unwrap();
        let latest = dir.path().join("perf/x/latest");
        let a = Stage::begin(dir.path(), &latest).unwrap();
        let b = Stage::begin(dir.path(), &latest).unwrap();
        set(&a, &latest, &[("report.json", "a"), ("a.txt", "a")]);
        set(&b, &latest, &[("report.json", "b"), ("b.txt", "b")]);
        a.commit(|_| true).unwrap();
        b.commit(|_| true).unwrap();
        assert_eq!(read(&latest.join("report.json")), "b");
        assert!(latest.join("b.txt").exists() && !latest.join("a.txt").exists());
    }
}
