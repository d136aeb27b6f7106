//! The host TUI end to end in a real 80×24 terminal (tmux), on real perf_event as root:
//! `perfscope top -- ./hot` finds the hot function in the hotspots view, its caller in the
//! flamegraph and a timeline from 0 s; `perfscope syscalls -- ./reader` shows read(0) in
//! the latency view, perf-prof's table in the tables view and its event rate in the
//! timeline. Quitting restores the terminal, exits 0 and stops the workload perfscope
//! started.

mod common;

use std::path::Path;
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

/// Whether a process runs `exe` (the workload perfscope started must be gone after it).
fn running(exe: &Path) -> bool {
    std::fs::read_dir("/proc").unwrap().any(|entry| {
        let Ok(entry) = entry else { return false };
        std::fs::read_link(entry.path().join("exe")).is_ok_and(|target| target == exe)
    })
}

/// The calls of the read(0) row of the tables view.
fn read_calls(screen: &str) -> Option<u64> {
    screen.lines().find_map(|l| {
        let cells: Vec<&str> = l.trim_start_matches('│').split_whitespace().collect();
        (cells.first() == Some(&"read(0)")).then(|| cells.get(1)?.parse().ok())?
    })
}

/// The status line's `shown/all events` (or `all events`) as numbers (`372.4k` → 372400).
fn events_of(screen: &str) -> Option<(u64, u64)> {
    let status = screen.lines().last()?;
    let cell = status.split('│').find(|c| c.trim_end().ends_with(" events"))?;
    let count = cell.trim().trim_end_matches(" events");
    let number = |t: &str| -> Option<u64> {
        let (digits, scale) = match t.chars().last()? {
            'k' => (&t[..t.len() - 1], 1e3),
            'M' => (&t[..t.len() - 1], 1e6),
            _ => (t, 1.0),
        };
        Some((digits.parse::<f64>().ok()? * scale) as u64)
    };
    match count.split_once('/') {
        Some((shown, all)) => Some((number(shown)?, number(all)?)),
        None => number(count).map(|n| (n, n)),
    }
}

/// Press `q`, then insist on exit status 0, the main screen back and the workload gone.
fn quit(tmux: &TmuxSession, workload: &Path) {
    tmux.keys(&["q"]);
    let screen = tmux.wait_for("perfscope to exit", WAIT, |s| s.contains("perfscope-exit="));
    assert!(screen.contains("perfscope-exit=0"), "{screen}");
    assert!(
        !screen.contains("Hotspots") && !screen.contains("└"),
        "the alternate screen was not left:\n{screen}"
    );
    assert!(
        !running(workload),
        "{} still runs after quitting",
        workload.display()
    );
}

#[test]
fn top_shows_the_hot_function_and_its_caller_live() {
    let dir = tempfile::tempdir().unwrap();
    let hot = build_fixture(dir.path(), "hot", &[]).canonicalize().unwrap();
    // Spins far longer than the test: the views are read while it runs.
    let tmux = TmuxSession::start(
        "perfscope-host-top",
        80,
        24,
        dir.path(),
        &command_line("top -- ./hot 60"),
    );

    tmux.wait_for("the first samples", WAIT, |s| s.contains("samples"));
    tmux.keys(&["1"]);
    let screen = tmux.wait_for("hot_leaf in the hotspots", WAIT, |s| {
        s.contains("Hotspots ─") && s.contains("│[.] hot_leaf ")
    });
    // The hottest row is the first one under the header (user code: perf top's `[.]`).
    let first_row = screen
        .lines()
        .skip_while(|l| !l.contains("self▼"))
        .nth(1)
        .unwrap_or_default();
    assert!(first_row.starts_with("│[.] hot_leaf "), "{screen}");

    tmux.keys(&["2"]);
    // The hotspots pane names outer_work too: wait until the flamegraph has replaced it.
    let screen = tmux.wait_for("outer_work in the flamegraph", WAIT, |s| {
        !s.contains("Hotspots ─") && s.contains("outer_work") && s.contains("hot_leaf")
    });
    // Root first: hot (the comm) … main, outer_work, hot_leaf, each on its own row.
    let rows: Vec<&str> = screen
        .lines()
        .map(|l| l.split_whitespace().next().unwrap_or(""))
        .collect();
    let at = |name: &str| {
        rows.iter()
            .position(|r| *r == name)
            .unwrap_or_else(|| panic!("{name} not in the flamegraph:\n{screen}"))
    };
    assert!(at("hot") < at("main"), "{screen}");
    assert_eq!(at("main") + 1, at("outer_work"), "{screen}");
    assert_eq!(at("outer_work") + 1, at("hot_leaf"), "{screen}");

    // The timeline counts seconds from the session's start, not since boot.
    tmux.keys(&["5"]);
    tmux.wait_for("the timeline's axis from 0 s", WAIT, |s| {
        s.contains("┌ timeline") && s.contains("│╵0.0")
    });

    quit(&tmux, &hot);
}

