//! A recorded tracepoint session replayed: the analysis it ran is rebuilt from the session
//! file (the `-e` texts and options in `meta`, the layouts in `event_types`) and fed the
//! recorded events, so `perfscope open session.db` shows the same distributions and tables
//! the live run did — without tracefs, on any machine.

use anyhow::{Context, bail};

use crate::analyzers::text::WallClock;
use crate::live::snapshot::{HistogramSeries, TIMELINE_SLICES, TextTable};
use crate::model::Timeline;
use crate::sources::tracefs::{ResolvedEvent, bind_event, parse_selectors};
use crate::store::RecordedSession;
use crate::trace::expr::glob::glob_match;

use super::analysis::Analysis;
use super::comms::CommCache;
use super::options::{AnalyzerKind, TraceOptions};

/// What a replayed analysis shows.
pub struct ReplayedAnalysis {
    pub series: Vec<HistogramSeries>,
    pub tables: Vec<TextTable>,
    pub events: usize,
    /// The recorded events per time slice, as the live timeline counted them.
    pub timeline: Timeline,
}

/// The analysis of a recorded host tracepoint session; `None` for other sessions.
pub fn replay_trace(session: &RecordedSession) -> anyhow::Result<Option<ReplayedAnalysis>> {
    let Some(kind) = session.meta.get("trace.analyzer") else {
        return Ok(None);
    };
    let analyzer =
        AnalyzerKind::from_key(kind).with_context(|| format!("unknown analyzer `{kind}` in the session"))?;
    let meta = |key: &str| session.meta.get(key).map(String::as_str).unwrap_or("");
    let texts: Vec<String> =
        serde_json::from_str(meta("trace.events")).context("trace.events in the session meta")?;
    let sizes: Vec<usize> =
        serde_json::from_str(meta("trace.stage_sizes")).context("trace.stage_sizes in the session meta")?;
    let mut types: Vec<_> = session.event_types.iter().collect();
    types.sort_by_key(|t| t.index);
    let mut layouts = types.iter().map(|t| t.layout.clone());
    let mut stages: Vec<Vec<ResolvedEvent>> = Vec::new();
    for (i, &size) in sizes.iter().enumerate() {
        // Stages beyond the user's -e are the ones perfscope added (syscalls' process_free).
        let text = texts
            .get(i)
            .cloned()
            .unwrap_or_else(|| "sched:sched_process_free".into());
        let specs = parse_selectors(&text).map_err(|e| anyhow::anyhow!("{e}"))?;
        let mut stage = Vec::new();
        for _ in 0..size {
            let layout = layouts
                .next()
                .context("the session has fewer event types than its stages")?;
            let full = layout.full_name();
            let Some(spec) = specs.iter().find(|s| glob_match(&s.full_name(), &full)) else {
                bail!("recorded event {full} matches no selector of `{text}`");
            };
            let mut concrete = spec.clone();
            concrete.system = layout.system.clone();
            concrete.name = layout.name.clone();
            stage.push(bind_event(concrete, layout).map_err(|e| anyhow::anyhow!("{e}"))?);
        }
        stages.push(stage);
    }
    let options = TraceOptions {
        analyzer,
        events: texts,
        key: Some(meta("trace.key").to_string()).filter(|k| !k.is_empty()),
        interval: None,
        perins: meta("trace.perins") == "true",
        than_ns: meta("trace.than_ns").parse().ok(),
        cycle: meta("trace.cycle") == "true",
        only_comm: meta("trace.only_comm") == "true",
    };
    let mut analysis = Analysis::build(&options, &stages, meta("trace.threads") == "true")?;
    let started_ns = meta(super::TIME_ORIGIN_META)
        .parse()
        .ok()
        .or_else(|| session.events.first().map(|e| e.as_event().time_ns))
        .unwrap_or(0);
    let mut timeline = Timeline::growing_events(started_ns, TIMELINE_SLICES);
    for event in &session.events {
        let event = event.as_event();
        timeline.add(event.time_ns, 1, TIMELINE_SLICES);
        analysis.feed(&event);
    }
    analysis.finish();
    let comms = CommCache::default();
    let comm_of = |tid: u32| comms.name(tid);
    let wall = WallClock::local(std::time::SystemTime::now());
    Ok(Some(ReplayedAnalysis {
        series: analysis.series(&comm_of),
        tables: vec![analysis.table(&wall, &comm_of)],
        events: session.events.len(),
        timeline,
    }))
}
