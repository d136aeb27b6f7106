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
use crate::export::artifacts::ArtifactSet;

/// Finished, nothing missing.
pub const CLEAN: u8 = 0;
/// Failed: nothing usable was produced.
pub const ERROR: u8 = 1;
/// The command line is wrong (clap exits with it).
pub const USAGE: u8 = 2;
/// Finished, results written, but data is missing.
pub const INCOMPLETE: u8 = 3;

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

    /// An artifact set's verdict (`result` in report.json) plus what the caller knows
    /// beside it (lost events, a recording that dropped rows).
    pub fn of_artifacts(set: &ArtifactSet, mut reasons: Vec<String>) -> Outcome {
        if set.result != "ok" {
            reasons.insert(
                0,
                format!(
                    "report.json says result \"{}\" (the warnings say why)",
                    set.result
                ),
            );
        }
        Outcome::from_reasons(reasons)
    }

    /// A headless run's verdict: its feed failed (an error), or what its artifacts say
    /// plus the records the source lost and the rows a recording did not store.
    pub fn of_headless(run: &headless::Outcome) -> anyhow::Result<Outcome> {
        if let Some(e) = &run.error {
            anyhow::bail!("{e}");
        }
        let state = &run.engine.state;
        let mut reasons = Vec::new();
        if state.stats.lost > 0 {
            reasons.push(format!(
                "the source lost {} records (kernel ring buffer or plugin overrun)",
                state.stats.lost
            ));
        }
        if let Some(r) = &state.provenance.recording_incomplete {
            reasons.push(r.clone());
        }
        Ok(match &run.exported {
            Some(set) => Outcome::of_artifacts(set, reasons),
            None => Outcome::from_reasons(reasons),
        })
    }

    /// Both reasons, when either is incomplete.
    pub fn and(self, other: Outcome) -> Outcome {
        match (self, other) {
            (Outcome::Clean, o) | (o, Outcome::Clean) => o,
            (Outcome::Incomplete(mut a), Outcome::Incomplete(b)) => {
                a.extend(b);
                Outcome::Incomplete(a)
            }
        }
    }

    pub fn code(&self) -> u8 {
        match self {
            Outcome::Clean => CLEAN,
            Outcome::Incomplete(_) => INCOMPLETE,
        }
    }
}

/// The exit code of a command's result; says on stderr why it is not 0.
pub fn exit_code(result: anyhow::Result<Outcome>) -> ExitCode {
    match result {
        Ok(outcome) => {
            if let Outcome::Incomplete(reasons) = &outcome {
                for r in reasons {
                    eprintln!("perfscope: incomplete: {r}");
                }
            }
            ExitCode::from(outcome.code())
        }
        Err(e) => {
            eprintln!("perfscope: {e:#}");
            ExitCode::from(ERROR)
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
        assert_eq!(Outcome::Clean.and(lost.clone()), lost);
        assert_eq!(
            lost.clone().and(Outcome::Incomplete(vec!["b".into()])),
            Outcome::Incomplete(vec!["12 events lost".into(), "b".into()])
        );
        assert_eq!((ERROR, USAGE), (1, 2));
    }

    /// Records the kernel ring (or the plugin) lost make a finished run incomplete; a
    /// feed's failure is an error.
    #[test]
    fn lost_records_give_3_and_a_failed_source_1() {
        use crate::engine::{Engine, EngineOptions};
        use crate::feeds::Update;
        use crate::model::Selection;
        let run = |lost: u64, error: Option<String>| {
            let mut engine = Engine::new(EngineOptions::batch(Selection::all()));
            engine.apply(vec![Update::Lost {
                total: lost,
                time_ns: None,
            }]);
            engine.finish();
            headless::Outcome {
                engine,
                exported: None,
                error,
                interrupted: false,
            }
        };
        assert_eq!(Outcome::of_headless(&run(0, None)).unwrap(), Outcome::Clean);
        let lost = Outcome::of_headless(&run(12, None)).unwrap();
        assert_eq!(lost.code(), INCOMPLETE);
        assert!(format!("{lost:?}").contains("lost 12 records"), "{lost:?}");
        assert!(Outcome::of_headless(&run(0, Some("QEMU exited".into()))).is_err());
    }
}