#[test]
fn syscalls_shows_the_latency_of_reads_and_the_perf_prof_table_live() {
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    let reader = build_fixture(dir.path(), "reader", &["-static"])
        .canonicalize()
        .unwrap();
    // 100000 reads 100 µs apart: longer than the test, slow enough for the ring.
    let tmux = TmuxSession::start(
        "perfscope-host-syscalls",
        80,
        24,
        dir.path(),
        &command_line("syscalls -m 1024 --out out -- ./reader 100000 100"),
    );

    tmux.keys(&["4"]);
    let screen = tmux.wait_for("read(0) in the latency view", WAIT, |s| {
        s.contains("latency histograms") && s.contains("│read(0) ")
    });
    assert!(screen.contains("clock_nanosleep(230)"), "{screen}");

    tmux.keys(&["8"]);
    let screen = tmux.wait_for("the syscalls table", WAIT, |s| s.contains("analyzer tables"));
    let lines: Vec<&str> = screen.lines().collect();
    let header = lines
        .iter()
        .position(|l| l.starts_with("│syscalls  "))
        .unwrap_or_else(|| panic!("no table header:\n{screen}"));
    // perf-prof's header and dashes, cut at the pane's width.
    assert!(
        lines[header]
            .starts_with("│syscalls                calls        total(us)      min(us)      avg(us)"),
        "{screen}"
    );
    assert!(
        lines[header + 1].starts_with("│-------------------- -------- ---------------- ------------"),
        "{screen}"
    );
    assert!(
        lines[header + 2..].iter().any(|l| l.starts_with("│read(0) ")),
        "{screen}"
    );

    // The timeline shows the event rate from the session's start.
    tmux.keys(&["5"]);
    tmux.wait_for("the event timeline", WAIT, |s| {
        s.contains("┌ timeline") && s.contains("│╵0.0") && s.contains(" events  │  window: all")
    });

    // r: the views count from now; the status line says how many of all the events the
    // selection holds, and those before the reset are not among them.
    tmux.keys(&["8"]);
    let screen = tmux.wait_for("a few thousand events", WAIT, |s| {
        events_of(s).is_some_and(|(_, all)| all > 5_000)
    });
    let (_, before) = events_of(&screen).unwrap();
    tmux.keys(&["r"]);
    let screen = tmux.wait_for("the reset applied", WAIT, |s| {
        events_of(s).is_some_and(|(shown, all)| shown < all)
    });
    let (shown, all) = events_of(&screen).unwrap();
    assert!(
        all - shown >= before * 9 / 10,
        "after the reset the views leave out the {before} events before it: {shown}/{all}\n{screen}"
    );

    // e: the tables and the distributions of the selection are written.
    tmux.wait_for("reads after the reset", WAIT, |s| {
        read_calls(s).is_some_and(|n| n > 100)
    });
    tmux.keys(&["e"]);
    let screen = tmux.wait_for("the export", WAIT, |s| s.contains("exported "));
    let work = dir
        .path()
        .join("out/perf")
        .join(std::env::consts::ARCH)
        .join("latest");
    for name in [
        "syscalls.txt",
        "syscalls.csv",
        "syscalls.json",
        "latency.csv",
        "report.json",
    ] {
        assert!(
            work.join(name).is_file(),
            "{name} missing after the export:\n{screen}"
        );
    }
    let report = std::fs::read_to_string(work.join("report.json")).unwrap();
    assert!(report.contains("\"result\": \"ok\""), "{report}");

    quit(&tmux, &reader);
}

/// perf-prof's scripts send SIGUSR2 (dump your state) before SIGINT: on a terminal the TUI
/// already shows the state, and the signal must not kill it (its default action would).
#[test]
fn sigusr2_does_not_end_the_tui() {
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    let tmux = TmuxSession::start(
        "perfscope-host-sigusr2",
        100,
        30,
        dir.path(),
        &command_line("syscalls -- sleep 30"),
    );
    tmux.wait_for("the TUI", WAIT, |s| s.contains("└"));
    // The pane's shell runs perfscope as its child.
    let pane = tmux.tmux(&["display-message", "-p", "-t", &tmux.name, "#{pane_pid}"]);
    let shell = String::from_utf8_lossy(&pane.stdout).trim().to_string();
    let children = std::fs::read_to_string(format!("/proc/{shell}/task/{shell}/children")).unwrap();
    let pid: i32 = children
        .split_whitespace()
        .next()
        .expect("perfscope runs under the pane's shell")
        .parse()
        .unwrap();
    // SAFETY: kill(2) on the perfscope this test started.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGUSR2) }, 0);
    std::thread::sleep(Duration::from_secs(1));
    // Still perfscope's process (a killed one is reaped by the shell at once).
    assert!(
        std::fs::read_to_string(format!("/proc/{shell}/task/{shell}/children"))
            .unwrap()
            .split_whitespace()
            .any(|c| c == pid.to_string()),
        "SIGUSR2 killed perfscope:\n{}",
        tmux.screen()
    );
    let screen = tmux.screen();
    assert!(
        !screen.contains("perfscope-exit=") && screen.contains("└"),
        "SIGUSR2 ended the TUI:\n{screen}"
    );
    tmux.keys(&["q"]);
    let screen = tmux.wait_for("perfscope to exit", WAIT, |s| s.contains("perfscope-exit="));
    assert!(screen.contains("perfscope-exit=0"), "{screen}");
}
