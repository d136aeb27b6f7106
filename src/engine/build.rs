//! Building a snapshot under the live mode: which data counts (the selection, the reset
//! point, the sliding window), with which weight (decay), through the one builder
//! ([`Aggregate`]) for samples and merged rows for analyses — the same rule for both.
//!
//! Accumulating is incremental: what arrived since the last snapshot is added to the
//! aggregate, and two aggregates are used in turn so the one a published snapshot still
//! shares is never copied. Anything that changes which data counts starts over from the
//! slices, which costs what they hold (distinct stacks × slices), not the samples seen.

use std::sync::Arc;
use std::time::Duration;

use rustc_hash::FxHashMap;

use crate::feeds::RowsUpdate;
use crate::model::aggregate::{Aggregate, ViewData, Wants};
use crate::model::analysis::AnalysisRows;
use crate::model::counts::SampleKey;
use crate::model::selection::{SelectionMatcher, Verdict};
use crate::model::window::WindowPosition;
use crate::model::{ConsoleLog, FrameTable, InstanceId, Sample, Selection, StackId, TimeWindow, Timeline};

use super::snapshot::{AnalysisView, LiveMode, Snapshot};
use super::state::ModelState;

/// Fresh data kept for an accumulating aggregate at most before it starts over from the
/// slices instead (a buffer not drawn from for a while must not pin memory).
const MAX_FRESH: usize = 1 << 20;

/// One of the two accumulating aggregates and how far it has read the fresh log.
#[derive(Default)]
struct Buffer {
    aggregate: Aggregate,
    rows: Option<AnalysisRows>,
    events: u64,
    version: u64,
    /// Absolute positions in the fresh logs.
    samples_read: usize,
    rows_read: usize,
}

/// Data that arrived since the aggregates last read it, in arrival order.
#[derive(Default)]
struct FreshLog {
    samples: Vec<Sample>,
    /// Absolute position of `samples[0]`.
    samples_base: usize,
    rows: Vec<RowsUpdate>,
    rows_base: usize,
}

/// What the views currently look at, and the incremental state to build it.
pub struct SnapshotBuilder {
    /// As asked, with the window already cut on slice boundaries.
    pub selection: Selection,
    pub mode: LiveMode,
    pub wants: Wants,
    /// Counting starts here (a cut), after a reset.
    pub reset_ns: Option<u64>,
    /// The decay mode's unit of age.
    pub refresh: Duration,
    version: u64,
    buffers: [Buffer; 2],
    next_buffer: usize,
    fresh: FreshLog,
    frames: Option<(usize, Arc<FrameTable>)>,
    /// The console as last published, with what it held (lines, partial line's length): a
    /// console that did not change is shared, not copied, at the next snapshot.
    console: Option<((usize, usize), Arc<ConsoleLog>)>,
    offenders: super::offenders::OffenderCache,
    generation: u64,
}

impl SnapshotBuilder {
    pub fn new(selection: Selection, mode: LiveMode, refresh: Duration) -> Self {
        Self {
            selection,
            mode,
            wants: Wants::default(),
            reset_ns: None,
            refresh,
            version: 1,
            buffers: [Buffer::default(), Buffer::default()],
            next_buffer: 0,
            fresh: FreshLog::default(),
            frames: None,
            console: None,
            offenders: Default::default(),
            generation: 0,
        }
    }

    /// Something changed which data counts: start over at the next build.
    pub fn invalidate(&mut self) {
        self.version += 1;
    }

    /// Whether an aggregate will read the fresh log: one built for the current version.
    /// Until then (a headless run that never draws, or just after an invalidation) the next
    /// build starts over from the slices, so logging would only pin memory.
    fn logging(&self) -> bool {
        self.mode == LiveMode::Accumulate && self.buffers.iter().any(|b| b.version == self.version)
    }

    /// Samples and row updates waiting in the fresh log.
    #[cfg(test)]
    pub(crate) fn fresh_len(&self) -> (usize, usize) {
        (self.fresh.samples.len(), self.fresh.rows.len())
    }

    /// A sample was applied (kept for the accumulating aggregates).
    pub fn note_sample(&mut self, sample: &Sample) {
        if self.logging() {
            self.fresh.samples.push(*sample);
        }
    }

    /// Analysis rows were applied.
    pub fn note_rows(&mut self, rows: RowsUpdate) {
        if self.logging() {
            self.fresh.rows.push(rows);
        }
    }

    /// The window the views look at right now: the selection's, from the reset point on,
    /// and for the sliding mode only its last seconds.
    pub fn effective_window(&self, state: &ModelState) -> TimeWindow {
        let mut window = self.selection.window;
        if let Some(reset) = self.reset_ns {
            window = window.intersect(&TimeWindow::new(Some(reset), None));
        }
        if let LiveMode::Sliding { seconds } = self.mode
            && let Some(now) = state.now_ns()
        {
            let span = crate::model::units::seconds_to_ns(seconds);
            window = window.intersect(&TimeWindow::new(Some(now.saturating_sub(span)), None));
        }
        window
    }

