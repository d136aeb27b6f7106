//! perf-prof's command-line discipline, on the real binary over real tracefs: with stdout
//! piped the analyzers print text without `--no-tui`; stderr carries nothing but errors and
//! lost-event lines; SIGUSR2 dumps the interval's tables instead of killing the run; `-o FILE`
//! appends the output to FILE; a thread that exited before its table printed is still named.

mod common;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::host::ensure_tracefs;

const SYSCALLS: [&str; 5] = [
    "syscalls",
    "-e",
    "raw_syscalls:sys_enter",
    "-e",
    "raw_syscalls:sys_exit",
];

fn perfscope(cwd: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_perfscope"));
    c.current_dir(cwd)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

fn signal(child: &Child, signal: libc::c_int) {
    // SAFETY: kill(2) on our own child's pid.
    assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
}

/// Whether process `pid` has a handler for `signal` (its SigCgt mask in /proc).
fn catches(pid: u32, signal: libc::c_int) -> bool {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("SigCgt:"))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .is_some_and(|mask| mask & (1 << (signal - 1)) != 0)
}

/// Stderr lines that are neither lost-event lines nor the exit-3 reason for them.
fn stray_stderr(stderr: &str) -> Vec<&str> {
    stderr.lines().filter(|l| !l.contains("lost ")).collect()
}

#[test]
fn piped_stdout_gets_text_without_no_tui_and_stderr_stays_empty() {
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    let mut args = SYSCALLS.to_vec();
    args.extend(["--", "sh", "-c", "cat /etc/hostname /etc/hostname >/dev/null"]);
    let out = perfscope(dir.path(), &args).output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("syscalls                calls"), "{stdout}");
    assert!(stdout.contains("read(0)"), "{stdout}");
    assert_eq!(stderr, "", "nothing on stderr: no closing summary");
}

#[test]
fn sigusr2_dumps_the_interval_and_sigint_still_ends_cleanly() {
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    let mut busy = Command::new("sh")
        .args(["-c", "while :; do cat /etc/hostname >/dev/null; sleep 0.05; done"])
        .spawn()
        .unwrap();
    let pid = busy.id().to_string();
    let mut args = SYSCALLS.to_vec();
    args.extend(["-p", &pid]);
    let mut child = perfscope(dir.path(), &args).spawn().unwrap();
    // SIGUSR2 every 300 ms until a dump prints (a dump of nothing prints nothing: before
    // the session counts, however long its start takes, there is nothing to dump).
    let (text_tx, text) = std::sync::mpsc::channel::<String>();
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        use std::io::Read;
        let mut stdout = stdout;
        let mut chunk = [0u8; 4096];
        while let Ok(n) = stdout.read(&mut chunk) {
            if n == 0
                || text_tx
                    .send(String::from_utf8_lossy(&chunk[..n]).into_owned())
                    .is_err()
            {
                break;
            }
        }
    });
    let mut seen = String::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    // Not before perfscope takes SIGUSR2 (its default action would end the run).
    while !catches(child.id(), libc::SIGUSR2) {
        assert!(std::time::Instant::now() < deadline, "SIGUSR2 never caught");
        std::thread::sleep(Duration::from_millis(20));
    }
    while !seen.contains("syscalls                calls") {
        assert!(std::time::Instant::now() < deadline, "no dump in 60 s: {seen}");
        signal(&child, libc::SIGUSR2);
        std::thread::sleep(Duration::from_millis(300));
        seen.extend(text.try_iter());
    }
    // The dump is whole once it is followed by a pause (it is written at once).
    std::thread::sleep(Duration::from_millis(300));
    signal(&child, libc::SIGINT);
    let out = child.wait_with_output().unwrap();
    reader.join().unwrap();
    seen.extend(text.try_iter());
    let _ = busy.kill();
    let _ = busy.wait();
    let (stdout, stderr) = (seen, String::from_utf8_lossy(&out.stderr));
    assert_eq!(
        out.status.code(),
        Some(0),
        "no death by SIGUSR2:\n{stdout}\n{stderr}"
    );
    // The dump (the interval so far), then the table at exit: two tables, both with the
    // shell's wait4 (it waits for each cat).
    assert_eq!(
        stdout.matches("syscalls                calls").count(),
        2,
        "{stdout}"
    );
    assert!(stdout.matches("wait4(61)").count() >= 2, "{stdout}");
    assert_eq!(stray_stderr(&stderr), Vec::<&str>::new());
}

