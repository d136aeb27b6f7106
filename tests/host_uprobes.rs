//! uprobe / uretprobe selectors end to end on real tracefs and real uprobes (as root): a
//! child calls `perfscope_probed(i % 3, 42)` a known number of times, and every form of
//! the selector (FUNC, FUNC+OFF, 0xOFF, uretprobe, FUNC@"PATH") sees exactly those calls
//! with those arguments. The probes perfscope defines in `uprobe_events` are gone after
//! the run — at its end, after SIGINT, and (the next session's clean-up) after SIGKILL.
//! Errors (missing symbol, missing binary, kprobes) say what is wrong and exit 1.
//!
//! Each test builds its own copy of the fixture: a uprobe fires in every process that
//! runs the file (a uprobe belongs to the inode), so tests running in parallel never see
//! each other's calls. Lines are told apart by the group, `perfscope_<perfscope's pid>`.

mod common;

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::host::{Background, build_fixture, ensure_tracefs, only_lost_records};
use object::{Object, ObjectSection, ObjectSymbol};

const UPROBE_EVENTS: &str = "/sys/kernel/tracing/uprobe_events";
const FUNC: &str = "perfscope_probed";

fn fixture(dir: &Path) -> PathBuf {
    ensure_tracefs();
    build_fixture(dir, "uprobed", &[])
}

fn perfscope(dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_perfscope"));
    command.current_dir(dir).args(args);
    command
}

/// Run perfscope with stdout piped (text output) to its end: the output and its pid.
fn run(dir: &Path, args: &[&str]) -> (Output, u32) {
    let child = perfscope(dir, args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run perfscope");
    let pid = child.id();
    (child.wait_with_output().expect("wait for perfscope"), pid)
}

/// As [`run`], insisting that it succeeded; stdout.
fn run_ok(dir: &Path, args: &[&str]) -> (String, u32) {
    let (out, pid) = run(dir, args);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success() || only_lost_records(out.status.code(), &stderr),
        "perfscope {args:?} failed ({}):\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    (stdout, pid)
}

/// The event lines of `event` in the group of perfscope process `pid`.
fn event_lines<'a>(stdout: &'a str, pid: u32, event: &str) -> Vec<&'a str> {
    let marker = format!(" perfscope_{pid}:{event}: ");
    stdout.lines().filter(|l| l.contains(&marker)).collect()
}

/// The probes of perfscope process `pid` still defined.
fn probes_of(pid: u32) -> Vec<String> {
    let text = std::fs::read_to_string(UPROBE_EVENTS).expect("read uprobe_events");
    let group = format!(":perfscope_{pid}/");
    text.lines()
        .filter(|l| l.contains(&group))
        .map(str::to_string)
        .collect()
}

/// The value of `name=` in an event line.
fn field(line: &str, name: &str) -> u64 {
    let key = format!(" {name}=");
    let at = line.find(&key).unwrap_or_else(|| panic!("no {name}= in {line}")) + key.len();
    line[at..]
        .split_whitespace()
        .next()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{name}= is not a number in {line}"))
}

/// The fixture's `perfscope_probed_body` label: its offset into `perfscope_probed` and its
/// file offset — computed here through the section table, not the program headers
/// perfscope uses, so the two ways must agree.
fn body_offsets(exe: &Path) -> (u64, u64) {
    let data = std::fs::read(exe).expect("read the fixture");
    let file = object::File::parse(&*data).expect("the fixture is an ELF");
    let address = |name: &str| {
        file.symbols()
            .find(|s| s.name() == Ok(name))
            .unwrap_or_else(|| panic!("no {name} in the fixture"))
    };
    let func = address(FUNC).address();
    let body = address("perfscope_probed_body");
    let section = file
        .section_by_index(body.section_index().expect("in a section"))
        .expect("its section");
    let (section_file_offset, _) = section.file_range().expect("in the file");
    let file_offset = body.address() - section.address() + section_file_offset;
    assert!(
        body.address() > func,
        "the label is past the function's first byte"
    );
    (body.address() - func, file_offset)
}

/// Wait up to 10 s for `ready`.
fn wait_for(what: &str, mut ready: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !ready() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn signal(child: &Child, signal: i32) {
    // SAFETY: kill(2) on our own child, not yet reaped.
    unsafe { libc::kill(child.id() as i32, signal) };
}

#[test]
fn a_uprobe_counts_every_call_with_its_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let exe = fixture(dir.path());
    let selector = format!("uprobe:{}:{FUNC}", exe.display());
    let (stdout, pid) = run_ok(dir.path(), &["trace", "-e", &selector, "--", "./uprobed", "30"]);
    let lines = event_lines(&stdout, pid, FUNC);
    assert_eq!(lines.len(), 30, "{stdout}");
    // Call i has arguments (i % 3, 42), in order.
    for (i, line) in lines.iter().enumerate() {
        assert_eq!(
            (field(line, "arg1"), field(line, "arg2")),
            (i as u64 % 3, 42),
            "{line}"
        );
    }
    assert!(probes_of(pid).is_empty(), "left behind: {:?}", probes_of(pid));
}

