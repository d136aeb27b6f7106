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
    let (width, height) = (width.to_string(), height.to_string());
    let out = tmux.tmux(&["resize-window", "-t", &tmux.name, "-x", &width, "-y", &height]);
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
    let out = tmux.tmux(&["set-option", "-w", "-t", &tmux.name, "alternate-screen", "off"]);
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

/// The longest run of blanks inside `line` (between its first and last text).
fn widest_gap(line: &str) -> usize {
    let inner = line.trim_matches('│').trim();
    inner.split(|c: char| c != ' ').map(str::len).max().unwrap_or(0)
}

#[test]
fn hotspots_mark_kernel_and_user_name_the_module_and_use_the_width() {
    let (_dir, tmux) = start_top("perfscope-first-hotspots", 200, 30, "");
    let screen = tmux.wait_for("hot_leaf and a kernel function", WAIT, |s| {
        s.contains("hot_leaf") && s.contains("[k] ")
    });
    // perf top's marks and Shared Object: hot_leaf is user code in ./hot; kernel
    // functions are in the kernel image or a module.
    let row = |screen: &str, name: &str| -> String {
        screen
            .lines()
            .find(|l| l.split_whitespace().any(|w| w == name))
            .unwrap_or_else(|| panic!("no {name} row:\n{screen}"))
            .to_string()
    };
    let leaf = row(&screen, "hot_leaf");
    let words: Vec<&str> = leaf.trim_matches('│').split_whitespace().collect();
    assert_eq!(words[..3], ["[.]", "hot_leaf", "hot"], "{screen}");
    let header = screen
        .lines()
        .find(|l| l.contains("function"))
        .unwrap_or_else(|| panic!("no header:\n{screen}"));
    assert!(header.contains("shared object"), "{screen}");
    let kernel = screen
        .lines()
        .find(|l| l.trim_start_matches('│').starts_with("[k] "))
        .unwrap_or_else(|| panic!("no kernel row:\n{screen}"));
    assert!(
        kernel.contains("[kernel.kallsyms]") || kernel.contains(" ["),
        "{kernel}"
    );
    // At 200 columns names and their numbers stay close (no 120 blank columns).
    assert!(widest_gap(header) < 60, "{header}");
    assert!(widest_gap(&leaf) < 60, "{leaf}");

    // Sorted by total, the command-name root (`hot`, 100 %) does not come first.
    tmux.keys(&["s"]);
    let screen = tmux.wait_for("the total sort", WAIT, |s| s.contains("total▼"));
    let first = screen
        .lines()
        .skip_while(|l| !l.contains("total▼"))
        .nth(1)
        .unwrap_or_default();
    let first_name: Vec<&str> = first.trim_matches('│').split_whitespace().take(2).collect();
    assert!(
        !first_name.contains(&"hot"),
        "the comm tops the total sort:\n{screen}"
    );
    tmux.keys(&["q"]);
    tmux.wait_for("perfscope to exit", WAIT, |s| s.contains("perfscope-exit=0"));
}

#[test]
fn slash_starts_a_new_pattern_and_esc_cancels_then_clears() {
    let (_dir, tmux) = start_top("perfscope-first-filter", 80, 24, "");
    tmux.wait_for("hot_leaf", WAIT, |s| s.contains("hot_leaf"));
    tmux.keys(&["/"]);
    tmux.literal("hot_leaf");
    tmux.keys(&["Enter"]);
    tmux.wait_for("the hot_leaf filter", WAIT, |s| s.contains("filter: hot_leaf ·"));
    // A new `/` starts empty: typing replaces the pattern instead of appending to it.
    tmux.keys(&["/"]);
    tmux.literal("outer");
    tmux.wait_for("the new pattern typed", WAIT, |s| s.contains("/outer"));
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("the outer filter", WAIT, |s| s.contains("filter: outer ·"));
    assert!(
        screen.contains("outer_work") && !screen.contains("│[.] hot_leaf"),
        "{screen}"
    );
    // Esc while typing cancels the edit: the applied filter stays.
    tmux.keys(&["/"]);
    tmux.literal("main");
    tmux.wait_for("typing main", WAIT, |s| s.contains("/main"));
    tmux.keys(&["Escape"]);
    tmux.wait_for("the edit cancelled", WAIT, |s| s.contains("filter: outer ·"));
    // Esc with a filter applied clears it.
    tmux.keys(&["Escape"]);
    let screen = tmux.wait_for("the filter cleared", WAIT, |s| {
        !s.contains("filter:") && s.contains("hot_leaf") && s.contains("outer_work")
    });
    assert!(screen.contains("Hotspots ─"), "{screen}");
    tmux.keys(&["q"]);
    tmux.wait_for("perfscope to exit", WAIT, |s| s.contains("perfscope-exit=0"));
}

