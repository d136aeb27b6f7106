//! A session's verdict: is what it shows everything that happened, and if not, what is
//! missing, how much, and what that means for the figures.
//!
//! One value, built once by the engine ([`crate::engine`]'s `verdict`) from what the
//! session's sources counted, and read by everyone who says anything about completeness:
//! the exit code of every command (TUI included), report.json (`result`, `input.clean`,
//! `returncode`, `verdict`), report.md, the status line, and a recording — which stores it,
//! so that a replay says the same.
//!
//! A [`Finding`] is one way the figures fall short ([`Gap`]); most make the session
//! incomplete (exit 3), a few are only said (events perfscope rebuilt from other records,
//! a few addresses no symbol covers): counted and shown, never silent.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Exit code of a run whose results are complete.
pub const EXIT_CLEAN: u8 = 0;
/// Exit code of a run that produced nothing usable.
pub const EXIT_ERROR: u8 = 1;
/// Exit code of a run that finished with results, but with data missing.
pub const EXIT_INCOMPLETE: u8 = 3;

/// One way a session's figures can fall short of what happened.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Gap {
    /// The source failed (QEMU died, a ring could not be read, a file could not be read).
    SourceFailed,
    /// The source was stopped before it delivered everything it had (a signal while a file
    /// was read, a recording that was killed or is still being written).
    Interrupted,
    /// The workload window asked for (start/stop markers) never opened or never closed.
    NoWindow,
    /// Records the kernel ring or the QEMU plugin lost.
    Lost,
    /// Records perfscope itself dropped (malformed, or beyond what a queue held).
    Dropped,
    /// Records whose time stamp is garbage (past [`crate::model::units::MAX_TIME_NS`]):
    /// counted, but in no slice of time.
    BadTimes,
    /// Ring records that did not decode.
    DecodeErrors,
    /// Times the kernel throttled sampling (samples it did not take).
    Throttled,
    /// The input ended in a cut or corrupt record (bytes after it were not read).
    InputCut,
    /// Rows of a recorded session that are corrupt and were skipped.
    CorruptRows,
    /// Two records of the same run disagree (the live stream and qperf.bin).
    SourcesDisagree,
    /// The source did not finish in time after it was stopped (what it held is missing).
    StoppedLate,
    /// Rows `--record` did not store (the writer fell behind, or failed).
    NotRecorded,
    /// The symbols do not match the samples (another ELF, another architecture).
    SymbolsMismatch,
    /// Nothing at all was recorded.
    NoData,
    /// Events perfscope rebuilt from other records (switches the kernel did not deliver).
    Rebuilt,
    /// Addresses no symbol covered (named by address or region).
    Unresolved,
}

impl Gap {
    /// Whether this gap makes the session incomplete (exit 3, `result: incomplete`), or is
    /// only said: rebuilt events are exact copies of what the kernel saw, and a few
    /// unnamed addresses leave every count right (their share is said; a mismatch beyond
    /// a threshold is [`Gap::SymbolsMismatch`]).
    pub fn makes_incomplete(self) -> bool {
        !matches!(self, Gap::Rebuilt | Gap::Unresolved)
    }

    /// Whether the gap is about what was read (report.json `input.clean`), as opposed to
    /// how it was named or kept.
    pub fn concerns_input(self) -> bool {
        matches!(
            self,
            Gap::SourceFailed
                | Gap::Interrupted
                | Gap::Lost
                | Gap::Dropped
                | Gap::BadTimes
                | Gap::DecodeErrors
                | Gap::Throttled
                | Gap::InputCut
                | Gap::CorruptRows
                | Gap::SourcesDisagree
                | Gap::StoppedLate
        )
    }

