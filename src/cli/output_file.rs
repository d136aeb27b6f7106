//! `-o FILE` as perf-prof does it (`freopen(FILE, "a", stdout)` and stderr dup'ed onto it):
//! every line the run prints — its tables, its lost-event lines, its errors — is appended to
//! FILE, so a long-running capture is one log that survives the terminal. A FILE that
//! refuses a write (a full disk) ends the run with exit 1, said on the terminal's stderr
//! (src/stdio.rs).

use std::path::Path;

use anyhow::Context;

/// Append stdout and stderr to `path` from now on (created if missing).
pub fn redirect_output_to(path: &Path) -> anyhow::Result<()> {
    // As every file perfscope writes: never through a symbolic link.
    let file = crate::export::write::open_append(path)
        .with_context(|| format!("-o {}: cannot open the output file", path.display()))?;
    crate::stdio::redirect_to(&file, format!("-o {}", path.display()))
        .with_context(|| format!("-o {}: cannot redirect the output", path.display()))
}