    /// The next snapshot of `state`.
    pub fn build(&mut self, state: &ModelState) -> Snapshot {
        let window = self.effective_window(state);
        let mut selection = self.selection.clone();
        selection.window = window;
        let matcher = selection.matcher(&state.tables);
        let (view, rows, events) = match self.mode {
            LiveMode::Accumulate => self.accumulate(state, &matcher),
            LiveMode::Sliding { .. } => {
                let (aggregate, rows, events) = weighed(state, &matcher, |_| 1.0);
                (aggregate.view(&state.tables, self.wants), rows, events)
            }
            LiveMode::Decay { factor } => {
                let now = state.now_ns().unwrap_or(0);
                let unit = self.refresh.as_nanos().max(1) as f64;
                let factor = factor.clamp(0.0, 1.0);
                let (aggregate, rows, events) = weighed(state, &matcher, |end_ns| match end_ns {
                    Some(end) => factor.powf(now.saturating_sub(end) as f64 / unit),
                    None => 1.0,
                });
                (aggregate.view(&state.tables, self.wants), rows, events)
            }
        };
        let frames = match &self.frames {
            Some((len, arc)) if *len == state.tables.frames.len() => arc.clone(),
            _ => {
                let arc = Arc::new(state.tables.frames.clone());
                self.frames = Some((state.tables.frames.len(), arc.clone()));
                arc
            }
        };
        let offenders = state.analysis.as_ref().map(|_| self.offenders.get(state));
        let analysis = state.analysis.as_ref().map(|info| {
            let rows = rows.unwrap_or_else(|| info.schema.empty_rows());
            let mut table = crate::analyzers::present::table(info, &rows, &state.threads);
            if table.title == info.name {
                // Say what the table counts: the events of the selection, not "since the start".
                table.title = format!("{} · {events} events", info.name);
            }
            Arc::new(AnalysisView {
                series: crate::analyzers::present::latency_series(info, &rows, &state.threads),
                table,
                info: info.clone(),
                events,
                offenders: offenders.clone().unwrap_or_default(),
                heatmap: super::heatmap::latency_heatmap(state, &window).map(Arc::new),
            })
        });
        self.generation += 1;
        let mut stats = state.stats.clone();
        if stats.warnings.is_empty() {
            stats.warnings = state.provenance.warnings.clone();
        }
        Snapshot {
            generation: self.generation,
            frames,
            trie: view.trie,
            inverted: view.inverted,
            hotspots: view.hotspots,
            timeline: timeline(state).map(Arc::new),
            instances: view.instances,
            instance_labels: Arc::new(instance_labels(state)),
            analysis,
            console: self.console_of(state),
            selection,
            markers: state.markers,
            time_origin_ns: state.time_origin_ns,
            mode: self.mode,
            stats,
            verdict: super::verdict::verdict(state),
        }
    }

    /// The console to publish: the previous one while nothing was added to it.
    fn console_of(&mut self, state: &ModelState) -> Arc<ConsoleLog> {
        let shape = (state.console.len(), state.console.partial().len());
        match &self.console {
            Some((published, console)) if *published == shape => console.clone(),
            _ => {
                let console = Arc::new(state.console.clone());
                self.console = Some((shape, console.clone()));
                console
            }
        }
    }

    /// The accumulating aggregate brought up to date: incrementally, or from the slices
    /// when what counts changed.
    fn accumulate(
        &mut self,
        state: &ModelState,
        matcher: &SelectionMatcher,
    ) -> (ViewData, Option<AnalysisRows>, u64) {
        let version = self.version;
        let wants = self.wants;
        let samples_end = self.fresh.samples_base + self.fresh.samples.len();
        let rows_end = self.fresh.rows_base + self.fresh.rows.len();
        let buffer = &mut self.buffers[self.next_buffer];
        self.next_buffer = 1 - self.next_buffer;
        if buffer.version != version
            || buffer.samples_read < self.fresh.samples_base
            || buffer.rows_read < self.fresh.rows_base
        {
            let (aggregate, rows, events) = weighed(state, matcher, |_| 1.0);
            *buffer = Buffer {
                aggregate,
                rows,
                events,
                version,
                samples_read: samples_end,
                rows_read: rows_end,
            };
        } else {
            let from = buffer.samples_read - self.fresh.samples_base;
            for sample in &self.fresh.samples[from..] {
                let key = SampleKey::of(sample);
                if matcher.verdict_at(sample.time_ns, &key) == Verdict::Selected {
                    buffer
                        .aggregate
                        .add(&state.tables, sample.stack, sample.instance, sample.weight);
                }
            }
            let from = buffer.rows_read - self.fresh.rows_base;
            for update in &self.fresh.rows[from..] {
                if matcher.window().position(update.time_ns) == WindowPosition::Inside {
                    match &mut buffer.rows {
                        Some(rows) => rows.merge(&update.rows),
                        None => buffer.rows = Some(update.rows.clone()),
                    }
                    buffer.events += update.events;
                }
            }
            buffer.samples_read = samples_end;
            buffer.rows_read = rows_end;
        }
        let result = (
            buffer.aggregate.view(&state.tables, wants),
            buffer.rows.clone(),
            buffer.events,
        );
        self.trim_fresh();
        result
    }

