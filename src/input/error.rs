//! Why an input could not be read, naming the file — and for a cap, the line and the cap —
//! with what to do next.

use std::io;
use std::path::PathBuf;

use super::kind::{InputKind, size_text};

#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("cannot open {}: {cause}", path.display())]
    Open { path: PathBuf, cause: io::Error },
    #[error("cannot read {}: {cause}", path.display())]
    Read { path: PathBuf, cause: io::Error },
    #[error("{} is a directory: give a file", path.display())]
    Directory { path: PathBuf },
    /// A signal asked the process to stop while it waited on the input (a FIFO nobody
    /// writes, a pipe that sends nothing).
    #[error("stopped while waiting for {}: {waiting_for}", path.display())]
    Stopped {
        path: PathBuf,
        waiting_for: &'static str,
    },
    #[error(
        "line {line_number} of {} is longer than {} (the longest line perfscope reads in a {}): \
         is it a {}?",
        path.display(),
        size_text(*cap as u64),
        kind.what(),
        kind.what()
    )]
    LineTooLong {
        path: PathBuf,
        kind: InputKind,
        line_number: u64,
        cap: usize,
    },
    #[error(
        "{} is larger than {} (the most perfscope reads of a {}): {}",
        path.display(),
        size_text(*cap),
        kind.what(),
        kind.too_large_advice()
    )]
    TooLarge {
        path: PathBuf,
        kind: InputKind,
        cap: u64,
    },
    #[error("line {line_number} of {} is not UTF-8 text: is it a {}?", path.display(), kind.what())]
    NotText {
        path: PathBuf,
        kind: InputKind,
        line_number: u64,
    },
    #[error(
        "{} is {file_type}, not a regular file: {what} is read in place, so give the file \
         itself (a pipe or a device cannot be; save it to a file first)",
        path.display()
    )]
    NotRegular {
        path: PathBuf,
        file_type: &'static str,
        what: &'static str,
    },
}

impl InputError {
    /// The I/O error underneath, if the failure was one (a missing file is not a cap).
    pub fn io_kind(&self) -> Option<io::ErrorKind> {
        match self {
            InputError::Open { cause, .. } | InputError::Read { cause, .. } => Some(cause.kind()),
            _ => None,
        }
    }
}

impl From<InputError> for io::Error {
    /// For callers whose errors are `io::Error`s: a failed open or read is that error as
    /// it was (its kind and text; the caller names the file), a cap is `InvalidData` with
    /// the whole sentence.
    fn from(e: InputError) -> io::Error {
        match e {
            InputError::Open { cause, .. } | InputError::Read { cause, .. } => cause,
            other => io::Error::new(io::ErrorKind::InvalidData, other.to_string()),
        }
    }
}
