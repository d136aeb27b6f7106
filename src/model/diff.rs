//! The difference between two profiles: per function (self and total, as percentages of
//! each profile's own total, so runs of different length compare) and per call path (for a
//! differential flamegraph).
//!
//! Functions and paths are matched by name — frame ids of two profiles are unrelated —
//! and call paths through their stable path hashes.

use rustc_hash::FxHashMap;

use super::frames::FrameTable;
use super::hotspots::{Hotspots, percent};
use super::trie::{NodeId, StackTrie};

/// One function in both profiles.
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionDelta {
    pub name: String,
    pub self_a: u64,
    pub self_b: u64,
    pub total_a: u64,
    pub total_b: u64,
    pub self_percent_a: f64,
    pub self_percent_b: f64,
    pub total_percent_a: f64,
    pub total_percent_b: f64,
}

impl FunctionDelta {
    /// Change of self share, in percentage points (b − a).
    pub fn self_delta(&self) -> f64 {
        self.self_percent_b - self.self_percent_a
    }

    /// Change of total share, in percentage points (b − a).
    pub fn total_delta(&self) -> f64 {
        self.total_percent_b - self.total_percent_a
    }
}

/// A profile diff: baseline `a`, comparison `b`.
#[derive(Clone, Debug, Default)]
pub struct ProfileDiff {
    /// Sorted by the size of the self change, then of the total change, then by name.
    pub rows: Vec<FunctionDelta>,
    pub total_a: u64,
    pub total_b: u64,
}

/// One call path with its self weight in both profiles, root first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiffStack {
    pub frames: Vec<String>,
    pub weight_a: u64,
    pub weight_b: u64,
}

impl ProfileDiff {
    pub fn between(a: &Hotspots, frames_a: &FrameTable, b: &Hotspots, frames_b: &FrameTable) -> Self {
        let mut by_name: FxHashMap<&str, FunctionDelta> = FxHashMap::default();
        let blank = |name: &str| FunctionDelta {
            name: name.to_string(),
            self_a: 0,
            self_b: 0,
            total_a: 0,
            total_b: 0,
            self_percent_a: 0.0,
            self_percent_b: 0.0,
            total_percent_a: 0.0,
            total_percent_b: 0.0,
        };
        for row in &a.rows {
            let name = frames_a.name(row.frame);
            let d = by_name.entry(name).or_insert_with(|| blank(name));
            d.self_a = row.self_weight;
            d.total_a = row.total_weight;
            d.self_percent_a = percent(row.self_weight, a.total_weight);
            d.total_percent_a = percent(row.total_weight, a.total_weight);
        }
        for row in &b.rows {
            let name = frames_b.name(row.frame);
            let d = by_name.entry(name).or_insert_with(|| blank(name));
            d.self_b = row.self_weight;
            d.total_b = row.total_weight;
            d.self_percent_b = percent(row.self_weight, b.total_weight);
            d.total_percent_b = percent(row.total_weight, b.total_weight);
        }
        let mut rows: Vec<FunctionDelta> = by_name.into_values().collect();
        rows.sort_by(|x, y| {
            y.self_delta()
                .abs()
                .total_cmp(&x.self_delta().abs())
                .then(y.total_delta().abs().total_cmp(&x.total_delta().abs()))
                .then_with(|| x.name.cmp(&y.name))
        });
        Self {
            rows,
            total_a: a.total_weight,
            total_b: b.total_weight,
        }
    }

    /// Rows whose self or total share changed at all.
    pub fn changed(&self) -> impl Iterator<Item = &FunctionDelta> {
        self.rows
            .iter()
            .filter(|r| r.self_delta() != 0.0 || r.total_delta() != 0.0)
    }
}

/// Every call path that ends (has self weight) in either trie, with both weights, sorted
/// by path. This is the input of a differential (red/blue) flamegraph.
pub fn diff_stacks(
    a: &StackTrie,
    frames_a: &FrameTable,
    b: &StackTrie,
    frames_b: &FrameTable,
) -> Vec<DiffStack> {
    let mut out: Vec<DiffStack> = Vec::new();
    let mut index: FxHashMap<u64, usize> = FxHashMap::default();
    for id in a.ids().filter(|&id| id != NodeId::ROOT) {
        let node = a.node(id);
        if node.self_weight > 0 {
            index.insert(node.path_hash, out.len());
            out.push(DiffStack {
                frames: names(a, frames_a, id),
                weight_a: node.self_weight,
                weight_b: 0,
            });
        }
    }
    for id in b.ids().filter(|&id| id != NodeId::ROOT) {
        let node = b.node(id);
        if node.self_weight == 0 {
            continue;
        }
        match index.get(&node.path_hash) {
            Some(&i) => out[i].weight_b = node.self_weight,
            None => out.push(DiffStack {
                frames: names(b, frames_b, id),
                weight_a: 0,
                weight_b: node.self_weight,
            }),
        }
    }
    out.sort_by(|x, y| x.frames.cmp(&y.frames));
    out
}

fn names(trie: &StackTrie, frames: &FrameTable, id: NodeId) -> Vec<String> {
    trie.path(id)
        .into_iter()
        .map(|f| frames.name(f).to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Selection;
    use crate::model::sample_list::SampleList;
    use crate::model::sample_list::test_support::profile_from;

    fn parts(p: &SampleList) -> (StackTrie, Hotspots) {
        let t = StackTrie::from_selection(p, &Selection::all());
        let h = Hotspots::from_trie(&t, &p.frames);
        (t, h)
    }

    #[test]
    fn deltas_are_in_percentage_points_of_each_total() {
        let a = profile_from(&[(&["main", "slow"], 8, None), (&["main", "fast"], 2, None)]);
        let b = profile_from(&[
            (&["main", "slow"], 10, None),
            (&["main", "fast"], 30, None),
            (&["main", "new"], 60, None),
        ]);
        let (ta, ha) = parts(&a);
        let (tb, hb) = parts(&b);
        let d = ProfileDiff::between(&ha, &a.frames, &hb, &b.frames);
        let first = &d.rows[0];
        assert_eq!(first.name, "slow");
        assert!((first.self_delta() - (10.0 - 80.0)).abs() < 1e-9);
        let new = d.rows.iter().find(|r| r.name == "new").unwrap();
        assert_eq!((new.self_a, new.self_b), (0, 60));
        let main = d.rows.iter().find(|r| r.name == "main").unwrap();
        assert_eq!(main.total_delta(), 0.0);
        assert_eq!(d.changed().count(), 3);

        let stacks = diff_stacks(&ta, &a.frames, &tb, &b.frames);
        let simple: Vec<(String, u64, u64)> = stacks
            .iter()
            .map(|s| (s.frames.join(";"), s.weight_a, s.weight_b))
            .collect();
        assert_eq!(
            simple,
            [
                ("main;fast".to_string(), 2, 30),
                ("main;new".to_string(), 0, 60),
                ("main;slow".to_string(), 8, 10)
            ]
        );
    }
}
