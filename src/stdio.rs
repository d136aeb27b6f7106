//! The process's standard streams, the one way every layer writes to them: results go to
//! stdout through [`out`]/[`print`], whose write errors are errors ([`OutputError`]) —
//! never the panic `print!` makes of them —, and notices to stderr through [`say`], which
//! cannot panic either. `-o FILE` moves both streams onto the file ([`redirect_to`]); the
//! terminal's stderr is kept, to say why the file itself failed ([`say_error`]).
//!
//! A closed stdout — the reader quit, `perfscope trace ... | head -1` — is
//! [`OutputError::Closed`]: the run ends as the reader asked, without a word (the exit
//! code is src/cli/exit.rs's business). This module owns the streams and nothing else: it
//! imports no other module of the crate, so every layer may use it.

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::sync::{Mutex, OnceLock};

/// What stdout is, for messages: `-o FILE` once redirected.
static DESTINATION: Mutex<Option<String>> = Mutex::new(None);

/// The stderr the process started with, kept when `-o` moved fd 2 onto the file.
static STARTED_STDERR: OnceLock<File> = OnceLock::new();

/// Why results could not be written.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// The reader closed the pipe (EPIPE): it has what it wanted.
    #[error("the reader closed {0}")]
    Closed(String),
    /// Anything else (ENOSPC, EIO): the results are not where they were asked to go. (A
    /// stdout closed before the start, `>&-`, is no EBADF: Rust's runtime opens /dev/null
    /// on a closed standard descriptor, so the results go where /dev/null sends them.)
    #[error("cannot write the results to {destination}: {cause}; {advice}")]
    Failed {
        destination: String,
        cause: io::Error,
        advice: &'static str,
    },
}

impl OutputError {
    fn of(cause: io::Error) -> OutputError {
        let destination = destination();
        match cause.kind() {
            io::ErrorKind::BrokenPipe => OutputError::Closed(destination),
            kind => OutputError::Failed {
                destination,
                advice: advice(kind, cause.raw_os_error()),
                cause,
            },
        }
    }

    /// The output failure somewhere in `error`'s chain: directly, or inside the
    /// `io::Error` a writer of [`out`] returned.
    pub fn find(error: &anyhow::Error) -> Option<&OutputError> {
        error.chain().find_map(|cause| {
            cause.downcast_ref::<OutputError>().or_else(|| {
                cause
                    .downcast_ref::<io::Error>()
                    .and_then(|io| io.get_ref())
                    .and_then(|inner| inner.downcast_ref::<OutputError>())
            })
        })
    }

    pub fn is_closed(&self) -> bool {
        matches!(self, OutputError::Closed(_))
    }
}

/// What to do about a failed write, by what failed.
fn advice(kind: io::ErrorKind, errno: Option<i32>) -> &'static str {
    match (kind, errno) {
        (io::ErrorKind::StorageFull, _) | (_, Some(libc::ENOSPC)) => {
            "free some space or send the output elsewhere"
        }
        _ => "check where the output goes (a file, a device, a pipe) and run again",
    }
}

fn destination() -> String {
    DESTINATION
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone()
        .unwrap_or_else(|| "stdout".into())
}

/// Results: a writer onto stdout (or the `-o` file) whose errors carry an
/// [`OutputError`]. Each write takes std's stdout lock for its own length only, so a
/// writer held for a whole run does not block a notice written elsewhere.
#[derive(Clone, Copy, Debug, Default)]
pub struct Out;

/// The results writer.
pub fn out() -> Out {
    Out
}

fn tagged(cause: io::Error) -> io::Error {
    io::Error::new(cause.kind(), OutputError::of(cause))
}

impl Write for Out {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        io::stdout().write(buf).map_err(tagged)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        io::stdout().write_all(buf).map_err(tagged)
    }

    fn flush(&mut self) -> io::Result<()> {
        io::stdout().flush().map_err(tagged)
    }
}

/// Write `text` to the results and flush it (so its error, if any, is this call's).
pub fn print(text: &str) -> Result<(), OutputError> {
    let mut stdout = io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(OutputError::of)
}

/// Flush what the results writer still buffers (a last line without its newline).
pub fn flush() -> Result<(), OutputError> {
    io::stdout().flush().map_err(OutputError::of)
}

/// A notice on stderr (a warning, a lost-events line), with its newline. A stderr that
/// cannot be written loses it: there is nowhere else to say it, and a notice is no reason
/// to stop a run.
pub fn say(text: &str) {
    let _ = writeln!(io::stderr().lock(), "{text}");
}

/// The error a run ends with: on stderr, or — when stderr is the `-o` file and that file
/// refuses it (a full disk) — on the stderr the process started with, so it is seen.
pub fn say_error(text: &str) {
    if writeln!(io::stderr().lock(), "{text}").is_ok() {
        return;
    }
    if let Some(mut started) = STARTED_STDERR.get() {
        let _ = writeln!(started, "{text}");
    }
}

/// Move stdout and stderr onto `file` (`-o FILE`: perf-prof's `freopen` of stdout with
/// stderr dup'ed onto it); `name` is what messages call it from now on.
pub fn redirect_to(file: &File, name: String) -> io::Result<()> {
    // Nothing buffered may land in the file that was meant for the terminal.
    io::stdout().flush()?;
    let started: OwnedFd = io::stderr().as_fd().try_clone_to_owned()?;
    for fd in [libc::STDOUT_FILENO, libc::STDERR_FILENO] {
        // SAFETY: dup2 of a descriptor this function borrows onto a standard stream; no
        // Rust object owns fd 1 or 2, so none is invalidated.
        if unsafe { libc::dup2(file.as_raw_fd(), fd) } < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    let _ = STARTED_STDERR.set(File::from(started));
    *DESTINATION.lock().unwrap_or_else(|e| e.into_inner()) = Some(name);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_pipe_is_closed_and_anything_else_says_what_to_do() {
        let closed = OutputError::of(io::Error::from_raw_os_error(libc::EPIPE));
        assert!(closed.is_closed());
        let full = OutputError::of(io::Error::from_raw_os_error(libc::ENOSPC));
        assert!(!full.is_closed());
        assert_eq!(
            full.to_string(),
            "cannot write the results to stdout: No space left on device (os error 28); \
             free some space or send the output elsewhere"
        );
        let io = OutputError::of(io::Error::from_raw_os_error(libc::EIO));
        assert!(io.to_string().ends_with(
            "Input/output error (os error 5); check where the output goes (a file, a device, a pipe) and run again"
        ));
    }

    #[test]
    fn the_failure_is_found_through_contexts_and_io_errors() {
        use anyhow::Context;
        let through_io: anyhow::Result<()> =
            Err(tagged(io::Error::from_raw_os_error(libc::EPIPE))).context("printing the table");
        let e = through_io.unwrap_err();
        assert!(OutputError::find(&e).is_some_and(OutputError::is_closed), "{e:#}");
        let direct = anyhow::Error::new(OutputError::of(io::Error::from_raw_os_error(libc::EIO)))
            .context("the summary");
        assert!(OutputError::find(&direct).is_some_and(|o| !o.is_closed()));
        // Another pipe's EPIPE (QEMU's stdin) is not the results' reader leaving.
        let other = anyhow::Error::new(io::Error::from_raw_os_error(libc::EPIPE));
        assert!(OutputError::find(&other).is_none());
    }
}
