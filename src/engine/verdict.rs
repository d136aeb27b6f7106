//! The session's verdict, built from everything the engine was told: the counts the
//! sources kept (lost, dropped, decode errors, throttles, rebuilt events, corrupt rows),
//! the findings they said (a failure, a cut input, two records that disagree), what was
//! read, the marker window, whether the symbols match, and — for a replay — the verdict
//! its recording stored. One function, so the exit code, the reports, the status line and
//! a recording can only ever say the same thing.

use crate::model::{Finding, Gap, Target, Verdict, WindowInfo};

use super::ModelState;

/// The verdict of the session as it stands.
pub fn verdict(state: &ModelState) -> Verdict {
    let stats = &state.stats;
    let provenance = &state.provenance;
    let mut findings: Vec<Finding> = provenance.findings.clone();
    if stats.lost > 0 {
        findings.push(Finding::new(
            Gap::Lost,
            Some(stats.lost),
            "records the source lost (a full kernel ring buffer, or the QEMU plugin's queue)",
        ));
    }
    if stats.dropped > 0 {
        findings.push(Finding::new(
            Gap::Dropped,
            Some(stats.dropped),
            "records perfscope could not use (malformed, or more than a queue held)",
        ));
    }
    if stats.bad_times > 0 {
        findings.push(Finding::new(
            Gap::BadTimes,
            Some(stats.bad_times),
            "time stamps past 2^62 ns (146 years: corrupt, or -1), taken out of their records",
        ));
    }
    findings.extend(stats.counts.findings());
    let input = &provenance.input;
    let said_why = findings
        .iter()
        .any(|f| matches!(f.gap, Gap::SourceFailed | Gap::Interrupted));
    if !input.kind.is_empty() && !input.clean && !said_why {
        findings.push(Finding::new(
            Gap::InputCut,
            (input.bytes_lost > 0).then_some(input.bytes_lost),
            format!("{}: {}", input.path, input.end),
        ));
    }
    if let Some(window) = &provenance.window {
        findings.extend(window_findings(window));
    }
    let facts = &provenance.facts;
    if let Some(why) = &facts.symbols_mismatch {
        findings.push(Finding::new(Gap::SymbolsMismatch, None, why.clone()));
    } else {
        let unnamed = facts.unknown_frames + facts.outside_kernel.unknown_frames;
        if unnamed > 0 {
            findings.push(Finding::new(
                Gap::Unresolved,
                Some(unnamed),
                format!(
                    "of {} addresses no symbol covered",
                    facts.total_frames.max(unnamed)
                ),
            ));
        }
    }
    let has_data = stats.samples > 0 || stats.events > 0;
    // A recording or a guest run without a sample is missing everything; a host session
    // that saw no event measured zero (`-p 1` while init slept), which is a figure.
    let host = Target::of(&provenance.source_kind, &input.kind) == Target::Host;
    if stats.finished && !has_data && !host {
        findings.push(Finding::new(
            Gap::NoData,
            None,
            "the session recorded no sample and no event",
        ));
    }
    let own = Verdict::new(findings, has_data);
    match &provenance.recorded_verdict {
        Some(recorded) => own.merged(recorded),
        None => own,
    }
}

