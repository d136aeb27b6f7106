//! The QEMU session runner on real QEMU with the test kernel (no plugin: this is about the
//! console, the prompt, the markers, the timeouts and the clean stop).

mod common;

use std::time::Duration;

use perfscope::sources::clock::monotonic_ns;
use perfscope::sources::qemu::machine::QemuLaunch;
use perfscope::sources::qemu::{Arch, QemuSession, SessionOptions};

fn options(
    dir: &std::path::Path,
    cmd: &str,
    stop_marker: &str,
    workload_timeout: Option<Duration>,
) -> SessionOptions {
    let guest = common::guest::build_test_guest();
    SessionOptions {
        launch: QemuLaunch {
            arch: Arch::Riscv64,
            qemu: "qemu-system-riscv64".into(),
            kernel: guest.bin,
            smp: None,
            firmware: None,
            plugin: None,
            qmp_socket: dir.join("qmp.sock"),
            extra: Vec::new(),
        },
        epoch_ns: monotonic_ns(),
        shell_prompts: vec!["starry:~# ".into()],
        init_cmd: Some(cmd.into()),
        start_marker: Some("BENCH_START".into()),
        stop_marker: Some(stop_marker.into()),
        workload_timeout,
        timeout: Some(Duration::from_secs(60)),
        host_perf_events: Some("task-clock,context-switches,cycles".into()),
    }
}

/// Poll to the end, collecting the console text.
fn run(session: &mut QemuSession) -> String {
    let mut console = Vec::new();
    let start = std::time::Instant::now();
    loop {
        let update = session.poll();
        for (_, bytes) in update.console {
            console.extend(bytes);
        }
        if update.exited {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(90), "QEMU did not stop");
        std::thread::sleep(Duration::from_millis(10));
    }
    String::from_utf8_lossy(&console).into_owned()
}

#[test]
fn prompt_then_workload_then_markers_then_a_clean_qmp_stop() {
    let dir = tempfile::tempdir().unwrap();
    let mut session = QemuSession::start(options(dir.path(), "bench 50", "BENCH_END", None))
        .expect("qemu-system-riscv64 must be installed (scripts/install-test-deps.sh)");
    let console = run(&mut session);
    let report = session.report();
    assert!(console.contains("starry:~# "), "{console}");
    assert!(
        console.contains("BENCH_START") && console.contains("BENCH_END"),
        "{console}"
    );
    let m = session.markers();
    let (start, stop) = (m.start_ns.unwrap(), m.stop_ns.unwrap());
    assert!(start < stop, "{start} {stop}");
    let w = &report.window;
    assert!(w.enabled && !w.truncated_by_timeout && w.stop_requested);
    assert_eq!(w.stop_method.as_deref(), Some("qmp_quit"), "{report:?}");
    assert_eq!(w.start_time, Some(start as f64 / 1e9));
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    assert_eq!(report.exit_status, 0, "QMP quit exits 0: {}", report.qemu_stderr);
    assert!(
        report.time_txt.starts_with("Elapsed time: "),
        "{}",
        report.time_txt
    );
    let user: f64 = report
        .time_txt
        .lines()
        .find_map(|l| l.strip_prefix("User time: "))
        .unwrap()
        .parse()
        .unwrap();
    assert!(user > 0.0, "{}", report.time_txt);
    let csv = report.perf_csv.unwrap();
    assert!(
        csv.lines()
            .any(|l| l.ends_with(",task-clock,") || l.contains(",task-clock,")),
        "{csv}"
    );
}

#[test]
fn a_missing_stop_marker_ends_at_the_workload_timeout_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let mut session = QemuSession::start(options(
        dir.path(),
        "bench 5000",
        "NEVER_PRINTED",
        Some(Duration::from_millis(1500)),
    ))
    .unwrap();
    run(&mut session);
    let report = session.report();
    let w = &report.window;
    assert!(w.truncated_by_timeout);
    let m = session.markers();
    let window_ns = m.stop_ns.unwrap() - m.start_ns.unwrap();
    assert!((1_500_000_000..4_000_000_000).contains(&window_ns), "{window_ns}");
    assert!(
        report
            .warnings
            .iter()
            .any(|w| w.contains("workload window timed out after 1.5s")),
        "{:?}",
        report.warnings
    );
}
