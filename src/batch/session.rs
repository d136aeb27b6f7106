//! A live source without the TUI (`--no-tui`): poll it to the end, echo the console to
//! stdout as the reference harness does, stop cleanly on SIGINT/SIGTERM, and write the
//! artifact set — for scripts and CI.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Context;

use crate::export::artifacts::ArtifactSet;
use crate::live::LiveMode;
use crate::live::build::SnapshotBuilder;
use crate::live::export::{ExportRequest, export_view};
use crate::live::source::{Source, SourcePoll};
use crate::live::state::ModelState;
use crate::model::Selection;

/// A flag raised by SIGINT, SIGTERM or SIGHUP: a headless run stops cleanly and still
/// writes what it recorded.
pub fn stop_on_signals() -> anyhow::Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ] {
        signal_hook::flag::register(signal, stop.clone()).context("cannot install signal handlers")?;
    }
    Ok(stop)
}

/// Run `source` to its end and export.
pub fn run_headless(
    mut source: Box<dyn Source>,
    selection: Selection,
    export: &ExportRequest,
    echo_console: bool,
) -> anyhow::Result<ArtifactSet> {
    let stop = stop_on_signals()?;
    let mut state = ModelState::default();
    let mut printed_lines = 0;
    let mut stopping = false;
    let mut out = std::io::stdout();
    loop {
        if stop.load(Ordering::Relaxed) && !stopping {
            stopping = true;
            eprintln!("perfscope: stopping (signal); the artifacts are still written");
            source.stop();
        }
        let poll = match source.poll(&mut state) {
            Ok(p) => p,
            Err(e) => {
                // Keep what was recorded: export it with the reason.
                state.warnings.push(format!("source stopped: {e:#}"));
                SourcePoll::Finished
            }
        };
        if echo_console {
            for line in &state.console.lines()[printed_lines..] {
                let _ = writeln!(out, "{}", line.text);
            }
            printed_lines = state.console.len();
            let _ = out.flush();
        }
        match poll {
            SourcePoll::Finished => break,
            SourcePoll::Progress => {}
            SourcePoll::Idle => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    let builder = SnapshotBuilder::new(selection, LiveMode::Accumulate);
    export_view(&state, &builder, export)
}