#[test]
fn dash_o_appends_the_text_output_to_the_file() {
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("syscalls.log");
    std::fs::write(&file, "earlier run\n").unwrap();
    let mut args = SYSCALLS.to_vec();
    args.extend(["-o", "syscalls.log", "--", "cat", "/etc/hostname"]);
    let out = perfscope(dir.path(), &args).output().unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(out.stdout.is_empty(), "the output goes to the file, not stdout");
    assert!(
        text.starts_with("earlier run\n"),
        "appended, as perf-prof:\n{text}"
    );
    assert!(text.contains("read(0)"), "{text}");
    // The workload's own output (cat's) is part of stdout, so it lands in the file too.
    assert!(
        !dir.path().join("perfscope-out").exists(),
        "-o is no longer the export dir"
    );
}

#[test]
fn a_thread_that_exited_before_the_table_is_named() {
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    // A shell that exists before the session (no FORK or COMM record will name it),
    // blocked opening a FIFO (that syscall entered before the session), and that exits
    // right after its first syscalls in it — once the test writes the FIFO, which it does
    // only when the session is seen counting: gone from /proc before its rows are printed.
    let fifo = dir.path().join("go");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let mut shell = Command::new("sh")
        .args(["-c", &format!("read line < {}; true", fifo.display())])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    // A second shell that makes syscalls all along: its rows say the session counts.
    let mut witness = Command::new("sh")
        .args(["-c", "while :; do sleep 0.05; done"])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let (pid, witness_pid) = (shell.id(), witness.id());
    // Reaped as soon as it exits: a zombie would still show its comm in /proc.
    let reaper = std::thread::spawn(move || shell.wait());
    let filter = format!("common_pid=={pid}||common_pid=={witness_pid}");
    let enter = format!("raw_syscalls:sys_enter/{filter}/");
    let exit = format!("raw_syscalls:sys_exit/{filter}/");
    let mut child = perfscope(
        dir.path(),
        &[
            "syscalls",
            "-e",
            &enter,
            "-e",
            &exit,
            "--perins", // Still accepted (and the old way to get text): keeps this test about names.
            "--no-tui",
            "-i",
            "200",
            "--duration",
            "120",
        ],
    )
    .stdout(Stdio::piped())
    .spawn()
    .unwrap();
    // Every line perfscope prints, as it prints them.
    let (lines_tx, lines) = std::sync::mpsc::channel::<String>();
    let stdout = child.stdout.take().unwrap();
    let collector = std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = lines_tx.send(line);
        }
    });
    let mut seen = String::new();
    let mut wait_for_row = |of: u32, what: &str| {
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while !seen.lines().any(|l| l.starts_with(&format!("{of} "))) {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match lines.recv_timeout(left) {
                Ok(line) => seen.push_str(&(line + "\n")),
                Err(_) => panic!("no row of {what} in 60 s:\n{seen}"),
            }
        }
        seen.clone()
    };
    wait_for_row(witness_pid, "the witness");
    std::fs::write(&fifo, "go\n").unwrap();
    reaper.join().unwrap().unwrap();
    let stdout = wait_for_row(pid, "the shell");
    signal(&child, libc::SIGINT);
    let _ = child.wait();
    let _ = witness.kill();
    let _ = witness.wait();
    collector.join().unwrap();
    let rows: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with(&format!("{pid} ")))
        .collect();
    for row in &rows {
        let comm = row.split_whitespace().nth(1);
        assert_eq!(comm, Some("sh"), "{row}\n{stdout}");
    }
    assert!(!stdout.contains("<...>"), "{stdout}");
}

/// The scheduling policy of `pid`'s thread named `name` (`/proc/PID/task/TID/stat` field
/// 41), once the thread exists.
fn thread_policy(pid: u32, name: &str) -> Option<u32> {
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).ok()?.flatten() {
        let path = task.path();
        if std::fs::read_to_string(path.join("comm")).is_ok_and(|c| c.trim() == name) {
            let stat = std::fs::read_to_string(path.join("stat")).ok()?;
            // The fields after the `(comm)`: state is field 3, policy field 41.
            let after = stat.rsplit_once(") ")?.1;
            return after.split_whitespace().nth(41 - 3)?.parse().ok();
        }
    }
    None
}

