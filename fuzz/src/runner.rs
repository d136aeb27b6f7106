//! The stable fuzz runner: a target's seeds first, then mutations of them until the time is
//! up. A panic in any thread during an execution is a finding: the input is saved under
//! `fuzz/artifacts/<target>/` and the run of that target stops there, as libFuzzer does.
//!
//! So is an execution that runs past the per-execution time limit: a watchdog thread saves
//! its input as `slow-<hash>` the moment the limit passes — an execution that never ends
//! cannot lose it — and then, as libFuzzer's `-timeout`, ends the process
//! ([`Overrun::Exit`]) or lets the execution finish and reports it ([`Overrun::Report`]).

use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::mutate::{MutationContext, Rng, mutate};
use crate::targets::Target;

/// What the runner does once an execution passed the time limit (its input is saved).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Overrun {
    /// Say so and end the process with exit 1: a hung execution never returns (the smoke
    /// runner; libFuzzer does the same).
    Exit,
    /// Wait for the execution to return, then report it as the run's finding.
    Report,
}

/// How long a target runs and how long one execution may take.
#[derive(Copy, Clone, Debug)]
pub struct Limits {
    /// Mutations run until this much time has passed (the seeds all run regardless).
    pub budget: Duration,
    pub per_execution: Duration,
    pub overrun: Overrun,
}

/// The per-execution limit when none is given: well past the slowest sound execution of
/// any target in a debug build on a loaded machine (session_db's reports, app_keys'
/// longest scripts: a few seconds), well short of the 20 s session_db input that was lost.
pub const DEFAULT_PER_EXECUTION: Duration = Duration::from_secs(10);

/// What one target's run did.
#[derive(Debug)]
pub struct RunReport {
    pub target: &'static str,
    pub seeds: usize,
    pub executions: u64,
    pub elapsed: Duration,
    /// The longest single execution (a hang shows here: the runner cannot interrupt one).
    pub slowest: Duration,
    pub finding: Option<Finding>,
}

/// An input that made the target panic, or run past the time limit.
#[derive(Debug)]
pub struct Finding {
    pub message: String,
    pub saved_to: PathBuf,
}

/// The message of the last panic in any thread, set by the hook [`run_target`] installs.
static LAST_PANIC: Mutex<Option<String>> = Mutex::new(None);

fn install_panic_hook() {
    panic::set_hook(Box::new(|info| {
        let location = info.location().map(|l| format!(" at {l}")).unwrap_or_default();
        let payload = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(no message)".into());
        let thread = std::thread::current().name().unwrap_or("unnamed").to_string();
        // The location of a panic inside std (an overflowing `sum`) says little: keep the
        // frames of perfscope's own code that led there.
        let backtrace = std::backtrace::Backtrace::force_capture().to_string();
        let ours: Vec<&str> = backtrace
            .lines()
            .map(str::trim)
            .filter(|l| l.contains("perfscope::") && !l.contains("perfscope_fuzz::runner"))
            .take(6)
            .collect();
        let mut last = LAST_PANIC.lock().unwrap_or_else(|e| e.into_inner());
        last.get_or_insert(format!(
            "thread '{thread}' panicked{location}: {payload}{}",
            ours.iter().map(|l| format!("\n    in {l}")).collect::<String>()
        ));
    }));
}

fn take_panic() -> Option<String> {
    LAST_PANIC.lock().unwrap_or_else(|e| e.into_inner()).take()
}

/// The execution under way, for the watchdog: its input and when it started.
struct Running {
    input: Vec<u8>,
    started: Instant,
    /// Where the watchdog saved the input once it ran past the limit.
    saved: Option<PathBuf>,
}

/// Watch the execution in `running` from a thread of its own: past `limits.per_execution`
/// its input is saved and, with [`Overrun::Exit`], the process ends. The thread stops
/// when `running` has no other owner (the run is over).
fn watchdog(target: &'static str, running: &Arc<Mutex<Option<Running>>>, limits: Limits, artifacts: &Path) {
    let running = Arc::downgrade(running);
    let artifacts = artifacts.to_path_buf();
    let tick = (limits.per_execution / 10).clamp(Duration::from_millis(1), Duration::from_millis(100));
    std::thread::spawn(move || {
        while let Some(running) = running.upgrade() {
            let mut guard = running.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(now) = guard.as_mut()
                && now.saved.is_none()
                && now.started.elapsed() > limits.per_execution
            {
                let saved = save_input(&artifacts, target, "slow", &now.input);
                eprintln!(
                    "fuzz_smoke: {target}: an execution ran past the limit of {:?}\n  input saved to {}\n  replay: cargo run -p perfscope-fuzz --bin fuzz_smoke -- --replay {} {target}",
                    limits.per_execution,
                    saved.display(),
                    saved.display(),
                );
                if limits.overrun == Overrun::Exit {
                    std::process::exit(1);
                }
                now.saved = Some(saved);
            }
            drop(guard);
            drop(running);
            std::thread::sleep(tick);
        }
    });
}

