//! One verdict per session, on the real binary: the exit code is report.json's
//! `returncode`, `artifacts` lists only files that exist, a host session's reports carry
//! no guest notes, an analysis has no CPU-profile sections, and a recorded session replays
//! with the verdict it was recorded with — lost events, a recorder that was killed or is
//! still writing, corrupt rows: exit 3 and the reason, never `result ok`.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::host::ensure_tracefs;
use common::profile::read_json;
use serde_json::Value;

fn perfscope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_perfscope"))
        .args(args)
        .output()
        .expect("cannot run perfscope")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn asset(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets").join(name)
}

/// The `latest/` directory of the one architecture an export wrote under `out`.
fn latest(out: &Path) -> PathBuf {
    let arch = std::fs::read_dir(out.join("perf"))
        .unwrap_or_else(|e| panic!("no export under {}: {e}", out.display()))
        .next()
        .expect("an architecture directory")
        .unwrap();
    arch.path().join("latest")
}

/// What every export must say of itself: `returncode` is the process's exit code, the
/// verdict's result and input cleanliness are report.json's, and every listed artifact
/// is a file (or directory) that exists.
fn check_report(o: &Output, out: &Path) -> Value {
    let report = read_json(&latest(out).join("report.json"));
    let code = o.status.code().expect("exited");
    assert_eq!(
        report["returncode"].as_i64(),
        Some(i64::from(code)),
        "report.json returncode vs exit code; stderr:\n{}",
        text(&o.stderr)
    );
    assert_eq!(report["verdict"]["exit_code"].as_i64(), Some(i64::from(code)));
    assert_eq!(report["result"], report["verdict"]["result"]);
    assert_eq!(report["input"]["clean"], report["verdict"]["input_clean"]);
    assert_eq!(report["result"] == "ok", code == 0, "{report:#}");
    let artifacts = report["artifacts"].as_object().expect("artifacts");
    assert!(!artifacts.is_empty());
    for (label, path) in artifacts {
        let path = Path::new(path.as_str().unwrap());
        assert!(
            path.exists(),
            "artifacts.{label} = {} does not exist",
            path.display()
        );
    }
    // Each reason for a 3 is on stderr, and in report.md's Completeness section.
    let md = std::fs::read_to_string(latest(out).join("report.md")).unwrap();
    assert!(md.contains("## Completeness"), "{md}");
    for finding in report["verdict"]["findings"].as_array().unwrap() {
        let gap = finding["gap"].as_str().unwrap();
        assert!(
            md.contains(&gap.replace('_', " ")),
            "report.md misses {gap}:\n{md}"
        );
        if finding["makes_incomplete"] == true {
            assert!(
                text(&o.stderr).contains(&format!("perfscope: incomplete: {}", gap.replace('_', " "))),
                "stderr misses {gap}: {}",
                text(&o.stderr)
            );
        }
    }
    report
}

