//! `-o FILE` as perf-prof does it (`freopen(FILE, "a", stdout)` and stderr dup'ed onto it):
//! every line the run prints — its tables, its lost-event lines, its errors — is appended to
//! FILE, so a long-running capture is one log that survives the terminal.

use std::os::fd::AsRawFd;
use std::path::Path;

use anyhow::Context;

/// Append stdout and stderr to `path` from now on (created if missing).
pub fn redirect_output_to(path: &Path) -> anyhow::Result<()> {
    // As every file perfscope writes: never through a symbolic link.
    let file = crate::export::write::open_append(path)
        .with_context(|| format!("-o {}: cannot open the output file", path.display()))?;
    for fd in [libc::STDOUT_FILENO, libc::STDERR_FILENO] {
        // SAFETY: dup2 on an open descriptor we own; the standard streams are
        // unbuffered at the fd level (Rust's stdout is line-buffered above it and flushed
        // before this runs: nothing was printed yet).
        if unsafe { libc::dup2(file.as_raw_fd(), fd) } < 0 {
            return Err(std::io::Error::last_os_error())
                .with_context(|| format!("-o {}: cannot redirect the output", path.display()));
        }
    }
    Ok(())
}
