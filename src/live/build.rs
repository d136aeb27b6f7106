//! Building a snapshot from the model state under the live mode: which samples count
//! (reset point, selection, sliding window), with which weight (decay), and the derived
//! tries, hotspots, timeline and instance split.

use std::sync::Arc;

use crate::model::instances::split_samples_by_instance;
use crate::model::selection::SelectionMatcher;
use crate::model::{FrameTable, Hotspots, Profile, Selection, StackTrie, TimeWindow, Timeline, TrieOrder};

use super::aggregate::Aggregate;
use super::snapshot::{LiveMode, Snapshot, TIMELINE_SLICES, slices_of};
use super::state::ModelState;

/// What the views currently need beyond the forward trie.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Wants {
    pub inverted: bool,
    pub instances: bool,
}

/// One of the two accumulating aggregates and how far it has read.
#[derive(Default)]
struct Buffer {
    aggregate: Aggregate,
    cursor: usize,
    version: u64,
}

/// The view-independent state of snapshot building, kept between refreshes so live
/// updates are incremental.
pub struct SnapshotBuilder {
    pub selection: Selection,
    pub mode: LiveMode,
    pub wants: Wants,
    /// Samples before this index were reset away (kept for exports of the whole run).
    pub base_index: usize,
    /// Bumped whenever the selection, mode or base changes: the aggregates restart.
    version: u64,
    /// Two aggregates used in turn: while the views hold the trie of one, the other is
    /// brought up to date in place — no copy of a huge trie per refresh.
    buffers: [Buffer; 2],
    next_buffer: usize,
    /// Samples already added to the decayed weights.
    cursor: usize,
    decay_version: u64,
    decayed: Vec<f64>,
    frames: Option<(usize, Arc<FrameTable>)>,
    generation: u64,
    /// The whole run's timeline, grown sample by sample (`cursor` = samples in it).
    timeline: Option<(Timeline, usize)>,
}

impl SnapshotBuilder {
    pub fn new(selection: Selection, mode: LiveMode) -> Self {
        Self {
            selection,
            mode,
            wants: Wants::default(),
            base_index: 0,
            version: 1,
            buffers: [Buffer::default(), Buffer::default()],
            next_buffer: 0,
            cursor: 0,
            decay_version: 0,
            decayed: Vec::new(),
            frames: None,
            generation: 0,
            timeline: None,
        }
    }

    /// Something that changes which samples count: start over at the next build.
    pub fn invalidate(&mut self) {
        self.version += 1;
    }

    pub fn set_selection(&mut self, selection: Selection) {
        self.selection = selection;
        self.invalidate();
    }

    pub fn set_mode(&mut self, mode: LiveMode) {
        self.mode = mode;
        self.invalidate();
    }

    /// Count from now on; what was recorded stays in the profile.
    pub fn reset(&mut self, samples_so_far: usize) {
        self.base_index = samples_so_far;
        self.invalidate();
    }

    /// The window a sliding mode looks at right now, intersected with the selection's.
    pub fn effective_window(&self, profile: &Profile) -> TimeWindow {
        match self.mode {
            LiveMode::Sliding { seconds } => {
                let latest = profile.samples().iter().rev().find_map(|s| s.time_ns);
                let span = (seconds.max(0.0) * 1e9) as u64;
                let start = latest.map(|t| t.saturating_sub(span));
                self.selection.window.intersect(&TimeWindow::new(start, None))
            }
            _ => self.selection.window,
        }
    }

    fn matcher(&self, profile: &Profile) -> SelectionMatcher {
        let mut selection = self.selection.clone();
        selection.window = self.effective_window(profile);
        selection.matcher(profile)
    }

