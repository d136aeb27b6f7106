//! stat's TUI end to end in a real 80×24 terminal (tmux), on real perf_event as root:
//! `perfscope stat -e syscalls:sys_enter_write -- ./writer` opens on the tables view with
//! perf-prof's counter line of the writer's writes, its total growing live; `e` exports
//! it as perf-prof's text and CSV; quitting exits 0.

mod common;

use std::time::Duration;

use common::host::{build_fixture, ensure_tracefs};
use common::tmux::TmuxSession;

const WAIT: Duration = Duration::from_secs(20);

/// The total of the sys_enter_write counter line on the screen.
fn write_total(screen: &str) -> Option<u64> {
    screen.lines().find_map(|l| {
        let rest = l.split("syscalls:sys_enter_write").nth(1)?;
        let total = rest.split(" | total ").nth(1)?;
        total
            .split_whitespace()
            .next()?
            .trim_end_matches('│')
            .parse()
            .ok()
    })
}

#[test]
fn stat_shows_the_counter_line_of_a_child_live() {
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    build_fixture(dir.path(), "writer", &["-static"]);
    // 100000 writes 200 µs apart: longer than the test.
    let tmux = TmuxSession::start(
        "perfscope-host-stat",
        80,
        24,
        dir.path(),
        &format!(
            "{} stat -e syscalls:sys_enter_write -m 256 --out out -- ./writer 100000 200; \
             echo perfscope-exit=$?; sleep 60",
            env!("CARGO_BIN_EXE_perfscope")
        ),
    );
    let screen = tmux.wait_for("the counter line in the tables view", WAIT, |s| {
        s.contains("analyzer tables") && write_total(s).is_some_and(|n| n > 0)
    });
    let first = write_total(&screen).unwrap();
    let screen = tmux.wait_for("the total to grow", WAIT, |s| {
        write_total(s).is_some_and(|n| n > first + 500)
    });
    assert!(screen.contains("stat"), "{screen}");
    // `e` writes what the view shows: perf-prof's stat text, and the typed CSV.
    tmux.keys(&["e"]);
    let screen = tmux.wait_for("the export", WAIT, |s| s.contains("exported "));
    let work = dir
        .path()
        .join("out/perf")
        .join(std::env::consts::ARCH)
        .join("latest");
    let text = std::fs::read_to_string(work.join("stat.txt")).unwrap_or_else(|e| {
        panic!(
            "stat.txt after the export: {e}
{screen}"
        )
    });
    let line = text
        .lines()
        .find(|l| l.starts_with("syscalls:sys_enter_write "))
        .unwrap_or_else(|| panic!("no counter line in stat.txt:\n{text}"));
    let exported: u64 = line.rsplit(" | total ").next().unwrap().parse().unwrap();
    assert!(exported > first + 500, "{line}");
    let csv = std::fs::read_to_string(work.join("stat.csv")).unwrap();
    assert!(csv.starts_with("event,now,total"), "{csv}");
    tmux.keys(&["q"]);
    let screen = tmux.wait_for("perfscope to exit", WAIT, |s| s.contains("perfscope-exit="));
    assert!(screen.contains("perfscope-exit=0"), "{screen}");
}
