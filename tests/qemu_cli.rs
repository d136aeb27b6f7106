//! `perfscope qemu --no-tui` end to end on real QEMU with perfscope's plugin and the test
//! kernel: the workload window, the hottest function and path, the artifacts, a missing
//! stop marker, and QEMU killed mid-run.

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::profile::{
    MARKER_LATENCY_SAMPLES, folded_leaves, folded_lines, read_json, samples_before_the_start_marker,
    samples_outside,
};
use perfscope::sources::qperf_file::{FormatVersion, ReadEnd, read_file};

fn qemu_command(out: &Path, extra: &[&str]) -> Command {
    let guest = common::guest::build_test_guest();
    let plugin = common::plugin::build_plugin();
    let mut c = Command::new(env!("CARGO_BIN_EXE_perfscope"));
    c.args(["qemu", "--no-tui", "--arch", "riscv64"])
        .arg("--kernel")
        .arg(&guest.bin)
        .arg("--elf")
        .arg(&guest.elf)
        .arg("--plugin")
        .arg(&plugin)
        .arg("--out")
        .arg(out)
        .args([
            "--freq",
            "1000",
            "--shell-prefix",
            "starry:~# ",
            "--timeout",
            "90",
        ])
        .args(extra);
    c
}

fn run(out: &Path, extra: &[&str]) -> Output {
    let o = qemu_command(out, extra).output().unwrap();
    assert!(
        o.status.success(),
        "perfscope qemu failed:\n{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

#[test]
fn fp_run_gives_the_workload_window_the_hot_path_and_every_artifact() {
    let dir = tempfile::tempdir().unwrap();
    let o = run(
        dir.path(),
        &[
            "--callchain",
            "fp",
            "--workload",
            "bench 300",
            "--start-marker",
            "BENCH_START",
            "--stop-marker",
            "BENCH_END",
            "--host-perf",
        ],
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("starry:~# "), "the console is echoed: {stdout}");
    let latest = dir.path().join("perf/riscv64/latest");
    let q = latest.join("qperf");
    for f in [
        "report.json",
        "report.md",
        "hotspots.csv",
        "qperf/stack.folded",
        "qperf/stack.boot.folded",
        "qperf/stack.workload.folded",
        "qperf/flamegraph.svg",
        "qperf/profile.pb.gz",
        "qperf/window.json",
        "qperf/qemu.time.txt",
        "qperf/qemu.perf.csv",
        "qperf/profile.stdout",
        "qperf/qperf.bin",
        "qperf/qperf.summary.txt",
    ] {
        assert!(latest.join(f).is_file(), "{f} missing");
    }
    assert!(
        !q.join("stream.sock").exists(),
        "the stream socket is left in the artifacts"
    );
    let report = read_json(&latest.join("report.json"));
    assert_eq!(report["result"], "ok", "{report:#}");
    assert_eq!(report["hotspots"]["top_functions"][0]["function"], "mix_leaf");
    // The workload window: bench only, no boot (firmware, the shell) samples.
    let workload = folded_leaves(&q.join("stack.workload.folded"));
    assert_eq!(workload[0].0, "mix_leaf", "{workload:?}");
    let folded = std::fs::read_to_string(q.join("stack.workload.folded")).unwrap();
    let outside = samples_outside(&q.join("stack.workload.folded"), "run_bench");
    assert!(
        outside <= 2 * MARKER_LATENCY_SAMPLES,
        "{outside} workload samples outside the bench:\n{folded}"
    );
    let early = samples_before_the_start_marker(&q.join("stack.boot.folded"), "run_bench");
    assert!(
        early <= MARKER_LATENCY_SAMPLES,
        "{early} bench samples before BENCH_START"
    );
    // The full call path with fp (the leaf's direct caller kept).
    let path = "run_bench;hash_workload;hash_block;mix_leaf";
    let on_path: u64 = folded
        .lines()
        .filter(|l| l.split(' ').next().unwrap().contains(path))
        .map(|l| l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap())
        .sum();
    let mix: u64 = workload.iter().find(|(f, _)| f == "mix_leaf").unwrap().1;
    assert!(
        on_path * 10 >= mix * 9,
        "{on_path} of {mix} mix_leaf samples have the full path"
    );
    let window = read_json(&q.join("window.json"));
    assert_eq!(window["stop_method"], "qmp_quit", "{window:#}");
    // The file is v3, clean, and has what the stream had.
    let (records, end) = read_file(q.join("qperf.bin")).unwrap();
    assert_eq!(end.version, Some(FormatVersion::V3));
    assert_eq!(end.end, ReadEnd::CleanEof);
    let warnings = report["window"]["warnings"].to_string();
    assert!(!warnings.contains("live stream delivered"), "{warnings}");
    assert!(!warnings.contains("did not connect"), "{warnings}");
    assert_eq!(report["input"]["records"].as_u64().unwrap(), records.len() as u64);
    // Firmware (QEMU's reset ROM, OpenSBI below the kernel's load address) is one
    // `[firmware]` frame, never a kernel name, and nothing is stacked under it.
    let firmware_pc = |pc: u64| (0x1000..0x1_0000).contains(&pc) || (0x8000_0000..0x8020_0000).contains(&pc);
    let in_firmware = records.iter().filter(|r| firmware_pc(r.pc)).count() as u64;
    assert!(in_firmware > 0, "the boot runs OpenSBI");
    let stats = read_json(&q.join("resolve.stats.json"));
    assert_eq!(
        stats["outside_kernel"]["firmware_frames"], in_firmware,
        "{stats:#}"
    );
    assert_eq!(stats["kernel_alias"]["source"], "program headers", "{stats:#}");
    let mut named_firmware = 0;
    for variant in ["boot", "workload", "post"] {
        let folded = q.join(format!("stack.{variant}.folded"));
        if variant == "post" && !folded.exists() {
            continue; // no sample after the stop marker
        }
        for (stack, n) in folded_lines(&folded) {
            if stack.contains("[firmware]") {
                assert_eq!(stack, "[firmware]", "firmware alone, in {variant}");
                named_firmware += n;
            }
        }
    }
    assert_eq!(named_firmware, in_firmware);
    let summary = std::fs::read_to_string(q.join("qperf.summary.txt")).unwrap();
    assert!(summary.contains("executed_instructions = "), "{summary}");
    let time = std::fs::read_to_string(q.join("qemu.time.txt")).unwrap();
    assert!(time.contains("User time: "), "{time}");
}

#[test]
fn leaf_run_without_stop_marker_ends_at_the_workload_timeout() {
    let dir = tempfile::tempdir().unwrap();
    run(
        dir.path(),
        &[
            "--callchain",
            "leaf",
            "--workload",
            "bench 3000",
            "--start-marker",
            "BENCH_START",
            "--stop-marker",
            "NEVER_PRINTED",
            "--workload-timeout",
            "2",
        ],
    );
    let latest = dir.path().join("perf/riscv64/latest");
    let report = read_json(&latest.join("report.json"));
    let warnings = report["window"]["warnings"].to_string();
    assert!(
        warnings.contains("workload window timed out after 2s"),
        "{warnings}"
    );
    let window = read_json(&latest.join("qperf/window.json"));
    assert_eq!(window["truncated_by_timeout"], true, "{window:#}");
    assert_eq!(
        folded_leaves(&latest.join("qperf/stack.workload.folded"))[0].0,
        "mix_leaf"
    );
    for f in [
        "hotspots.csv",
        "qperf/stack.folded",
        "qperf/flamegraph.svg",
        "qperf/window.json",
    ] {
        assert!(latest.join(f).is_file(), "{f} missing");
    }
}

#[test]
fn qemu_killed_mid_run_still_leaves_a_readable_profile() {
    let dir = tempfile::tempdir().unwrap();
    let child = qemu_command(dir.path(), &["--workload", "bench 5000"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until samples are flowing, then kill QEMU (not perfscope) with SIGKILL.
    let bin = dir.path().join("perf/riscv64/latest/qperf/qperf.bin");
    let start = Instant::now();
    while std::fs::metadata(&bin).map(|m| m.len()).unwrap_or(0) < 20_000 {
        assert!(start.elapsed() < Duration::from_secs(60), "no samples written");
        std::thread::sleep(Duration::from_millis(50));
    }
    let killed = Command::new("pkill")
        .args([
            "-KILL",
            "-f",
            &format!("qemu-system-riscv64.*{}", dir.path().display()),
        ])
        .status()
        .unwrap();
    assert!(killed.success(), "QEMU was not found to kill");
    let o = child.wait_with_output().unwrap();
    // Issue 11: a QEMU killed mid-run is a finished but incomplete run (exit 3, result
    // incomplete); it exited 0 with `result: ok` before.
    assert_eq!(o.status.code(), Some(3), "{}", String::from_utf8_lossy(&o.stderr));
    let latest = dir.path().join("perf/riscv64/latest");
    let report = read_json(&latest.join("report.json"));
    assert_eq!(report["result"], "incomplete");
    assert!(
        report["hotspots"]["total_samples"].as_u64().unwrap() > 0,
        "{report:#}"
    );
    let warnings = report["window"]["warnings"].to_string();
    assert!(warnings.contains("no summary"), "{warnings}");
    let (records, end) = read_file(&bin).unwrap();
    assert!(!records.is_empty());
    assert!(
        matches!(end.end, ReadEnd::CleanEof | ReadEnd::Truncated { .. }),
        "{end}"
    );
}
