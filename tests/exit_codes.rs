//! The exit-code table (README "Exit codes", `src/cli/exit.rs`) on the real binary:
//! 0 clean, 1 error, 2 usage, 3 finished but incomplete — for recorded inputs and for a
//! real QEMU that fails to start or is killed mid-run.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};

use common::guest::build_test_guest;
use common::plugin::build_plugin;
use common::profile::read_json;

fn perfscope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_perfscope"))
        .args(args)
        .output()
        .expect("cannot run perfscope")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn code(o: &Output) -> Option<i32> {
    o.status.code()
}

#[test]
fn a_clean_report_exits_0_with_results_on_stdout_only() {
    let dir = tempfile::tempdir().unwrap();
    let folded = dir.path().join("x.folded");
    std::fs::write(&folded, "a;b 3\na;c 2\n").unwrap();
    let out = dir.path().join("out");
    let o = perfscope(&[
        "report",
        "--folded",
        folded.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("5 samples, result ok"),
        "{}",
        text(&o.stdout)
    );
    assert_eq!(text(&o.stderr), "", "nothing to warn about");
}

#[test]
fn an_unreadable_input_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let o = perfscope(&[
        "report",
        "--folded",
        "/nonexistent/x.folded",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(code(&o), Some(1), "{}", text(&o.stderr));
    assert!(text(&o.stderr).starts_with("perfscope: "), "{}", text(&o.stderr));
}

#[test]
fn a_wrong_command_line_exits_2() {
    let o = perfscope(&["report", "--no-such-flag"]);
    assert_eq!(code(&o), Some(2), "{}", text(&o.stderr));
    let o = perfscope(&["qemu", "--freq", "fast", "--kernel", "k"]);
    assert_eq!(code(&o), Some(2), "{}", text(&o.stderr));
    // The table is in --help.
    let o = perfscope(&["--help"]);
    assert_eq!(code(&o), Some(0));
    assert!(text(&o.stdout).contains("Exit codes: 0 clean, 1 error, 2 usage, 3 finished but incomplete"));
}

#[test]
fn corrupt_input_exits_3_with_result_incomplete_and_the_warning_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let folded = dir.path().join("x.folded");
    std::fs::write(&folded, "a;b 3\nbroken line\na;c 2\n").unwrap();
    let out = dir.path().join("out");
    let o = perfscope(&[
        "report",
        "--folded",
        folded.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), Some(3), "{}", text(&o.stderr));
    let report = read_json(&out.join("perf/unknown/latest/report.json"));
    assert_eq!(report["result"], "incomplete");
    assert!(
        text(&o.stdout).contains("result incomplete"),
        "{}",
        text(&o.stdout)
    );
    assert!(
        !text(&o.stdout).contains("warning"),
        "warnings are not results: {}",
        text(&o.stdout)
    );
    let err = text(&o.stderr);
    assert!(
        err.contains("warning: ") && err.contains("malformed line"),
        "{err}"
    );
    assert!(err.contains("perfscope: incomplete: "), "{err}");
}

fn qemu_args<'a>(
    out: &'a Path,
    guest: &'a common::guest::TestGuest,
    plugin: &'a Path,
    qemu: &'a Path,
) -> Vec<&'a str> {
    vec![
        "qemu",
        "--no-tui",
        "--arch",
        "riscv64",
        "--kernel",
        guest.bin.to_str().unwrap(),
        "--elf",
        guest.elf.to_str().unwrap(),
        "--plugin",
        plugin.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--qemu",
        qemu.to_str().unwrap(),
        "--timeout",
        "60",
    ]
}

#[test]
fn qemu_that_fails_to_start_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let guest = build_test_guest();
    let plugin = build_plugin();
    let out = dir.path().join("out");
    let o = perfscope(&qemu_args(&out, &guest, &plugin, Path::new("/bin/false")));
    assert_eq!(
        code(&o),
        Some(1),
        "stdout:\n{}\nstderr:\n{}",
        text(&o.stdout),
        text(&o.stderr)
    );
    assert!(
        text(&o.stderr).contains("QEMU exited with status 1 before the plugin sent a sample"),
        "{}",
        text(&o.stderr)
    );
}

/// A QEMU that ends on its own at once with status 0 (`--qemu /bin/true`) produced nothing
/// usable either: exit 1, not an incomplete profile of nothing.
#[test]
fn qemu_that_exits_0_before_a_sample_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let guest = build_test_guest();
    let plugin = build_plugin();
    let out = dir.path().join("out");
    let o = perfscope(&qemu_args(&out, &guest, &plugin, Path::new("/bin/true")));
    let err = text(&o.stderr);
    assert_eq!(code(&o), Some(1), "{err}");
    assert!(
        err.contains("QEMU exited with status 0 before the plugin sent a sample"),
        "{err}"
    );
}

