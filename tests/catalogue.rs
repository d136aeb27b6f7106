//! The acceptance catalogue: every perf-prof-style command line of
//! tests/catalogue/commands.txt run against the binary as perf-prof's own test harness runs
//! perf-prof — stdout piped (so text, no `--no-tui`), 2 s, then SIGUSR2 and SIGINT — and held
//! to its pass criterion: no death by a signal, exit 0 (3 only when events were lost),
//! nothing on stderr but lost-event lines, no `<...>` in stdout.
//!
//! Lines run on a pool of workers (sampling runs at most two at a time) so the catalogue
//! stays a few minutes on 2 CPUs; the failures of every line are gathered and reported
//! together. A run that ended "stopped late" — the source still handing over what it held
//! a second after SIGINT, which eight debug builds beside each other on a loaded machine
//! can be — runs again once the pool is done, alone: late again, it fails, unless the
//! source was overrun too (lost events: the machine's load, said as perf-prof says it).

mod common;

use std::collections::VecDeque;
use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::host::ensure_tracefs;
use perfscope::model::text::shell_words;

/// How many command lines run at once.
const WORKERS: usize = 8;
/// How many of them may be CPU sampling runs (`profile`, `top` without -e).
const HEAVY: usize = 2;
/// How long each runs before it is stopped, as perf-prof's harness does (`--runtime`).
const RUNTIME: Duration = Duration::from_secs(2);
/// Between SIGUSR2 and SIGINT: the dump has time to print.
const DUMP_GRACE: Duration = Duration::from_millis(300);
/// A line still running this long after SIGINT is killed (and fails).
const EXIT_DEADLINE: Duration = Duration::from_secs(30);

fn catalogue() -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/catalogue/commands.txt");
    std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(String::from)
        .collect()
}

fn signal(pid: u32, signal: libc::c_int) {
    // SAFETY: kill(2) on our own child; it may have exited already (a workload line), then
    // the zombie takes the signal harmlessly.
    unsafe { libc::kill(pid as i32, signal) };
}

/// Run one line as perf-prof's harness does; `Err` says what broke the criterion.
fn run_line(line: &str) -> Result<(), String> {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_perfscope"))
        .args(shell_words(line))
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start: {e}"))?;
    // Drain both pipes while it runs (a full pipe would stall it).
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            String::from_utf8_lossy(&bytes).into_owned()
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    std::thread::sleep(RUNTIME);
    signal(child.id(), libc::SIGUSR2);
    std::thread::sleep(DUMP_GRACE);
    signal(child.id(), libc::SIGINT);
    let deadline = Instant::now() + EXIT_DEADLINE;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("still running {EXIT_DEADLINE:?} after SIGINT"));
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let (stdout, stderr) = (stdout.join().unwrap(), stderr.join().unwrap());
    let mut wrong = Vec::new();
    if let Some(sig) = status.signal() {
        wrong.push(format!("died by signal {sig}"));
    }
    // An overrun source (lost events) may also be late handing over what it still held
    // at SIGINT: the same overload, said the same honest way (exit 3).
    let overrun = stderr.contains("lost ");
    let stray: Vec<&str> = stderr
        .lines()
        .filter(|l| {
            let said = l.contains("lost ") || (overrun && l.contains("stopped late"));
            !said
        })
        .collect();
    if !stray.is_empty() {
        wrong.push(format!("stderr: {stray:?}"));
    }
    match status.code() {
        Some(0) | None => {}
        Some(3) if stderr.contains("lost ") => {}
        Some(code) => wrong.push(format!("exit code {code}")),
    }
    if let Some(at) = stdout.lines().find(|l| l.contains("<...>")) {
        wrong.push(format!("stdout names a thread <...>: {at}"));
    }
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(wrong.join("; "))
    }
}

/// A CPU sampling run: `profile`, or `top` without -e (with -e, top aggregates events).
fn is_sampling(line: &str) -> bool {
    let words = shell_words(line);
    match words.first().map(String::as_str) {
        Some("profile") => true,
        Some("top") => !words.iter().any(|w| w == "-e" || w == "--event"),
        _ => false,
    }
}

/// A counting semaphore: at most `n` holders at once.
struct Slots {
    free: Mutex<usize>,
}

struct Slot<'a>(&'a Slots);

impl Slots {
    fn new(n: usize) -> Self {
        Slots { free: Mutex::new(n) }
    }

    /// A slot if one is free now.
    fn try_take(&self) -> Option<Slot<'_>> {
        let mut free = self.free.lock().unwrap();
        if *free == 0 {
            return None;
        }
        *free -= 1;
        Some(Slot(self))
    }
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        *self.0.free.lock().unwrap() += 1;
    }
}