#[test]
fn a_kernel_filter_on_an_argument_keeps_the_matching_calls() {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path());
    // A relative path, as typed in the fixture's folder; 10 of 30 calls have arg1 == 1.
    let selector = format!("uprobe:./uprobed:{FUNC}/arg1==1/");
    let (stdout, pid) = run_ok(dir.path(), &["trace", "-e", &selector, "--", "./uprobed", "30"]);
    let lines = event_lines(&stdout, pid, FUNC);
    assert_eq!(lines.len(), 10, "{stdout}");
    assert!(lines.iter().all(|l| field(l, "arg1") == 1), "{stdout}");
    assert!(probes_of(pid).is_empty());
}

#[test]
fn a_uretprobe_counts_every_return_with_its_value() {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path());
    let selector = format!("uretprobe:./uprobed:{FUNC}");
    let (stdout, pid) = run_ok(dir.path(), &["trace", "-e", &selector, "--", "./uprobed", "25"]);
    let lines = event_lines(&stdout, pid, &format!("{FUNC}__return"));
    assert_eq!(lines.len(), 25, "{stdout}");
    for (i, line) in lines.iter().enumerate() {
        assert_eq!(field(line, "ret"), (i as u64 % 3) * 10 + 42, "{line}");
    }
    assert!(probes_of(pid).is_empty());
}

#[test]
fn offset_forms_hit_the_instruction_they_name() {
    let dir = tempfile::tempdir().unwrap();
    let exe = fixture(dir.path());
    let (into_func, file_offset) = body_offsets(&exe);
    let selectors = format!("uprobe:./uprobed:{FUNC}+{into_func},uprobe:./uprobed:0x{file_offset:x}");
    let (stdout, pid) = run_ok(dir.path(), &["trace", "-e", &selectors, "--", "./uprobed", "12"]);
    let plus = event_lines(&stdout, pid, &format!("{FUNC}_0x{into_func:x}"));
    let raw = event_lines(&stdout, pid, &format!("uprobed_0x{file_offset:x}"));
    assert_eq!((plus.len(), raw.len()), (12, 12), "{stdout}");
    // Both report the same probed address (the `(ip)` after the name).
    let ip = |line: &str| {
        line.split_once(": (")
            .map(|(_, r)| r[..r.find(')').unwrap()].to_string())
    };
    assert_eq!(ip(plus[0]), ip(raw[0]), "{stdout}");
    assert!(probes_of(pid).is_empty());
}

#[test]
fn perf_prof_form_and_analyzers_see_the_calls() {
    let dir = tempfile::tempdir().unwrap();
    let exe = fixture(dir.path());
    // num-dist of the return value: 30 calls, returns 42, 52, 62 ten times each.
    let selector = format!("uretprobe:{FUNC}@\"{}\"//num=ret/alias=probed/", exe.display());
    let (stdout, pid) = run_ok(
        dir.path(),
        &["num-dist", "-e", &selector, "--", "./uprobed", "30"],
    );
    let row = stdout
        .lines()
        .find(|l| l.starts_with("probed "))
        .unwrap_or_else(|| panic!("no probed row:\n{stdout}"));
    let cells: Vec<&str> = row.split_whitespace().collect();
    // event calls total min avg p99 max
    assert_eq!(&cells[1..4], ["30", "1560", "42"], "{stdout}");
    assert_eq!(cells[6], "62", "{stdout}");
    assert!(probes_of(pid).is_empty());
}

#[test]
fn no_probe_is_left_after_sigint_and_list_shows_it_meanwhile() {
    let dir = tempfile::tempdir().unwrap();
    let exe = fixture(dir.path());
    let child_process = Background::start(&exe, &["0", "20"]);
    let target = child_process.pid().to_string();
    let selector = format!("uprobe:./uprobed:{FUNC}");
    let mut session = perfscope(dir.path(), &["trace", "-e", &selector, "-p", &target])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start perfscope");
    let pid = session.id();
    wait_for("the probe to be defined", || !probes_of(pid).is_empty());
    // `list REGEX` lists the probe's event while the session runs; a regex that does not
    // match it leaves it out.
    let event = format!("perfscope_{pid}:{FUNC}");
    wait_for("list to show the probe", || {
        let out = perfscope(dir.path(), &["list", &format!("^perfscope_{pid}:")])
            .output()
            .expect("run list");
        String::from_utf8_lossy(&out.stdout).lines().any(|l| l == event)
    });
    let other = perfscope(dir.path(), &["list", "^sched:sched_switch$"])
        .output()
        .expect("run list");
    assert_eq!(String::from_utf8_lossy(&other.stdout), "sched:sched_switch\n");
    // SIGINT mid-run: once the first event line is out (during the start it would stop
    // a session that never saw an event).
    let mut reader = BufReader::new(session.stdout.take().unwrap());
    let mut stdout = String::new();
    while event_lines(&stdout, pid, FUNC).is_empty() {
        let read = reader.read_line(&mut stdout).expect("read perfscope's stdout");
        assert!(read > 0, "perfscope ended before any event:\n{stdout}");
    }
    signal(&session, libc::SIGINT);
    reader.read_to_string(&mut stdout).unwrap();
    let status = session.wait().expect("wait for perfscope");
    assert!(status.code().is_some(), "perfscope died of a signal: {status}");
    assert!(probes_of(pid).is_empty(), "left behind: {:?}", probes_of(pid));
}

