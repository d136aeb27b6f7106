//! Where a hostile run happens, and what it must leave alone.
//!
//! ```text
//! sandbox/
//!   victim/keep          a directory outside the run's reach; must stay as it is
//!   io/                  the run's stdout and stderr
//!   assets/              copies of the repository's assets/ (`@asset/NAME` in an input):
//!                        a command line may name one as an output, and the repository's
//!                        own must not change
//!   a/b/work/            the working directory: `--arch ../../..` from here lands in sandbox/
//!     link-dir  -> ../../../victim        a symlinked directory
//!     file-link -> ../../../victim/keep   a symlink to a file perfscope must not write
//!     dangling  -> ../../../victim/new    a link whose target is not there
//!     fifo                                a FIFO nobody writes
//!     empty                               an empty file
//!     full                                a full device (char 1:7): every write ENOSPC
//! ```
//!
//! After the run: `victim/` holds `keep` alone, unchanged; the sandbox holds nothing new
//! beside `a/b/work`; `/` has no new entry and `/dev` no new regular file (a write to a
//! device path that is not there makes one); no `escaped.db` (sql's `VACUUM INTO`,
//! `ATTACH`) was written anywhere in the working directory.

use std::collections::BTreeSet;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

const KEEP: &[u8] = b"perfscope must not write here\n";

pub struct Sandbox {
    dir: tempfile::TempDir,
    root_entries: BTreeSet<String>,
    dev_files: BTreeSet<String>,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        let dir = tempfile::Builder::new()
            .prefix("perfscope-hostile-")
            .tempdir()
            .expect("make the sandbox");
        let root = dir.path();
        std::fs::create_dir_all(root.join("victim")).unwrap();
        std::fs::write(root.join("victim/keep"), KEEP).unwrap();
        std::fs::create_dir_all(root.join("io")).unwrap();
        let assets = Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets");
        std::fs::create_dir_all(root.join("assets")).unwrap();
        for entry in std::fs::read_dir(&assets).expect("the repository's assets/") {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), root.join("assets").join(entry.file_name())).unwrap();
        }
        let work = root.join("a/b/work");
        std::fs::create_dir_all(&work).unwrap();
        std::os::unix::fs::symlink("../../../victim", work.join("link-dir")).unwrap();
        std::os::unix::fs::symlink("../../../victim/keep", work.join("file-link")).unwrap();
        std::os::unix::fs::symlink("../../../victim/new", work.join("dangling")).unwrap();
        std::fs::write(work.join("empty"), b"").unwrap();
        let fifo = CString::new(work.join("fifo").as_os_str().as_bytes()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0, "mkfifo");
        // Its own full device: a minimal container's /dev has no /dev/full.
        let full = CString::new(work.join("full").as_os_str().as_bytes()).unwrap();
        // SAFETY: a NUL-terminated path.
        let made = unsafe { libc::mknod(full.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 7)) };
        assert_eq!(made, 0, "mknod a full device (the fuzz runs as root)");
        Sandbox {
            dir,
            root_entries: entries(Path::new("/")),
            dev_files: regular_files(Path::new("/dev")),
        }
    }

    pub fn work(&self) -> PathBuf {
        self.dir.path().join("a/b/work")
    }

    pub fn io(&self) -> PathBuf {
        self.dir.path().join("io")
    }

    pub fn assets(&self) -> PathBuf {
        self.dir.path().join("assets")
    }

    /// What the run wrote where it must not, if anything. `through_link_dir`: the command
    /// line named `link-dir` itself (`--out link-dir`, `-o link-dir/x`): a directory the
    /// user names is followed as the user asked, so new entries in `victim/` are theirs —
    /// but `victim/keep` still holds (a file link is never written through). `parents_named`:
    /// how many directories up the command line reaches by itself (`--out ..` is 1,
    /// `../../x` 2): new entries there are the user's too; so are files in /dev that an
    /// absolute output path (`absolute_outputs`) begins.
    pub fn escapes(
        &self,
        through_link_dir: bool,
        parents_named: usize,
        absolute_outputs: &[PathBuf],
    ) -> Vec<String> {
        let root = self.dir.path();
        let mut found = Vec::new();
        let mut expect = |dir: &Path, up: usize, want: &[&str]| {
            let got = entries(dir);
            let want: BTreeSet<String> = want.iter().map(|s| s.to_string()).collect();
            let named = parents_named >= up;
            if (named && !got.is_superset(&want)) || (!named && got != want) {
                found.push(format!("{} holds {got:?}, not {want:?}", dir.display()));
            }
        };
        expect(root, 3, &["a", "assets", "io", "victim"]);
        expect(&root.join("a"), 2, &["b"]);
        expect(&root.join("a/b"), 1, &["work"]);
        if through_link_dir {
            if !root.join("victim/keep").is_file() {
                found.push("victim/keep is gone".into());
            }
        } else {
            expect(&root.join("victim"), 3, &["keep"]);
        }
        if std::fs::read(root.join("victim/keep")).ok().as_deref() != Some(KEEP) {
            found.push("victim/keep was written".into());
        }
        let now = entries(Path::new("/"));
        let new: Vec<&String> = now.difference(&self.root_entries).collect();
        if !new.is_empty() {
            found.push(format!("new entries in /: {new:?}"));
        }
        // A new file in /dev is the user's when an output flag named it (`--flame-graph
        // /dev/zero` writes /dev/zero.folded, as asked); either way it is not left there.
        let now = regular_files(Path::new("/dev"));
        let mut new = Vec::new();
        for name in now.difference(&self.dev_files) {
            let path = Path::new("/dev").join(name);
            let asked = absolute_outputs.iter().any(|out| {
                path.as_os_str()
                    .as_bytes()
                    .starts_with(out.as_os_str().as_bytes())
            });
            if !asked {
                new.push(name);
            }
            let _ = std::fs::remove_file(&path);
        }
        if !new.is_empty() {
            found.push(format!("new files in /dev: {new:?}"));
        }
        if let Some(path) = find(&self.work(), "escaped.db") {
            found.push(format!("sql wrote {}", path.display()));
        }
        found
    }
}

fn entries(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

fn regular_files(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// A file named `name` under `dir` (links not followed).
fn find(dir: &Path, name: &str) -> Option<PathBuf> {
    for entry in std::fs::read_dir(dir).ok()?.filter_map(Result::ok) {
        let path = entry.path();
        if entry.file_name() == name {
            return Some(path);
        }
        if entry.file_type().is_ok_and(|t| t.is_dir())
            && let Some(found) = find(&path, name)
        {
            return Some(found);
        }
    }
    None
}
