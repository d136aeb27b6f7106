//! The TUI flows a new user meets first with `perfscope top`, in a real terminal (tmux)
//! on real perf_event as root: the view it opens on, the hotspot columns, the filter keys,
//! the status line at 80 columns and the screen left after quitting.

mod common;

use std::time::Duration;

use common::host::build_fixture;
use common::tmux::TmuxSession;

const WAIT: Duration = Duration::from_secs(20);

/// A shell around the binary prints its exit status on the restored screen.
fn command_line(args: &str) -> String {
    format!(
        "{} {args}; echo perfscope-exit=$?; sleep 60",
        env!("CARGO_BIN_EXE_perfscope")
    )
}

/// Start `top <args> -- ./hot 60` in a `width`×`height` terminal.
fn start_top(name: &str, width: u16, height: u16, args: &str) -> (tempfile::TempDir, TmuxSession) {
    let dir = tempfile::tempdir().unwrap();
    build_fixture(dir.path(), "hot", &[]);
    let tmux = TmuxSession::start(
        name,
        width,
        height,
        dir.path(),
        &command_line(&format!("top {args} -- ./hot 60")),
    );
    (dir, tmux)
}

#[test]
fn top_opens_on_hotspots_and_an_explicit_view_wins() {
    let (_dir, tmux) = start_top("perfscope-first-view", 80, 24, "");
    // No key pressed: the first screen with samples is the hotspot table.
    let screen = tmux.wait_for("hot_leaf on the first screen", WAIT, |s| s.contains("hot_leaf"));
    assert!(screen.contains("Hotspots ─"), "{screen}");
    // The flamegraph is one key away.
    tmux.keys(&["2"]);
    tmux.wait_for("the flamegraph", WAIT, |s| {
        !s.contains("Hotspots ─") && s.contains("outer_work")
    });
    tmux.keys(&["q"]);
    tmux.wait_for("perfscope to exit", WAIT, |s| s.contains("perfscope-exit=0"));

    let (_dir, tmux) = start_top("perfscope-first-view-flag", 80, 24, "--view flamegraph");
    let screen = tmux.wait_for("outer_work in the flamegraph", WAIT, |s| s.contains("outer_work"));
    assert!(!screen.contains("Hotspots ─"), "{screen}");
    tmux.keys(&["q"]);
    tmux.wait_for("perfscope to exit", WAIT, |s| s.contains("perfscope-exit=0"));
}
