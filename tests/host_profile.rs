//! perf-prof's profile text and its common options, on the real binary over real
//! perf_event and tracefs, with workloads the tests start: `--than PERCENT` prints only a
//! busy thread's samples, `-g --flame-graph F -i MS` writes per-interval folded stacks
//! naming the busy function, `-N COUNT` ends a run after COUNT events, and `exec=`
//! prints a printf per event.

mod common;

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

use common::host::{build_fixture, ensure_tracefs};

fn perfscope(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_perfscope"))
        .current_dir(cwd)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Kills the workload however the test ends.
struct Workload(Child);

impl Drop for Workload {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start(exe: &Path, args: &[&str]) -> Workload {
    Workload(Command::new(exe).args(args).spawn().unwrap())
}

/// A sampling run ends clean — or, on a machine too busy for the reader to keep up, with
/// the loss said on stderr and exit 3: nothing else on stderr either way.
fn complete_or_said_lost(out: &Output) {
    let stderr = text(&out.stderr);
    let lost = stderr.contains(": lost ");
    assert!(
        out.status.code() == Some(0) || (lost && out.status.code() == Some(3)),
        "{:?}: {stderr}",
        out.status
    );
    assert!(stderr.lines().all(|l| l.contains("lost ")), "{stderr}");
}

/// The sample lines of thread `tid` (perf-prof's profile line, to the character).
fn lines_of(stdout: &str, comm: &str, tid: u32) -> Vec<String> {
    let line = regex::Regex::new(&format!(
        r"^\d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{{6}} +{comm} +{tid} \[\d{{3}}\] \d+\.\d{{6}}: profile: \d+ cpu-clock$"
    ))
    .unwrap();
    stdout
        .lines()
        .filter(|l| line.is_match(l))
        .map(String::from)
        .collect()
}

#[test]
fn than_prints_the_busy_threads_samples_and_not_the_lightly_busy_ones() {
    let dir = tempfile::tempdir().unwrap();
    let hot = build_fixture(dir.path(), "hot", &[]);
    let duty = build_fixture(dir.path(), "duty", &[]);
    // hot spins all the time; duty 2 % of the time (≈20 samples a second at 997 Hz).
    let busy = start(&hot, &["20"]);
    let light = start(&duty, &["2", "20"]);
    let pids = format!("{},{}", busy.0.id(), light.0.id());
    let profile = |extra: &[&str]| {
        let mut args = vec!["profile", "-F", "997", "-p", &pids, "--duration", "3"];
        args.extend(extra);
        let out = perfscope(dir.path(), &args);
        complete_or_said_lost(&out);
        text(&out.stdout)
    };
    // Without --than both print: the light child is sampled.
    let all = profile(&[]);
    let light_all = lines_of(&all, "duty", light.0.id()).len();
    assert!(light_all >= 5, "duty was sampled {light_all} times:\n{all}");
    // Each thread is its own instance (-p): only the busy one passes 20 % of a second.
    let than = profile(&["-i", "1000", "--than", "20"]);
    let hot_lines = lines_of(&than, "hot", busy.0.id()).len();
    let light_lines = lines_of(&than, "duty", light.0.id()).len();
    // ~3,000 on a quiet machine; the point is that they print at all.
    assert!(hot_lines >= 100, "hot printed {hot_lines} samples:\n{than}");
    assert_eq!(light_lines, 0, "duty is ~2 % busy:\n{than}");
    // No other line sneaks in.
    assert_eq!(than.lines().count(), hot_lines, "{than}");
}

#[test]
fn flame_graph_writes_the_busy_functions_stacks_per_interval() {
    let dir = tempfile::tempdir().unwrap();
    let hot = build_fixture(dir.path(), "hot", &[]);
    let busy = start(&hot, &["20"]);
    let pid = busy.0.id().to_string();
    let out = perfscope(
        dir.path(),
        &[
            "profile",
            "-F",
            "997",
            "-g",
            "-i",
            "1000",
            "--flame-graph",
            "cpu",
            "-p",
            &pid,
            "--duration",
            "3",
        ],
    );
    complete_or_said_lost(&out);
    let stdout = text(&out.stdout);
    // The samples still print, their stacks go to the file only (~3,000 on a quiet
    // machine, fewer beside busy ones).
    assert!(lines_of(&stdout, "hot", busy.0.id()).len() > 100, "{stdout}");
    assert!(!stdout.lines().any(|l| l.starts_with("    ")), "{stdout}");
    assert!(stdout.contains("flamegraph.pl cpu.folded > cpu.svg"), "{stdout}");
    let folded = std::fs::read_to_string(dir.path().join("cpu.folded")).unwrap();
    let stamp = regex::Regex::new(r"^(\d{4}-\d\d-\d\d;\d\d:\d\d:\d\d);hot;(.*) (\d+)$").unwrap();
    let mut sections = std::collections::BTreeSet::new();
    let mut in_hot_leaf = 0;
    for line in folded.lines() {
        let c = stamp
            .captures(line)
            .unwrap_or_else(|| panic!("not a stamped folded line: {line}"));
        sections.insert(c[1].to_string());
        if c[2].split(';').any(|f| f == "hot_leaf") {
            in_hot_leaf += c[3].parse::<u64>().unwrap();
        }
    }
    assert!(sections.len() >= 2, "one section per interval: {sections:?}");
    assert!(in_hot_leaf > 100, "hot_leaf in {in_hot_leaf} samples:\n{folded}");
}

#[test]
fn exit_n_ends_trace_profile_and_an_analyzer_after_n_events() {
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    let out = perfscope(dir.path(), &["trace", "-e", "sched:sched_switch", "-N", "5"]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(stderr, "");
    assert_eq!(stdout.lines().count(), 5, "{stdout}");
    assert!(
        stdout
            .lines()
            .all(|l| l.contains(": sched:sched_switch: prev_comm=")),
        "{stdout}"
    );

    let out = perfscope(dir.path(), &["profile", "-F", "997", "--exit-N", "7"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(stdout.lines().count(), 7, "{stdout}");
    assert!(stdout.lines().all(|l| l.contains(": profile: ")), "{stdout}");

    // An analyzer ends by itself too (the test would hang otherwise) and prints its table.
    let out = perfscope(
        dir.path(),
        &["stat", "-e", "sched:sched_switch", "-N", "20", "--duration", "60"],
    );
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(stdout.contains("sched_switch"), "{stdout}");
}

#[test]
fn exec_prints_its_printf_after_each_event() {
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    let out = perfscope(
        dir.path(),
        &[
            "trace",
            "-e",
            r#"sched:sched_switch//exec=printf("EXEC next=%d\n", next_pid)/"#,
            "-N",
            "3",
        ],
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 6, "{stdout}");
    for pair in lines.chunks(2) {
        let next = pair[0]
            .split(" next_pid=")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .unwrap_or_else(|| panic!("{}", pair[0]));
        assert_eq!(pair[1], format!("EXEC next={next}"), "{stdout}");
    }
}

#[test]
fn bad_profile_and_exec_input_fails_with_a_clear_error() {
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    let out = perfscope(dir.path(), &["profile", "--than", "0"]);
    assert_ne!(out.status.code(), Some(0));
    assert!(text(&out.stderr).contains("--than"), "{}", text(&out.stderr));
    let out = perfscope(dir.path(), &["profile", "--flame-graph", "cpu"]);
    assert_ne!(out.status.code(), Some(0));
    assert!(
        text(&out.stderr).contains("--call-graph"),
        "{}",
        text(&out.stderr)
    );
    let out = perfscope(dir.path(), &["trace", "-e", "sched:sched_switch", "-N", "0"]);
    assert_ne!(out.status.code(), Some(0));
    assert!(text(&out.stderr).contains("exit-N"), "{}", text(&out.stderr));
    let out = perfscope(
        dir.path(),
        &["trace", "-e", "sched:sched_switch//exec=no_field/", "-N", "1"],
    );
    assert_ne!(out.status.code(), Some(0));
    assert!(
        text(&out.stderr).contains("exec=: unknown field 'no_field'"),
        "{}",
        text(&out.stderr)
    );
}