#[test]
fn the_probes_of_a_killed_session_are_removed_by_the_next_one() {
    let dir = tempfile::tempdir().unwrap();
    let exe = fixture(dir.path());
    let child_process = Background::start(&exe, &["0", "20"]);
    let target = child_process.pid().to_string();
    let selector = format!("uprobe:./uprobed:{FUNC}");
    let mut killed = perfscope(dir.path(), &["trace", "-e", &selector, "-p", &target])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start perfscope");
    let killed_pid = killed.id();
    wait_for("the probe to be defined", || !probes_of(killed_pid).is_empty());
    signal(&killed, libc::SIGKILL);
    killed.wait().expect("reap");
    // Nothing runs on SIGKILL: the kernel keeps the probe …
    assert_eq!(probes_of(killed_pid).len(), 1);
    // … until the next session that defines probes clears the groups of dead processes.
    let (stdout, pid) = run_ok(dir.path(), &["trace", "-e", &selector, "--", "./uprobed", "3"]);
    assert_eq!(event_lines(&stdout, pid, FUNC).len(), 3, "{stdout}");
    assert!(probes_of(killed_pid).is_empty(), "{:?}", probes_of(killed_pid));
}

/// An error run: exit 1, nothing on stdout, and stderr names `expect`.
fn assert_error(dir: &Path, selector: &str, expect: &[&str]) {
    let (out, pid) = run(dir, &["trace", "-e", selector, "--", "./uprobed", "1"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{selector}: {stderr}");
    for text in expect {
        assert!(stderr.contains(text), "{selector}: want {text:?} in:\n{stderr}");
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(probes_of(pid).is_empty());
}

#[test]
fn missing_symbols_binaries_and_kprobes_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path());
    assert_error(
        dir.path(),
        "uprobe:./uprobed:no_such_function",
        &["no function 'no_such_function'", "uprobed"],
    );
    assert_error(
        dir.path(),
        "uprobe:./no_such_binary:main",
        &["no binary './no_such_binary'"],
    );
    assert_error(
        dir.path(),
        &format!("uprobe:./uprobed:{FUNC}+100000"),
        &["past the end of 'perfscope_probed'"],
    );
    // Offset 0 is the ELF header, not code.
    assert_error(dir.path(), "uprobe:./uprobed:0x0", &["no executable segment"]);
    // A good probe before a bad one: the good one is removed too.
    assert_error(
        dir.path(),
        &format!("uprobe:./uprobed:{FUNC},uprobe:./uprobed:nope"),
        &["no function 'nope'"],
    );
    let kprobes = Path::new("/sys/kernel/tracing/kprobe_events").exists();
    let why = if kprobes {
        "not supported by perfscope yet"
    } else {
        "this kernel has no kprobes"
    };
    assert_error(dir.path(), "kprobe:do_sys_open", &[why, "kprobe:do_sys_open"]);
    assert_error(dir.path(), "kretprobe:do_sys_open", &[why]);
}

#[test]
fn a_recorded_probe_session_replays_to_the_same_analysis() {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path());
    let selector = format!("uretprobe:./uprobed:{FUNC}//num=ret/");
    let args = [
        "num-dist",
        "-e",
        &selector,
        "--record",
        "r.db",
        "--",
        "./uprobed",
        "30",
    ];
    run_ok(dir.path(), &args);
    // The replay matches the recorded perfscope_<pid> event to the probe selector.
    let (stdout, _) = run_ok(dir.path(), &["open", "r.db", "--no-tui", "--out", "out"]);
    let latest = dir
        .path()
        .join("out/perf")
        .join(std::env::consts::ARCH)
        .join("latest");
    let table = std::fs::read_to_string(latest.join("num-dist.txt"))
        .unwrap_or_else(|e| panic!("no num-dist.txt ({e}):\n{stdout}"));
    let row = table
        .lines()
        .find(|l| l.starts_with(&format!("{FUNC}__return ")))
        .unwrap_or_else(|| panic!("no row:\n{table}"));
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(&cells[1..4], ["30", "1560", "42"], "{table}");
}