#[test]
fn sampling_lines_are_told_from_event_lines() {
    assert!(is_sampling("profile -F 997 -g"));
    assert!(is_sampling("top -F 997 -C 0"));
    assert!(!is_sampling("top -e sched:sched_switch -i 1000"));
    assert!(!is_sampling("trace -e sched:sched_wakeup -g"));
}

#[test]
fn slots_hold_at_most_their_count() {
    let slots = Slots::new(2);
    let held = Mutex::new(0usize);
    let most = Mutex::new(0usize);
    std::thread::scope(|s| {
        for _ in 0..6 {
            s.spawn(|| {
                let _slot = loop {
                    match slots.try_take() {
                        Some(slot) => break slot,
                        None => std::thread::sleep(Duration::from_millis(1)),
                    }
                };
                let now = {
                    let mut h = held.lock().unwrap();
                    *h += 1;
                    *h
                };
                let mut m = most.lock().unwrap();
                *m = (*m).max(now);
                drop(m);
                std::thread::sleep(Duration::from_millis(20));
                *held.lock().unwrap() -= 1;
            });
        }
    });
    assert_eq!(*most.lock().unwrap(), 2);
}

#[test]
fn shell_words_split_as_a_shell_does() {
    assert_eq!(
        shell_words(r#"top -e 'a//key=b/' -k "x y"  --  sh -c 'ls /'"#),
        ["top", "-e", "a//key=b/", "-k", "x y", "--", "sh", "-c", "ls /"]
    );
}

#[test]
fn every_catalogue_line_runs_as_perf_prof_runs() {
    ensure_tracefs();
    let lines = catalogue();
    assert!(
        lines.len() >= 300,
        "the catalogue has {} lines (issue 12 asks for 300)",
        lines.len()
    );
    let started = Instant::now();
    // A pool of workers takes the lines one by one (no run waits for the slowest of a
    // batch); lines far apart in the file come first so that neighbours — often the same
    // analyzer — do not all run at once, and at most HEAVY sampling runs (whose stop
    // symbolizes every stack, slow in a debug build) run together on the 2 CPUs.
    let stride = lines.len().div_ceil(WORKERS);
    let order: Vec<String> = (0..stride)
        .flat_map(|start| lines.iter().skip(start).step_by(stride).cloned())
        .collect();
    let queue = Mutex::new(order.into_iter().collect::<VecDeque<String>>());
    let heavy = Slots::new(HEAVY);
    let failures = Mutex::new(Vec::new());
    let late = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..WORKERS {
            scope.spawn(|| {
                loop {
                    // The first line this worker may start now: a sampling run only with a
                    // slot free (else a later tracing line, rather than wait idle).
                    let next = {
                        let mut queue = queue.lock().unwrap();
                        if queue.is_empty() {
                            break;
                        }
                        let mut slot = None;
                        let at = queue.iter().position(|line| {
                            !is_sampling(line) || {
                                slot = heavy.try_take();
                                slot.is_some()
                            }
                        });
                        at.map(|at| (queue.remove(at).unwrap(), slot))
                    };
                    let Some((line, _slot)) = next else {
                        std::thread::sleep(Duration::from_millis(100));
                        continue;
                    };
                    let first = run_line(&line);
                    // Known gap: a thread that is born and gone between two reads of the
                    // ring, whose FORK record was lost with a full ring, has no name
                    // anywhere. Such a line gets one more run, and says so; a second
                    // `<...>` fails it.
                    let result = match first {
                        Err(why) if why.contains("<...>") => {
                            eprintln!("catalogue: rerun after <...>: {line}: {why}");
                            run_line(&line)
                        }
                        other => other,
                    };
                    match result {
                        Err(why) if why.contains("stopped late") => late.lock().unwrap().push(line),
                        Err(why) => failures.lock().unwrap().push(format!("{line}\n    {why}")),
                        Ok(()) => {}
                    }
                }
            });
        }
    });
    let mut failures = failures.into_inner().unwrap();
    for line in late.into_inner().unwrap() {
        eprintln!("catalogue: rerun alone after a late stop: {line}");
        if let Err(why) = run_line(&line) {
            failures.push(format!("{line}\n    {why}"));
        }
    }
    eprintln!(
        "catalogue: {} lines in {:.1} s",
        lines.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(
        failures.is_empty(),
        "{} of {} lines fail:\n{}",
        failures.len(),
        lines.len(),
        failures.join("\n")
    );
}