/// `--realtime`: the ring reader runs SCHED_FIFO (as root), the run's output is the usual
/// one, and without the flag the reader keeps the normal policy.
#[test]
fn realtime_makes_the_ring_reader_fifo() {
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    for (flag, policy) in [
        (Some("--realtime"), libc::SCHED_FIFO as u32),
        (None, libc::SCHED_OTHER as u32),
    ] {
        let mut args = SYSCALLS.to_vec();
        args.extend(["-i", "500", "--duration", "4"]);
        args.extend(flag);
        let child = perfscope(dir.path(), &args).spawn().unwrap();
        let mut seen = None;
        for _ in 0..100 {
            std::thread::sleep(Duration::from_millis(50));
            seen = thread_policy(child.id(), "perfscope-trace");
            if seen.is_some() {
                break;
            }
        }
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(matches!(out.status.code(), Some(0 | 3)), "{flag:?}: {stderr}");
        assert_eq!(seen, Some(policy), "{flag:?}: the reader's policy");
        assert!(stray_stderr(&stderr).is_empty(), "{flag:?}: {stderr}");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("read("),
            "{flag:?}: tables"
        );
    }
}

/// Issue 25: a signal ends a run within about 2 s whatever the source still holds. kmemleak
/// with stacks over an allocating workload names its stacks while it drains (loading
/// symbol tables), once 3.5 s after SIGTERM; the source now gets 1 s to hand over what is
/// in flight, then the run ends with what it has. The bound here is that grace plus slack
/// for a loaded machine, far below the 20 s the drain used to be allowed.
#[test]
fn a_signal_ends_kmemleak_with_stacks_promptly() {
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    let mut busy = Command::new("sh")
        .args(["-c", "while :; do ls -R /usr/lib >/dev/null; done"])
        .spawn()
        .unwrap();
    for sig in [libc::SIGINT, libc::SIGTERM] {
        let child = perfscope(
            dir.path(),
            &[
                "kmemleak",
                "--alloc",
                "kmem:kmem_cache_alloc//ptr=ptr/size=bytes_req/stack/",
                "--free",
                "kmem:kmem_cache_free//ptr=ptr/",
                "-m",
                "256",
                "--order",
            ],
        )
        .spawn()
        .unwrap();
        std::thread::sleep(Duration::from_millis(2500));
        signal(&child, libc::SIGUSR2);
        std::thread::sleep(Duration::from_millis(300));
        signal(&child, sig);
        let sent = std::time::Instant::now();
        let out = child.wait_with_output().unwrap();
        let took = sent.elapsed();
        let stderr = String::from_utf8_lossy(&out.stderr);
        eprintln!("signal {sig}: ended {took:?} after it");
        assert!(
            took < Duration::from_secs(5),
            "signal {sig}: ended {took:?} after it\n{stderr}"
        );
        // Exit 0, or 3 with the loss said: never a crash or a usage error.
        assert!(
            matches!(out.status.code(), Some(0 | 3)),
            "signal {sig}: {:?}\n{stderr}",
            out.status
        );
    }
    let _ = busy.kill();
    let _ = busy.wait();
}

/// Issue 25: closing a tracepoint event waits for the kernel (an RCU grace period under one
/// mutex, ~35 ms each): `trace -e '*:*'` took 84 s to end after SIGINT, closing 2,305 of
/// them. The events are now closed by a detached process (src/sources/perf_event/closer.rs)
/// and the run ends at once; the bound is slack for a loaded machine, far below 84 s.
#[test]
fn a_signal_ends_a_run_of_every_tracepoint_promptly() {
    use std::io::Read;
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    let mut child = perfscope(dir.path(), &["trace", "-e", "*:*", "-C", "0"])
        .spawn()
        .unwrap();
    // Events flow: the formats are read and the events open.
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 1];
    stdout.read_exact(&mut first).expect("trace prints events");
    let drain = std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
    signal(&child, libc::SIGINT);
    let sent = std::time::Instant::now();
    let out = child.wait_with_output().unwrap();
    let took = sent.elapsed();
    drain.join().unwrap().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        took < Duration::from_secs(10),
        "ended {took:?} after SIGINT\n{stderr}"
    );
    assert!(
        matches!(out.status.code(), Some(0 | 3)),
        "{:?}\n{stderr}",
        out.status
    );
}
