//! The ranked rows every report shares: top functions and top stacks of a view.

use crate::model::hotspots::percent;
use crate::model::{HotspotSort, NodeId};

use super::ExportView;

/// A function row: per-sample self and total, plus the reference's occurrence count.
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionRow {
    pub name: String,
    pub self_weight: u64,
    pub self_percent: f64,
    pub total_weight: u64,
    pub total_percent: f64,
    /// Frame occurrences (recursion and inline levels counted again).
    pub occurrences: u64,
    /// Occurrences over all frame occurrences, as the reference reports "percent".
    pub occurrence_percent: f64,
}

/// A stack row: one distinct call path and the weight that ends there.
#[derive(Clone, Debug, PartialEq)]
pub struct StackRow {
    /// Root first, `;`-joined, escaped as in folded files.
    pub stack: String,
    pub weight: u64,
    pub percent: f64,
}

/// The `top` functions ranked by self weight (then total, then name).
pub fn function_rows(view: &ExportView<'_>, top: usize) -> Vec<FunctionRow> {
    let mut hotspots = view.hotspots.clone();
    hotspots.sort_by(HotspotSort::SelfWeight, &view.profile.frames);
    hotspots
        .rows
        .iter()
        .take(top)
        .map(|h| FunctionRow {
            name: view.profile.frames.name(h.frame).to_string(),
            self_weight: h.self_weight,
            self_percent: hotspots.percent(h.self_weight),
            total_weight: h.total_weight,
            total_percent: hotspots.percent(h.total_weight),
            occurrences: h.occurrences,
            occurrence_percent: hotspots.occurrence_percent(h.occurrences),
        })
        .collect()
}

/// The `top` call paths by the weight that ends on them (then by path).
pub fn stack_rows(view: &ExportView<'_>, top: usize) -> Vec<StackRow> {
    let trie = &view.trie;
    let frames = &view.profile.frames;
    let mut rows: Vec<StackRow> = trie
        .ids()
        .filter(|&id| id != NodeId::ROOT && trie.node(id).self_weight > 0)
        .map(|id| {
            let names: Vec<&str> = trie.path(id).into_iter().map(|f| frames.name(f)).collect();
            let line = crate::sources::folded::format_line(&names, 0);
            let stack = line.trim_end_matches(" 0").to_string();
            let weight = trie.node(id).self_weight;
            StackRow {
                stack,
                weight,
                percent: percent(weight, trie.total_weight()),
            }
        })
        .collect();
    rows.sort_by(|a, b| b.weight.cmp(&a.weight).then_with(|| a.stack.cmp(&b.stack)));
    rows.truncate(top);
    rows
}

/// Round to 4 decimals, as the reference harness rounds percentages.
pub fn round4(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Selection;
    use crate::model::profile::test_support::profile_from;

    #[test]
    fn rows_rank_functions_by_self_and_stacks_by_weight() {
        let p = profile_from(&[
            (&["main", "work", "leaf"], 6, None),
            (&["main", "work"], 2, None),
            (&["main", "idle"], 2, None),
        ]);
        let view = ExportView::new(&p, Selection::all());
        let f = function_rows(&view, 2);
        assert_eq!(f.len(), 2);
        assert_eq!(
            (f[0].name.as_str(), f[0].self_weight, f[0].total_weight),
            ("leaf", 6, 6)
        );
        assert_eq!(f[0].self_percent, 60.0);
        // A tie on self breaks on total: work (2 self, 8 total) before idle (2, 2).
        assert_eq!((f[1].name.as_str(), f[1].self_weight), ("work", 2));
        let s = stack_rows(&view, 10);
        assert_eq!(s[0].stack, "main;work;leaf");
        assert_eq!(s[0].percent, 60.0);
        assert_eq!(s.iter().map(|r| r.weight).sum::<u64>(), 10);
        assert_eq!(round4(1.234567), 1.2346);
    }
}