    /// The snake_case name report.json uses.
    pub fn key(self) -> &'static str {
        match self {
            Gap::SourceFailed => "source_failed",
            Gap::Interrupted => "interrupted",
            Gap::NoWindow => "no_window",
            Gap::Lost => "lost",
            Gap::Dropped => "dropped",
            Gap::BadTimes => "bad_times",
            Gap::DecodeErrors => "decode_errors",
            Gap::Throttled => "throttled",
            Gap::InputCut => "input_cut",
            Gap::CorruptRows => "corrupt_rows",
            Gap::SourcesDisagree => "sources_disagree",
            Gap::StoppedLate => "stopped_late",
            Gap::NotRecorded => "not_recorded",
            Gap::SymbolsMismatch => "symbols_mismatch",
            Gap::NoData => "no_data",
            Gap::Rebuilt => "rebuilt",
            Gap::Unresolved => "unresolved",
        }
    }

    /// What a gap of this kind means for the figures, said after its count.
    fn meaning(self) -> &'static str {
        match self {
            Gap::SourceFailed => "the figures stop where the source did",
            Gap::Interrupted => "the figures cover only what was read before",
            Gap::NoWindow => "the workload's own figures cannot be told apart from the rest of the run",
            Gap::Lost | Gap::Dropped | Gap::DecodeErrors => {
                "the figures miss them: counts and rates are lower bounds, latencies spanning a gap are missing"
            }
            Gap::Throttled => "samples were not taken while throttled: counts are lower bounds",
            Gap::BadTimes => "they count in the totals but in no window, phase or timeline column",
            Gap::InputCut => "the figures miss what came after",
            Gap::CorruptRows => "the replay misses them",
            Gap::SourcesDisagree => "one of them is incomplete",
            Gap::StoppedLate => "what it still held is missing",
            Gap::NotRecorded => "the session file misses them: a replay shows less than the live run",
            Gap::SymbolsMismatch => "function names are wrong or missing",
            Gap::NoData => "there are no figures",
            Gap::Rebuilt => {
                "they are counted like delivered events and marked as rebuilt where events are listed"
            }
            Gap::Unresolved => "they are named by address or region",
        }
    }
}

/// What a source counted beside its data, as totals so far (the engine keeps the
/// largest of each: a total never goes back).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceCounts {
    /// Ring records that did not decode.
    pub decode_errors: u64,
    /// PERF_RECORD_THROTTLE records: times the kernel stopped sampling an event.
    pub throttles: u64,
    /// Events perfscope rebuilt (sched_switch from switch records).
    pub rebuilt: u64,
    /// Rows of a recorded session that were corrupt and skipped.
    pub corrupt_rows: u64,
}

impl SourceCounts {
    /// Each count the larger of the two.
    pub fn max(self, other: SourceCounts) -> SourceCounts {
        SourceCounts {
            decode_errors: self.decode_errors.max(other.decode_errors),
            throttles: self.throttles.max(other.throttles),
            rebuilt: self.rebuilt.max(other.rebuilt),
            corrupt_rows: self.corrupt_rows.max(other.corrupt_rows),
        }
    }

    /// The findings these counts make.
    pub fn findings(&self) -> Vec<Finding> {
        let mut out = Vec::new();
        let mut put = |gap, n: u64, detail: &str| {
            if n > 0 {
                out.push(Finding::new(gap, Some(n), detail));
            }
        };
        put(
            Gap::DecodeErrors,
            self.decode_errors,
            "ring records that did not decode",
        );
        put(
            Gap::Throttled,
            self.throttles,
            "times the kernel throttled sampling (perf_event_max_sample_rate)",
        );
        put(
            Gap::Rebuilt,
            self.rebuilt,
            "sched_switch events the kernel did not deliver, rebuilt from its switch records",
        );
        put(
            Gap::CorruptRows,
            self.corrupt_rows,
            "rows of the session file that are corrupt (skipped)",
        );
        out
    }
}

/// One gap, how much of it, and in words.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    pub gap: Gap,
    /// How many records, rows, events, bytes or addresses (`None`: not countable).
    #[serde(default)]
    pub count: Option<u64>,
    /// What happened, specifically: "the kernel ring buffer overflowed", "QEMU was killed
    /// by signal 9", "12 bytes lost at byte 4096".
    pub detail: String,
}

impl Finding {
    pub fn new(gap: Gap, count: Option<u64>, detail: impl Into<String>) -> Self {
        Self {
            gap,
            count,
            detail: detail.into(),
        }
    }

    /// A source stopped but still handing over after its grace: the session ends without
    /// what it held (the headless loop and the model thread say it alike).
    pub fn stopped_late(grace: std::time::Duration) -> Self {
        Self::new(
            Gap::StoppedLate,
            None,
            format!(
                "the source did not finish within {:.1} s of being stopped",
                grace.as_secs_f64()
            ),
        )
    }

