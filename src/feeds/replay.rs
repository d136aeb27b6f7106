//! A recorded session (`session.db`) as a feed: its samples, console, markers and lost
//! counts go through the engine exactly as they did live; a tracepoint session's analysis
//! is rebuilt from the typed options the file keeps and fed the recorded events, so
//! `perfscope open session.db` shows the same distributions and tables the live run did —
//! without tracefs, on any machine.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, bail};

use crate::analyzers::options::TraceOptions;
use crate::analyzers::session::Analysis;
use crate::feeds::host::tracing::{ROW_CELL_NS, RecordedTrace};
use crate::model::verdict::SourceCounts;
use crate::model::{Finding, Gap, InputInfo, Sample, SourceFacts, Verdict, WindowInfo};
use crate::sources::tracefs::{ResolvedEvent, bind_event, parse_selectors};
use crate::store::schema::VERDICT_META;
use crate::store::{RecordedSession, StoreError, open_session};
use crate::trace::event::{EventLayout, OwnedTraceEvent, TraceEvent};

use super::interned::FeedTables;
use super::{EventFormat, Feed, FeedStatus, RowsUpdate, SessionStart, Update};

/// Samples or events handed over per poll.
const BATCH: usize = 1 << 16;

enum Stage {
    Start,
    Samples {
        next: usize,
    },
    Events {
        next: usize,
        analysis: Box<Analysis>,
        cell: Option<u64>,
        cell_events: u64,
    },
    Done,
}

/// A session file, read when it is opened (so a bad file fails before any view or export
/// starts) and handed over in batches.
pub struct ReplayFeed {
    path: PathBuf,
    session: RecordedSession,
    tables: FeedTables,
    samples: Vec<Sample>,
    events: Vec<OwnedTraceEvent>,
    stage: Stage,
    /// Recorded events skipped as corrupt so far.
    corrupt_rows: u64,
}

