//! Exit codes: one table for every subcommand, so a script or CI can trust `$?`.
//!
//! | code | meaning |
//! |------|---------|
//! | 0    | clean: the run finished and everything it read made it into the results |
//! | 1    | error: nothing usable was produced (bad input path, QEMU failed to start, the source failed before any data, a write failed) |
//! | 2    | usage: the command line is wrong (unknown flag, bad value) — clap's own code |
//! | 3    | finished but incomplete: results were written, but data is missing — a corrupt or truncated input (`result: incomplete`), events the kernel or the plugin lost, QEMU killed mid-run, a recording that did not store everything, an ELF that does not match the samples |
//!
//! Each command returns an [`Outcome`]; `src/main.rs` maps it (or an error) to the code in
//! one place. Results go to stdout; the reasons for a 3 go to stderr.

use std::process::ExitCode;

use crate::batch::headless;
use crate::model::Verdict;
use crate::model::verdict::{EXIT_CLEAN, EXIT_ERROR, EXIT_INCOMPLETE};
use crate::stdio::{self, OutputError};

/// Finished, nothing missing.
pub const CLEAN: u8 = EXIT_CLEAN;
/// Failed: nothing usable was produced.
pub const ERROR: u8 = EXIT_ERROR;
/// The command line is wrong (clap exits with it).
pub const USAGE: u8 = 2;
/// Finished, results written, but data is missing.
pub const INCOMPLETE: u8 = EXIT_INCOMPLETE;

/// A command line that is wrong in a way the argument parser cannot see (a flag the
/// analyzer does not use, a value out of range): exit 2, as the parser's own errors.
pub use crate::model::usage::UsageError;

/// How a command that ran to its end finished.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Outcome {
    #[default]
    Clean,
    /// Results were written; each reason says what is missing.
    Incomplete(Vec<String>),
}

impl Outcome {
    /// Incomplete when any reason is given.
    pub fn from_reasons(reasons: Vec<String>) -> Outcome {
        if reasons.is_empty() {
            Outcome::Clean
        } else {
            Outcome::Incomplete(reasons)
        }
    }

    /// A session's verdict as the process's result: nothing usable is an error (1), a
    /// finding that makes it incomplete is a 3 with its reasons, else clean. Every command
    /// that ran a session — headless or in the terminal UI — ends through here, so its
    /// exit code is the one report.json's `returncode` gives.
    pub fn of_verdict(verdict: &Verdict) -> anyhow::Result<Outcome> {
        if let Some(why) = verdict.failed() {
            anyhow::bail!("{why}");
        }
        Ok(Outcome::from_reasons(verdict.reasons()))
    }

    /// A headless run's result: its engine's verdict.
    pub fn of_headless(run: &headless::Outcome) -> anyhow::Result<Outcome> {
        Outcome::of_verdict(&run.engine.verdict())
    }

    pub fn code(&self) -> u8 {
        match self {
            Outcome::Clean => CLEAN,
            Outcome::Incomplete(_) => INCOMPLETE,
        }
    }
}

