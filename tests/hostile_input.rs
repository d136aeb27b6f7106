//! Hostile input on the real binary: numbers at type limits, garbage time stamps, endless
//! files. Each case ends in bounded time with a clear verdict — never a hang or a panic.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use perfscope::sources::qperf_file::{QperfRecord, encode_v3};

fn asset(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets").join(name)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Run perfscope; a run still going after `limit` is killed and fails the test.
fn perfscope_within(limit: Duration, args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_perfscope"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run perfscope");
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            child.kill().unwrap();
            let o = child.wait_with_output().unwrap();
            panic!(
                "perfscope {args:?} still ran after {limit:?}; stderr:\n{}",
                text(&o.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// A record of the test kernel's `mix_leaf` path at `elapsed_ns`.
fn record(elapsed_ns: u64) -> QperfRecord {
    QperfRecord {
        elapsed_ns: Some(elapsed_ns),
        pc: 0xffff_ffc0_8020_0000,
        sp: None,
        fp: None,
        cpu: Some(0),
        callchain: None,
        trace: vec![0xffff_ffc0_8020_0000],
    }
}

/// Issue 25: two records at time 0 and u64::MAX looped forever in the timeline (100 %
/// CPU, deaf to signals). The garbage time is taken out of its record and said: exit 3.
#[test]
fn records_at_time_zero_and_u64_max_end_at_once_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("x.qperf.bin");
    let mut bytes = Vec::new();
    for t in [0, u64::MAX, u64::MAX - 1, 3_000_000] {
        encode_v3(&record(t), &mut bytes);
    }
    std::fs::write(&bin, &bytes).unwrap();
    let out = dir.path().join("out");
    let elf = asset("tinyk-riscv64.elf");
    for command in ["report", "open"] {
        let mut args = vec![
            command,
            bin.to_str().unwrap(),
            "--elf",
            elf.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--start-sec",
            "0.001",
            "--stop-sec",
            "0.002",
        ];
        if command == "open" {
            args.push("--no-tui");
        }
        let o = perfscope_within(Duration::from_secs(30), &args);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(3), "{command}: {err}");
        assert!(err.contains("perfscope: incomplete: bad times 2"), "{err}");
    }
}

/// Send `signal` to a child once `ready` holds for its stderr so far (or after 1 s), and
/// insist it ends within `limit` of the signal; returns its output.
fn signalled_within(args: &[&str], signal: i32, limit: Duration) -> (Output, Duration) {
    let child = Command::new(env!("CARGO_BIN_EXE_perfscope"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run perfscope");
    std::thread::sleep(Duration::from_secs(1));
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(child.id() as i32, signal) };
    let sent = Instant::now();
    let pid = child.id();
    let waiter = std::thread::spawn(move || child.wait_with_output().unwrap());
    while !waiter.is_finished() {
        if sent.elapsed() > limit {
            // SAFETY: as above.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            panic!("perfscope {args:?} still ran {limit:?} after the signal");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    (waiter.join().unwrap(), sent.elapsed())
}

/// `open --follow` of a file that is not there says so while it waits, ends on a signal
/// at once, and — nothing read — exits 1; a directory that is not there is an error at once.
#[test]
fn following_a_missing_file_says_so_and_ends_on_a_signal() {
    let dir = tempfile::tempdir().unwrap();
    let elf = asset("tinyk-riscv64.elf");
    let missing = dir.path().join("later.qperf.bin");
    let out = dir.path().join("out");
    let args = [
        "open",
        "--follow",
        missing.to_str().unwrap(),
        "--elf",
        elf.to_str().unwrap(),
        "--no-tui",
        "--out",
        out.to_str().unwrap(),
    ];
    let child = Command::new(env!("CARGO_BIN_EXE_perfscope"))
        .args(args)
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(3500));
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("waiting for") && err.contains("later.qperf.bin to appear"),
        "{err}"
    );
    assert!(err.contains("never appeared"), "{err}");
    assert!(!out.exists(), "no empty artifact set");
    let o = perfscope_within(
        Duration::from_secs(10),
        &[
            "open",
            "--follow",
            "/nonexistent-dir/x.qperf.bin",
            "--elf",
            elf.to_str().unwrap(),
            "--no-tui",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("no directory /nonexistent-dir"),
        "{}",
        text(&o.stderr)
    );
}

/// A followed file that is there: a signal ends the run within 2 s with what it read, clean.
#[test]
fn following_a_file_ends_within_two_seconds_of_a_signal() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("run.qperf.bin");
    std::fs::copy(asset("tinyk-riscv64.qperf.bin"), &bin).unwrap();
    let elf = asset("tinyk-riscv64.elf");
    let out = dir.path().join("out");
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        let (o, took) = signalled_within(
            &[
                "open",
                "--follow",
                bin.to_str().unwrap(),
                "--elf",
                elf.to_str().unwrap(),
                "--no-tui",
                "--out",
                out.to_str().unwrap(),
            ],
            signal,
            Duration::from_secs(2),
        );
        assert_eq!(
            o.status.code(),
            Some(0),
            "signal {signal} after {took:?}: {}",
            text(&o.stderr)
        );
        assert!(
            text(&o.stdout).contains("1435 samples, result ok"),
            "{}",
            text(&o.stdout)
        );
    }
}

/// Issue 25: the session_db fuzz target found a session whose sample time is -1 (SQLite
/// keeps i64; read back it is u64::MAX) beside start and stop markers: a slice ending past
/// u64::MAX wrapped, and `SliceStore::compact` asked a BTreeSet for a range whose start was
/// past its end. Through a real session file, `report` and `open --no-tui` end with the
/// bad time said (exit 3) and the sample kept, untimed.
#[test]
fn a_session_whose_sample_time_is_minus_one_reports_the_bad_time() {
    use perfscope::model::frames::{FrameKind, FrameOrigin};
    use perfscope::model::{Callchain, Instance, InstanceKind, SampleMeta};
    use perfscope::store::{Recorder, SessionMeta};

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("minus-one.db");
    let mut r = Recorder::create(&db, &SessionMeta::now("host", "hostile")).unwrap();
    let cpu = r.instance(&Instance {
        kind: InstanceKind::Cpu,
        id: 0,
        label: "cpu0".into(),
    });
    let main = r.frame("main", &FrameOrigin::new(FrameKind::User, Some("/bin/x")), None);
    let stack = r.stack(&[main]);
    let meta = SampleMeta {
        raw_depth: 1,
        flags: SampleMeta::HAS_PC,
        callchain: Callchain::FramePointer,
    };
    r.marker(Some(100_000_000), "start", "start marker");
    for i in 0..10u64 {
        r.sample(Some(i * 20_000_000), cpu, 1, stack, &meta);
    }
    r.marker(Some(150_000_000), "stop", "stop marker");
    r.finish().unwrap();
    let conn = rusqlite::Connection::open(&db).unwrap();
    let changed = conn
        .execute("UPDATE samples SET time_ns = -1 WHERE id = 3", [])
        .unwrap();
    assert_eq!(changed, 1);
    drop(conn);
    let out = dir.path().join("out");
    for command in ["report", "open"] {
        let mut args = vec![command, db.to_str().unwrap(), "--out", out.to_str().unwrap()];
        if command == "open" {
            args.push("--no-tui");
        }
        let o = perfscope_within(Duration::from_secs(30), &args);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(3), "{command}: {err}");
        assert!(err.contains("perfscope: incomplete: bad times 1"), "{err}");
        assert!(!err.contains("panicked"), "{err}");
        // The marker window [100 ms, 150 ms) holds the samples at 100, 120 and 140 ms and
        // the untimed one (inside every window).
        assert!(
            text(&o.stdout).starts_with("perfscope report: 4 samples, result incomplete"),
            "{}",
            text(&o.stdout)
        );
    }
}

