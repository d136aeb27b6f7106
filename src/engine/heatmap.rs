//! The latency heatmap of a selection, from the slice store's per-slice analysis rows:
//! each slice's latency histograms land in the column of its time, so the window (and the
//! sliding mode, which is a window) picks the columns as it picks the tables' rows.

use crate::model::analysis::AnalysisRows;
use crate::model::heatmap::{LatencyHeatmap, MAX_HEAT_COLUMNS};
use crate::model::window::{TimeWindow, WindowPosition};

use super::state::ModelState;

/// The heatmap of the latency rows inside `window`; `None` for other analyses, for rows of
/// different units (num-dist of a duration and a plain number: one axis cannot hold
/// both), or before a timed latency row exists.
pub fn latency_heatmap(state: &ModelState, window: &TimeWindow) -> Option<LatencyHeatmap> {
    state.analysis.as_ref()?.schema.shared_unit()?;
    // A slice counts at its last instant (the store reports slice ends). Two passes: the
    // visit lends each slice only for the call, and the columns need the span first.
    let (mut first, mut last, mut slices) = (u64::MAX, 0u64, 0usize);
    state.store.visit_analysis(window, &mut |data, position, end_ns| {
        if let (WindowPosition::Inside, Some(end), Some(AnalysisRows::Latency(rows))) =
            (position, end_ns, &data.analysis)
            && !rows.rows.is_empty()
        {
            first = first.min(end.saturating_sub(1));
            last = last.max(end.saturating_sub(1));
            slices += 1;
        }
    });
    if slices == 0 {
        return None;
    }
    let start = window.start_ns.map_or(first, |s| s.min(first));
    let end = window.stop_ns.map_or(last + 1, |s| s.max(last + 1));
    // One column per slice until there are too many: sparse columns would look striped.
    let mut map = LatencyHeatmap::new(start, end, slices.min(MAX_HEAT_COLUMNS));
    state.store.visit_analysis(window, &mut |data, position, end_ns| {
        if let (WindowPosition::Inside, Some(end), Some(AnalysisRows::Latency(rows))) =
            (position, end_ns, &data.analysis)
        {
            for stats in rows.rows.values() {
                map.add(end.saturating_sub(1), &stats.histogram);
            }
        }
    });
    Some(map)
}
