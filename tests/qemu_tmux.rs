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
    // Export what is on screen, again by key: the automatic export's files are removed
    // first (its message is still on screen), so only the key can bring them back.
    let latest = out.path().join("perf/riscv64/latest");
    let files = [
        "report.json",
        "qperf/stack.folded",
        "qperf/stack.workload.folded",
        "qperf/window.json",
    ];
    for f in files {
        assert!(latest.join(f).is_file(), "{f} missing after the automatic export");
    }
    std::fs::remove_dir_all(&latest).unwrap();
    tmux.keys(&["e"]);
    let deadline = std::time::Instant::now() + WAIT;
    while !files.iter().all(|f| latest.join(f).is_file()) {
        assert!(
            std::time::Instant::now() < deadline,
            "the export key wrote no artifacts; screen:\n{}",
            tmux.screen()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    tmux.keys(&["q"]);
    let screen = tmux.wait_for("perfscope to exit", WAIT, |s| s.contains("perfscope-exit="));
    assert!(screen.contains("perfscope-exit=0"), "{screen}");
    assert!(screen.contains("artifacts in"), "{screen}");
}
