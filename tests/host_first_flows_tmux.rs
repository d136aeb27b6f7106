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

/// Resize the tmux window (the terminal perfscope runs in).
fn resize(tmux: &TmuxSession, width: u16, height: u16) {
    let out = std::process::Command::new("tmux")
        .args(["resize-window", "-t", &tmux.name])
        .args(["-x", &width.to_string(), "-y", &height.to_string()])
        .output()
        .expect("run tmux resize-window");
    assert!(out.status.success(), "tmux resize-window failed");
}

#[test]
fn quitting_after_a_resize_leaves_no_residue_on_the_normal_screen() {
    let dir = tempfile::tempdir().unwrap();
    build_fixture(dir.path(), "hot", &[]);
    // The screen perfscope leaves must be clean by itself, not thanks to a terminal that
    // restores the normal screen (some terminals, and tmux with alternate-screen off,
    // do not): the option is set before perfscope starts.
    let tmux = TmuxSession::start(
        "perfscope-first-resize",
        80,
        24,
        dir.path(),
        &format!("sleep 1; {}", command_line("top -- ./hot 60")),
    );
    let out = std::process::Command::new("tmux")
        .args(["set-option", "-w", "-t", &tmux.name, "alternate-screen", "off"])
        .output()
        .expect("run tmux set-option");
    assert!(out.status.success(), "tmux set-option alternate-screen failed");
    tmux.wait_for("hot_leaf on the first screen", WAIT, |s| s.contains("hot_leaf"));
    resize(&tmux, 120, 30);
    tmux.wait_for("the wider screen drawn", WAIT, |s| {
        s.lines()
            .next()
            .is_some_and(|l| l.trim_end().chars().count() > 80)
            || s.contains("hot_leaf")
    });
    std::thread::sleep(Duration::from_millis(500));
    resize(&tmux, 70, 20);
    std::thread::sleep(Duration::from_millis(500));
    tmux.keys(&["q"]);
    // Joined: a residue can wrap the shell's line.
    let screen = tmux.wait_for("perfscope to exit", WAIT, |s| {
        s.replace('\n', "").contains("perfscope-exit=")
    });
    assert!(screen.contains("perfscope-exit=0"), "{screen}");
    // Only the shell's line is left: nothing of the TUI (frames, tabs, rows).
    let residue: Vec<&str> = screen
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.contains("perfscope-exit="))
        .collect();
    assert!(residue.is_empty(), "left on the normal screen:\n{screen}");
}