impl ReplayFeed {
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let mut session = open_session(path)?;
        let list = std::mem::take(&mut session.profile);
        let samples = list.samples().to_vec();
        let events = std::mem::take(&mut session.events);
        Ok(Self {
            path: path.to_path_buf(),
            tables: FeedTables::from_tables(list.tables),
            session,
            samples,
            events,
            stage: Stage::Start,
            corrupt_rows: 0,
        })
    }

    /// What the file says about itself, first.
    fn start(&mut self, out: &mut Vec<Update>) -> anyhow::Result<Stage> {
        let session = &self.session;
        let meta = |k: &str| session.meta.get(k).cloned();
        let time_origin_ns = meta("time_origin_ns").and_then(|v| v.parse().ok()).unwrap_or(0);
        out.push(Update::Start(SessionStart {
            label: self.path.display().to_string(),
            kind: meta("source_kind").unwrap_or_default(),
            target: meta("target").unwrap_or_default(),
            time_origin_ns,
            live_clock_offset_ns: None,
            options: meta("session_options").and_then(|j| serde_json::from_str(&j).ok()),
        }));
        let markers = session.phase_markers();
        if markers != Default::default() {
            out.push(Update::Markers(markers));
        }
        for (_, line) in session.console.lines_from(0) {
            let mut bytes = line.text.clone().into_bytes();
            bytes.push(b'\n');
            out.push(Update::Console {
                time_ns: line.time_ns,
                bytes,
            });
        }
        let mut lost = 0u64;
        for record in &session.lost {
            lost = lost.saturating_add(record.count);
            out.push(Update::Lost {
                total: lost,
                time_ns: record.time_ns,
            });
        }
        // A recorded QEMU run keeps the plugin's summary as `plugin.*` meta.
        let plugin: Vec<(String, String)> = session
            .meta
            .iter()
            .filter_map(|(k, v)| Some((k.strip_prefix("plugin.")?.to_string(), v.clone())))
            .collect();
        if !plugin.is_empty() {
            out.push(Update::PluginSummary(plugin));
        }
        if let Some(callchain) = meta("callchain_choice")
            .and_then(|j| serde_json::from_str(&j).ok())
            .and_then(|j| crate::model::facts::CallchainFacts::from_json(&j))
        {
            out.push(Update::Callchain(callchain));
        }
        if let Some(window) = meta("window_json").and_then(|j| window_from_json(&j)) {
            out.push(Update::Window(window));
        }
        let range = self
            .samples
            .iter()
            .filter_map(|s| s.time_ns)
            .fold(None, |r: Option<(u64, u64)>, t| {
                Some(r.map_or((t, t), |(lo, hi)| (lo.min(t), hi.max(t))))
            });
        out.push(Update::Facts(SourceFacts {
            raw_records: self.samples.len() as u64,
            total_frames: self.samples.iter().map(|s| u64::from(s.meta.raw_depth)).sum(),
            first_sample_ns: range.map(|r| r.0),
            last_sample_ns: range.map(|r| r.1),
            ..SourceFacts::default()
        }));
        // The recording's own verdict (lost, not stored, …), so the replay says the same;
        // without it the recorder never finished.
        match meta(VERDICT_META).map(|j| serde_json::from_str::<Verdict>(&j)) {
            Some(Ok(verdict)) => out.push(Update::RecordedVerdict(verdict)),
            Some(Err(e)) => out.push(Update::Finding(Finding::new(
                Gap::CorruptRows,
                None,
                format!("its stored verdict does not parse ({e})"),
            ))),
            None => out.push(Update::Finding(Finding::new(
                Gap::Interrupted,
                None,
                "the recording did not finish: its recorder was killed, or is still writing it",
            ))),
        }
        out.push(Update::Input(InputInfo {
            kind: "session".into(),
            path: self.path.display().to_string(),
            format: Some(format!("v{}", crate::store::schema::SCHEMA_VERSION)),
            records: (self.samples.len() + self.events.len()) as u64,
            bytes_read: std::fs::metadata(&self.path).map(|m| m.len()).unwrap_or(0),
            end: "recorded session".into(),
            clean: true,
            bytes_lost: 0,
        }));
        Ok(Stage::Samples { next: 0 })
    }

    /// The analysis of a recorded tracepoint session; `None` for other sessions.
    fn analysis(&self) -> anyhow::Result<Option<Analysis>> {
        let Some(options) = self.session.meta.get("session_options") else {
            return Ok(None);
        };
        let Ok(recorded) = serde_json::from_str::<RecordedTrace>(options) else {
            return Ok(None);
        };
        let mut types: Vec<_> = self.session.event_types.iter().collect();
        types.sort_by_key(|t| t.index);
        let mut layouts = types.iter().map(|t| t.layout.clone());
        let mut stages: Vec<Vec<ResolvedEvent>> = Vec::new();
        for (i, &size) in recorded.stage_sizes.iter().enumerate() {
            // Stages beyond the user's -e are the ones perfscope added (syscalls' process_free).
            let text = recorded
                .texts
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
                let Some(spec) = specs.iter().find(|s| s.names_event(&layout.system, &layout.name)) else {
                    bail!("recorded event {full} matches no selector of `{text}`");
                };
                let mut concrete = spec.clone();
                concrete.system = layout.system.clone();
                concrete.name = layout.name.clone();
                stage.push(bind_event(concrete, layout).map_err(|e| anyhow::anyhow!("{e}"))?);
            }
            stages.push(stage);
        }
        // A replay rebuilds tables, not the live run's heatmap files.
        let trace = TraceOptions {
            heatmap: None,
            ..recorded.trace.clone()
        };
        let mut analysis = Analysis::build(&trace, &stages, recorded.threads)?;
        // As live: the session's origin is when its events were on.
        if let Some(origin) = self
            .session
            .meta
            .get("time_origin_ns")
            .and_then(|v| v.parse().ok())
        {
            analysis.begin(origin);
        }
        Ok(Some(analysis))
    }
}

impl Feed for ReplayFeed {
    fn is_recorded(&self) -> bool {
        true
    }

