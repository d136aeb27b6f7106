//! Exports: every artifact is written from the model — sample counts seen through a
//! selection, an analysis's rows — so what a view shows and what a file holds are the same
//! numbers.
//!
//! - [`layout`]: where artifacts go (`<out>/perf/<arch>/latest/…`, the reference layout).
//! - [`folded`], [`svg`], [`pprof`]: stacks for flamegraph tools.
//! - [`stats`]: resolve statistics and the stack-depth summary.
//! - [`tables`] (ranked rows), [`hotspots_csv`], [`categories`], [`report`]: tables and reports.
//! - [`analysis`]: an analysis's tables (perf-prof text, CSV, JSON) and distributions;
//!   [`offenders`] its `--than` pairs and [`heatmap_csv`] its latency heatmap.

pub mod analysis;
pub mod analysis_table;
pub mod artifacts;
pub mod categories;
pub mod clock;
pub mod fix_candidates;
pub mod flamegraph_lines;
pub mod folded;
pub mod heatmap_csv;
pub mod hotspots_csv;
pub mod layout;
pub mod offenders;
pub mod pprof;
pub mod report;
pub mod run_metrics;
pub mod stage;
pub mod stats;
pub mod svg;
pub mod svg_names;
pub mod tables;
pub mod write;

use std::cell::OnceCell;
use std::sync::Arc;

use crate::model::aggregate::{Aggregate, Wants};
use crate::model::selection::SampleSource;
use crate::model::{Hotspots, InstanceId, NodeId, ProfileTables, Selection, StackId, StackTrie};

use stats::ResolveStats;

/// Sample counts seen through a selection, with the trie, the hotspots and the resolve
/// statistics derived once, through the same builder the views use.
pub struct ExportView<'a> {
    pub tables: &'a ProfileTables,
    pub selection: Selection,
    pub trie: Arc<StackTrie>,
    pub hotspots: Arc<Hotspots>,
    /// Selected weight per (stack, instance), sorted (pprof's samples).
    pub per_instance: Vec<(StackId, InstanceId, u64)>,
    pub stats: ResolveStats,
    /// Earliest and latest sample time of the whole input.
    pub time_range_ns: Option<(u64, u64)>,
    folded: OnceCell<Vec<(NodeId, String)>>,
}

impl<'a> ExportView<'a> {
    pub fn new(source: &'a dyn SampleSource, selection: Selection) -> Self {
        let tables = source.tables();
        let mut selected: rustc_hash::FxHashMap<(StackId, InstanceId), u64> = Default::default();
        let mut stats = stats::StatsBuilder::new(tables, &selection.window);
        selection.classify(source, &mut |counted, verdict| {
            stats.count(&counted, verdict);
            if verdict == crate::model::selection::Verdict::Selected {
                let w = selected
                    .entry((counted.key.stack, counted.key.instance))
                    .or_default();
                *w = w.saturating_add(counted.weight);
            }
        });
        let aggregate = Aggregate::from_counts(tables, selected.into_iter().map(|((s, i), w)| (s, i, w)));
        let view = aggregate.view(tables, Wants::default());
        let mut per_instance: Vec<(StackId, InstanceId, u64)> = aggregate.per_instance().collect();
        per_instance.sort_unstable_by_key(|&(s, i, _)| (s, i));
        Self {
            tables,
            selection,
            trie: view.trie,
            hotspots: view.hotspots,
            per_instance,
            stats: stats.finish(),
            time_range_ns: source.time_range_ns(),
            folded: OnceCell::new(),
        }
    }

    /// Every folded line with its node, in name order (computed once; the folded file,
    /// the stack tables and the reports share it).
    pub fn folded(&self) -> &[(NodeId, String)] {
        self.folded
            .get_or_init(|| folded::folded_stacks(&self.trie, &self.tables.frames, 0))
    }

    /// Total selected weight (samples, for qperf).
    pub fn total_weight(&self) -> u64 {
        self.trie.total_weight()
    }
}

pub use write::{ExportError, write_file, write_with};
