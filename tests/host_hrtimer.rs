//! `hrtimer` end to end on real tracefs and perf_event (as root): a child pinned to CPU 1
//! makes a known number of getppid calls between two spins; the periods of CPU 1's timer
//! that held any (`'sys_enter_getppid > 0'`) must add up to exactly that number, and a
//! condition true for every period must list CPU 1's ticks at the asked period; with
//! `-g`, the periods that ended while the child read /dev/urandom carry that kernel stack.

mod common;

use std::path::Path;
use std::process::Command;
use std::sync::{Mutex, MutexGuard};

use common::host::{build_fixture, ensure_tracefs, perfscope_ok};

/// Both tests load CPU 1 and count its getppid calls: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// One kept period: CPU, interrupted pid, real period (ns), getppid calls.
#[derive(Debug)]
struct Period {
    cpu: u32,
    pid: u32,
    period_ns: u64,
    calls: u64,
    /// `-g`: the frames' functions, leaf first.
    stack: Vec<String>,
}

/// The periods of hrtimer's text: `<date> <time>     pid P tid T [CPU] s.us: hrtimer:
/// cpu-clock N ns`, then `    sys_enter_getppid K`, then with `-g` a frame per line:
/// `    <16 hex digits> function+0xoff (module)`.
fn periods(stdout: &str) -> Vec<Period> {
    let mut out: Vec<Period> = Vec::new();
    for line in stdout.lines() {
        if let Some(count) = line.strip_prefix("    sys_enter_getppid ") {
            out.last_mut().expect("a count after its timer line").calls = count.parse().unwrap();
            continue;
        }
        if let Some(frame) = line.strip_prefix("    ") {
            let (address, text) = frame.split_once(' ').expect("address and function");
            assert!(
                address.len() == 16 && u64::from_str_radix(address, 16).is_ok(),
                "a frame's address: {line:?}"
            );
            let function = text.split(['+', ' ']).next().unwrap().to_string();
            out.last_mut()
                .expect("a stack after its timer line")
                .stack
                .push(function);
            continue;
        }
        let w: Vec<&str> = line.split_whitespace().collect();
        assert!(
            w.len() == 12 && w[2] == "pid" && w[8] == "hrtimer:" && w[11] == "ns",
            "not an hrtimer line: {line:?}"
        );
        out.push(Period {
            pid: w[3].parse().unwrap(),
            cpu: w[6].trim_matches(|c| c == '[' || c == ']').parse().unwrap(),
            period_ns: w[10].parse().unwrap(),
            calls: u64::MAX,
            stack: Vec::new(),
        });
        assert_eq!(w[6].len(), 5, "[%03d]: {line}");
    }
    assert!(
        out.iter().all(|p| p.calls != u64::MAX),
        "every period has its count"
    );
    out
}

/// How the child spins, and whether hrtimer samples the timer's stacks.
#[derive(Clone, Copy, PartialEq)]
enum Spin {
    /// In user space, no `-g`.
    User,
    /// In the kernel (reading /dev/urandom), with `-g`.
    KernelWithStacks,
}

/// Run hrtimer on CPU 1 for 4 s while the fixture (started first, at real-time priority,
/// waiting 1.5 s for the tracer) spins `spin_ms`, calls getppid `calls` times, spins
/// again. Only the child's calls count (`common_pid==PID`): a shell started anywhere
/// calls getppid for its $PPID.
fn run_with_child(dir: &Path, condition: &str, calls: u32, spin_ms: u32, spin: Spin) -> (Vec<Period>, u32) {
    let exe = build_fixture(dir, "getppid_burst", &[]);
    // SCHED_FIFO: on a loaded machine another task may otherwise hold CPU 1 when a tick
    // comes, and the tests ask which task the timer interrupted (chrt execs: same pid).
    let mut child = Command::new("chrt")
        .args(["-f", "1"])
        .arg(&exe)
        .args(["1", &calls.to_string(), &spin_ms.to_string(), "1500"])
        .args((spin == Spin::KernelWithStacks).then_some("kernel"))
        .spawn()
        .unwrap();
    let pid = child.id();
    let event = format!("syscalls:sys_enter_getppid/common_pid=={pid}/");
    let mut args = vec![
        "hrtimer",
        "-e",
        &event,
        "-C",
        "1",
        "--period",
        "10ms",
        condition,
        "--duration",
        "4",
    ];
    let session = dir.join("session.db");
    if spin == Spin::KernelWithStacks {
        // The session is recorded: its samples are the profile the Flamegraph draws.
        args.extend(["-g", "--record", session.to_str().unwrap()]);
    }
    let (stdout, stderr) = perfscope_ok(dir, &args);
    assert!(child.wait().unwrap().success());
    assert!(stderr.lines().all(|l| l.contains("lost ")), "stderr: {stderr}");
    (periods(&stdout), pid)
}

