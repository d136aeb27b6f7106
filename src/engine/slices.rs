//! Time slices: how the engine keeps a session's data in memory that grows with distinct
//! stacks × kept slices, never with samples.
//!
//! Samples and analysis rows are binned by time into slices, each an aggregate (stack
//! counts, analysis rows, event and lost counts) over `[start, end)`. Slices sit on a grid
//! of power-of-two multiples of a base width, aligned to 0 on the session's clock, so two
//! neighbours in one cell of a coarser grid merge into it exactly. As a run grows, old
//! slices merge: at most [`SlicePolicy::max_history`] slices span the history, and the
//! last [`SlicePolicy::recent_ns`] stay fine enough for the live windows (sliding, decay).
//!
//! Cuts are boundaries no slice may straddle: the start and stop markers, the reset point,
//! the bounds of the selected window. The newest samples are held raw for
//! [`SlicePolicy::hold_ns`] before they are binned, so a marker or reset that arrives a
//! little after its time still cuts exactly; a cut that falls inside an older slice snaps
//! to that slice's nearer edge (and says so).
//!
//! Window rule, the same for every view and export: a slice belongs to a window when its
//! start does; a held sample when its time does; untimed samples are inside every window.
//!
//! Any u64 is a time the store takes without a panic (the engine keeps garbage times out
//! of its record, but the store does not rely on it): its arithmetic saturates, and a
//! slice's end is exclusive, so the last time a slice can hold is [`LAST_NS`] — a time
//! past it is binned there.

use std::collections::BTreeSet;

use crate::model::analysis::AnalysisRows;
use crate::model::counts::{SampleKey, StackCounts};
use crate::model::window::WindowPosition;
use crate::model::{Counted, Sample, TimeWindow, Timeline};

/// How slices are sized.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SlicePolicy {
    /// The narrowest slice (the grid's cell).
    pub base_ns: u64,
    /// Slices across the whole run at most (the history's resolution).
    pub max_history: usize,
    /// The recent span kept finer than the history (the longest live window).
    pub recent_ns: u64,
    /// Slices across the recent span at most.
    pub max_recent: usize,
    /// Samples younger than this (behind the newest) are kept raw.
    pub hold_ns: u64,
    /// Raw samples kept at most (a storm is binned sooner rather than held in memory).
    pub max_held: usize,
}

impl SlicePolicy {
    /// A recorded input read to its end headless (report, `--no-tui`): no live window,
    /// no range picked on a timeline — only the cuts known before the samples (markers,
    /// `--start-sec`/`--stop-sec`) select. One slice between two cuts is all it needs: no
    /// grid, nothing to hold, nothing to merge as the run grows.
    pub const BATCH: SlicePolicy = SlicePolicy {
        base_ns: 1 << 62,
        max_history: 1,
        recent_ns: 0,
        max_recent: 1,
        hold_ns: 0,
        max_held: 0,
    };

    /// A live source read to its end headless (`qemu --no-tui`, `top --no-tui`): no live
    /// window to keep fine, but markers come while the source runs, after the samples
    /// around them (the guest prints the marker; the plugin's samples of that moment are
    /// already in). So the newest samples are held raw as in a live session — with
    /// [`SlicePolicy::BATCH`] the one slice would already span a late marker and the
    /// window would snap to the run's start or end.
    pub fn live_headless() -> SlicePolicy {
        SlicePolicy::live(0)
    }

    /// A live session whose live windows reach back `recent_ns`.
    pub fn live(recent_ns: u64) -> SlicePolicy {
        SlicePolicy {
            base_ns: 1_000_000,
            max_history: 512,
            recent_ns,
            max_recent: 128,
            hold_ns: 2_000_000_000,
            max_held: 1 << 18,
        }
    }
}

/// What one slice (or the untimed rest) holds.
#[derive(Clone, Debug, Default)]
pub struct SliceData {
    pub samples: StackCounts,
    pub analysis: Option<AnalysisRows>,
    /// Events fed to an analyzer.
    pub events: u64,
    /// Records the source lost.
    pub lost: u64,
}

impl SliceData {
    /// Sample weight.
    pub fn weight(&self) -> u64 {
        self.samples.total()
    }

    fn absorb(&mut self, other: SliceData) {
        self.samples.absorb(other.samples);
        match (&mut self.analysis, other.analysis) {
            (Some(mine), Some(theirs)) => mine.merge(&theirs),
            (mine @ None, theirs) => *mine = theirs,
            (Some(_), None) => {}
        }
        self.events = self.events.saturating_add(other.events);
        self.lost = self.lost.saturating_add(other.lost);
    }