    /// "lost 1131500 records (the kernel ring buffer overflowed): the figures miss them…".
    pub fn sentence(&self) -> String {
        let head = match self.count {
            Some(n) => format!("{} {n}", self.gap.key().replace('_', " ")),
            None => self.gap.key().replace('_', " "),
        };
        format!("{head}: {}; {}", self.detail, self.gap.meaning())
    }
}

/// The session's verdict: every finding, and whether the session holds any data.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    /// In [`Gap`] order, one per gap.
    pub findings: Vec<Finding>,
    /// Samples or events were recorded (a source failing before any is an error, exit 1).
    pub has_data: bool,
}

impl Verdict {
    /// A verdict of these findings: one per gap (the larger count, the first detail), in
    /// [`Gap`] order, so two verdicts of the same facts compare equal.
    pub fn new(findings: impl IntoIterator<Item = Finding>, has_data: bool) -> Self {
        let mut verdict = Verdict {
            findings: Vec::new(),
            has_data,
        };
        for f in findings {
            verdict.add(f);
        }
        verdict
    }

    /// Add a finding; a gap already found keeps its detail and the larger count.
    pub fn add(&mut self, finding: Finding) {
        match self.findings.iter_mut().find(|f| f.gap == finding.gap) {
            Some(f) => {
                f.count = match (f.count, finding.count) {
                    (Some(a), Some(b)) => Some(a.max(b)),
                    (a, b) => a.or(b),
                };
            }
            None => {
                let at = self.findings.partition_point(|f| f.gap < finding.gap);
                self.findings.insert(at, finding);
            }
        }
    }

    /// `self` and what another account of the same session said (a replay: its own
    /// findings and the recorded verdict's).
    pub fn merged(mut self, other: &Verdict) -> Verdict {
        for f in &other.findings {
            self.add(f.clone());
        }
        self.has_data |= other.has_data;
        self
    }

    pub fn find(&self, gap: Gap) -> Option<&Finding> {
        self.findings.iter().find(|f| f.gap == gap)
    }

    /// No finding makes the session incomplete.
    pub fn is_complete(&self) -> bool {
        !self.findings.iter().any(|f| f.gap.makes_incomplete())
    }

