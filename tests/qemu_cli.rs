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
    let mut c = common::plugin::perfscope_qemu(&common::guest::build_test_guest(), out);
    c.args([
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
    common::plugin::output_ok(&mut qemu_command(out, extra), "perfscope qemu")
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
        "qperf/qemu.toml",
        "qperf/qemu.perf.csv",
        "profile.stdout",
        "profile.stderr",
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
    assert_reference_keys(&report);
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
    // The stop marker is an argument of the typed command (the test guest's bench ignores
    // it): only the command's echo carries it, and an echo is never a marker.
    let o = qemu_command(
        dir.path(),
        &[
            "--callchain",
            "leaf",
            "--workload",
            "bench 3000 WL_END",
            "--start-marker",
            "BENCH_START",
            "--stop-marker",
            "WL_END",
            "--workload-timeout",
            "2",
        ],
    )
    .output()
    .unwrap();
    // The window the artifacts show is not the workload's: finished but incomplete.
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(
        err.contains("perfscope: incomplete: no window: the stop marker \"WL_END\" never came"),
        "{err}"
    );
    let latest = dir.path().join("perf/riscv64/latest");
    let console = std::fs::read_to_string(latest.join("profile.stdout")).unwrap_or_default();
    assert!(
        console.contains("bench 3000 WL_END"),
        "the guest echoed the command: {console}"
    );
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

/// Every key the reference's report.json has (notes/qperf-format.md §6.2), at the top and
/// in the objects scripts read; perfscope may add its own beside them.
fn assert_reference_keys(report: &serde_json::Value) {
    let has = |object: &serde_json::Value, keys: &[&str], what: &str| {
        let missing: Vec<&&str> = keys.iter().filter(|k| object.get(**k).is_none()).collect();
        assert!(missing.is_empty(), "{what} lacks {missing:?}: {object:#}");
    };
    has(
        report,
        &[
            "arch",
            "result",
            "returncode",
            "parameters",
            "window",
            "resolve_stats",
            "callchain",
            "hotspots",
            "summary",
            "plugin_summary",
            "host_time_metrics",
            "host_perf_metrics",
            "workload_metrics",
            "normalized_metrics",
            "fix_candidates",
            "linux_alignment",
            "artifacts",
        ],
        "report.json",
    );
    has(
        &report["parameters"],
        &[
            "timeout",
            "format",
            "freq",
            "max_depth",
            "mode",
            "callchain",
            "top",
            "min_percent",
            "symbol_style",
            "focus",
            "no_truncate",
            "debug",
            "kernel_filter",
            "host_time",
            "host_perf",
            "host_perf_events",
            "shell_init_cmd",
            "shell_prefix",
            "start_marker",
            "stop_marker",
            "workload_timeout",
            "qperf_metrics",
            "full_stack",
            "perf_debuginfo",
            "perf_force_frame_pointers",
            "qemu_args",
        ],
        "parameters",
    );
    has(
        &report["window"],
        &[
            "enabled",
            "start_marker",
            "stop_marker",
            "start_time",
            "stop_time",
            "duration_sec",
            "workload_timeout",
            "truncated_by_timeout",
            "boot_samples_excluded",
            "post_window_samples_excluded",
            "stop_requested",
            "stop_method",
            "warnings",
            "method",
        ],
        "window",
    );
    has(
        &report["callchain"],
        &[
            "enabled",
            "method",
            "samples_with_fp",
            "unwind_success",
            "unwind_failed",
            "avg_depth",
            "max_depth",
        ],
        "callchain",
    );
    has(
        &report["hotspots"],
        &[
            "total_samples",
            "total_frames",
            "top_functions",
            "top_stacks",
            "category_totals",
        ],
        "hotspots",
    );
    has(
        &report["host_time_metrics"],
        &[
            "raw",
            "user_seconds",
            "system_seconds",
            "cpu_percent",
            "major_page_faults",
            "minor_page_faults",
            "voluntary_context_switches",
            "involuntary_context_switches",
            "exit_status",
            "elapsed_seconds",
        ],
        "host_time_metrics",
    );
    has(
        &report["host_perf_metrics"],
        &["enabled", "scope", "note", "events", "errors"],
        "host_perf_metrics",
    );
    has(
        &report["workload_metrics"],
        &["custom", "values", "dd", "wget", "raw_metric_lines"],
        "workload_metrics",
    );
    has(
        &report["normalized_metrics"],
        &[
            "workload_bytes",
            "workload_elapsed_seconds",
            "guest_instructions_per_MB",
            "guest_blocks_per_MB",
            "host_elapsed_sec_per_MB",
            "samples_per_MB",
            "category_samples_per_MB",
            "samples_per_second",
            "host_ipc",
            "host_cycles_per_sample",
            "host_instructions_per_sample",
            "host_cache_miss_percent",
        ],
        "normalized_metrics",
    );
    has(&report["linux_alignment"], &["status", "note"], "linux_alignment");
    has(
        &report["artifacts"],
        &[
            "work_dir",
            "qperf_dir",
            "report",
            "markdown",
            "hotspots_csv",
            "hotspot_categories_csv",
            "profile_stdout",
            "profile_stderr",
            "raw_samples",
            "folded",
            "flamegraph",
            "flamegraph_workload",
            "flamegraph_boot",
            "flamegraph_post",
            "summary_txt",
            "stack_depth_summary",
            "plugin_summary",
            "qemu_config",
            "host_time",
            "host_perf",
            "window",
            "resolve_stats",
        ],
        "artifacts",
    );
    // `artifacts` lists what this run wrote (issue 24): each listed file exists, and the
    // reference's labels of files not written (no --focus, no HTML) are not listed.
    for (label, path) in report["artifacts"].as_object().unwrap() {
        let path = std::path::Path::new(path.as_str().unwrap());
        assert!(
            path.exists(),
            "artifacts.{label}: {} does not exist",
            path.display()
        );
    }
    for unwritten in ["flamegraph_focus", "flamegraph_html"] {
        assert!(
            report["artifacts"].get(unwritten).is_none(),
            "{unwritten} was not written"
        );
    }
    assert!(report["fix_candidates"].is_array());
    // The run's numbers reached the metrics: QEMU's host time, the plugin's counts per MB
    // need a workload size the test guest does not print, so they stay null.
    assert!(
        report["host_time_metrics"]["user_seconds"].as_f64().is_some(),
        "{report:#}"
    );
    assert_eq!(report["host_perf_metrics"]["enabled"], true);
    assert!(report["summary"]["arch"] == "riscv64", "{:#}", report["summary"]);
}