/// The workload window asked for and what became of it.
fn window_findings(window: &WindowInfo) -> Vec<Finding> {
    let mut out = Vec::new();
    if !window.enabled {
        return out;
    }
    if let Some(marker) = &window.start_marker
        && window.start_time.is_none()
    {
        out.push(Finding::new(
            Gap::NoWindow,
            None,
            format!("the start marker {marker:?} never came (the whole run is counted as the window)"),
        ));
    }
    // The timeout closes a window whose stop marker did not come (its time is the stop
    // time then): that window is not the workload's.
    if let Some(marker) = &window.stop_marker
        && window.start_time.is_some()
        && (window.stop_time.is_none() || window.truncated_by_timeout)
    {
        let why = if window.truncated_by_timeout {
            format!(
                "the workload timeout ({} s) ended it first",
                window.workload_timeout.unwrap_or_default()
            )
        } else if let Some(method) = &window.stop_method {
            format!("the run was stopped first ({method})")
        } else {
            "the run ended first".into()
        };
        out.push(Finding::new(
            Gap::NoWindow,
            None,
            format!("the stop marker {marker:?} never came: {why}"),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::SlicePolicy;
    use crate::model::InputInfo;

    fn finished(samples: u64) -> ModelState {
        let mut s = ModelState::new(SlicePolicy::BATCH);
        s.stats.samples = samples;
        s.stats.finished = true;
        s
    }

    #[test]
    fn a_clean_session_is_ok_and_one_without_data_is_not() {
        assert_eq!(verdict(&finished(10)).exit_code(), 0);
        let empty = verdict(&finished(0));
        assert_eq!(empty.find(Gap::NoData).map(|f| f.gap), Some(Gap::NoData));
        assert_eq!(empty.exit_code(), 3);
        // A live session that has not received anything yet is not judged empty.
        let mut live = finished(0);
        live.stats.finished = false;
        assert_eq!(verdict(&live).exit_code(), 0);
        // A host session that saw no event measured zero events: complete.
        let mut host = finished(0);
        host.provenance.source_kind = "host-trace".into();
        assert_eq!(verdict(&host).exit_code(), 0);
    }

    #[test]
    fn lost_dropped_and_a_cut_input_are_findings() {
        let mut s = finished(10);
        s.stats.lost = 5;
        s.stats.dropped = 2;
        s.provenance.input = InputInfo {
            kind: "qperf".into(),
            path: "x.qperf.bin".into(),
            end: "truncated last record at byte 40: 12 bytes lost".into(),
            clean: false,
            bytes_lost: 12,
            ..InputInfo::default()
        };
        let v = verdict(&s);
        let gaps: Vec<Gap> = v.findings.iter().map(|f| f.gap).collect();
        assert_eq!(gaps, [Gap::Lost, Gap::Dropped, Gap::InputCut]);
        assert_eq!(v.find(Gap::InputCut).and_then(|f| f.count), Some(12));
        assert!(!v.input_clean());
    }

    /// The ring reader's counts reach the verdict through the engine's `Counts` update.
    #[test]
    fn decode_errors_and_throttles_make_it_incomplete_rebuilt_events_do_not() {
        use crate::engine::{Engine, EngineOptions};
        use crate::feeds::Update;
        use crate::model::Selection;
        use crate::model::verdict::SourceCounts;
        let mut engine = Engine::new(EngineOptions::batch(Selection::all()));
        engine.state.provenance.source_kind = "host".into();
        engine.apply(vec![Update::Counts(SourceCounts {
            rebuilt: 9,
            ..SourceCounts::default()
        })]);
        assert_eq!(engine.verdict().exit_code(), 0, "rebuilt events are only said");
        engine.apply(vec![Update::Counts(SourceCounts {
            decode_errors: 2,
            throttles: 4,
            rebuilt: 7,
            corrupt_rows: 0,
        })]);
        let v = engine.verdict();
        assert_eq!(v.find(Gap::DecodeErrors).and_then(|f| f.count), Some(2));
        assert_eq!(v.find(Gap::Throttled).and_then(|f| f.count), Some(4));
        assert_eq!(
            v.find(Gap::Rebuilt).and_then(|f| f.count),
            Some(9),
            "a total never goes back"
        );
        assert_eq!(v.exit_code(), 3);
    }

    #[test]
    fn a_stop_marker_that_never_came_is_no_window() {
        let mut s = finished(10);
        s.provenance.window = Some(WindowInfo {
            enabled: true,
            start_marker: Some("BENCH_START".into()),
            stop_marker: Some("BENCH_END".into()),
            start_time: Some(1.0),
            truncated_by_timeout: true,
            workload_timeout: Some(5.0),
            ..WindowInfo::default()
        });
        let v = verdict(&s);
        let f = v.find(Gap::NoWindow).expect("no window");
        assert!(f.detail.contains("\"BENCH_END\" never came"), "{f:?}");
        assert!(f.detail.contains("timeout (5 s)"), "{f:?}");
        assert_eq!(v.exit_code(), 3);
        // The timeout closed the window at its own time: still not the workload's.
        if let Some(w) = &mut s.provenance.window {
            w.stop_time = Some(6.0);
        }
        assert_eq!(verdict(&s).exit_code(), 3);
        // Both markers came: nothing to say.
        if let Some(w) = &mut s.provenance.window {
            w.stop_time = Some(2.0);
            w.truncated_by_timeout = false;
        }
        assert_eq!(verdict(&s).exit_code(), 0);
    }

    #[test]
    fn a_replay_says_what_its_recording_stored() {
        let mut s = finished(10);
        s.stats.lost = 100;
        s.provenance.recorded_verdict = Some(Verdict::new(
            [
                Finding::new(Gap::Lost, Some(283_000), "ring"),
                Finding::new(Gap::NotRecorded, Some(7), "writer"),
            ],
            true,
        ));
        let v = verdict(&s);
        assert_eq!(v.find(Gap::Lost).and_then(|f| f.count), Some(283_000));
        assert_eq!(v.find(Gap::NotRecorded).and_then(|f| f.count), Some(7));
    }
}
