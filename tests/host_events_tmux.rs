//! `perfscope trace` in a real terminal (tmux), on real tracefs as root: the console view
//! lists the workload's events as perf-prof prints them, and with `-g` the flamegraph
//! shows the events' stacks under the workload's comm.

mod common;

use std::time::Duration;

use common::host::{build_fixture, ensure_tracefs};
use common::tmux::TmuxSession;

const WAIT: Duration = Duration::from_secs(20);

/// A shell around the binary prints its exit status on the restored screen.
fn command_line(args: &str) -> String {
    format!(
        "{} {args}; echo perfscope-exit=$?; sleep 60",
        env!("CARGO_BIN_EXE_perfscope")
    )
}

fn quit(tmux: &TmuxSession) {
    tmux.keys(&["q"]);
    let screen = tmux.wait_for("perfscope to exit", WAIT, |s| s.contains("perfscope-exit="));
    assert!(screen.contains("perfscope-exit=0"), "{screen}");
}

#[test]
fn trace_lists_the_workloads_events_in_the_console_view() {
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    build_fixture(dir.path(), "reader", &["-static"]);
    // One-byte reads 100 ms apart: longer than the test.
    let tmux = TmuxSession::start(
        "perfscope-trace-list",
        200,
        30,
        dir.path(),
        &command_line("trace -e 'syscalls:sys_enter_read/count==1/' -- ./reader 1000 100000"),
    );
    let screen = tmux.wait_for("three read events in the console view", WAIT, |s| {
        s.contains("┌ console")
            && s.lines()
                .filter(|l| {
                    l.contains(" reader ")
                        && l.contains(": syscalls:sys_enter_read: fd: 0x00000003, buf: 0x")
                        && l.contains(", count: 0x00000001")
                })
                .count()
                >= 3
    });
    assert!(!screen.contains("<...>"), "{screen}");
    quit(&tmux);
}

#[test]
fn trace_g_draws_the_events_stacks_as_a_flamegraph() {
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    build_fixture(dir.path(), "reader", &["-static"]);
    let tmux = TmuxSession::start(
        "perfscope-trace-flame",
        120,
        30,
        dir.path(),
        &command_line("trace -g -e 'syscalls:sys_enter_read/count==1/' -- ./reader 1000 50000"),
    );
    // Root first: the comm, then the fixture's frames down to its read wrapper.
    let screen = tmux.wait_for("reader's read in the flamegraph", WAIT, |s| {
        s.contains("Flamegraph") && s.contains("reader") && s.contains("__libc_read")
    });
    let rows: Vec<&str> = screen
        .lines()
        .map(|l| l.trim_start_matches('│').split_whitespace().next().unwrap_or(""))
        .collect();
    let root = rows.iter().position(|r| *r == "reader");
    let leaf = rows.iter().position(|r| r.starts_with("__libc_read"));
    assert!(
        matches!((root, leaf), (Some(r), Some(l)) if r < l),
        "reader above __libc_read:\n{screen}"
    );
    tmux.keys(&["6"]);
    tmux.wait_for("the events in the console view", WAIT, |s| {
        s.contains("┌ console") && s.contains(": syscalls:sys_enter_read: ")
    });
    quit(&tmux);
}
