//! Start the TUI on the real terminal: input and signal threads, the model thread over a
//! feed, the loop, and the terminal restored however the loop ends.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::channel;

use anyhow::Context;

use crate::feeds::Feed;

use super::event::{spawn_input_thread, spawn_signal_thread};
use super::terminal::TerminalGuard;
use super::{App, AppConfig, TuiEnd};

/// Run the TUI until the user quits or a signal arrives. Returns the outcome of the last
/// export (the export key, or the automatic one of a QEMU run) and the session's verdict.
pub fn run_tui(config: AppConfig, feed: Box<dyn Feed>, source_name: &str) -> anyhow::Result<TuiEnd> {
    let mouse = config.mouse;
    let (tx, rx) = channel();
    spawn_signal_thread(tx.clone()).context("cannot install signal handlers")?;
    let mut guard = TerminalGuard::enter(mouse).context("cannot start the terminal UI")?;
    let stop = Arc::new(AtomicBool::new(false));
    spawn_input_thread(tx.clone(), stop.clone());
    let mut app = App::new(config, feed, source_name, tx)?;
    let result = app.run(&mut guard.terminal, &rx);
    stop.store(true, Ordering::Relaxed);
    // Leave the alternate screen first: stopping a QEMU run can take a few seconds.
    drop(guard);
    let end = app.finish(&rx);
    result.map(|()| end)
}