/// Run `target` on `seeds`, then on mutations of them for `limits.budget`.
pub fn run_target(
    target: &Target,
    seeds: &[Vec<u8>],
    limits: Limits,
    rng_seed: u64,
    artifacts: &Path,
) -> RunReport {
    install_panic_hook();
    let running: Arc<Mutex<Option<Running>>> = Arc::new(Mutex::new(None));
    watchdog(target.name, &running, limits, artifacts);
    let started = Instant::now();
    let mut report = RunReport {
        target: target.name,
        seeds: seeds.len(),
        executions: 0,
        elapsed: Duration::ZERO,
        slowest: Duration::ZERO,
        finding: None,
    };
    let context = MutationContext {
        dictionary: target.dictionary,
        seeds,
        max_len: target.max_len,
    };
    let mut rng = Rng::new(rng_seed);
    let mut index = 0usize;
    loop {
        let input = if index < seeds.len() {
            seeds[index].clone()
        } else if started.elapsed() >= limits.budget {
            break;
        } else if let Some(generate) = target.generate {
            generate(&mut rng)
        } else {
            let mut data = if seeds.is_empty() {
                Vec::new()
            } else {
                seeds[rng.below(seeds.len())].clone()
            };
            mutate(&mut data, &mut rng, &context);
            data
        };
        index += 1;
        let one = Instant::now();
        *running.lock().unwrap_or_else(|e| e.into_inner()) = Some(Running {
            input: input.clone(),
            started: one,
            saved: None,
        });
        let unwound = panic::catch_unwind(AssertUnwindSafe(|| (target.run)(&input))).is_err();
        let took = one.elapsed();
        let overran = running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .and_then(|r| r.saved);
        report.slowest = report.slowest.max(took);
        report.executions += 1;
        if let Some(message) = take_panic().or_else(|| unwound.then(|| "panicked".to_string())) {
            report.finding = Some(Finding {
                message,
                saved_to: save_input(artifacts, target.name, "crash", &input),
            });
            break;
        }
        if let Some(saved_to) = overran {
            report.finding = Some(Finding {
                message: format!(
                    "an execution took {took:.1?}, past the limit of {:?}",
                    limits.per_execution
                ),
                saved_to,
            });
            break;
        }
    }
    report.elapsed = started.elapsed();
    report
}

/// Save a finding's input as `<kind>-<fnv64 of the bytes>` (`crash`, `slow`); a failure to
/// save is reported in the path's place rather than lost.
fn save_input(artifacts: &Path, target: &str, kind: &str, input: &[u8]) -> PathBuf {
    let hash = input.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    let dir = artifacts.join(target);
    let path = dir.join(format!("{kind}-{hash:016x}"));
    match std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&path, input)) {
        Ok(()) => path,
        Err(e) => PathBuf::from(format!("(not saved: {e})")),
    }
}

