//! The ranked rows every report shares: top functions and top stacks of a view.

use crate::model::HotspotSort;
use crate::model::hotspots::percent;

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
    let mut hotspots = (*view.hotspots).clone();
    hotspots.sort_by(HotspotSort::SelfWeight, &view.tables.frames);
    hotspots
        .rows
        .iter()
        .take(top)
        .map(|h| FunctionRow {
            name: view.tables.frames.name(h.frame).to_string(),
            self_weight: h.self_weight,
            self_percent: hotspots.percent(h.self_weight),
            total_weight: h.total_weight,
            total_percent: hotspots.percent(h.total_weight),
            occurrences: h.occurrences,
            occurrence_percent: hotspots.occurrence_percent(h.occurrences),
        })
        .collect()
}

/// The `top` call paths by the weight that ends on them (ties in path order).
pub fn stack_rows(view: &ExportView<'_>, top: usize) -> Vec<StackRow> {
    let total = view.trie.total_weight();
    let folded = view.folded();
    let mut order: Vec<usize> = (0..folded.len()).collect();
    // A stable sort keeps the name order among equal weights.
    order.sort_by_key(|&i| std::cmp::Reverse(view.trie.node(folded[i].0).self_weight));
    order
        .into_iter()
        .take(top)
        .map(|i| {
            let (node, line) = &folded[i];
            let weight = view.trie.node(*node).self_weight;
            let stack = line
                .rsplit_once(' ')
                .map_or(line.as_str(), |(s, _)| s)
                .to_string();
            StackRow {
                stack,
                weight,
                percent: percent(weight, total),
            }
        })
        .collect()
}

/// Round to 4 decimals, as the reference harness rounds percentages.
pub fn round4(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Selection;
    use crate::model::sample_list::test_support::profile_from;

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
