//! Building a snapshot from the model state under the live mode: which samples count
//! (reset point, selection, sliding window), with which weight (decay), and the derived
//! tries, hotspots, timeline and instance split.

use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::model::selection::SelectionMatcher;
use crate::model::{
    FrameTable, Hotspots, InstanceId, Profile, Selection, StackId, StackTrie, TimeWindow, Timeline, TrieOrder,
};

use super::aggregate::Aggregate;
use super::snapshot::{InstanceSlice, LiveMode, Snapshot, TIMELINE_SLICES};
use super::state::ModelState;

/// What the views currently need beyond the forward trie.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Wants {
    pub inverted: bool,
    pub instances: bool,
}

/// The view-independent state of snapshot building, kept between refreshes so live
/// updates are incremental.
pub struct SnapshotBuilder {
    pub selection: Selection,
    pub mode: LiveMode,
    pub wants: Wants,
    /// Samples before this index were reset away (kept for exports of the whole run).
    pub base_index: usize,
    /// Bumped whenever the selection, mode or base changes: the aggregate restarts.
    version: u64,
    aggregate: Aggregate,
    aggregate_version: u64,
    /// Samples already added to the aggregate / decayed weights.
    cursor: usize,
    decayed: Vec<f64>,
    frames: Option<(usize, Arc<FrameTable>)>,
    generation: u64,
}

impl SnapshotBuilder {
    pub fn new(selection: Selection, mode: LiveMode) -> Self {
        Self {
            selection,
            mode,
            wants: Wants::default(),
            base_index: 0,
            version: 1,
            aggregate: Aggregate::new(),
            aggregate_version: 0,
            cursor: 0,
            decayed: Vec::new(),
            frames: None,
            generation: 0,
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

        let (trie, hotspots, per_stack): (StackTrie, Hotspots, Vec<u64>) = match self.mode {
            LiveMode::Accumulate => {
                if self.aggregate_version != self.version || self.cursor > samples.len() {
                    self.aggregate = Aggregate::new();
                    self.aggregate_version = self.version;
                    self.cursor = base;
                }
                for s in &samples[self.cursor..] {
                    if matcher.selects(s) {
                        self.aggregate.add(profile, s.stack, s.weight);
                    }
                }
                self.cursor = samples.len();
                (
                    self.aggregate.trie().clone(),
                    self.aggregate.hotspots(&profile.frames),
                    self.aggregate.per_stack().to_vec(),
                )
            }
            LiveMode::Sliding { .. } => {
                let mut per_stack = vec![0u64; profile.stacks.len()];
                for s in samples[base..].iter().filter(|s| matcher.selects(s)) {
                    per_stack[s.stack.index()] += s.weight;
                }
                let trie = StackTrie::from_stack_weights(profile, &per_stack, TrieOrder::RootFirst);
                let hotspots = Hotspots::from_trie(&trie, &profile.frames);
                (trie, hotspots, per_stack)
            }
            LiveMode::Decay { factor } => {
                if self.aggregate_version != self.version || self.cursor > samples.len() {
                    self.decayed.clear();
                    self.aggregate_version = self.version;
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
                (trie, hotspots, per_stack)
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
            self.instance_slices(profile, &matcher, base)
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
            trie: Arc::new(trie),
            inverted,
            hotspots: Arc::new(hotspots),
            timeline: Timeline::build(profile, TIMELINE_SLICES, state.markers).map(Arc::new),
            instances: Arc::new(instances),
            instance_labels: Arc::new(super::snapshot::instance_labels(profile)),
            histograms: Arc::new(state.histograms.clone()),
            console: Arc::new(state.console.clone()),
            selection,
            markers: state.markers,
            mode: self.mode,
            stats,
        }
    }

    /// One pass over the samples, one trie per instance that has selected samples.
    fn instance_slices(
        &self,
        profile: &Profile,
        matcher: &SelectionMatcher,
        base: usize,
    ) -> Vec<InstanceSlice> {
        let mut by_instance: FxHashMap<InstanceId, FxHashMap<StackId, u64>> = FxHashMap::default();
        for s in profile.samples()[base..].iter().filter(|s| matcher.selects(s)) {
            *by_instance
                .entry(s.instance)
                .or_default()
                .entry(s.stack)
                .or_default() += s.weight;
        }
        let mut ids: Vec<InstanceId> = by_instance.keys().copied().collect();
        ids.sort();
        ids.into_iter()
            .map(|id| {
                let trie = StackTrie::from_stack_list(
                    profile,
                    by_instance[&id].iter().map(|(&s, &w)| (s, w)),
                    TrieOrder::RootFirst,
                );
                let hotspots = Hotspots::from_trie(&trie, &profile.frames);
                InstanceSlice {
                    id,
                    label: profile.instance_info(id).label.clone(),
                    trie: Arc::new(trie),
                    hotspots: Arc::new(hotspots),
                }
            })
            .collect()
    }
}