#[test]
fn recorded_inputs_exit_with_report_jsons_returncode_and_list_only_existing_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A clean recording: 0.
    let o = perfscope(&[
        "report",
        asset("tinyk-riscv64.qperf.bin").to_str().unwrap(),
        "--elf",
        asset("tinyk-riscv64.elf").to_str().unwrap(),
        "--out",
        d.join("clean").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let report = check_report(&o, &d.join("clean"));
    // The qperf.bin it read and the plugin's summary beside it, as the reference lists them.
    assert!(
        report["artifacts"]["raw_samples"]
            .as_str()
            .unwrap()
            .ends_with("tinyk-riscv64.qperf.bin")
    );
    assert!(report["artifacts"].get("plugin_summary").is_some());
    for missing in [
        "qemu_config",
        "host_time",
        "host_perf",
        "profile_stdout",
        "flamegraph_focus",
    ] {
        assert!(
            report["artifacts"].get(missing).is_none(),
            "{missing} was not written"
        );
    }
    // The same recording cut mid-record: 3, the bytes lost in the verdict.
    let whole = std::fs::read(asset("tinyk-riscv64.qperf.bin")).unwrap();
    let cut = d.join("cut.qperf.bin");
    std::fs::write(&cut, &whole[..whole.len() - 7]).unwrap();
    let o = perfscope(&[
        "report",
        cut.to_str().unwrap(),
        "--elf",
        asset("tinyk-riscv64.elf").to_str().unwrap(),
        "--out",
        d.join("cut").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    let report = check_report(&o, &d.join("cut"));
    assert_eq!(report["verdict"]["findings"][0]["gap"], "input_cut");
    assert!(report["verdict"]["findings"][0]["count"].as_u64().unwrap() > 0);
    // A folded file with a malformed line: 3.
    let folded = d.join("x.folded");
    std::fs::write(&folded, "a;b 3\nbroken line\na;c 2\n").unwrap();
    let o = perfscope(&[
        "report",
        "--folded",
        folded.to_str().unwrap(),
        "--out",
        d.join("folded").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    check_report(&o, &d.join("folded"));
}

#[test]
fn a_host_export_lists_no_guest_files_and_carries_no_guest_notes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = perfscope(&[
        "top",
        "--no-tui",
        "--out",
        out.to_str().unwrap(),
        "--",
        "sh",
        "-c",
        "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done",
    ]);
    let report = check_report(&o, &out);
    for guest in [
        "raw_samples",
        "plugin_summary",
        "qemu_config",
        "host_time",
        "host_perf",
        "profile_stdout",
    ] {
        assert!(
            report["artifacts"].get(guest).is_none(),
            "a host export lists {guest}"
        );
    }
    for key in [
        "differences_from_reference",
        "plugin_summary",
        "fix_candidates",
        "host_time_metrics",
    ] {
        assert!(report.get(key).is_none(), "a host report.json has {key}");
    }
    let md = std::fs::read_to_string(latest(&out).join("report.md")).unwrap();
    // The artifacts keep the reference's layout (a `qperf/` directory); the notes go.
    let md = md.split("## Artifacts").next().unwrap();
    for guest in [
        "qperf",
        "QEMU",
        "plugin",
        "firmware",
        "physical alias",
        "Workload Metrics",
        "Fix Candidates",
    ] {
        assert!(!md.contains(guest), "a host report.md says {guest:?}:\n{md}");
    }
    let summary = std::fs::read_to_string(latest(&out).join("qperf/summary.txt")).unwrap();
    assert!(!summary.contains("qperf.summary.txt"), "{summary}");
}

/// `syscalls --out DIR` in text mode writes the artifact set (the flag is honoured), and an
/// analysis without stack samples has no CPU-profile sections.
#[test]
fn an_analyzers_text_run_honours_out_and_its_report_has_no_empty_cpu_sections() {
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = perfscope(&[
        "syscalls",
        "--no-tui",
        "--out",
        out.to_str().unwrap(),
        "--",
        "dd",
        "if=/dev/zero",
        "of=/dev/null",
        "bs=1",
        "count=2000",
    ]);
    assert!(
        text(&o.stdout).contains("read"),
        "perf-prof's table on stdout: {}",
        text(&o.stdout)
    );
    let report = check_report(&o, &out);
    // dd's 4000 syscalls are 8000 events; a busy machine's ring may lose some (exit 3).
    let events = report["analysis"]["events"].as_u64().unwrap();
    let lost = count_of(&report, "lost").unwrap_or(0);
    assert!(
        events > 0 && events + lost >= 8000,
        "{events} events, {lost} lost"
    );
    let md = std::fs::read_to_string(latest(&out).join("report.md")).unwrap();
    assert!(md.contains("## Latency"), "{md}");
    for section in [
        "Top Functions",
        "Top Stacks",
        "Hotspot Categories",
        "Resolve Statistics",
        "callchain:",
    ] {
        assert!(
            !md.contains(section),
            "an analysis' report.md has {section:?}:\n{md}"
        );
    }
    // Without --out, the text run writes nothing.
    let cwd = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_perfscope"))
        .current_dir(cwd.path())
        .args(["syscalls", "--no-tui", "--", "true"])
        .output()
        .unwrap();
    assert!(o.status.code().is_some());
    assert_eq!(
        std::fs::read_dir(cwd.path()).unwrap().count(),
        0,
        "nothing written without --out"
    );
}

#[test]
fn flags_an_analyzer_does_not_use_are_refused_by_the_parser_with_exit_2() {
    for args in [
        &["page-faults", "--no-tui", "--than", "1ms"][..],
        &["page-faults", "--no-tui", "--perins"],
        &["page-faults", "--no-tui", "-k", "pid"],
        &["syscalls", "--no-tui", "-k", "pid"],
        &["percpu-stat", "--no-tui", "--perins"],
        &["top", "--no-tui", "--than", "1ms"],
        &["top", "--no-tui", "--perins", "-i", "1000"],
    ] {
        let o = perfscope(args);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("unexpected argument"), "{args:?}: {err}");
    }
    // Sampling top takes -k and -i only with -e (top's key/value table).
    let o = perfscope(&["top", "--no-tui", "-k", "pid"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("sampling top"), "{}", text(&o.stderr));
}

#[test]
fn each_analyzer_is_offered_exactly_the_flags_it_uses() {
    use perfscope::analyzers::options::AnalyzerKind;
    for kind in AnalyzerKind::ALL {
        let o = perfscope(&[kind.name(), "--help"]);
        assert_eq!(o.status.code(), Some(0), "{}", kind.name());
        let help = text(&o.stdout);
        let offers = |flag: &str| help.lines().any(|l| l.trim_start().starts_with(flag));
        let name = kind.name();
        assert_eq!(offers("-k, --key"), kind.uses_key(), "{name} -k:\n{help}");
        assert_eq!(offers("--perins"), kind.uses_perins(), "{name} --perins:\n{help}");
        assert_eq!(offers("--than"), kind.uses_than(), "{name} --than:\n{help}");
    }
}

#[test]
fn a_workload_that_cannot_start_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    for command in [&["top", "--no-tui"][..], &["syscalls", "--no-tui"]] {
        let mut args = command.to_vec();
        args.extend(["--out", out.to_str().unwrap(), "--", "/nonexistent/cmd", "arg"]);
        let o = perfscope(&args);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains("/nonexistent/cmd") && err.contains("No such file"),
            "{err}"
        );
        assert!(!out.exists(), "no profile of nothing was written");
    }
}

/// A syscall storm through a one-page ring: the kernel loses records for certain.
fn lossy_syscalls(db: &Path) -> Output {
    perfscope(&[
        "syscalls",
        "--no-tui",
        "-m",
        "1",
        "--record",
        db.to_str().unwrap(),
        "--",
        "dd",
        "if=/dev/zero",
        "of=/dev/null",
        "bs=1",
        "count=400000",
    ])
}

/// The verdict's count of `gap`, from report.json.
fn count_of(report: &Value, gap: &str) -> Option<u64> {
    report["verdict"]["findings"]
        .as_array()?
        .iter()
        .find(|f| f["gap"] == gap)?["count"]
        .as_u64()
}

#[test]
fn a_session_recorded_with_loss_replays_with_the_same_loss_and_exit_3() {
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("lossy.db");
    let live = lossy_syscalls(&db);
    let err = text(&live.stderr);
    assert_eq!(live.status.code(), Some(3), "{err}");
    let said: u64 = err
        .lines()
        .find_map(|l| {
            l.strip_prefix("perfscope: incomplete: lost ")?
                .split(':')
                .next()?
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("no lost count on stderr: {err}"));
    assert!(said > 0);
    for command in ["report", "open"] {
        let out = dir.path().join(command);
        let mut args = vec![command, db.to_str().unwrap(), "--out", out.to_str().unwrap()];
        if command == "open" {
            args.push("--no-tui");
        }
        let o = perfscope(&args);
        assert_eq!(o.status.code(), Some(3), "{command}: {}", text(&o.stderr));
        let report = check_report(&o, &out);
        assert_eq!(
            count_of(&report, "lost"),
            Some(said),
            "{command}: {:#}",
            report["verdict"]
        );
    }
}

/// A recorder that runs until it is killed: its session, and the recorder.
fn recording(dir: &Path) -> (PathBuf, Child) {
    let db = dir.join("running.db");
    let child = Command::new(env!("CARGO_BIN_EXE_perfscope"))
        .args(["top", "--no-tui", "--record", db.to_str().unwrap(), "--out"])
        .arg(dir.join("live-out"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait (on the file, not the clock) until samples have been committed.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let committed =
            rusqlite::Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
                .and_then(|c| c.query_row("SELECT COUNT(*) FROM samples", [], |r| r.get::<_, i64>(0)))
                .unwrap_or(0);
        if committed > 0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the recorder committed no sample in 60 s"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    (db, child)
}

#[test]
fn a_recording_in_progress_and_a_killed_one_replay_as_unfinished() {
    let dir = tempfile::tempdir().unwrap();
    let (db, mut child) = recording(dir.path());
    // Still being written.
    let out = dir.path().join("in-progress");
    let o = perfscope(&["report", db.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let report = check_report(&o, &out);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("the recording did not finish"),
        "{}",
        text(&o.stderr)
    );
    assert_eq!(report["verdict"]["findings"][0]["gap"], "interrupted");
    // SIGKILLed.
    child.kill().unwrap();
    child.wait().unwrap();
    let out = dir.path().join("killed");
    let o = perfscope(&["report", db.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    check_report(&o, &out);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("the recording did not finish"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn a_finished_recording_replays_clean_and_its_corrupt_rows_are_counted() {
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let live = perfscope(&[
        "syscalls",
        "--no-tui",
        "--record",
        db.to_str().unwrap(),
        "--",
        "dd",
        "if=/dev/zero",
        "of=/dev/null",
        "bs=1",
        "count=2000",
    ]);
    let live_code = live.status.code();
    let out = dir.path().join("whole");
    let o = perfscope(&["report", db.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let report = check_report(&o, &out);
    // The replay says what the live run said (0, or 3 when this machine lost records).
    assert_eq!(
        o.status.code(),
        live_code,
        "{}\n{}",
        text(&live.stderr),
        text(&o.stderr)
    );
    assert!(count_of(&report, "corrupt_rows").is_none());
    // Cut every other event's record to one byte: an analyzer would read garbage.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let cut = conn
        .execute("UPDATE events SET raw = X'00' WHERE id % 2 = 0", [])
        .unwrap() as u64;
    assert!(cut > 1000, "{cut}");
    drop(conn);
    let out = dir.path().join("corrupt");
    let o = perfscope(&["report", db.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let report = check_report(&o, &out);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    assert_eq!(count_of(&report, "corrupt_rows"), Some(cut));
    assert_eq!(report["result"], "incomplete");
}

/// The terminal UI exits with the same verdict the status line showed: a session that
/// lost records says so on the status line, and `q` exits 3 with the reason.
#[test]
fn the_tui_exits_3_after_a_session_that_lost_records() {
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    let tmux = common::tmux::TmuxSession::start(
        "verdict-tui",
        100,
        24,
        dir.path(),
        &format!(
            "{} syscalls -m 1 --out out -- sh -c 'dd if=/dev/zero of=/dev/null bs=1 \
             count=400000 2>/dev/null'; echo perfscope-exit=$?; sleep 60",
            env!("CARGO_BIN_EXE_perfscope")
        ),
    );
    let wait = Duration::from_secs(60);
    tmux.wait_for("the status line to say what was lost", wait, |s| {
        s.contains("│ incomplete: lost ")
    });
    tmux.keys(&["q"]);
    let screen = tmux.wait_for("perfscope to exit", wait, |s| s.contains("perfscope-exit="));
    assert!(screen.contains("perfscope-exit=3"), "{screen}");
    assert!(screen.contains("perfscope: incomplete: lost "), "{screen}");
}

/// Switches the kernel does not deliver (here: every switch away from the idle task) are
/// rebuilt from switch records: each is marked in the listing, and the verdict counts
/// exactly the marked ones — said, but not a reason for exit 3.
#[test]
fn rebuilt_switches_are_marked_in_the_listing_and_counted_in_the_verdict() {
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    // System-wide (switch records come on CPU rings), beside a sleeper: its CPU goes
    // idle and comes back from idle every 10 ms.
    let mut sleeper = Command::new("sh")
        .args(["-c", "while :; do sleep 0.01; done"])
        .spawn()
        .unwrap();
    let o = perfscope(&[
        "trace",
        "-e",
        "sched:sched_switch",
        "--no-tui",
        "--duration",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    sleeper.kill().unwrap();
    sleeper.wait().unwrap();
    let report = check_report(&o, &out);
    let marked = text(&o.stdout)
        .lines()
        .filter(|l| l.ends_with("[rebuilt by perfscope]"))
        .count() as u64;
    assert!(
        marked > 0,
        "no switch away from idle was rebuilt:\n{}",
        text(&o.stdout)
    );
    assert_eq!(
        count_of(&report, "rebuilt"),
        Some(marked),
        "{:#}",
        report["verdict"]
    );
    let rebuilt = report["verdict"]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["gap"] == "rebuilt")
        .unwrap();
    assert_eq!(rebuilt["makes_incomplete"], false);
}

/// `diff` is as complete as both of its profiles: each side's reasons, said for which side.
#[test]
fn a_diff_of_a_malformed_profile_exits_3_naming_the_side() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("a.folded");
    let bad = dir.path().join("b.folded");
    std::fs::write(&good, "main;a 3\nmain;b 2\n").unwrap();
    std::fs::write(&bad, "main;a 1\nbroken line\nmain;b 4\n").unwrap();
    let diff = |a: &Path, b: &Path| {
        perfscope(&[
            "diff",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "--out",
            dir.path().join("out").to_str().unwrap(),
        ])
    };
    let o = diff(&good, &good);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let o = diff(&good, &bad);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(
        err.contains("perfscope: incomplete: comparison: input cut"),
        "{err}"
    );
    assert!(
        text(&o.stdout).contains("Top 2 changed functions"),
        "the diff is still printed"
    );
    assert!(!text(&o.stdout).contains("warning"), "warnings go to stderr");
    assert!(
        err.contains("warning: ") && err.contains("malformed line"),
        "{err}"
    );
}