#[test]
fn periods_holding_the_calls_add_up_to_every_call_made_on_that_cpu() {
    let _one = serial();
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    const CALLS: u32 = 2000;
    let (kept, pid) = run_with_child(dir.path(), "sys_enter_getppid > 0", CALLS, 200, Spin::User);
    assert!(kept.iter().all(|p| p.cpu == 1 && p.calls > 0), "{kept:?}");
    assert_eq!(
        kept.iter().map(|p| p.calls).sum::<u64>(),
        u64::from(CALLS),
        "{kept:?}"
    );
    assert!(
        kept.iter().any(|p| p.pid == pid),
        "the timer interrupted the caller: {kept:?}"
    );
}

#[test]
fn a_condition_true_for_every_period_lists_each_tick_at_the_asked_period() {
    let _one = serial();
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    // 2 × 1 s of spinning on CPU 1: about 200 ticks of 10 ms interrupt the child.
    let (kept, pid) = run_with_child(dir.path(), "period > 0", 0, 1000, Spin::User);
    let mut child_periods: Vec<u64> = kept
        .iter()
        .filter(|p| p.pid == pid)
        .map(|p| p.period_ns)
        .collect();
    child_periods.sort_unstable();
    assert!(
        (150..=205).contains(&child_periods.len()),
        "{} ticks while the child spun 2 s",
        child_periods.len()
    );
    let median = child_periods[child_periods.len() / 2];
    assert!(
        (9_500_000..=10_500_000).contains(&median),
        "median period {median} ns"
    );
    assert!(
        kept.iter().all(|p| p.cpu == 1 && p.calls == 0),
        "no getppid call was made"
    );
}

#[test]
fn with_call_graph_the_periods_that_ended_in_the_kernel_carry_its_stack() {
    let _one = serial();
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    // 2 × 1 s reading /dev/urandom on CPU 1: most ticks that interrupt the child find it
    // in the kernel, in urandom's read (leaf first: chacha_block_generic,
    // get_random_bytes_user, vfs_read, ksys_read, do_syscall_64, ...).
    let (kept, pid) = run_with_child(dir.path(), "period > 0", 0, 1000, Spin::KernelWithStacks);
    let child: Vec<&Period> = kept.iter().filter(|p| p.pid == pid).collect();
    assert!(
        child.len() >= 150,
        "{} ticks while the child read 2 s",
        child.len()
    );
    // The read's function below vfs_read (urandom_read_iter calls it as a tail call).
    let urandom = |f: &String| f == "get_random_bytes_user" || f.starts_with("urandom_read");
    let in_urandom = child.iter().filter(|p| p.stack.iter().any(urandom)).count();
    assert!(
        in_urandom * 2 >= child.len(),
        "{in_urandom} of {} ticks in urandom's read: {:?}",
        child.len(),
        child.iter().take(5).map(|p| &p.stack).collect::<Vec<_>>()
    );
    // The kept periods' stacks are the session's profile: one sample each.
    let conn = rusqlite::Connection::open(dir.path().join("session.db")).unwrap();
    let samples: i64 = conn
        .query_row("SELECT COUNT(*) FROM samples", [], |r| r.get(0))
        .unwrap();
    let with_stack = kept.iter().filter(|p| !p.stack.is_empty()).count() as i64;
    assert_eq!(samples, with_stack, "one sample per kept period with a stack");
    // The stacks are the kernel's only (perf-prof's hrtimer leaves user frames out).
    assert!(
        kept.iter()
            .flat_map(|p| &p.stack)
            .all(|f| !f.starts_with("main") && !f.starts_with("spin")),
        "{kept:?}"
    );
}