/// The exit code of a command's result; says on stderr why it is not 0.
///
/// Results that could not be written are an error (1) said on stderr — or on the stderr
/// the process started with when `-o FILE` is what failed. A reader that closed stdout
/// (`perfscope ... | head -1`) is not: it took what it wanted and ended the run, as
/// Ctrl-C does; perf-prof dies of SIGPIPE there without a word. So the run ends quietly
/// with 0 — a message would clutter every such pipeline, and 1 would fail a `set -o
/// pipefail` script over the shell's most ordinary idiom.
pub fn exit_code(result: anyhow::Result<Outcome>) -> ExitCode {
    // What is still buffered is part of the results: its failure is the run's.
    let result = result.and_then(|outcome| {
        stdio::flush()?;
        Ok(outcome)
    });
    match result {
        Ok(outcome) => {
            if let Outcome::Incomplete(reasons) = &outcome {
                for r in reasons {
                    stdio::say(&format!(
                        "perfscope: incomplete: {}",
                        crate::model::text::escape_controls_keeping_lines(r)
                    ));
                }
            }
            ExitCode::from(outcome.code())
        }
        Err(e) if OutputError::find(&e).is_some_and(OutputError::is_closed) => ExitCode::from(CLEAN),
        // A signal during a live command's start: it ended as asked, before recording
        // anything — quietly, as a signal ends a running one.
        Err(e) if crate::stop::ended(&e) => ExitCode::from(CLEAN),
        Err(e) => {
            stdio::say_error(&format!(
                "perfscope: {}",
                crate::model::text::escape_controls_keeping_lines(&format!("{e:#}"))
            ));
            ExitCode::from(if crate::model::usage::is_usage(&e) {
                USAGE
            } else {
                ERROR
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_follow_the_table() {
        assert_eq!(Outcome::from_reasons(vec![]).code(), 0);
        let lost = Outcome::from_reasons(vec!["12 events lost".into()]);
        assert_eq!(lost.code(), 3);
        assert_eq!((ERROR, USAGE), (1, 2));
    }

    /// A signal while a live command still opened its events ended it as asked: exit 0
    /// and nothing said, as for a signal once it runs; a real failure to open stays 1.
    #[test]
    fn a_signal_during_a_start_ends_the_run_quietly() {
        use crate::sources::perf_event::error::PerfEventError;
        use crate::stop::Stopped;
        let stopped = anyhow::Error::new(PerfEventError::Stopped(Stopped(
            "opening the events (0 of 6 done)".into(),
        )))
        .context("cannot enable the events");
        assert!(crate::stop::ended(&stopped));
        assert_eq!(exit_code(Err(stopped)), ExitCode::from(CLEAN));
        let failed = anyhow::anyhow!("permission denied").context("cannot enable the events");
        assert!(!crate::stop::ended(&failed));
        assert_eq!(exit_code(Err(failed)), ExitCode::from(ERROR));
    }

    /// Records the kernel ring (or the plugin) lost make a finished run incomplete; a
    /// feed that failed before any data is an error, after data an incomplete run; the
    /// code is always the one the verdict (and report.json's `returncode`) gives.
    #[test]
    fn the_outcome_is_the_verdicts() {
        use crate::engine::{Engine, EngineOptions};
        use crate::feeds::Update;
        use crate::model::{Finding, Gap, Selection};
        let run = |lost: u64, samples: u64, failed: Option<&str>| {
            let mut engine = Engine::new(EngineOptions::batch(Selection::all()));
            engine.apply(vec![Update::Lost {
                total: lost,
                time_ns: None,
            }]);
            engine.state.stats.samples = samples;
            if let Some(why) = failed {
                engine.note(Finding::new(Gap::SourceFailed, None, why));
            }
            engine.finish();
            headless::Outcome {
                engine,
                exported: None,
                error: failed.map(str::to_string),
                interrupted: false,
            }
        };
        for (lost, samples, failed) in [
            (0, 5, None),
            (12, 5, None),
            (0, 0, None),
            (0, 0, Some("QEMU exited")),
            (0, 5, Some("QEMU exited")),
        ] {
            let outcome = run(lost, samples, failed);
            let code = match Outcome::of_headless(&outcome) {
                Ok(o) => o.code(),
                Err(_) => ERROR,
            };
            assert_eq!(
                code,
                outcome.engine.verdict().exit_code(),
                "{lost} {samples} {failed:?}"
            );
        }
        let lost = Outcome::of_headless(&run(12, 5, None)).unwrap();
        assert_eq!(lost.code(), INCOMPLETE);
        assert!(format!("{lost:?}").contains("lost 12"), "{lost:?}");
        assert!(Outcome::of_headless(&run(0, 0, Some("QEMU exited"))).is_err());
        assert_eq!(
            Outcome::of_headless(&run(0, 5, Some("QEMU exited")))
                .unwrap()
                .code(),
            3
        );
    }
}
