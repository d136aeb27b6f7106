//! Bounded memory on any input, on the real binary: endless inputs (`/dev/zero`,
//! `/dev/urandom`, `yes` through a pipe, a FIFO fed without end), a 4 GiB file without a
//! newline and a pipe that is read once. Each run ends within [`TIME_LIMIT`] with the
//! error the README's "Bounded input" section quotes (or, stopped by a signal, with the
//! results so far), and its peak resident memory (wait4's `ru_maxrss`) stays under
//! [`MAX_PEAK_RSS_KIB`], the bound the README documents.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Generous: each run ends in well under a second on an idle machine.
const TIME_LIMIT: Duration = Duration::from_secs(30);

/// The documented peak: the binary's own pages (~15 MiB in a debug build), a folded
/// format check's 16 MiB look-ahead and a qperf record buffer, with room to spare.
const MAX_PEAK_RSS_KIB: u64 = 64 * 1024;

fn asset(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets")
        .join(name)
        .display()
        .to_string()
}

/// How a bounded run ended.
struct Ended {
    /// `None` when a signal ended it.
    code: Option<i32>,
    stdout: String,
    stderr: String,
    peak_rss_kib: u64,
}

/// Collect everything a pipe says, on a thread (a full pipe would stall the child).
fn drain(pipe: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(mut pipe) = pipe {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            text = String::from_utf8_lossy(&bytes).into_owned();
        }
        text
    })
}

/// Wait for `child` with wait4, which also gives its peak resident memory; a child still
/// running after [`TIME_LIMIT`] is killed and fails the test. `interrupt_after`: send
/// SIGINT then (Ctrl-C).
fn wait_bounded(mut child: Child, what: &str, interrupt_after: Option<Duration>) -> Ended {
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let pid = child.id() as libc::pid_t;
    let start = Instant::now();
    let mut interrupted = false;
    let (status, usage) = loop {
        let mut status = 0;
        // SAFETY: rusage is plain data the call fills in.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: pid is our child; status and usage point at live locals.
        let waited = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        assert!(waited >= 0, "{what}: wait4 failed");
        if waited == pid {
            break (status, usage);
        }
        if let Some(after) = interrupt_after
            && !interrupted
            && start.elapsed() >= after
        {
            // SAFETY: signalling our own child by its pid.
            unsafe { libc::kill(pid, libc::SIGINT) };
            interrupted = true;
        }
        if start.elapsed() > TIME_LIMIT {
            let _ = child.kill();
            panic!("{what}: still running after {TIME_LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let ended = Ended {
        code: libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)),
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
        // Linux gives ru_maxrss in KiB.
        peak_rss_kib: usage.ru_maxrss as u64,
    };
    assert!(
        ended.peak_rss_kib < MAX_PEAK_RSS_KIB,
        "{what}: peak RSS {} KiB, over the documented {MAX_PEAK_RSS_KIB} KiB",
        ended.peak_rss_kib
    );
    ended
}

