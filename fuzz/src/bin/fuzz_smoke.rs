//! `fuzz_smoke [--seconds N] [--time-limit S] [--seed S] [--replay FILE] [TARGET...]`:
//! every (or the named) fuzz target on stable Rust, its seeds then mutations for N seconds
//! each (default 20); `--replay FILE` runs the targets on that one input instead. An
//! execution that runs past `--time-limit` seconds (default 10) is a finding: its input is
//! saved as `slow-…` when the limit passes and the run ends there. Exit 0 when nothing was
//! found, 1 on a finding (its input saved under `--artifacts DIR`, default fuzz/artifacts/),
//! 2 on bad arguments.

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use perfscope_fuzz::runner::{DEFAULT_PER_EXECUTION, Limits, Overrun, load_seeds, run_target};
use perfscope_fuzz::targets::ALL;

fn main() -> ExitCode {
    let mut seconds = 20.0f64;
    let mut time_limit = DEFAULT_PER_EXECUTION;
    let mut rng_seed = 0x5eed_u64;
    let mut names = Vec::new();
    let mut replay: Option<std::path::PathBuf> = None;
    let mut artifacts: Option<std::path::PathBuf> = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = |args: &mut dyn Iterator<Item = String>| args.next().unwrap_or_default();
        match arg.as_str() {
            "--seconds" => match value(&mut args).parse::<f64>() {
                Ok(s) if s.is_finite() && (0.0..=86_400.0).contains(&s) => seconds = s,
                _ => return usage("--seconds needs a number of seconds from 0 to 86400"),
            },
            "--time-limit" => match value(&mut args).parse::<f64>() {
                Ok(s) if s.is_finite() && (0.001..=86_400.0).contains(&s) => {
                    time_limit = Duration::from_secs_f64(s)
                }
                _ => return usage("--time-limit needs a number of seconds from 0.001 to 86400"),
            },
            "--seed" => match value(&mut args).parse() {
                Ok(s) => rng_seed = s,
                Err(_) => return usage("--seed needs an unsigned integer"),
            },
            "--replay" => replay = Some(value(&mut args).into()),
            "--artifacts" => artifacts = Some(value(&mut args).into()),
            "-h" | "--help" => {
                println!("{USAGE}");
                println!(
                    "targets: {}",
                    ALL.iter().map(|t| t.name).collect::<Vec<_>>().join(" ")
                );
                return ExitCode::SUCCESS;
            }
            name if ALL.iter().any(|t| t.name == name) => names.push(name.to_string()),
            other => return usage(&format!("unknown target or flag `{other}`")),
        }
    }
    let fuzz_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let artifacts = artifacts.unwrap_or_else(|| fuzz_dir.join("artifacts"));
    let mut found = false;
    for target in ALL
        .iter()
        .filter(|t| names.is_empty() || names.iter().any(|n| n == t.name))
    {
        let seeds = match &replay {
            Some(path) => std::fs::read(path).map(|input| vec![input]),
            None => load_seeds(target, &fuzz_dir.join("seeds")),
        };
        let seeds = match seeds {
            Ok(seeds) => seeds,
            Err(e) => {
                eprintln!("fuzz_smoke: cannot read the inputs of {}: {e}", target.name);
                return ExitCode::FAILURE;
            }
        };
        let limits = Limits {
            budget: if replay.is_some() {
                Duration::ZERO
            } else {
                Duration::from_secs_f64(seconds)
            },
            per_execution: time_limit,
            // A hung execution never returns: its input is saved, the run ends.
            overrun: Overrun::Exit,
        };
        let report = run_target(target, &seeds, limits, rng_seed, &artifacts);
        println!(
            "{:<16} {:>8} executions in {:>5.1} s ({} seeds, slowest {:.1} ms)",
            report.target,
            report.executions,
            report.elapsed.as_secs_f64(),
            report.seeds,
            report.slowest.as_secs_f64() * 1e3,
        );
        if let Some(finding) = report.finding {
            found = true;
            eprintln!(
                "fuzz_smoke: {} FOUND a defect: {}\n  input saved to {}\n  replay: cargo run -p perfscope-fuzz --bin fuzz_smoke -- --replay {} {}",
                report.target,
                finding.message,
                finding.saved_to.display(),
                finding.saved_to.display(),
                report.target,
            );
        }
    }
    if found {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

const USAGE: &str = "usage: fuzz_smoke [--seconds N] [--time-limit S] [--seed S] [--replay FILE] [--artifacts DIR] [TARGET...]";

fn usage(message: &str) -> ExitCode {
    eprintln!("fuzz_smoke: {message}\n{USAGE}");
    ExitCode::from(2)
}
