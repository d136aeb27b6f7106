//! What can go wrong with a session file, each message saying what to do next.

use std::path::PathBuf;

/// Errors of the session store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{path}: not an SQLite file: give a session recorded with `--record FILE.db`")]
    NotSqlite { path: PathBuf },
    #[error(
        "{path}: an SQLite file but not a perfscope session (application_id {application_id:#x}): \
         give a file written by `--record`"
    )]
    NotSession { path: PathBuf, application_id: i64 },
    #[error(
        "{path}: session schema version {found}, this perfscope reads version {expected}: \
         open it with the perfscope that recorded it"
    )]
    WrongVersion {
        path: PathBuf,
        found: i64,
        expected: i64,
    },
    #[error("{path}: cannot read the session: {cause}")]
    Io { path: PathBuf, cause: std::io::Error },
    /// Opening or looking at the file (the bounded reader's errors name the file).
    #[error(transparent)]
    Input(#[from] crate::input::InputError),
    #[error(
        "{path} exists and is not a perfscope session: refusing to overwrite it; remove it or \
         record to another file"
    )]
    WouldClobber { path: PathBuf },
    #[error("{path} already exists: pass --force to replace that session, or record to another file")]
    Exists { path: PathBuf },
    #[error(
        "{path} is a symbolic link and perfscope does not write through links: remove it or \
         record to another file"
    )]
    Symlink { path: PathBuf },
    #[error(
        "{path} is being recorded by another perfscope (it holds the file's lock): wait for it, \
         or record to another file"
    )]
    Busy { path: PathBuf },
    #[error(
        "{path} was replaced by another process while this run recorded into it: this run's \
         rows are not in it"
    )]
    Replaced { path: PathBuf },
    #[error("{context}: {cause}")]
    Sqlite { context: String, cause: rusqlite::Error },
    #[error("the session recorder stopped: {0}")]
    WriterGone(String),
    #[error(
        "event type {index} was recorded before it was declared: call Recorder::event_type \
         with its layout first"
    )]
    UndeclaredEventType { index: u16 },
    /// The rows could not be written; the cause stays in the chain, so a reader that
    /// closed stdout is told from a full disk (src/stdio.rs).
    #[error("cannot write the query output")]
    Output(#[source] std::io::Error),
    #[error("{path}: {what} is corrupt: {reason}")]
    Corrupt {
        path: PathBuf,
        what: &'static str,
        reason: String,
    },
}

/// Attach a context to an SQLite error.
pub(crate) trait SqliteContext<T> {
    fn ctx(self, context: impl FnOnce() -> String) -> Result<T, StoreError>;
}

impl<T> SqliteContext<T> for Result<T, rusqlite::Error> {
    fn ctx(self, context: impl FnOnce() -> String) -> Result<T, StoreError> {
        self.map_err(|cause| StoreError::Sqlite {
            context: context(),
            cause,
        })
    }
}
