//! perf-prof's latency workflow in the TUI, in a real 80×24 terminal (tmux) on real
//! tracefs as root: a child sleeping 20 ms at a time, `multi-trace` pairing its switch-out
//! (with `stack`) and its switch-in with `--than 10ms`. The Latency view's heatmap (`m`)
//! shows the 20 ms latencies in the [16.8ms, 33.6ms) row; the Flamegraph holds the
//! offenders' stacks (the sleep's nanosleep → schedule); the Tables view's offender list
//! (`o`) opens one pair with Enter — its event lines and symbolized stack — and Esc goes
//! back.

mod common;

use std::time::Duration;

use common::event_lines::same_event_line;
use common::host::{Background, build_fixture, ensure_tracefs};
use common::tmux::TmuxSession;

const WAIT: Duration = Duration::from_secs(25);

/// Shades the heatmap draws a non-empty cell with.
fn has_shade(line: &str) -> bool {
    line.chars().any(|c| matches!(c, '░' | '▒' | '▓' | '█'))
}

#[test]
fn heatmap_flamegraph_and_offender_detail_of_a_20ms_sleeper() {
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    let exe = build_fixture(dir.path(), "sleeper", &[]);
    let child = Background::start(&exe, &["20"]);
    let pid = child.pid();
    let tmux = TmuxSession::start(
        "perfscope-latency-tui",
        80,
        24,
        dir.path(),
        &format!(
            "{} multi-trace -e 'sched:sched_switch/prev_pid=={pid}/key=prev_pid/stack/' \
             -e 'sched:sched_switch/next_pid=={pid}/key=next_pid/' --order --than 10ms \
             --heatmap heat; echo perfscope-exit=$?; sleep 60",
            env!("CARGO_BIN_EXE_perfscope")
        ),
    );

    // The heatmap: every latency is one 20 ms sleep, so the [16.8ms, 33.6ms) row is shaded
    // and the fast rows under it are not (the pairs are the sleeper's alone).
    tmux.keys(&["4"]);
    tmux.keys(&["m"]);
    let screen = tmux.wait_for("the 20 ms row of the heatmap shaded", WAIT, |s| {
        s.contains("latency heatmap · every pair")
            && s.lines().any(|l| l.contains(" 16.8ms ") && has_shade(l))
    });
    for fast in [" 1.05ms ", " 4.10us "] {
        assert!(
            !screen.lines().any(|l| l.contains(fast) && has_shade(l)),
            "no pair of the sleeper is that fast:\n{screen}"
        );
    }
    // The histograms again with the same key.
    tmux.keys(&["m"]);
    tmux.wait_for("the histograms back", WAIT, |s| s.contains("latency histograms"));

    // The offenders' stacks in the flamegraph: the sleep goes through do_nanosleep into
    // the scheduler.
    tmux.keys(&["2"]);
    let screen = tmux.wait_for("the sleep's stack in the flamegraph", WAIT, |s| {
        s.contains("do_nanosleep") && s.contains("schedule")
    });
    assert!(screen.contains("sleeper"), "the comm is the root:\n{screen}");

    // The offender list, one pair opened: its two event lines and the stack.
    tmux.keys(&["8"]);
    tmux.keys(&["o"]);
    // The lines are wider than 80 columns: the thread column names the sleeper.
    tmux.wait_for("the offender list", WAIT, |s| {
        s.contains("--than offenders:") && s.lines().any(|l| l.contains(&format!("sleeper {pid:>6} ")))
    });
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("one offender opened", WAIT, |s| s.contains("events and stacks"));
    assert!(
        screen.lines().any(|l| l.contains(&format!("sleeper {pid:>6} "))),
        "the pair's event lines:\n{screen}"
    );
    assert!(
        screen
            .lines()
            .any(|l| l.contains("__schedule") && l.contains("[kernel.kallsyms]")),
        "the switch-out's stack, symbolized:\n{screen}"
    );
    tmux.keys(&["Escape"]);
    tmux.wait_for("back to the list", WAIT, |s| s.contains("--than offenders:"));

    tmux.keys(&["q"]);
    let screen = tmux.wait_for("perfscope to exit", WAIT, |s| s.contains("perfscope-exit="));
    assert!(screen.contains("perfscope-exit=0"), "{screen}");
    // `--heatmap FILE` still writes perf-prof's file.
    let file = dir.path().join("heat-sched_switch-sched_switch.lat");
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    assert!(
        text.lines().any(|l| l
            .split_once(' ')
            .is_some_and(|(_, lat)| lat.parse::<u64>().is_ok_and(|ns| ns > 10_000_000))),
        "the 20 ms pairs are in the file:\n{text}"
    );
    drop(child);
}

