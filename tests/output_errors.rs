//! Results that cannot be written, on the real binary: stdout on a full device
//! (`> /dev/full`) or `-o /dev/full` is an error — exit 1, the reason on stderr (the
//! terminal's, when `-o` moved stderr onto the full file too) — and never the panic
//! `print!` made of it; a reader that closed stdout (`| head -1`) ends the run quietly
//! with 0 (src/cli/exit.rs says why).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::host::ensure_tracefs;
use perfscope::model::frames::{FrameKind, FrameOrigin};
use perfscope::model::{Callchain, Instance, InstanceKind, SampleMeta};
use perfscope::store::{Recorder, SessionMeta};

const FULL: &str = "No space left on device (os error 28); free some space or send the output elsewhere";

fn perfscope(cwd: &Path, args: &[&str], stdout: Stdio) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_perfscope"));
    c.current_dir(cwd)
        .args(args)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::piped());
    c
}

/// A device on which every write fails with ENOSPC: /dev/full, or — where /dev has none
/// (a minimal container's) — the same device (char 1:7) made in `dir`. Never a regular
/// file: `File::create("/dev/full")` there would make one, and every write would succeed.
fn full_device(dir: &Path) -> PathBuf {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let is_full = |path: &Path| {
        std::fs::metadata(path)
            .is_ok_and(|m| m.file_type().is_char_device() && m.rdev() == libc::makedev(1, 7))
    };
    let system = Path::new("/dev/full");
    if is_full(system) {
        return system.to_path_buf();
    }
    let made = dir.join("full");
    if is_full(&made) {
        return made;
    }
    let c = std::ffi::CString::new(made.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path.
    let rc = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 7)) };
    assert!(
        rc == 0 && is_full(&made),
        "no full device: /dev/full is not one here, and making one failed ({}); \
         these tests run as root",
        std::io::Error::last_os_error()
    );
    made
}

fn full_stdout(dir: &Path) -> Stdio {
    let device = full_device(dir);
    Stdio::from(
        std::fs::OpenOptions::new()
            .write(true)
            .open(&device)
            .expect("the full device"),
    )
}

/// A pipe whose reader is gone before perfscope writes: its first write is EPIPE.
fn closed_pipe() -> Stdio {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    Stdio::from(writer)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn folded(dir: &Path) -> &'static str {
    std::fs::write(dir.join("x.folded"), "a;b 3\na;c 2\n").unwrap();
    "x.folded"
}

/// A small recorded session for `sql`.
fn session(dir: &Path) -> &'static str {
    let mut r = Recorder::create(&dir.join("s.db"), &SessionMeta::now("host", "test")).unwrap();
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
    for i in 0..5 {
        r.sample(Some(i * 1_000), cpu, 1, stack, &meta);
    }
    r.finish().unwrap();
    "s.db"
}

#[test]
fn results_onto_a_full_device_exit_1_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let (folded, session) = (folded(dir.path()), session(dir.path()));
    let commands: [&[&str]; 3] = [
        &["report", "--folded", folded, "--out", "out"],
        &["diff", folded, folded, "--out", "diff"],
        &["sql", session, "SELECT * FROM samples"],
    ];
    for args in commands {
        let o = perfscope(dir.path(), args, full_stdout(dir.path()))
            .output()
            .unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        let last = err.lines().last().unwrap_or_default();
        assert!(
            last.starts_with("perfscope: cannot write the") && last.ends_with(&format!("to stdout: {FULL}")),
            "{args:?}: {err}"
        );
    }
    // The report's artifacts were written before the summary that could not be.
    assert!(dir.path().join("out/perf/unknown/latest/report.json").exists());
}

#[test]
fn dash_o_onto_a_full_device_exits_1_and_says_so_on_the_terminal() {
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    // A live analyzer stops at its first line that cannot be written, long before
    // --duration; the error goes to the stderr perfscope started with, not the full file.
    let full = full_device(dir.path());
    let full = full.to_str().unwrap();
    let started = Instant::now();
    let o = perfscope(
        dir.path(),
        &[
            "trace",
            "-e",
            "sched:sched_switch",
            "-o",
            full,
            "--duration",
            "20",
        ],
        Stdio::piped(),
    )
    .output()
    .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(
        err,
        format!("perfscope: cannot write the results to -o {full}: {FULL}\n")
    );
    assert!(o.stdout.is_empty());
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    // A table printed at the end meets the same.
    let o = perfscope(
        dir.path(),
        &["syscalls", "-o", full, "--", "cat", "/etc/hostname"],
        Stdio::piped(),
    )
    .output()
    .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(
        stderr(&o),
        format!("perfscope: cannot write the results to -o {full}: {FULL}\n")
    );
}

#[test]
fn a_reader_that_closed_the_pipe_ends_the_run_quietly_with_0() {
    let dir = tempfile::tempdir().unwrap();
    let (folded, session) = (folded(dir.path()), session(dir.path()));
    let commands: [&[&str]; 3] = [
        &["report", "--folded", folded, "--out", "out"],
        &["diff", folded, folded, "--out", "diff"],
        &["sql", session, "SELECT * FROM samples"],
    ];
    for args in commands {
        let o = perfscope(dir.path(), args, closed_pipe()).output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o), "", "{args:?}");
    }
}

#[test]
fn a_live_analyzer_piped_into_head_stops_when_head_does() {
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    // `perfscope trace -e sched:sched_switch --duration 20 | head -1`.
    let started = Instant::now();
    let mut child = perfscope(
        dir.path(),
        &["trace", "-e", "sched:sched_switch", "--duration", "20"],
        Stdio::piped(),
    )
    .spawn()
    .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 1];
    std::io::Read::read_exact(&mut stdout, &mut first).expect("a first line");
    drop(stdout);
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    // Lost-event lines may come (a debug build under load); nothing about the pipe.
    let stray: Vec<&str> = err.lines().filter(|l| !l.contains("lost ")).collect();
    assert_eq!(stray, Vec::<&str>::new());
}