    /// Drop fresh data both aggregates have read (or that one of them will never read:
    /// it starts over from the slices then).
    fn trim_fresh(&mut self) {
        let read = self.buffers[0].samples_read.min(self.buffers[1].samples_read);
        let drop = read
            .saturating_sub(self.fresh.samples_base)
            .min(self.fresh.samples.len());
        let drop = if self.fresh.samples.len() > MAX_FRESH {
            self.fresh.samples.len()
        } else {
            drop
        };
        self.fresh.samples.drain(..drop);
        self.fresh.samples_base += drop;
        let read = self.buffers[0].rows_read.min(self.buffers[1].rows_read);
        let drop = read
            .saturating_sub(self.fresh.rows_base)
            .min(self.fresh.rows.len());
        let drop = if self.fresh.rows.len() > MAX_FRESH / 64 {
            self.fresh.rows.len()
        } else {
            drop
        };
        self.fresh.rows.drain(..drop);
        self.fresh.rows_base += drop;
    }
}

impl SnapshotBuilder {
    /// The analysis rows of `window` (plain counts) and the events they were made of.
    pub fn analysis_in(&self, state: &ModelState, window: &TimeWindow) -> (AnalysisRows, u64) {
        let matcher = Selection::window(*window).matcher(&state.tables);
        let (_, rows, events) = weighed(state, &matcher, |_| 1.0);
        let rows = rows
            .or_else(|| state.analysis.as_ref().map(|info| info.schema.empty_rows()))
            .unwrap_or(AnalysisRows::Latency(Default::default()));
        (rows, events)
    }
}

/// The selected samples and analysis rows of `state`, each slice weighed by
/// `weight(slice end)` (1 for plain selections, the decay factor by age).
fn weighed(
    state: &ModelState,
    matcher: &SelectionMatcher,
    weight: impl Fn(Option<u64>) -> f64,
) -> (Aggregate, Option<AnalysisRows>, u64) {
    let window = *matcher.window();
    let mut plain: FxHashMap<(StackId, InstanceId), u64> = FxHashMap::default();
    let mut decayed: FxHashMap<(StackId, InstanceId), f64> = FxHashMap::default();
    state.store.visit(&window, &mut |v| {
        if v.position != WindowPosition::Inside || matcher.key_verdict(&v.key) != Verdict::Selected {
            return;
        }
        let w = weight(v.end_ns);
        let key = (v.key.stack, v.key.instance);
        if w >= 1.0 {
            let into = plain.entry(key).or_default();
            *into = into.saturating_add(v.weight);
        } else {
            *decayed.entry(key).or_default() += v.weight as f64 * w;
        }
    });
    for (key, w) in decayed {
        let into = plain.entry(key).or_default();
        *into = into.saturating_add(w.round() as u64);
    }
    // Built in bulk: a trie laid out in name order draws and searches fastest.
    let aggregate = Aggregate::from_counts(&state.tables, plain.into_iter().map(|((s, i), w)| (s, i, w)));
    let mut rows: Option<AnalysisRows> = None;
    let mut events = 0u64;
    state
        .store
        .visit_analysis(&window, &mut |data, position, end_ns| {
            if position != WindowPosition::Inside {
                return;
            }
            let w = weight(end_ns);
            events = events.saturating_add(crate::model::scale::scale(data.events, w));
            if let Some(slice_rows) = &data.analysis {
                let into = rows.get_or_insert_with(|| slice_rows.empty_like());
                into.merge_scaled(slice_rows, w);
            }
        });
    (aggregate, rows, events)
}

/// Every instance with its label, in id order.
pub fn instance_labels(state: &ModelState) -> Vec<(InstanceId, String)> {
    state
        .tables
        .instances()
        .iter()
        .enumerate()
        .map(|(i, inst)| (InstanceId(i as u32), inst.label.clone()))
        .collect()
}

/// The whole run's timeline, with the markers.
pub fn timeline(state: &ModelState) -> Option<Timeline> {
    let mut timeline = state.store.timeline()?.clone();
    timeline.markers = state.markers;
    Some(timeline)
}
