//! `perfscope qemu` in a real terminal: the guest boots in the console pane, we type
//! `bench` into its shell, the markers and the flamegraph appear, export, quit.

mod common;

use std::path::Path;
use std::time::Duration;

use common::tmux::TmuxSession;

const WAIT: Duration = Duration::from_secs(60);

#[test]
fn qemu_session_in_tmux_prompt_bench_markers_flamegraph_export_quit() {
    let guest = common::guest::build_test_guest();
    let plugin = common::plugin::build_plugin();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = tempfile::tempdir().unwrap();
    let command = format!(
        "{} qemu --arch riscv64 --kernel {} --elf {} --plugin {} --freq 1000 --callchain fp \
         --shell-prefix 'starry:~# ' --start-marker BENCH_START --stop-marker BENCH_END \
         --refresh-ms 250 --out {}; echo perfscope-exit=$?; sleep 60",
        env!("CARGO_BIN_EXE_perfscope"),
        guest.bin.display(),
        guest.elf.display(),
        plugin.display(),
        out.path().display()
    );
    let tmux = TmuxSession::start("perfscope-qemu", 100, 30, root, &command);
    // The console pane shows the boot and the prompt.
    tmux.wait_for("the guest prompt", WAIT, |s| {
        s.contains("Console") && s.contains("starry:~#")
    });
    // Enter opens a line to the guest; type the workload.
    tmux.keys(&["Enter"]);
    tmux.wait_for("the guest input line", WAIT, |s| s.contains("guest>"));
    tmux.literal("bench 300");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("the markers", WAIT, |s| s.contains("BENCH_END"));
    assert!(screen.contains("BENCH_START"), "{screen}");
    // The stop marker stops QEMU; the run is written; the flamegraph has the workload.
    tmux.wait_for("the automatic export", WAIT, |s| s.contains("exported"));
    tmux.keys(&["2"]);
    let screen = tmux.wait_for("the flamegraph", WAIT, |s| s.contains("mix_leaf"));
    assert!(screen.contains("run_bench"), "{screen}");
    // Export what is on screen, again by key.
    tmux.keys(&["e"]);
    tmux.wait_for("the export message", WAIT, |s| s.contains("exported"));
    let latest = out.path().join("perf/riscv64/latest");
    for f in [
        "report.json",
        "qperf/stack.folded",
        "qperf/stack.workload.folded",
        "qperf/window.json",
    ] {
        assert!(latest.join(f).is_file(), "{f} missing");
    }
    tmux.keys(&["q"]);
    let screen = tmux.wait_for("perfscope to exit", WAIT, |s| s.contains("perfscope-exit="));
    assert!(screen.contains("perfscope-exit=0"), "{screen}");
    assert!(screen.contains("artifacts in"), "{screen}");
}
