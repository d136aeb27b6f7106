//! `perfscope oncpu` in a real terminal (tmux), on real tracefs as root: the tables view
//! shows perf-prof's oncpu table live, one line per CPU, and `q` exits 0.

mod common;

use std::time::Duration;

use common::host::ensure_tracefs;
use common::tmux::TmuxSession;

const WAIT: Duration = Duration::from_secs(20);

#[test]
fn oncpu_shows_a_line_per_cpu_live() {
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let tmux = TmuxSession::start(
        "perfscope-oncpu",
        100,
        30,
        dir.path(),
        &format!(
            "{} oncpu --out out; echo perfscope-exit=$?; sleep 60",
            env!("CARGO_BIN_EXE_perfscope")
        ),
    );
    // Tables is the view oncpu opens on.
    let screen = tmux.wait_for("a line per CPU", WAIT, |s| {
        s.contains("│CPU SUM(ms) COMM:TID(ms)")
            && (0..cpus).all(|cpu| s.lines().any(|l| l.starts_with(&format!("│{cpu:03} "))))
    });
    // Each CPU line: its SUM in whole ms, then `comm:tid(X.Yms)` items.
    let line = screen.lines().find(|l| l.starts_with("│000 ")).unwrap();
    let cells: Vec<&str> = line.trim_start_matches('│').split_whitespace().collect();
    assert!(cells[1].parse::<u64>().is_ok(), "{screen}");
    // (A name may hold spaces: look at the items together.)
    let items = cells[2..].join(" ");
    assert!(items.contains(':') && items.contains("ms)"), "{screen}");
    tmux.keys(&["q"]);
    let screen = tmux.wait_for("perfscope to exit", WAIT, |s| s.contains("perfscope-exit="));
    assert!(screen.contains("perfscope-exit=0"), "{screen}");
}
