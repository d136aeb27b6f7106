//! `blktrace` end to end on real tracefs and a real block device (as root): a file-backed
//! loop device this test attaches, a workload this test runs on it with a known number of
//! direct-I/O reads, and perfscope's complete-stage count, which must be exactly that.
//!
//! Why exactly: `dd iflag=direct` submits one 4 KiB read and waits for it before the next,
//! so no two of its requests are ever queued together and none can merge; the loop device
//! has no I/O scheduler either. Each read is one request, one `block_rq_complete`. The
//! loop device's own reads of its backing file go to the disk under it (another `dev`),
//! so a device filter that did not hold would add the disk's requests and fail the count.

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use common::host::{ensure_tracefs, perfscope, text_tables, trace_summary};

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// The reads the workload makes.
const READS: u64 = 64;

/// A loop device over a file, detached on drop (a failing test leaves none behind).
struct LoopDevice {
    path: PathBuf,
}

impl LoopDevice {
    fn attach(backing: &Path) -> LoopDevice {
        let out = Command::new("losetup")
            .args(["--find", "--show", "--direct-io=on"])
            .arg(backing)
            .output()
            .expect("run losetup (util-linux): it is needed to make a block device to trace");
        assert!(
            out.status.success(),
            "losetup failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        let device = LoopDevice { path };
        // Where udev runs, it probes a new device (blkid reads it): let that finish first,
        // so the only requests on the device are the workload's.
        let _ = Command::new("udevadm").arg("settle").status();
        device
    }
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        let _ = Command::new("losetup").arg("-d").arg(&self.path).status();
    }
}

fn signal(pid: u32, signal: libc::c_int) {
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(pid as i32, signal) };
}

/// Read `count` 4 KiB blocks of `device` with O_DIRECT, one at a time.
fn direct_reads(device: &Path, count: u64) {
    let out = Command::new("dd")
        .arg(format!("if={}", device.display()))
        .args(["of=/dev/null", "bs=4k", "iflag=direct"])
        .arg(format!("count={count}"))
        .output()
        .expect("run dd");
    assert!(
        out.status.success(),
        "dd: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains(&format!("{count}+0 records in")),
        "dd did not read {count} blocks: {said}"
    );
}

/// Run `perfscope blktrace -d DEVICE -i 200 EXTRA…` with stdout piped, start `workload`
/// once its first table is out (the events are on by then), stop it with SIGINT a few
/// tables later; returns (stdout, stderr, exit code).
fn blktrace_around(device: &Path, extra: &[&str], workload: impl FnOnce()) -> (String, String, Option<i32>) {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_perfscope"))
        .current_dir(dir.path())
        .arg("blktrace")
        .arg("-d")
        .arg(device)
        .args(["-i", "200"])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start perfscope");
    let (tx, rx) = mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if line.starts_with("-----------------") {
                let _ = tx.send(());
            }
            text.push_str(&line);
            text.push('\n');
        }
        text
    });
    let stderr = child.stderr.take().unwrap();
    let stderr = std::thread::spawn(move || std::io::read_to_string(stderr).unwrap_or_default());
    let first = rx.recv_timeout(Duration::from_secs(30));
    if first.is_ok() {
        workload();
        // Two more tables: every completion of the workload has been read and printed.
        for _ in 0..2 {
            let _ = rx.recv_timeout(Duration::from_secs(10));
        }
    }
    signal(child.id(), libc::SIGINT);
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            break child.wait().unwrap();
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let (stdout, stderr) = (reader.join().unwrap(), stderr.join().unwrap());
    assert!(
        first.is_ok(),
        "no table within 30 s:\n{stdout}\nstderr:\n{stderr}"
    );
    (stdout, stderr, status.code())
}

fn backing_file(dir: &Path) -> PathBuf {
    let path = dir.join("disk.img");
    let file = std::fs::File::create(&path).unwrap();
    file.set_len(4 << 20).unwrap();
    path
}

/// (reqs of `start => end`) over every table of `stdout`.
fn stage_requests(stdout: &str, end: &str) -> u64 {
    text_tables(stdout)
        .iter()
        .map(|t| {
            assert_eq!(
                t.rows.len(),
                3,
                "blktrace prints its three stage rows always:\n{stdout}"
            );
            t.sum_where("end", end, "reqs")
        })
        .sum()
}

#[test]
fn blktrace_counts_every_direct_read_of_a_loop_device_once() {
    let _serial = serial();
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    let device = LoopDevice::attach(&backing_file(dir.path()));
    let (stdout, stderr, code) = blktrace_around(&device.path, &[], || direct_reads(&device.path, READS));
    trace_summary(&stderr, "blktrace");
    assert!(matches!(code, Some(0 | 3)), "exit {code:?}:\n{stderr}");
    assert!(text_tables(&stdout).len() >= 3, "{stdout}");
    assert_eq!(
        stage_requests(&stdout, "block_rq_complete"),
        READS,
        "one completion per read:\n{stdout}"
    );
    // Every read was seen from its allocation on (getrq; this loop device has no scheduler,
    // so no insert): each one's issue is timed too.
    assert_eq!(stage_requests(&stdout, "block_rq_issue"), READS, "{stdout}");
}

/// `--than 1ns`: every stage is over it, and each is listed as its two raw event lines —
/// so each read's completion appears once as the later event of a pair.
#[test]
fn blktrace_than_lists_each_slow_stage_with_its_events() {
    let _serial = serial();
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    let device = LoopDevice::attach(&backing_file(dir.path()));
    let reads = 16;
    let (stdout, stderr, code) = blktrace_around(&device.path, &["--than", "1ns"], || {
        direct_reads(&device.path, reads)
    });
    trace_summary(&stderr, "blktrace");
    assert!(matches!(code, Some(0 | 3)), "exit {code:?}:\n{stderr}");
    let completions = stdout
        .lines()
        .filter(|l| l.contains(": block:block_rq_complete: "))
        .count() as u64;
    assert_eq!(completions, reads, "{stdout}");
    // The than column counts them too (all `reqs` of the row).
    let than: u64 = text_tables(&stdout)
        .iter()
        .flat_map(|t| {
            let at = t.column("max(us)") + 1;
            t.rows_where("end", "block_rq_complete")
                .map(move |row| row[at].parse::<u64>().unwrap())
                .collect::<Vec<_>>()
        })
        .sum();
    assert_eq!(than, reads, "{stdout}");
}

/// A `-d` that is not a block device is an error (exit 1) that says what to give instead.
#[test]
fn blktrace_refuses_what_is_not_a_block_device() {
    let dir = tempfile::tempdir().unwrap();
    let file = backing_file(dir.path());
    for (device, says) in [
        ("/dev/null", "not a block device (a character device)"),
        (file.to_str().unwrap(), "not a block device (a regular file)"),
        ("/dev/no-such-disk", "No such file or directory"),
    ] {
        let out = perfscope(dir.path(), &["blktrace", "-d", device, "--no-tui"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{device}: {stderr}");
        assert!(
            stderr.contains(says) && stderr.contains("lsblk"),
            "{device}: {stderr}"
        );
        assert!(out.stdout.is_empty(), "{device}: nothing on stdout");
    }
}