    fn poll(&mut self, out: &mut Vec<Update>) -> anyhow::Result<FeedStatus> {
        let stage = std::mem::replace(&mut self.stage, Stage::Done);
        self.stage = match stage {
            Stage::Start => self.start(out)?,
            Stage::Samples { next } => {
                let end = (next + BATCH).min(self.samples.len());
                self.tables.hand_over(self.samples[next..end].to_vec(), out);
                if end < self.samples.len() {
                    Stage::Samples { next: end }
                } else {
                    match self.analysis() {
                        Ok(Some(analysis)) => {
                            out.push(Update::Analysis(Arc::new(analysis.info())));
                            out.push(Update::EventFormat(Arc::new(EventFormat {
                                layouts: analysis.layouts().to_vec(),
                                printer: analysis.printer().clone(),
                                execs: analysis.execs().to_vec(),
                            })));
                            Stage::Events {
                                next: 0,
                                analysis: Box::new(analysis),
                                cell: None,
                                cell_events: 0,
                            }
                        }
                        Ok(None) => Stage::Done,
                        Err(e) => {
                            out.push(Update::Warning(format!(
                                "the recorded analysis could not be replayed: {e:#}"
                            )));
                            Stage::Done
                        }
                    }
                }
            }
            Stage::Events {
                next,
                mut analysis,
                mut cell,
                mut cell_events,
            } => {
                let end = (next + BATCH).min(self.events.len());
                for event in &self.events[next..end] {
                    let event = event.as_event();
                    if !fits(analysis.layouts(), &event) {
                        // Its type is unknown or its record too short for the type's
                        // fields: an analyzer would read garbage.
                        self.corrupt_rows += 1;
                        continue;
                    }
                    let this = event.time_ns - event.time_ns % ROW_CELL_NS;
                    if cell.is_some_and(|c| c != this) {
                        flush(&mut analysis, cell, &mut cell_events, out);
                    }
                    cell = Some(this);
                    cell_events += 1;
                    analysis.feed(&event);
                }
                if self.corrupt_rows > 0 {
                    out.push(Update::Counts(SourceCounts {
                        corrupt_rows: self.corrupt_rows,
                        ..SourceCounts::default()
                    }));
                }
                if end < self.events.len() {
                    Stage::Events {
                        next: end,
                        analysis,
                        cell,
                        cell_events,
                    }
                } else {
                    // The recording ends with its last event, as far as it knows.
                    analysis.finish(self.events.last().map_or(0, |e| e.time_ns));
                    flush(&mut analysis, cell, &mut cell_events, out);
                    Stage::Done
                }
            }
            Stage::Done => return Ok(FeedStatus::Finished),
        };
        Ok(if matches!(self.stage, Stage::Done) {
            FeedStatus::Finished
        } else {
            FeedStatus::Progress
        })
    }
}

/// Whether a recorded event can be fed: its type is one of the session's and its record
/// holds every fixed field of the type.
fn fits(layouts: &[EventLayout], event: &TraceEvent<'_>) -> bool {
    layouts.get(usize::from(event.event.0)).is_some_and(|layout| {
        let needed = layout
            .fields
            .iter()
            .map(|f| f.offset.saturating_add(f.size))
            .max()
            .unwrap_or(0);
        event.raw.len() >= needed
    })
}

/// The analyzer's rows of the cell that just ended, handed over.
fn flush(analysis: &mut Analysis, cell: Option<u64>, events: &mut u64, out: &mut Vec<Update>) {
    let rows = analysis.take_rows();
    let events = std::mem::take(events);
    if !rows.is_empty() || events > 0 {
        out.push(Update::Rows(RowsUpdate {
            time_ns: cell,
            rows,
            events,
        }));
    }
}

/// The run's window facts as `WindowInfo::to_json` wrote them into `meta.window_json`.
fn window_from_json(text: &str) -> Option<WindowInfo> {
    let v: serde_json::Value = serde_json::from_str(text).ok()?;
    let text = |k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_string);
    let number = |k: &str| v.get(k).and_then(|x| x.as_f64());
    let count = |k: &str| v.get(k).and_then(|x| x.as_u64());
    let flag = |k: &str| v.get(k).and_then(|x| x.as_bool()).unwrap_or(false);
    Some(WindowInfo {
        enabled: flag("enabled"),
        start_marker: text("start_marker"),
        stop_marker: text("stop_marker"),
        start_time: number("start_time"),
        stop_time: number("stop_time"),
        workload_timeout: number("workload_timeout"),
        truncated_by_timeout: flag("truncated_by_timeout"),
        stop_requested: flag("stop_requested"),
        stop_method: text("stop_method"),
        warnings: v
            .get("warnings")?
            .as_array()?
            .iter()
            .filter_map(|w| w.as_str().map(str::to_string))
            .collect(),
        method: text("method").unwrap_or_default(),
        boot_samples_excluded: count("boot_samples_excluded"),
        post_window_samples_excluded: count("post_window_samples_excluded"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_facts_round_trip_through_their_json() {
        let w = WindowInfo {
            enabled: true,
            start_marker: Some("BENCH_START".into()),
            stop_marker: None,
            start_time: Some(1.25),
            stop_time: Some(3.5),
            workload_timeout: Some(10.0),
            truncated_by_timeout: true,
            stop_requested: true,
            stop_method: Some("qmp_quit".into()),
            warnings: vec!["late".into()],
            method: "elapsed_ns_window".into(),
            boot_samples_excluded: Some(4),
            post_window_samples_excluded: None,
        };
        assert_eq!(window_from_json(&w.to_json().to_string()), Some(w));
        assert_eq!(window_from_json("[]"), None);
    }
}