/// Whether any process runs `exe` with `arg` on its command line.
fn running_with(exe_name: &str, arg: &Path) -> bool {
    std::fs::read_dir("/proc").unwrap().any(|entry| {
        let Ok(entry) = entry else { return false };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            return false;
        };
        let text = String::from_utf8_lossy(&cmdline);
        text.contains(exe_name) && text.contains(&*arg.to_string_lossy())
    })
}

/// A SIGKILLed `perfscope qemu` runs no cleanup; the kernel still takes its QEMU with it.
#[test]
fn a_killed_perfscope_qemu_leaves_no_qemu_behind() {
    let dir = tempfile::tempdir().unwrap();
    let guest = build_test_guest();
    let plugin = build_plugin();
    let out = dir.path().join("out");
    let mut args = qemu_args(&out, &guest, &plugin, Path::new("qemu-system-riscv64"));
    args.extend(["--workload", "bench 100000"]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_perfscope"))
        .args(&args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !running_with("qemu-system-riscv64", &out) {
        assert!(std::time::Instant::now() < deadline, "QEMU never started");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while running_with("qemu-system-riscv64", &out) {
        assert!(
            std::time::Instant::now() < deadline,
            "QEMU outlived the perfscope that ran it"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// A run interrupted mid-workload (SIGTERM, SIGINT, SIGHUP) keeps what it recorded but its
/// workload window never closed: exit 3, saying so.
#[test]
fn qemu_interrupted_mid_workload_exits_3() {
    let guest = build_test_guest();
    let plugin = build_plugin();
    for signal in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let mut args = qemu_args(&out, &guest, &plugin, Path::new("qemu-system-riscv64"));
        args.extend([
            "--shell-prefix",
            "starry:~# ",
            "--workload",
            "bench 100000",
            "--start-marker",
            "BENCH_START",
            "--stop-marker",
            "BENCH_END",
        ]);
        let mut child = Command::new(env!("CARGO_BIN_EXE_perfscope"))
            .args(&args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // The console is echoed on stdout: wait for the start marker there.
        let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        loop {
            line.clear();
            let n = std::io::BufRead::read_line(&mut stdout, &mut line).unwrap();
            assert!(n > 0, "the run ended before its start marker");
            if line.starts_with("BENCH_START") {
                break;
            }
        }
        // SAFETY: a signal to our own child.
        unsafe { libc::kill(child.id() as i32, signal) };
        std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
        let o = child.wait_with_output().unwrap();
        let err = text(&o.stderr);
        assert_eq!(code(&o), Some(3), "signal {signal}: {err}");
        assert!(err.contains("the stop marker \"BENCH_END\" never came"), "{err}");
        let report = read_json(&out.join("perf/riscv64/latest/report.json"));
        assert_eq!(report["returncode"], 3);
    }
}

#[test]
fn qemu_killed_mid_run_exits_3_and_its_report_is_not_ok() {
    let dir = tempfile::tempdir().unwrap();
    let guest = build_test_guest();
    let plugin = build_plugin();
    // A QEMU that something else (the OOM killer, a user) SIGKILLs after 3 s.
    let wrapper = dir.path().join("qemu-killed.sh");
    std::fs::write(
        &wrapper,
        "#!/bin/sh\n( sleep 3; kill -KILL $$ ) &\nexec qemu-system-riscv64 \"$@\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = dir.path().join("out");
    let mut args = qemu_args(&out, &guest, &plugin, &wrapper);
    args.extend(["--freq", "1000"]);
    let o = perfscope(&args);
    let err = text(&o.stderr);
    assert_eq!(code(&o), Some(3), "stdout:\n{}\nstderr:\n{err}", text(&o.stdout));
    assert!(err.contains("QEMU was killed by signal 9"), "{err}");
    let report = read_json(&out.join("perf/riscv64/latest/report.json"));
    assert_eq!(report["result"], "incomplete");
    assert_eq!(report["input"]["clean"], false);
    assert!(
        report["hotspots"]["total_samples"].as_u64().unwrap() > 0,
        "what was read is kept"
    );
}

/// Issue 11 point 17: symbols that do not match the samples are not `result ok`.
#[test]
fn an_elf_that_does_not_match_the_samples_exits_3_and_says_why() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bin = root.join("assets/tinyk-riscv64.qperf.bin");
    let dir = tempfile::tempdir().unwrap();
    // With the plugin's summary beside it (arch = riscv64): the ELF's arch is wrong.
    let out = dir.path().join("arch");
    let o = perfscope(&[
        "open",
        bin.to_str().unwrap(),
        "--elf",
        "/bin/ls",
        "--no-tui",
        "--out",
        out.to_str().unwrap(),
    ]);
    let err = text(&o.stderr);
    assert_eq!(code(&o), Some(3), "{err}");
    assert!(
        err.contains("/bin/ls is an x86_64 ELF but the samples were recorded on riscv64"),
        "{err}"
    );
    assert!(err.contains("(100%) are not in /bin/ls"), "{err}");
    let latest = std::fs::read_dir(out.join("perf"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
        .join("latest");
    let report = read_json(&latest.join("report.json"));
    assert_eq!(report["result"], "incomplete");
    let md = std::fs::read_to_string(latest.join("report.md")).unwrap();
    assert!(md.contains("recorded on riscv64"), "report.md says it too");
    // Without the summary (a bare qperf.bin): the unresolved share alone says it.
    let bare = dir.path().join("bare.qperf.bin");
    std::fs::copy(&bin, &bare).unwrap();
    let o = perfscope(&[
        "report",
        bare.to_str().unwrap(),
        "--elf",
        "/bin/ls",
        "--out",
        dir.path().join("bare").to_str().unwrap(),
    ]);
    let err = text(&o.stderr);
    assert_eq!(code(&o), Some(3), "{err}");
    assert!(
        err.contains("(100%) are not in /bin/ls: it does not match the samples"),
        "{err}"
    );
    // The right ELF: clean.
    let o = perfscope(&[
        "open",
        bin.to_str().unwrap(),
        "--elf",
        root.join("assets/tinyk-riscv64.elf").to_str().unwrap(),
        "--no-tui",
        "--out",
        dir.path().join("ok").to_str().unwrap(),
    ]);
    assert_eq!(code(&o), Some(0), "{}", text(&o.stderr));
}

/// A tmpfs of `size` mounted for the test (needs root, as the host tests do); unmounted on
/// drop.
struct TinyFs(tempfile::TempDir);

impl TinyFs {
    fn mount(size: &str) -> TinyFs {
        let dir = tempfile::tempdir().unwrap();
        let o = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "mounting a small tmpfs needs root: {}",
            text(&o.stderr)
        );
        TinyFs(dir)
    }
}

impl Drop for TinyFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.0.path()).status();
    }
}

/// `top --record` onto a filesystem that fills up: the run's artifacts are written, the
/// session is not whole — exit 3 with the reason (main exited 0).
#[test]
fn a_recording_that_cannot_store_its_rows_exits_3() {
    let full = TinyFs::mount("200k");
    let out = tempfile::tempdir().unwrap();
    let db = full.0.path().join("s.db");
    let o = perfscope(&[
        "top",
        "--no-tui",
        "--duration",
        "2",
        "--record",
        db.to_str().unwrap(),
        "--out",
        out.path().to_str().unwrap(),
    ]);
    let err = text(&o.stderr);
    assert_eq!(code(&o), Some(3), "{err}");
    assert!(
        err.contains("perfscope: incomplete: not recorded ") && err.contains("disk is full"),
        "{err}"
    );
}

/// One rule for every usage error (issue 25): a bad value exits 2 wherever it is caught —
/// by the argument parser, a command's own checks, or a feed reading its selectors — with
/// the value named, and nothing runs.
#[test]
fn every_bad_value_is_a_usage_error_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let folded = dir.path().join("x.folded");
    std::fs::write(&folded, "a;b 3\n").unwrap();
    let out = dir.path().join("out");
    let f = folded.to_str().unwrap();
    let o = out.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["top", "--no-tui", "--duration", "0"], "--duration"),
        (&["top", "--no-tui", "--duration", "NaN"], "--duration"),
        (&["top", "--no-tui", "-C", "5-2"], "5-2"),
        (&["top", "--no-tui", "-p", "a"], "-p a"),
        (&["top", "--no-tui", "-p", "999999"], "no such process: 999999"),
        (&["top", "--no-tui", "-t", "999999"], "no such thread: 999999"),
        (&["top", "--no-tui", "-m", "0"], "-m 0"),
        (
            &["top", "--no-tui", "-m", "9223372036854775808"],
            "-m 9223372036854775808",
        ),
        (&["report", "--folded", f, "--out", o, "--focus", "["], "--focus"),
        (&["report", "--folded", f, "--out", o, "--top", "0"], "--top"),
        (
            &[
                "syscalls",
                "--no-tui",
                "-e",
                "raw_syscalls:sys_enter//foo/",
                "-e",
                "raw_syscalls:sys_exit",
            ],
            "unknown attribute",
        ),
        (&["trace", "--no-tui", "-e", "nosuch:event"], "unknown event"),
        (
            &["trace", "--no-tui", "-e", "sched:sched_switch/prev_pid==/"],
            "sched_switch",
        ),
        (
            &["qemu", "--freq", "0", "--arch", "riscv64", "--kernel", "/bin/ls"],
            "--freq",
        ),
        // Checked before the 2,305 tracepoints are opened (97 s before).
        (&["num-dist", "--no-tui", "-e", "*:*"], "has no num=EXPR"),
        (&["open", f, "--no-tui", "--out", o, "--decay", "2"], "--decay"),
    ];
    for (args, names) in cases {
        let out = perfscope(args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(names), "{args:?}: {err}");
    }
    assert!(!out.exists(), "nothing ran");
}