    fn add_analysis(&mut self, rows: &AnalysisRows, events: u64) {
        match &mut self.analysis {
            Some(mine) => mine.merge(rows),
            None => self.analysis = Some(rows.clone()),
        }
        self.events = self.events.saturating_add(events);
    }

    fn heap_bytes(&self) -> usize {
        self.samples.heap_bytes() + self.analysis.as_ref().map_or(0, AnalysisRows::heap_bytes)
    }
}

/// One slice: the data of `[start_ns, end_ns)`.
#[derive(Clone, Debug)]
pub struct Slice {
    pub start_ns: u64,
    pub end_ns: u64,
    pub data: SliceData,
}

/// A sample count as [`SliceStore::visit`] hands it out.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Visited {
    pub key: SampleKey,
    pub weight: u64,
    /// Where its slice (or, held, its time) lies relative to the visited window.
    pub position: WindowPosition,
    /// When its slice ends (held: its time + 1); `None` for untimed samples.
    pub end_ns: Option<u64>,
}

/// A session's data by time.
#[derive(Clone, Debug)]
pub struct SliceStore {
    policy: SlicePolicy,
    /// Sorted by start, never overlapping.
    slices: Vec<Slice>,
    held: Vec<Sample>,
    untimed: SliceData,
    cuts: BTreeSet<u64>,
    first_ns: Option<u64>,
    latest_ns: Option<u64>,
    /// Earliest and latest sample time (not analysis rows).
    sample_range: Option<(u64, u64)>,
    /// `latest_ns` at the last compaction.
    compacted_at: u64,
    /// Weight (samples, or events) and lost records per fine time bin over the whole run,
    /// exact to the time of each sample: what the timeline view draws.
    timeline: Option<Timeline>,
}

/// The latest time a slice holds: its end, exclusive, must fit a u64.
pub const LAST_NS: u64 = u64::MAX - 1;

/// Bins the timeline keeps (views re-bin to their width).
pub const TIMELINE_BINS: usize = 2048;

impl SliceStore {
    pub fn new(policy: SlicePolicy) -> Self {
        Self {
            policy,
            slices: Vec::new(),
            held: Vec::new(),
            untimed: SliceData::default(),
            cuts: BTreeSet::new(),
            first_ns: None,
            latest_ns: None,
            sample_range: None,
            compacted_at: 0,
            timeline: None,
        }
    }

    pub fn policy(&self) -> SlicePolicy {
        self.policy
    }

    /// The live windows now reach back `recent_ns`: keep that span fine.
    pub fn set_recent(&mut self, recent_ns: u64) {
        self.policy.recent_ns = recent_ns;
    }

    /// Earliest and latest time seen (samples and analysis rows).
    pub fn time_range(&self) -> Option<(u64, u64)> {
        Some((self.first_ns?, self.latest_ns?))
    }

    /// Earliest and latest time a sample has.
    pub fn sample_time_range(&self) -> Option<(u64, u64)> {
        self.sample_range
    }

    pub fn latest_ns(&self) -> Option<u64> {
        self.latest_ns
    }

    pub fn slices(&self) -> &[Slice] {
        &self.slices
    }

    /// Samples kept raw right now.
    pub fn held(&self) -> &[Sample] {
        &self.held
    }

    pub fn untimed(&self) -> &SliceData {
        &self.untimed
    }

    /// The whole run's timeline (sample weight, or events when `events`), exact to each
    /// sample's time; `None` before anything timed arrived.
    pub fn timeline(&self) -> Option<&Timeline> {
        self.timeline.as_ref()
    }

    fn timeline_add(&mut self, t: u64, weight: u64, lost: u64, counted: Counted) {
        let timeline = self
            .timeline
            .get_or_insert_with(|| Timeline::growing(t, TIMELINE_BINS, counted));
        if counted == Counted::Events {
            timeline.counted = Counted::Events;
        }
        timeline.add(t, weight, lost, TIMELINE_BINS);
    }

    fn note_time(&mut self, t: u64) {
        self.first_ns = Some(self.first_ns.map_or(t, |f| f.min(t)));
        self.latest_ns = Some(self.latest_ns.map_or(t, |l| l.max(t)));
    }

    /// Add one sample: held raw while young, else into its slice.
    pub fn add_sample(&mut self, sample: &Sample) {
        let Some(t) = sample.time_ns else {
            self.untimed.samples.add(SampleKey::of(sample), sample.weight);
            return;
        };
        self.note_time(t);
        self.sample_range = Some(
            self.sample_range
                .map_or((t, t), |(lo, hi)| (lo.min(t), hi.max(t))),
        );
        self.timeline_add(t, sample.weight, 0, Counted::Samples);
        if self.policy.hold_ns > 0 {
            self.held.push(*sample);
        } else {
            self.bin(t).samples.add(SampleKey::of(sample), sample.weight);
        }
    }