    /// The next snapshot of `state`.
    pub fn build(&mut self, state: &ModelState) -> Snapshot {
        let profile = &state.profile;
        let matcher = self.matcher(profile);
        let samples = profile.samples();
        let base = self.base_index.min(samples.len());

        let (trie, hotspots, per_stack): (Arc<StackTrie>, Hotspots, Vec<u64>) = match self.mode {
            LiveMode::Accumulate => {
                let version = self.version;
                let buffer = &mut self.buffers[self.next_buffer];
                self.next_buffer = 1 - self.next_buffer;
                if buffer.version != version || buffer.cursor > samples.len() {
                    *buffer = Buffer {
                        version,
                        cursor: base,
                        ..Buffer::default()
                    };
                }
                for s in &samples[buffer.cursor..] {
                    if matcher.selects(s) {
                        buffer.aggregate.add(profile, s.stack, s.weight);
                    }
                }
                buffer.cursor = samples.len();
                let agg = &buffer.aggregate;
                let per_stack = if self.wants.inverted {
                    agg.per_stack().to_vec()
                } else {
                    Vec::new()
                };
                (agg.shared_trie(), agg.hotspots(&profile.frames), per_stack)
            }
            LiveMode::Sliding { .. } => {
                let mut per_stack = vec![0u64; profile.stacks.len()];
                for s in samples[base..].iter().filter(|s| matcher.selects(s)) {
                    per_stack[s.stack.index()] += s.weight;
                }
                let trie = StackTrie::from_stack_weights(profile, &per_stack, TrieOrder::RootFirst);
                let hotspots = Hotspots::from_trie(&trie, &profile.frames);
                (Arc::new(trie), hotspots, per_stack)
            }
            LiveMode::Decay { factor } => {
                if self.decay_version != self.version || self.cursor > samples.len() {
                    self.decayed.clear();
                    self.decay_version = self.version;
                    self.cursor = base;
                }
                let factor = factor.clamp(0.0, 1.0);
                self.decayed.iter_mut().for_each(|w| *w *= factor);
                self.decayed.resize(profile.stacks.len(), 0.0);
                for s in samples[self.cursor..].iter().filter(|s| matcher.selects(s)) {
                    self.decayed[s.stack.index()] += s.weight as f64;
                }
                self.cursor = samples.len();
                let per_stack: Vec<u64> = self.decayed.iter().map(|w| w.round() as u64).collect();
                let trie = StackTrie::from_stack_weights(profile, &per_stack, TrieOrder::RootFirst);
                let hotspots = Hotspots::from_trie(&trie, &profile.frames);
                (Arc::new(trie), hotspots, per_stack)
            }
        };

        let inverted = self.wants.inverted.then(|| {
            let t = StackTrie::from_stack_weights(profile, &per_stack, TrieOrder::LeafFirst);
            t.build_index();
            Arc::new(t)
        });
        // Views re-find their selection by path hash at every snapshot: build the index
        // here, off the UI thread (a clone of the aggregate's trie already has it).
        trie.build_index();
        let instances = if self.wants.instances {
            let selected = samples[base..].iter().filter(|s| matcher.selects(s));
            slices_of(profile, split_samples_by_instance(profile, selected))
        } else {
            Vec::new()
        };
        let frames = match &self.frames {
            Some((len, arc)) if *len == profile.frames.len() => arc.clone(),
            _ => {
                let arc = Arc::new(profile.frames.clone());
                self.frames = Some((profile.frames.len(), arc.clone()));
                arc
            }
        };
        self.generation += 1;
        let mut selection = self.selection.clone();
        selection.window = self.effective_window(profile);
        let mut stats = state.stats.clone();
        stats.samples = samples.len() as u64;
        if stats.warnings.is_empty() {
            stats.warnings = state.warnings.clone();
        }
        Snapshot {
            generation: self.generation,
            frames,
            trie,
            inverted,
            hotspots: Arc::new(hotspots),
            timeline: self
                .grow_timeline(state)
                .or_else(|| state.event_timeline.clone().map(Arc::new)),
            instances: Arc::new(instances),
            instance_labels: Arc::new(super::snapshot::instance_labels(profile)),
            histograms: Arc::new(state.histograms.clone()),
            tables: Arc::new(state.tables.clone()),
            console: Arc::new(state.console.clone()),
            selection,
            markers: state.markers,
            time_origin_ns: state.time_origin_ns,
            mode: self.mode,
            stats,
        }
    }

