//! A value the user gave that is wrong — a flag out of range, a list that does not parse, a
//! selector with a syntax error, a regular expression that does not compile. Wherever it
//! is found (the argument parser, a command's checks, a feed reading its selectors), it ends
//! the process with the usage code, 2, as the argument parser's own errors do: one rule for
//! every usage error.

/// A wrong value on the command line; the text says which and what to give instead.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

impl UsageError {
    /// `what`'s message as a usage error, for `map_err`.
    pub fn of(what: impl std::fmt::Display) -> UsageError {
        UsageError(what.to_string())
    }
}

/// Whether `error`, or anything it was caused by, is a [`UsageError`].
pub fn is_usage(error: &anyhow::Error) -> bool {
    error
        .chain()
        .any(|cause| cause.downcast_ref::<UsageError>().is_some())
}

/// Return a [`UsageError`] from the enclosing function: `usage!("--top must be at least 1")`.
#[macro_export]
macro_rules! usage {
    ($($arg:tt)*) => {
        return Err($crate::model::usage::UsageError(format!($($arg)*)).into())
    };
}