    /// Add an analyzer's rows of the span starting at `time_ns` (`None`: untimed).
    pub fn add_analysis(&mut self, time_ns: Option<u64>, rows: &AnalysisRows, events: u64) {
        match time_ns {
            Some(t) => {
                self.note_time(t);
                self.timeline_add(t, events, 0, Counted::Events);
                self.bin(t).add_analysis(rows, events);
            }
            None => self.untimed.add_analysis(rows, events),
        }
    }

    /// Count `count` lost records at `time_ns` (`None`: the newest slice, or untimed).
    pub fn add_lost(&mut self, time_ns: Option<u64>, count: u64) {
        match time_ns.or(self.latest_ns) {
            Some(t) => {
                let counted = self.timeline.as_ref().map_or(Counted::Samples, |tl| tl.counted);
                self.timeline_add(t, 0, count, counted);
                let data = self.bin(t);
                data.lost = data.lost.saturating_add(count);
            }
            None => self.untimed.lost = self.untimed.lost.saturating_add(count),
        }
    }

    /// After a batch: bin the held samples that are old enough, merge old slices.
    pub fn settle(&mut self) {
        let Some(latest) = self.latest_ns else {
            return;
        };
        if !self.held.is_empty() {
            let horizon = latest.saturating_sub(self.policy.hold_ns);
            let overflow = self.held.len() > self.policy.max_held;
            let held = std::mem::take(&mut self.held);
            let mut keep = Vec::with_capacity(if overflow { 0 } else { held.len() });
            for sample in held {
                let t = sample.time_ns.unwrap_or(0);
                if overflow || t < horizon {
                    self.bin(t).samples.add(SampleKey::of(&sample), sample.weight);
                } else {
                    keep.push(sample);
                }
            }
            self.held = keep;
        }
        // Slices change width only as the history grows or ages past the recent span:
        // once per history cell is often enough.
        if latest >= self.compacted_at.saturating_add(self.history_width())
            || self.slices.len() > 2 * (self.policy.max_history + self.policy.max_recent)
        {
            self.compact();
            self.compacted_at = latest;
        }
    }

    /// Bin everything held (the session ended: nothing more will cut).
    pub fn seal(&mut self) {
        let held = std::mem::take(&mut self.held);
        for sample in held {
            let t = sample.time_ns.unwrap_or(0);
            self.bin(t).samples.add(SampleKey::of(&sample), sample.weight);
        }
        self.compact();
    }

    /// The smallest grid width (base × 2^k) at least `span / slices`.
    fn width_for(&self, span: u64, slices: usize) -> u64 {
        let want = span.div_ceil(slices.max(1) as u64).max(1);
        let mut w = self.policy.base_ns.max(1);
        while w < want {
            w = w.saturating_mul(2);
        }
        w
    }

    fn history_width(&self) -> u64 {
        let span = match self.time_range() {
            Some((first, latest)) => latest.saturating_sub(first).saturating_add(1),
            None => 0,
        };
        self.width_for(span, self.policy.max_history)
    }

    /// The recent span's width; without one (a batch read) as wide as the history.
    fn recent_width(&self) -> u64 {
        if self.policy.recent_ns == 0 {
            return self.history_width();
        }
        self.width_for(self.policy.recent_ns, self.policy.max_recent)
            .min(self.history_width())
    }

    /// The data of the slice holding `t` (past [`LAST_NS`]: the one holding it), made if
    /// there is none.
    fn bin(&mut self, t: u64) -> &mut SliceData {
        let t = t.min(LAST_NS);
        let after = self.slices.partition_point(|s| s.start_ns <= t);
        if after > 0 && self.slices[after - 1].end_ns > t {
            return &mut self.slices[after - 1].data;
        }
        let width = self.recent_width();
        let cell_start = t - t % width;
        let mut start = cell_start;
        let mut end = cell_start.saturating_add(width);
        if after > 0 {
            start = start.max(self.slices[after - 1].end_ns);
        }
        if let Some(next) = self.slices.get(after) {
            end = end.min(next.start_ns);
        }
        if let Some(&cut) = self.cuts.range(..=t).next_back() {
            start = start.max(cut);
        }
        if let Some(&cut) = self.cuts.range(t + 1..).next() {
            end = end.min(cut);
        }
        self.slices.insert(
            after,
            Slice {
                start_ns: start,
                end_ns: end.max(t + 1),
                data: SliceData::default(),
            },
        );
        &mut self.slices[after].data
    }