fn perfscope(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_perfscope"));
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// Run perfscope on `args` and expect a clear error (exit 1) that says `expected`.
fn refused(args: &[&str], expected: &str) -> Ended {
    let what = args.join(" ");
    let child = perfscope(args).spawn().expect("run perfscope");
    let ended = wait_bounded(child, &what, None);
    assert_eq!(ended.code, Some(1), "{what}: {}", ended.stderr);
    assert!(ended.stderr.contains(expected), "{what}: {}", ended.stderr);
    ended
}

/// A 4 GiB file of zeros without a newline, sparse (no disk, no time to write).
fn huge_file(dir: &Path) -> PathBuf {
    let path = dir.join("huge");
    let file = std::fs::File::create(&path).unwrap();
    file.set_len(4 << 30).unwrap();
    path
}

#[test]
fn dev_zero_ends_at_once_as_every_input_kind() {
    let out = tempfile::tempdir().unwrap();
    let out = out.path().to_str().unwrap();
    let (bin, elf) = (asset("tinyk-riscv64.qperf.bin"), asset("tinyk-riscv64.elf"));
    refused(
        &["report", "--folded", "/dev/zero", "-o", out],
        "/dev/zero is not a folded file: no stack line ends within its first 16 MiB",
    );
    refused(
        &[
            "open",
            "--no-tui",
            &bin,
            "--elf",
            &elf,
            "--console",
            "/dev/zero",
            "-o",
            out,
        ],
        "line 1 of /dev/zero is longer than 1 MiB (the longest line perfscope reads in a console log)",
    );
    refused(
        &["report", &bin, "--kallsyms", "/dev/zero", "-o", out],
        "line 1 of /dev/zero is longer than 4 KiB (the longest line perfscope reads in a kallsyms file)",
    );
    refused(
        &["report", "/dev/zero", "--elf", &elf, "-o", out],
        "corrupt record at byte 0 (4096 zero bytes where a record starts: a hole",
    );
    for flag in ["--elf", "--user-elf"] {
        let mut args = vec!["report", &bin, "-o", out];
        if flag == "--user-elf" {
            args.extend(["--elf", &elf]);
        }
        args.extend([flag, "/dev/zero"]);
        refused(
            &args,
            "/dev/zero is a character device, not a regular file: an ELF is read in place",
        );
    }
    refused(
        &["sql", "/dev/zero", "SELECT 1"],
        "/dev/zero is a character device, not a regular file: a session is read in place",
    );
}

#[test]
fn dev_urandom_is_no_profile_and_its_rest_is_read_only_so_far() {
    let out = tempfile::tempdir().unwrap();
    let out = out.path().to_str().unwrap();
    refused(
        &["report", "--folded", "/dev/urandom", "-o", out],
        "/dev/urandom is not a folded file: line ",
    );
    // Read as a qperf.bin, its first record fails (exit 1) or a few records decode before
    // a corrupt one (exit 3, the results said incomplete); either way the endless rest is
    // counted up to 64 MiB, not to its end.
    let what = "report /dev/urandom as a qperf.bin";
    let elf = asset("tinyk-riscv64.elf");
    let child = perfscope(&["report", "/dev/urandom", "--elf", &elf, "-o", out])
        .spawn()
        .expect("run perfscope");
    let ended = wait_bounded(child, what, None);
    assert!(matches!(ended.code, Some(1 | 3)), "{what}: {}", ended.stderr);
    assert!(
        ended
            .stderr
            .contains("a stream, read no further than 67 108 864 bytes past the bad record"),
        "{what}: {}",
        ended.stderr
    );
}

#[test]
fn a_4_gib_file_without_a_newline_ends_at_the_caps_as_every_kind() {
    let dir = tempfile::tempdir().unwrap();
    let huge = huge_file(dir.path());
    let huge = huge.to_str().unwrap();
    let out = dir.path().join("out");
    let out = out.to_str().unwrap();
    let (bin, elf) = (asset("tinyk-riscv64.qperf.bin"), asset("tinyk-riscv64.elf"));
    refused(
        &["report", "--folded", huge, "-o", out],
        "is not a folded file: no stack line ends within its first 16 MiB",
    );
    refused(
        &[
            "open",
            "--no-tui",
            &bin,
            "--elf",
            &elf,
            "--console",
            huge,
            "-o",
            out,
        ],
        "huge is longer than 1 MiB (the longest line perfscope reads in a console log)",
    );
    refused(
        &["report", &bin, "--kallsyms", huge, "-o", out],
        "huge is longer than 4 KiB (the longest line perfscope reads in a kallsyms file)",
    );
    // A regular file's rest after the hole is its size: nothing past the hole is read.
    refused(
        &["report", huge, "--elf", &elf, "-o", out],
        "(4096 zero bytes where a record starts: a hole — a preallocated file, or blocks a \
         crash left zeroed — not records the plugin wrote): 4 294 967 296 bytes lost",
    );
    // Mapped, not read: only its header is looked at.
    refused(
        &["report", &bin, "--elf", huge, "-o", out],
        "is not an object file addr2line can read",
    );
}

#[test]
fn a_folded_line_deeper_than_the_frame_cap_is_skipped_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let folded = dir.path().join("deep.folded");
    let deep = vec!["f"; 65_537].join(";");
    std::fs::write(&folded, format!("main;leaf 5\n{deep} 1\n")).unwrap();
    let out = dir.path().join("out");
    let child = perfscope(&[
        "report",
        "--folded",
        folded.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ])
    .spawn()
    .expect("run perfscope");
    let ended = wait_bounded(child, "report a 65,537-frame line", None);
    assert_eq!(ended.code, Some(3), "{}", ended.stderr);
    assert!(
        ended.stderr.contains(
            "skipped 1 malformed line(s); first at line 2: the stack has 65537 frames, more \
             than the 65536 perfscope reads"
        ),
        "{}",
        ended.stderr
    );
    assert!(
        ended.stdout.contains("perfscope report: 5 samples"),
        "{}",
        ended.stdout
    );
}

#[test]
fn yes_through_a_pipe_as_folded_ends_at_its_first_line() {
    let out = tempfile::tempdir().unwrap();
    let mut yes = Command::new("yes")
        .stdout(Stdio::piped())
        .spawn()
        .expect("run yes");
    let pipe = yes.stdout.take().expect("yes's stdout");
    let child = perfscope(&[
        "report",
        "--folded",
        "/dev/stdin",
        "-o",
        out.path().to_str().unwrap(),
    ])
    .stdin(Stdio::from(pipe))
    .spawn()
    .expect("run perfscope");
    let ended = wait_bounded(child, "yes | report --folded /dev/stdin", None);
    let _ = yes.kill();
    let _ = yes.wait();
    assert_eq!(ended.code, Some(1), "{}", ended.stderr);
    assert!(
        ended
            .stderr
            .contains("/dev/stdin is not a folded file: line 1: no count after the stack"),
        "{}",
        ended.stderr
    );
}