/// A FIFO as the input: one nobody writes, or whose writer stalls, ends on a signal within
/// 2 s (tests/stop_request.rs shows the wait giving up once a command takes the signal as
/// a request to stop), and one whose writer comes later is read as any file.
#[test]
fn a_fifo_input_waits_for_its_writer_and_ends_on_a_signal() {
    use std::os::unix::process::ExitStatusExt;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("in.qperf.bin");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let elf = asset("tinyk-riscv64.elf");
    let out = dir.path().join("out");
    let report = [
        "report",
        "--out",
        out.to_str().unwrap(),
        fifo.to_str().unwrap(),
        "--elf",
        elf.to_str().unwrap(),
    ];
    let open = [
        "open",
        "--no-tui",
        fifo.to_str().unwrap(),
        "--elf",
        elf.to_str().unwrap(),
    ];
    for args in [&report[..], &open[..]] {
        for signal in [libc::SIGTERM, libc::SIGHUP] {
            let (o, took) = signalled_within(args, signal, Duration::from_secs(2));
            // Ended: by the signal itself (before the command takes it), or with the wait
            // said and exit 1 (nothing was read).
            assert!(
                o.status.signal() == Some(signal) || o.status.code() == Some(1),
                "{args:?} after signal {signal} ({took:?}): {:?} {}",
                o.status,
                text(&o.stderr)
            );
        }
    }
    // A writer that sends half and then nothing, holding the FIFO open: the read waits,
    // and a signal ends the wait (a blocking read would be restarted, for ever).
    let stalled = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            use std::io::Write;
            let bytes = std::fs::read(asset("tinyk-riscv64.qperf.bin")).unwrap();
            let mut w = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
            w.write_all(&bytes[..bytes.len() / 2]).unwrap();
            std::thread::sleep(Duration::from_secs(4));
        })
    };
    let (o, took) = signalled_within(&report, libc::SIGTERM, Duration::from_secs(2));
    let stderr = text(&o.stderr);
    assert!(
        o.status.signal() == Some(libc::SIGTERM)
            || (matches!(o.status.code(), Some(1 | 3)) && stderr.contains("stopped while waiting for")),
        "({took:?}): {:?} {stderr}",
        o.status
    );
    stalled.join().unwrap();
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(500));
            let bytes = std::fs::read(asset("tinyk-riscv64.qperf.bin")).unwrap();
            std::fs::write(&fifo, bytes).unwrap();
        })
    };
    let o = perfscope_within(Duration::from_secs(60), &report);
    writer.join().unwrap();
    // As from the file itself.
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("1435 samples, result ok"),
        "{}",
        text(&o.stdout)
    );
    assert!(out.join("perf/riscv64/latest/report.json").is_file());
}