    /// Merge neighbours that share a cell of the width their age allows and no cut.
    fn compact(&mut self) {
        let Some(latest) = self.latest_ns else {
            return;
        };
        let history = self.history_width();
        let recent = self.recent_width();
        let recent_from = latest.saturating_sub(self.policy.recent_ns);
        let slices = std::mem::take(&mut self.slices);
        let mut merged: Vec<Slice> = Vec::with_capacity(slices.len());
        for slice in slices {
            let width = if slice.end_ns > recent_from {
                recent
            } else {
                history
            };
            if let Some(last) = merged.last_mut()
                && last.start_ns / width == slice.start_ns / width
                && slice.end_ns.saturating_sub(1) / width == slice.start_ns / width
                && !self.cut_within(last.start_ns, slice.end_ns)
            {
                last.end_ns = slice.end_ns;
                last.data.absorb(slice.data);
                continue;
            }
            merged.push(slice);
        }
        self.slices = merged;
    }

    /// A cut strictly after `start` and before `end` (an empty span has none: a range
    /// whose start is past its end panics in a BTreeSet).
    fn cut_within(&self, start: u64, end: u64) -> bool {
        let from = start.saturating_add(1);
        from < end && self.cuts.range(from..end).next().is_some()
    }

    /// Make `t` a boundary no slice will straddle; returns the boundary it became (`t`, or
    /// an edge of an older slice that already spans it: the nearer one, or with `after`
    /// the end — a reset must leave behind everything already there).
    pub fn cut(&mut self, t: u64, after: bool) -> u64 {
        let next = self.slices.partition_point(|s| s.start_ns <= t);
        let at = match next.checked_sub(1).map(|i| &self.slices[i]) {
            Some(s) if s.start_ns < t && t < s.end_ns => {
                if !after && t - s.start_ns <= s.end_ns - t {
                    s.start_ns
                } else {
                    s.end_ns
                }
            }
            _ => t,
        };
        self.cuts.insert(at);
        at
    }

    /// `t` no longer needs to be a boundary.
    pub fn release_cut(&mut self, t: u64) {
        self.cuts.remove(&t);
    }

    /// Every sample count with where it lies relative to `window`.
    pub fn visit(&self, window: &TimeWindow, visit: &mut dyn FnMut(Visited)) {
        for slice in &self.slices {
            let position = window.position(Some(slice.start_ns));
            for (key, weight) in slice.data.samples.iter() {
                visit(Visited {
                    key,
                    weight,
                    position,
                    end_ns: Some(slice.end_ns),
                });
            }
        }
        for sample in &self.held {
            visit(Visited {
                key: SampleKey::of(sample),
                weight: sample.weight,
                position: window.position(sample.time_ns),
                end_ns: sample.time_ns.map(|t| t.saturating_add(1)),
            });
        }
        for (key, weight) in self.untimed.samples.iter() {
            visit(Visited {
                key,
                weight,
                position: WindowPosition::Inside,
                end_ns: None,
            });
        }
    }

    /// Every slice's analysis rows with where the slice lies relative to `window` and its
    /// end; the untimed rows last (inside every window).
    pub fn visit_analysis(
        &self,
        window: &TimeWindow,
        visit: &mut dyn FnMut(&SliceData, WindowPosition, Option<u64>),
    ) {
        for slice in &self.slices {
            if slice.data.analysis.is_some() || slice.data.events > 0 {
                visit(
                    &slice.data,
                    window.position(Some(slice.start_ns)),
                    Some(slice.end_ns),
                );
            }
        }
        if self.untimed.analysis.is_some() || self.untimed.events > 0 {
            visit(&self.untimed, WindowPosition::Inside, None);
        }
    }

    /// Bytes the store holds on the heap (slices, their counts and rows, held samples).
    pub fn heap_bytes(&self) -> usize {
        self.slices.capacity() * std::mem::size_of::<Slice>()
            + self.slices.iter().map(|s| s.data.heap_bytes()).sum::<usize>()
            + self.held.capacity() * std::mem::size_of::<Sample>()
            + self.untimed.heap_bytes()
    }

    /// Distinct (slice, key) entries kept: what memory grows with.
    pub fn entries(&self) -> usize {
        self.slices.iter().map(|s| s.data.samples.len()).sum::<usize>()
            + self.held.len()
            + self.untimed.samples.len()
    }
}

#[cfg(test)]
mod tests;
