//! The stable fuzz runner: a target's seeds first, then mutations of them until the time is
//! up. A panic in any thread during an execution is a finding: the input is saved under
//! `fuzz/artifacts/<target>/` and the run of that target stops there, as libFuzzer does.

use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::mutate::{MutationContext, Rng, mutate};
use crate::targets::Target;

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

/// An input that made the target panic.
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

/// Run `target` on `seeds`, then on mutations of them for `budget`.
pub fn run_target(
    target: &Target,
    seeds: &[Vec<u8>],
    budget: Duration,
    rng_seed: u64,
    artifacts: &Path,
) -> RunReport {
    install_panic_hook();
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
        } else if started.elapsed() >= budget {
            break;
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
        let unwound = panic::catch_unwind(AssertUnwindSafe(|| (target.run)(&input))).is_err();
        report.slowest = report.slowest.max(one.elapsed());
        report.executions += 1;
        if let Some(message) = take_panic().or_else(|| unwound.then(|| "panicked".to_string())) {
            report.finding = Some(Finding {
                message,
                saved_to: save_input(artifacts, target.name, &input),
            });
            break;
        }
    }
    report.elapsed = started.elapsed();
    report
}

/// Save a finding's input as `crash-<fnv64 of the bytes>`; a failure to save is reported in
/// the path's place rather than lost.
fn save_input(artifacts: &Path, target: &str, input: &[u8]) -> PathBuf {
    let hash = input.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    let dir = artifacts.join(target);
    let path = dir.join(format!("crash-{hash:016x}"));
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

    fn target(run: fn(&[u8])) -> Target {
        Target {
            name: "unit",
            run,
            dictionary: &[],
            max_len: 64,
            generated_seeds: Vec::new,
        }
    }

    #[test]
    fn a_panicking_seed_is_a_finding_and_its_input_is_saved() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let dir = tempfile::tempdir().unwrap();
        let seeds = vec![b"fine".to_vec(), b"boom".to_vec()];
        let report = run_target(&target(explodes_on_boom), &seeds, Duration::ZERO, 1, dir.path());
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
            Duration::ZERO,
            1,
            dir.path(),
        );
        assert!(report.finding.expect("found").message.contains("thread saw x"));
    }

    #[test]
    fn mutation_runs_until_the_budget_and_finds_nothing_in_a_sound_target() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let dir = tempfile::tempdir().unwrap();
        let seeds = vec![b"abc".to_vec()];
        let report = run_target(&target(|_| {}), &seeds, Duration::from_millis(50), 1, dir.path());
        assert!(report.finding.is_none());
        assert!(report.executions > 1, "mutations ran: {}", report.executions);
    }
}
