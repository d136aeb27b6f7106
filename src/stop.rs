//! The process's one request to stop: raised by SIGINT, SIGTERM or SIGHUP once a command
//! takes them (`batch::headless::stop_on_signals`, the terminal UI's signal thread), read
//! by whatever waits on the outside world — a FIFO's writer, a pipe's next bytes — so that
//! no wait outlives a signal. (A signal restarts a blocking `open` or `read`: the handler
//! only raises this flag, and the call goes on waiting.)

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// How often a wait on the outside world looks at the flag.
pub const LOOK_EVERY: Duration = Duration::from_millis(100);

/// The flag itself, for a signal handler to raise.
pub fn flag() -> &'static Arc<AtomicBool> {
    static STOP: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    STOP.get_or_init(Arc::default)
}

/// Whether a stop was asked.
pub fn requested() -> bool {
    flag().load(Ordering::Relaxed)
}

/// Ask the process to stop (what a signal does).
pub fn request() {
    flag().store(true, Ordering::Relaxed);
}

/// A start or a wait that the stop request ended: the user ended the run, nothing failed.
/// A live command stopped so before it began recording ends quietly with 0, as a signal
/// ends one that runs (cli/exit.rs).
#[derive(Debug)]
pub struct Stopped(pub String);

impl std::fmt::Display for Stopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "stopped while {}", self.0)
    }
}

impl std::error::Error for Stopped {}

/// `Err(Stopped(doing()))` once a stop was requested.
pub fn check(doing: impl FnOnce() -> String) -> Result<(), Stopped> {
    if requested() {
        Err(Stopped(doing()))
    } else {
        Ok(())
    }
}

/// Whether `error` is, or was caused by, a stop request ending a start or a wait.
pub fn ended(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| cause.is::<Stopped>())
}