#[test]
fn a_fifo_fed_zeros_without_end_ends_as_a_hole() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("endless.qperf.bin");
    let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    let writer_path = fifo.clone();
    // Writes until the reader is gone (EPIPE: the test harness ignores SIGPIPE).
    let writer = std::thread::spawn(move || {
        let mut fifo = std::fs::OpenOptions::new().write(true).open(writer_path).unwrap();
        let zeros = vec![0u8; 1 << 16];
        while fifo.write_all(&zeros).is_ok() {}
    });
    let out = dir.path().join("out");
    refused(
        &[
            "report",
            fifo.to_str().unwrap(),
            "--elf",
            &asset("tinyk-riscv64.elf"),
            "-o",
            out.to_str().unwrap(),
        ],
        "4096 zero bytes where a record starts",
    );
    writer.join().unwrap();
}

#[test]
fn an_endless_stream_of_good_stacks_ends_on_ctrl_c_with_what_was_read() {
    let out = tempfile::tempdir().unwrap();
    let mut yes = Command::new("yes")
        .arg("main;work;leaf 1")
        .stdout(Stdio::piped())
        .spawn()
        .expect("run yes");
    let pipe = yes.stdout.take().expect("yes's stdout");
    let child = perfscope(&[
        "report",
        "--folded",
        "/dev/stdin",
        "-o",
        out.path().to_str().unwrap(),
    ])
    .stdin(Stdio::from(pipe))
    .spawn()
    .expect("run perfscope");
    // Valid stacks cannot be told from a long recording: they are read, in bounded
    // memory, until a signal says stop — then the results so far are written.
    let ended = wait_bounded(child, "yes STACK | report --folded", Some(Duration::from_secs(2)));
    let _ = yes.kill();
    let _ = yes.wait();
    assert_eq!(ended.code, Some(3), "{}", ended.stderr);
    assert!(
        ended.stderr.contains("incomplete: interrupted"),
        "{}",
        ended.stderr
    );
    assert!(ended.stdout.contains("result incomplete"), "{}", ended.stdout);
    let report: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.path().join("perf/unknown/latest/report.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(report["result"], "incomplete");
    let top = report["hotspots"]["top_functions"]
        .as_array()
        .expect("top functions");
    assert_eq!(
        top.first().map(|f| &f["function"]),
        Some(&"leaf".into()),
        "{top:?}"
    );
    assert!(top[0]["self"].as_u64().is_some_and(|n| n > 0), "{top:?}");
}

/// report.json's hotspots after `command` (a bash line) wrote its report under `out`.
fn hotspots_of(command: &str, out: &Path, arch: &str) -> serde_json::Value {
    let child = Command::new("bash")
        .args(["-c", command])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run bash");
    let ended = wait_bounded(child, command, None);
    assert_eq!(ended.code, Some(0), "{command}: {}", ended.stderr);
    let path = out.join("perf").join(arch).join("latest/report.json");
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    report["hotspots"].clone()
}

#[test]
fn a_process_substitution_is_read_once_and_gives_the_files_report() {
    let dir = tempfile::tempdir().unwrap();
    let exe = env!("CARGO_BIN_EXE_perfscope");
    let elf = asset("tinyk-riscv64.elf");
    // A qperf.bin with its ELF, and folded text (told from its first line, read on from it).
    for (input, symbols, arch) in [
        (
            asset("tinyk-riscv64.qperf.bin"),
            format!("--elf '{elf}'"),
            "riscv64",
        ),
        (asset("tinyk-riscv64.folded"), String::new(), "unknown"),
    ] {
        let (from_file, from_pipe) = (dir.path().join("file"), dir.path().join("pipe"));
        let file = hotspots_of(
            &format!("'{exe}' report '{input}' {symbols} -o '{}'", from_file.display()),
            &from_file,
            arch,
        );
        let pipe = hotspots_of(
            &format!(
                "'{exe}' report <(cat '{input}') {symbols} -o '{}'",
                from_pipe.display()
            ),
            &from_pipe,
            arch,
        );
        let top = file["top_functions"].as_array().expect("top functions");
        assert!(top.len() > 3, "{input}: {file}");
        assert!(file["total_samples"].as_u64().is_some_and(|n| n > 1000), "{file}");
        assert_eq!(pipe, file, "{input}");
    }
}