#[test]
fn status_line_and_tabs_fit_80_columns_and_say_what_they_cut() {
    let (_dir, tmux) = start_top("perfscope-first-status", 80, 24, "");
    let screen = tmux.wait_for("a rate on the status line", WAIT, |s| {
        s.lines().last().is_some_and(|l| l.contains(" samples/s"))
    });
    let status = screen.lines().last().unwrap_or_default();
    // Whole fields, each labelled; nothing cut in the middle of a word.
    assert!(status.contains(" live "), "{status}");
    assert!(status.contains(" samples │ "), "{status}");
    assert!(status.contains("│ window all"), "{status}");
    assert!(!status.trim_end().ends_with('…'), "{status}");
    // Sampling has no latency, tables or console to show: no tabs for them.
    let tabs = screen.lines().next().unwrap_or_default();
    assert!(tabs.contains("Hotspots") && tabs.contains("Timeline"), "{tabs}");
    for empty in ["Latency", "Tables", "Console"] {
        assert!(!tabs.contains(empty), "{tabs}");
    }
    tmux.keys(&["q"]);
    tmux.wait_for("perfscope to exit", WAIT, |s| s.contains("perfscope-exit=0"));

    // Too narrow for every tab: the line says how many are left out.
    let (_dir, tmux) = start_top("perfscope-first-tabs-cut", 34, 12, "");
    let screen = tmux.wait_for("the hotspots", WAIT, |s| s.contains("hot_leaf"));
    let tabs = screen.lines().next().unwrap_or_default();
    assert!(tabs.contains("Hotspots"), "{screen}");
    assert!(tabs.trim_end().ends_with("…+2"), "{screen}");
    tmux.keys(&["q"]);
    tmux.wait_for("perfscope to exit", WAIT, |s| s.contains("perfscope-exit=0"));
}

#[test]
fn i_twice_returns_to_the_view_it_came_from() {
    let (_dir, tmux) = start_top("perfscope-first-instances", 80, 24, "");
    tmux.wait_for("hot_leaf", WAIT, |s| s.contains("hot_leaf"));
    tmux.keys(&["5"]);
    tmux.wait_for("the timeline", WAIT, |s| s.contains("┌ timeline"));
    // The timeline has no per-instance split: i opens it over the hotspots…
    tmux.keys(&["i"]);
    tmux.wait_for("the instance split", WAIT, |s| !s.contains("┌ timeline"));
    // …and i again goes back to the timeline, not to the hotspots.
    tmux.keys(&["i"]);
    tmux.wait_for("the timeline again", WAIT, |s| s.contains("┌ timeline"));
    tmux.keys(&["q"]);
    tmux.wait_for("perfscope to exit", WAIT, |s| s.contains("perfscope-exit=0"));
}

#[test]
fn than_offenders_are_listed_in_the_tables_view() {
    common::host::ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    build_fixture(dir.path(), "reader", &["-static"]);
    // Reads 100 µs apart: every read(0) is far over 1 ns, so each is an offender.
    let tmux = TmuxSession::start(
        "perfscope-first-offenders",
        120,
        30,
        dir.path(),
        &command_line("syscalls -m 1024 --than 1ns -- ./reader 100000 100"),
    );
    tmux.keys(&["8"]);
    tmux.wait_for("the syscalls table", WAIT, |s| s.contains("│read(0) "));
    tmux.keys(&["o"]);
    let screen = tmux.wait_for("the offenders' event lines", WAIT, |s| {
        s.contains("--than offenders: ") && s.contains("raw_syscalls:sys_exit: NR 0 = 1")
    });
    // perf-prof's lines: date, time, comm, tid, flags, [cpu], stamp:, event: fields.
    let enter = screen
        .lines()
        .find(|l| l.contains("raw_syscalls:sys_enter: NR 0 ("))
        .unwrap_or_else(|| panic!("no sys_enter line:\n{screen}"));
    let words: Vec<&str> = enter.trim_matches('│').split_whitespace().collect();
    assert_eq!(words[2], "reader", "{enter}");
    assert!(words[5].starts_with('[') && words[5].ends_with(']'), "{enter}");
    // o again: back to the table.
    tmux.keys(&["o"]);
    tmux.wait_for("the table again", WAIT, |s| {
        s.contains("│read(0) ") && !s.contains("--than offenders: ")
    });
    tmux.keys(&["q"]);
    tmux.wait_for("perfscope to exit", WAIT, |s| s.contains("perfscope-exit=0"));
}

#[test]
fn a_profile_file_has_no_tabs_for_views_it_cannot_fill() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("p.folded"), "main;work;leaf 30\nmain;idle 10\n").unwrap();
    let tmux = TmuxSession::start(
        "perfscope-first-file-tabs",
        80,
        24,
        dir.path(),
        &command_line("open p.folded"),
    );
    let screen = tmux.wait_for("the flamegraph", WAIT, |s| s.contains("leaf"));
    let tabs = screen.lines().next().unwrap_or_default();
    assert!(tabs.contains("Flamegraph") && tabs.contains("Hotspots"), "{tabs}");
    for empty in ["Latency", "Tables", "Console"] {
        assert!(!tabs.contains(empty), "{tabs}");
    }
    // Its key still shows a hidden view, and its tab while it is shown.
    tmux.keys(&["8"]);
    tmux.wait_for("the tables view", WAIT, |s| {
        s.lines().next().is_some_and(|l| l.contains("Tables"))
    });
    tmux.keys(&["q"]);
    tmux.wait_for("perfscope to exit", WAIT, |s| s.contains("perfscope-exit=0"));
}