    /// The run's timeline with the samples that arrived since the last build.
    fn grow_timeline(&mut self, state: &ModelState) -> Option<Arc<Timeline>> {
        let samples = state.profile.samples();
        if self
            .timeline
            .as_ref()
            .is_some_and(|(_, cursor)| *cursor > samples.len())
        {
            self.timeline = None;
        }
        if self.timeline.is_none() {
            let first = samples.iter().find_map(|s| s.time_ns)?;
            self.timeline = Some((Timeline::growing(first, TIMELINE_SLICES, state.markers), 0));
        }
        let (timeline, cursor) = self.timeline.as_mut()?;
        for s in &samples[*cursor..] {
            if let Some(t) = s.time_ns {
                timeline.add(t, s.weight, TIMELINE_SLICES);
            }
        }
        *cursor = samples.len();
        timeline.markers = state.markers;
        Some(Arc::new(timeline.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::profile::test_support::profile_from;
    use crate::model::{Focus, NodeId, Sample};

    fn state(samples: &[(&[&str], u64, Option<u64>)]) -> ModelState {
        ModelState {
            profile: profile_from(samples),
            ..ModelState::default()
        }
    }

    fn push(state: &mut ModelState, frames: &[&str], time_ns: u64) {
        let stack = state.profile.intern_named_stack(frames);
        let instance = state.profile.samples()[0].instance;
        state.profile.push_sample(Sample {
            time_ns: Some(time_ns),
            instance,
            weight: 1,
            stack,
            meta: Default::default(),
        });
    }

    #[test]
    fn accumulate_double_buffers_without_copying_the_trie() {
        let mut st = state(&[(&["a", "b"], 1, Some(1)), (&["a", "c"], 2, Some(2))]);
        let mut b = SnapshotBuilder::new(Selection::all(), LiveMode::Accumulate);
        let s1 = b.build(&st);
        let first = Arc::as_ptr(&s1.trie);
        push(&mut st, &["a", "b"], 3);
        push(&mut st, &["a", "d"], 4);
        let s2 = b.build(&st);
        assert_eq!((s1.trie.total_weight(), s2.trie.total_weight()), (3, 5));
        // The views drop s1 when s2 arrives; s3 reuses s1's trie in place.
        drop(s1);
        push(&mut st, &["a", "c"], 5);
        let s3 = b.build(&st);
        assert_eq!(Arc::as_ptr(&s3.trie), first);
        assert_eq!(s3.trie.total_weight(), 6);
        assert_eq!(s2.trie.total_weight(), 5, "a published snapshot never changes");
        let c = s3.frames.get("c").unwrap();
        assert_eq!(s3.hotspots.get(c).unwrap().self_weight, 3);
    }

    #[test]
    fn sliding_decay_reset_and_focus_change_what_counts() {
        let mut st = state(&[
            (&["a", "b"], 1, Some(1_000_000_000)),
            (&["a", "c"], 1, Some(5_000_000_000)),
            (&["a", "c"], 1, Some(9_000_000_000)),
        ]);
        let mut b = SnapshotBuilder::new(Selection::all(), LiveMode::Sliding { seconds: 5.0 });
        // Last sample at 9 s: the window is [4 s, ∞).
        assert_eq!(b.build(&st).trie.total_weight(), 2);
        b.set_mode(LiveMode::Decay { factor: 0.5 });
        assert_eq!(b.build(&st).trie.total_weight(), 3);
        // Each refresh halves old weight: 3 → 1.5 (rounded per stack: b 0.5→1? c 1→1).
        let s = b.build(&st);
        assert_eq!(s.trie.total_weight(), 2, "b: 0.5 rounds to 1, c: 1.0");
        b.set_mode(LiveMode::Accumulate);
        b.reset(st.profile.samples().len());
        assert_eq!(b.build(&st).trie.total_weight(), 0);
        push(&mut st, &["a", "b"], 10_000_000_000);
        assert_eq!(b.build(&st).trie.total_weight(), 1);
        b.reset(0);
        b.set_selection(Selection::all().with_focus(Some(Focus::new("^c$").unwrap())));
        b.wants = Wants {
            inverted: true,
            instances: true,
        };
        let s = b.build(&st);
        assert_eq!(s.trie.total_weight(), 2);
        let inverted = s.inverted.as_ref().unwrap();
        let leaf = inverted.children(NodeId::ROOT).next().unwrap();
        assert_eq!(s.frames.name(inverted.node(leaf).frame().unwrap()), "c");
        assert_eq!(s.instances.len(), 1);
        assert_eq!(s.instances[0].trie.total_weight(), 2);
    }
}