/// The seeds of a target: the files of `fuzz/seeds/<target>/` (sorted, so runs repeat) and
/// what the target generates itself (inputs only code can make, e.g. a session database).
pub fn load_seeds(target: &Target, seeds_root: &Path) -> std::io::Result<Vec<Vec<u8>>> {
    let mut seeds = Vec::new();
    let dir = seeds_root.join(target.name);
    if dir.exists() {
        let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)?
            .map(|e| e.map(|e| e.path()))
            .collect::<Result<_, _>>()?;
        paths.sort();
        for path in paths {
            seeds.push(std::fs::read(&path)?);
        }
    }
    seeds.extend((target.generated_seeds)());
    Ok(seeds)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The panic hook and its slot are process-wide: these tests take turns.
    static SERIAL: Mutex<()> = Mutex::new(());

    fn explodes_on_boom(data: &[u8]) {
        assert_ne!(data, b"boom", "boom");
    }

    fn explodes_in_a_thread(data: &[u8]) {
        let data = data.to_vec();
        // The panic is caught by the join, as an engine thread's would be: still a finding.
        let _ = std::thread::spawn(move || assert!(!data.starts_with(b"x"), "thread saw x")).join();
    }

    fn limits(budget: Duration) -> Limits {
        Limits {
            budget,
            per_execution: DEFAULT_PER_EXECUTION,
            overrun: Overrun::Report,
        }
    }

    /// Where [`waits_to_be_saved`] looks for its input.
    static SLOW_DIR: Mutex<Option<PathBuf>> = Mutex::new(None);

    /// On `slow`, run until the watchdog has saved this input (at most 10 s): the input of
    /// an execution that never returns is on disk while it still runs.
    fn waits_to_be_saved(data: &[u8]) {
        if data != b"slow" {
            return;
        }
        let dir = SLOW_DIR
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
            .unwrap();
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(10) {
            let saved = std::fs::read_dir(&dir)
                .map(|entries| {
                    entries
                        .flatten()
                        .any(|e| e.file_name().to_string_lossy().starts_with("slow-"))
                })
                .unwrap_or(false);
            if saved {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn target(run: fn(&[u8])) -> Target {
        Target {
            name: "unit",
            run,
            dictionary: &[],
            max_len: 64,
            generated_seeds: Vec::new,
            generate: None,
        }
    }

    #[test]
    fn a_panicking_seed_is_a_finding_and_its_input_is_saved() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let dir = tempfile::tempdir().unwrap();
        let seeds = vec![b"fine".to_vec(), b"boom".to_vec()];
        let report = run_target(
            &target(explodes_on_boom),
            &seeds,
            limits(Duration::ZERO),
            1,
            dir.path(),
        );
        let finding = report.finding.expect("the boom seed is found");
        assert!(finding.message.contains("boom"), "{}", finding.message);
        assert_eq!(std::fs::read(&finding.saved_to).unwrap(), b"boom");
        assert_eq!(report.executions, 2);
    }

    #[test]
    fn a_panic_in_another_thread_is_a_finding_too() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let dir = tempfile::tempdir().unwrap();
        let seeds = vec![b"x".to_vec()];
        let report = run_target(
            &target(explodes_in_a_thread),
            &seeds,
            limits(Duration::ZERO),
            1,
            dir.path(),
        );
        assert!(report.finding.expect("found").message.contains("thread saw x"));
    }

    #[test]
    fn an_execution_past_the_time_limit_is_saved_while_it_runs_and_reported() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let dir = tempfile::tempdir().unwrap();
        *SLOW_DIR.lock().unwrap_or_else(|e| e.into_inner()) = Some(dir.path().join("unit"));
        let seeds = vec![b"fast".to_vec(), b"slow".to_vec(), b"never run".to_vec()];
        let limits = Limits {
            budget: Duration::ZERO,
            per_execution: Duration::from_millis(200),
            overrun: Overrun::Report,
        };
        let report = run_target(&target(waits_to_be_saved), &seeds, limits, 1, dir.path());
        let finding = report.finding.expect("the slow seed is a finding");
        assert_eq!(report.executions, 2, "the run stops at the slow input");
        assert!(
            finding.message.contains("past the limit of 200ms"),
            "{}",
            finding.message
        );
        let name = finding
            .saved_to
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert!(name.starts_with("slow-"), "{name}");
        assert_eq!(std::fs::read(&finding.saved_to).unwrap(), b"slow");
        // It returned once the file was there, long before its own 10 s.
        assert!(report.slowest < Duration::from_secs(5), "{:?}", report.slowest);
        assert!(
            report.slowest >= Duration::from_millis(200),
            "{:?}",
            report.slowest
        );
    }

    #[test]
    fn mutation_runs_until_the_budget_and_finds_nothing_in_a_sound_target() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let dir = tempfile::tempdir().unwrap();
        let seeds = vec![b"abc".to_vec()];
        let report = run_target(
            &target(|_| {}),
            &seeds,
            limits(Duration::from_millis(50)),
            1,
            dir.path(),
        );
        assert!(report.finding.is_none());
        assert!(report.executions > 1, "mutations ran: {}", report.executions);
    }
}