    /// `ok` or `incomplete` (report.json `result`).
    pub fn result(&self) -> &'static str {
        if self.is_complete() { "ok" } else { "incomplete" }
    }

    /// Everything the source delivered was read (report.json `input.clean`).
    pub fn input_clean(&self) -> bool {
        !self.findings.iter().any(|f| f.gap.concerns_input())
    }

    /// The source failed before it delivered anything: nothing usable (exit 1).
    pub fn failed(&self) -> Option<&str> {
        self.find(Gap::SourceFailed)
            .filter(|_| !self.has_data)
            .map(|f| f.detail.as_str())
    }

    /// The process's exit code for this verdict (0 clean, 1 nothing usable, 3 incomplete).
    pub fn exit_code(&self) -> u8 {
        if self.failed().is_some() {
            EXIT_ERROR
        } else if self.is_complete() {
            EXIT_CLEAN
        } else {
            EXIT_INCOMPLETE
        }
    }

    /// The findings that make the session incomplete, as sentences (stderr, report.md).
    pub fn reasons(&self) -> Vec<String> {
        self.findings
            .iter()
            .filter(|f| f.gap.makes_incomplete())
            .map(Finding::sentence)
            .collect()
    }

    /// The findings that are only said, as sentences.
    pub fn notes(&self) -> Vec<String> {
        self.findings
            .iter()
            .filter(|f| !f.gap.makes_incomplete())
            .map(Finding::sentence)
            .collect()
    }

    /// The status line's account: `incomplete: lost 1.13M · dropped 12` or `rebuilt 40`;
    /// `None` when there is nothing to say. `count` writes a count short.
    pub fn status_text(&self, count: impl Fn(u64) -> String) -> Option<String> {
        if self.findings.is_empty() {
            return None;
        }
        let parts: Vec<String> = self
            .findings
            .iter()
            .map(|f| {
                let name = f.gap.key().replace('_', " ");
                match f.count {
                    Some(n) => format!("{name} {}", count(n)),
                    None => name,
                }
            })
            .collect();
        let head = if self.is_complete() { "" } else { "incomplete: " };
        Some(format!("{head}{}", parts.join(" · ")))
    }

    /// report.json's `verdict`.
    pub fn to_json(&self) -> Value {
        json!({
            "result": self.result(),
            "exit_code": self.exit_code(),
            "input_clean": self.input_clean(),
            "findings": self.findings.iter().map(|f| json!({
                "gap": f.gap.key(),
                "count": f.count,
                "detail": f.detail,
                "makes_incomplete": f.gap.makes_incomplete(),
                "text": f.sentence(),
            })).collect::<Vec<_>>(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verdict_without_findings_is_ok_and_exits_0() {
        let v = Verdict::new([], true);
        assert_eq!((v.result(), v.exit_code(), v.input_clean()), ("ok", 0, true));
        assert_eq!(v.status_text(|n| n.to_string()), None);
    }

    #[test]
    fn lost_records_make_it_incomplete_and_say_how_many_and_what_it_means() {
        let v = Verdict::new(
            [Finding::new(
                Gap::Lost,
                Some(1_131_500),
                "the kernel ring buffer overflowed",
            )],
            true,
        );
        assert_eq!(
            (v.result(), v.exit_code(), v.input_clean()),
            ("incomplete", 3, false)
        );
        let reasons = v.reasons();
        assert_eq!(reasons.len(), 1);
        assert!(
            reasons[0].starts_with("lost 1131500: the kernel ring buffer overflowed; "),
            "{reasons:?}"
        );
        assert!(reasons[0].contains("lower bounds"), "{reasons:?}");
        assert_eq!(
            v.status_text(|n| format!("{n}")).as_deref(),
            Some("incomplete: lost 1131500")
        );
    }

    #[test]
    fn rebuilt_events_and_a_few_unnamed_addresses_are_said_but_leave_it_ok() {
        let v = Verdict::new(
            [
                Finding::new(Gap::Unresolved, Some(3), "3 of 1000 addresses"),
                Finding::new(
                    Gap::Rebuilt,
                    Some(40),
                    "sched_switch events the kernel did not deliver",
                ),
            ],
            true,
        );
        assert_eq!((v.result(), v.exit_code()), ("ok", 0));
        assert_eq!(v.notes().len(), 2);
        assert!(v.reasons().is_empty());
        // Gap order, whatever the order they were found in.
        assert_eq!(v.findings[0].gap, Gap::Rebuilt);
        assert_eq!(
            v.status_text(|n| n.to_string()).as_deref(),
            Some("rebuilt 40 · unresolved 3")
        );
    }

    #[test]
    fn a_source_that_failed_before_any_data_is_an_error_after_data_incomplete() {
        let failed = Finding::new(Gap::SourceFailed, None, "QEMU exited with status 1");
        assert_eq!(Verdict::new([failed.clone()], false).exit_code(), 1);
        assert_eq!(Verdict::new([failed], true).exit_code(), 3);
    }

    #[test]
    fn merging_two_accounts_keeps_one_finding_per_gap_with_the_larger_count() {
        let recorded = Verdict::new(
            [
                Finding::new(Gap::Lost, Some(283_000), "ring overflow"),
                Finding::new(Gap::NotRecorded, Some(226_000), "the writer fell behind"),
            ],
            true,
        );
        // A replay counts the lost rows it read back (fewer when the writer dropped some).
        let replay = Verdict::new(
            [Finding::new(Gap::Lost, Some(200_000), "from the lost table")],
            true,
        );
        let merged = replay.merged(&recorded);
        assert_eq!(merged.findings.len(), 2);
        assert_eq!(merged.find(Gap::Lost).and_then(|f| f.count), Some(283_000));
        assert_eq!(merged.find(Gap::NotRecorded).and_then(|f| f.count), Some(226_000));
        assert_eq!(merged.exit_code(), 3);
    }

    #[test]
    fn a_verdict_survives_json_as_a_recording_stores_it() {
        let v = Verdict::new(
            [
                Finding::new(Gap::Interrupted, None, "killed"),
                Finding::new(Gap::Throttled, Some(4), "the kernel throttled sampling"),
            ],
            true,
        );
        let text = serde_json::to_string(&v).unwrap();
        assert_eq!(serde_json::from_str::<Verdict>(&text).unwrap(), v);
        let json = v.to_json();
        assert_eq!(json["result"], "incomplete");
        assert_eq!(json["exit_code"], 3);
        assert_eq!(json["findings"][0]["gap"], "interrupted");
        assert_eq!(json["findings"][1]["count"], 4);
    }
}
