//! `perfscope task-state` in a real 80×24 terminal (tmux), on real tracefs as root: a
//! child sleeping 500 ms at a time shows up live in the latency view (its S
//! distribution) and in the tables view as perf-prof's task-state table, and `q` exits 0.

mod common;

use std::time::Duration;

use common::host::{Background, build_fixture, ensure_tracefs};
use common::tmux::TmuxSession;

const WAIT: Duration = Duration::from_secs(20);

#[test]
fn task_state_shows_the_sleepers_s_time_live() {
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    let exe = build_fixture(dir.path(), "sleeper", &[]);
    let child = Background::start(&exe, &["500"]);
    let pid = child.pid();
    let tmux = TmuxSession::start(
        "perfscope-task-state",
        100,
        30,
        dir.path(),
        &format!(
            "{} task-state --perins -S -m 256 --out out; echo perfscope-exit=$?; sleep 60",
            env!("CARGO_BIN_EXE_perfscope")
        ),
    );
    let row = format!("│{pid:>6} sleeper          S ");
    tmux.keys(&["8"]);
    let screen = tmux.wait_for("the sleeper's S row in the table", WAIT, |s| {
        s.contains("analyzer tables") && s.lines().any(|l| l.starts_with(&row))
    });
    assert!(
        screen.lines().any(|l| l
            .starts_with("│thread comm             St    calls        total(us)      min(us)      p50(us)")),
        "perf-prof's header:\n{screen}"
    );
    // Each call of the row is one 500 ms sleep: total ≈ calls × 500 ms.
    let cells: Vec<f64> = screen
        .lines()
        .find(|l| l.starts_with(&row))
        .unwrap()
        .trim_start_matches('│')
        .split_whitespace()
        .skip(3)
        .take(3)
        .map(|c| c.parse().unwrap())
        .collect();
    let (calls, total_us, min_us) = (cells[0], cells[1], cells[2]);
    assert!(
        calls >= 1.0 && (500_000.0..550_000.0).contains(&min_us),
        "{screen}"
    );
    assert!((total_us / calls - 500_000.0).abs() < 50_000.0, "{screen}");

    tmux.keys(&["4"]);
    tmux.wait_for("the S distribution in the latency view", WAIT, |s| {
        s.contains("latency histograms") && s.contains(&format!("{pid} sleeper"))
    });
    tmux.keys(&["q"]);
    let screen = tmux.wait_for("perfscope to exit", WAIT, |s| s.contains("perfscope-exit="));
    assert!(screen.contains("perfscope-exit=0"), "{screen}");
}
