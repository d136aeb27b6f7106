//! `perfscope qemu` as a new user first runs it (issue 11, points 2 and 14), on the real
//! test kernel under real QEMU: no `--shell-prefix` needed for the test kernel's
//! `starry:~# ` prompt; a prompt that never comes is said (stderr headless, the status line
//! in the TUI); the defaults give call stacks at 1 kHz; the TUI selects the workload
//! window once the stop marker arrives.

mod common;

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use common::guest::{TestGuest, build_test_guest};
use common::plugin::build_plugin;
use common::profile::read_json;
use common::tmux::TmuxSession;

const WAIT: Duration = Duration::from_secs(60);

fn headless(guest: &TestGuest, plugin: &Path, out: &Path, extra: &[&str]) -> Output {
    // The sockets' private directory goes under $XDG_RUNTIME_DIR: one of the test's own.
    let runtime = out.with_extension("run");
    std::fs::create_dir_all(&runtime).unwrap();
    Command::new(env!("CARGO_BIN_EXE_perfscope"))
        .env("XDG_RUNTIME_DIR", &runtime)
        .args(["qemu", "--no-tui", "--arch", "riscv64", "--kernel"])
        .arg(&guest.bin)
        .arg("--elf")
        .arg(&guest.elf)
        .arg("--plugin")
        .arg(plugin)
        .arg("--out")
        .arg(out)
        .args(extra)
        .output()
        .expect("cannot run perfscope")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn the_test_kernels_prompt_needs_no_flag_and_the_defaults_give_call_stacks_at_1_khz() {
    let guest = build_test_guest();
    let plugin = build_plugin();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = headless(
        &guest,
        &plugin,
        &out,
        &[
            "--workload",
            "bench 200",
            "--start-marker",
            "BENCH_START",
            "--stop-marker",
            "BENCH_END",
            "--timeout",
            "60",
        ],
    );
    let (stdout, stderr) = (text(&o.stdout), text(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(
        stdout.contains("BENCH_END"),
        "the workload was typed at `starry:~# `: {stdout}"
    );
    let report = read_json(&out.join("perf/riscv64/latest/report.json"));
    assert_eq!(
        report["window"]["stop_method"], "qmp_quit",
        "{}",
        report["window"]
    );
    let folded = std::fs::read_to_string(out.join("perf/riscv64/latest/qperf/stack.folded")).unwrap();
    // `fp` by default: the leaf's callers are there (leaf gave one frame per stack).
    assert!(
        folded
            .lines()
            .any(|l| l.contains("run_bench;") && l.contains("mix_leaf")),
        "{folded}"
    );
    // Issue 11: no socket is left among the artifacts (qmp.sock was), and the private
    // runtime directory they lived in is gone.
    let qperf_dir = out.join("perf/riscv64/latest/qperf");
    let sockets: Vec<_> = std::fs::read_dir(&qperf_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".sock"))
        .collect();
    assert!(sockets.is_empty(), "{sockets:?} left in {}", qperf_dir.display());
    let runtime: Vec<_> = std::fs::read_dir(out.with_extension("run")).unwrap().collect();
    assert!(
        runtime.is_empty(),
        "the runtime directory is removed: {runtime:?}"
    );
    assert_eq!(
        report["plugin_summary"]["frequency_hz"], "1000",
        "1 kHz by default: {}",
        report["plugin_summary"]
    );
}

#[test]
fn a_prompt_that_never_comes_is_said_on_stderr_with_what_to_set() {
    let guest = build_test_guest();
    let plugin = build_plugin();
    let dir = tempfile::tempdir().unwrap();
    let o = headless(
        &guest,
        &plugin,
        &dir.path().join("out"),
        &[
            "--shell-prefix",
            "nope# ",
            "--workload",
            "bench 1",
            "--timeout",
            "4",
        ],
    );
    let stderr = text(&o.stderr);
    assert!(
        stderr.contains("perfscope: waiting for shell prompt 'nope# ' — 2 s; set --shell-prefix"),
        "{stderr}"
    );
}

#[test]
fn the_tui_says_what_it_waits_for_and_selects_the_workload_when_it_is_over() {
    let guest = build_test_guest();
    let plugin = build_plugin();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = tempfile::tempdir().unwrap();
    let base = format!(
        "{} qemu --arch riscv64 --kernel {} --elf {} --plugin {} --refresh-ms 250 --out {}",
        env!("CARGO_BIN_EXE_perfscope"),
        guest.bin.display(),
        guest.elf.display(),
        plugin.display(),
        out.path().display()
    );
    // A prompt that never comes: the status line says what it waits for.
    let tmux = TmuxSession::start(
        "perfscope-wait",
        160,
        30,
        root,
        &format!("{base} --shell-prefix 'nope# ' --workload 'bench 1'; sleep 60"),
    );
    tmux.wait_for("the waiting status", WAIT, |s| {
        s.contains("waiting for shell prompt 'nope# ' — 2 s; set --shell-prefix")
    });
    tmux.keys(&["q"]);
    drop(tmux);
    // The default prompts and the workload: once BENCH_END is read, the window is the
    // workload's and the flamegraph (fp by default) has the callers.
    let tmux = TmuxSession::start(
        "perfscope-workload",
        160,
        30,
        root,
        &format!(
            "{base} --workload 'bench 300' --start-marker BENCH_START --stop-marker BENCH_END; \
             echo perfscope-exit=$?; sleep 60"
        ),
    );
    // The automatic export's message may replace the selection's on the status line; the
    // window label stays.
    let screen = tmux.wait_for("the workload window", WAIT, |s| {
        s.contains(" done ")
            && s.lines().any(|l| {
                l.contains("s–")
                    && l.split("window ")
                        .nth(1)
                        .is_some_and(|w| w.starts_with(|c: char| c.is_ascii_digit()))
            })
    });
    tmux.keys(&["2"]);
    let screen2 = tmux.wait_for("the flamegraph", WAIT, |s| s.contains("mix_leaf"));
    assert!(screen2.contains("run_bench"), "{screen2}");
    let status = screen2
        .lines()
        .find(|l| l.contains("window "))
        .unwrap_or_default()
        .to_string();
    assert!(
        status.contains("window ") && !status.contains("window all") && status.contains('–'),
        "the status names the workload window: {status}\n(first screen:\n{screen})"
    );
    tmux.keys(&["q"]);
    let screen = tmux.wait_for("perfscope to exit", WAIT, |s| s.contains("perfscope-exit="));
    assert!(screen.contains("perfscope-exit=0"), "{screen}");
}