/// Text output (stdout not a terminal): each offending pair's event with `stack` prints
/// its stack under its line, as perf-prof's multi-trace does.
#[test]
fn text_prints_the_stack_under_an_offenders_event() {
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    let exe = build_fixture(dir.path(), "sleeper", &[]);
    let child = Background::start(&exe, &["20"]);
    let pid = child.pid();
    let (stdout, _) = common::host::perfscope_ok(
        dir.path(),
        &[
            "multi-trace",
            "-e",
            &format!("sched:sched_switch/prev_pid=={pid}/key=prev_pid/stack/"),
            "-e",
            &format!("sched:sched_switch/next_pid=={pid}/key=next_pid/"),
            "--order",
            "--than",
            "10ms",
            "--duration",
            "1",
            "--out",
            "out",
        ],
    );
    drop(child);
    let lines: Vec<&str> = stdout.lines().collect();
    let switch_out = format!("prev_pid={pid} ");
    let first = lines
        .iter()
        .position(|l| l.contains(&switch_out) && l.contains("sched:sched_switch"))
        .unwrap_or_else(|| panic!("a slow pair's switch-out:\n{stdout}"));
    // Leaf first: the stack's first frame is the scheduler, and the sleep is on it.
    let stack: Vec<&str> = lines[first + 1..]
        .iter()
        .take_while(|l| l.starts_with("    "))
        .copied()
        .collect();
    assert!(
        stack
            .first()
            .is_some_and(|l| l.contains("__schedule ([kernel.kallsyms])")),
        "{stdout}"
    );
    assert!(stack.iter().any(|l| l.contains(" do_nanosleep ")), "{stdout}");
    saved_as_printed(&lines, &dir.path().join("out"));
}

/// `--out`: offenders.txt is the offender lines the text printed first (events and
/// stacks), and offenders.json's stack frames are the ones printed under the events.
fn saved_as_printed(printed: &[&str], out: &std::path::Path) {
    let work = out.join("perf").join(std::env::consts::ARCH).join("latest");
    let read =
        |name: &str| std::fs::read_to_string(work.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    let text = read("offenders.txt");
    let saved: Vec<&str> = text.lines().collect();
    assert!(saved.len() >= 3, "a pair and its stack:\n{text}");
    for (p, s) in printed.iter().zip(&saved) {
        assert!(same_event_line(p, s), "printed: {p}\nsaved:   {s}");
    }
    let json: serde_json::Value = serde_json::from_str(&read("offenders.json")).unwrap();
    let first_pair = &json["offenders"][0];
    // The pair's first line, then its switch-out's stack as printed.
    let frames = first_pair["first"]["stack"]
        .as_array()
        .expect("the switch-out's stack");
    let as_printed: Vec<String> = frames
        .iter()
        .map(|f| {
            let address =
                u64::from_str_radix(f["address"].as_str().unwrap().trim_start_matches("0x"), 16).unwrap();
            let module = f["module"]
                .as_str()
                .map(|m| format!(" ({m})"))
                .unwrap_or_default();
            format!("    {address:016x} {}{module}", f["function"].as_str().unwrap())
        })
        .collect();
    assert_eq!(as_printed, printed[1..=frames.len()], "{first_pair:#}");
    let report: serde_json::Value = serde_json::from_str(&read("report.json")).unwrap();
    assert!(report["artifacts"]["offenders_json"].is_string(), "{report:#}");
    assert!(report["artifacts"]["heatmap_csv"].is_string(), "{report:#}");
}
