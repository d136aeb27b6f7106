//! End to end in a real terminal: `perfscope open` on the assets profile inside tmux —
//! search, zoom, export, quit — asserting on the captured screen and the exported files.

mod common;

use std::path::Path;
use std::time::Duration;

use common::tmux::TmuxSession;

const WAIT: Duration = Duration::from_secs(20);

#[test]
fn open_search_zoom_export_quit_in_tmux() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = tempfile::tempdir().unwrap();
    // A shell around the binary prints its exit status on the restored screen.
    let command = format!(
        "{} open assets/tinyk-riscv64.qperf.bin --elf assets/tinyk-riscv64.elf --console assets/tinyk-riscv64.console.txt --out {}; echo perfscope-exit=$?; sleep 60",
        env!("CARGO_BIN_EXE_perfscope"),
        out.path().display()
    );
    let tmux = TmuxSession::start("perfscope-e2e", 100, 30, root, &command);

    // The flamegraph of the test kernel: its hottest function is on screen.
    let screen = tmux.wait_for("the flamegraph", WAIT, |s| {
        s.contains("mix_leaf") && s.contains("1435")
    });
    assert!(screen.contains("Flamegraph"), "{screen}");

    // Regex search: the status line reports the match share.
    tmux.keys(&["/"]);
    tmux.literal("mix_le.f");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("a search match", WAIT, |s| s.contains("match"));
    assert!(screen.contains("match"), "{screen}");

    // Jump to the first match and zoom into it: the breadcrumb/detail names it.
    tmux.keys(&["n"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("the zoomed frame", WAIT, |s| s.contains("zoom"));

    // Export what is on screen.
    tmux.keys(&["e"]);
    let screen = tmux.wait_for("the export message", WAIT, |s| s.contains("exported"));
    let latest = out.path().join("perf/riscv64/latest");
    assert!(screen.contains("exported"), "{screen}");
    for file in [
        "report.json",
        "report.md",
        "hotspots.csv",
        "qperf/stack.folded",
        "qperf/flamegraph.svg",
        "qperf/profile.pb.gz",
        "qperf/window.json",
    ] {
        let path = latest.join(file);
        assert!(
            path.is_file(),
            "{} missing after export; screen:\n{screen}",
            path.display()
        );
    }
    let folded = std::fs::read_to_string(latest.join("qperf/stack.folded")).unwrap();
    assert!(
        folded.contains("mix_leaf"),
        "exported folded stacks lack the hot function"
    );

    // Quit restores the terminal (the shell's echo is visible, the TUI is gone) and exits 0.
    tmux.keys(&["q"]);
    let screen = tmux.wait_for("perfscope to exit", WAIT, |s| s.contains("perfscope-exit="));
    assert!(screen.contains("perfscope-exit=0"), "{screen}");
    assert!(
        !screen.contains("Flamegraph"),
        "the alternate screen was not left:\n{screen}"
    );
}

/// SIGTERM and SIGHUP end the session cleanly: terminal restored, exit status 0.
#[test]
fn signals_restore_the_terminal() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for signal in ["TERM", "HUP"] {
        let out = tempfile::tempdir().unwrap();
        let marker = out.path().display().to_string();
        let command = format!(
            "{} open assets/tinyk-riscv64.qperf.bin --elf assets/tinyk-riscv64.elf --out {marker}; echo perfscope-exit=$?; sleep 60",
            env!("CARGO_BIN_EXE_perfscope"),
        );
        let tmux = TmuxSession::start(&format!("perfscope-sig{signal}"), 80, 24, root, &command);
        tmux.wait_for("the flamegraph", WAIT, |s| s.contains("mix_leaf"));
        // The out dir is unique to this run; the shell around perfscope has it in its
        // command line too, so pick the process whose name is perfscope.
        let pids = std::process::Command::new("pgrep")
            .args(["-f", &marker])
            .output()
            .expect("pgrep (procps) is needed");
        let pid = String::from_utf8_lossy(&pids.stdout)
            .lines()
            .find(|pid| {
                std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == "perfscope")
            })
            .expect("the perfscope process")
            .to_string();
        let status = std::process::Command::new("kill")
            .args([&format!("-{signal}"), &pid])
            .status()
            .unwrap();
        assert!(status.success());
        let screen = tmux.wait_for("perfscope to exit", WAIT, |s| s.contains("perfscope-exit="));
        assert!(screen.contains("perfscope-exit=0"), "SIG{signal}: {screen}");
        assert!(
            !screen.contains("Flamegraph"),
            "SIG{signal}: alternate screen not left:\n{screen}"
        );
    }
}
