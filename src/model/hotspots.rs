//! Hotspot ranking: self and total weight per function, each counted once per sample.
//!
//! *Self* is the weight of samples whose leaf frame is the function. *Total* is the weight
//! of samples whose stack contains the function anywhere — recursion counts once per
//! sample. The reference analyzer instead counts every frame occurrence (recursion and
//! inline levels again) over the total number of frames; that number is kept as
//! `occurrences` for compatibility with scripts that read it.

use super::frames::{FrameId, FrameTable};
use super::trie::{NodeId, StackTrie};

/// One function's weights.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Hotspot {
    pub frame: FrameId,
    pub self_weight: u64,
    pub total_weight: u64,
    /// Frame occurrences, counted the reference analyzer's way.
    pub occurrences: u64,
}

/// Column a hotspot table is sorted by.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum HotspotSort {
    #[default]
    SelfWeight,
    TotalWeight,
    Occurrences,
    Name,
}

/// All functions of a trie with their weights.
#[derive(Clone, Debug, Default)]
pub struct Hotspots {
    pub rows: Vec<Hotspot>,
    /// Total weight of all samples (the denominator of self % and total %).
    pub total_weight: u64,
    /// Total frame occurrences (the denominator of the compatibility percentage).
    pub total_occurrences: u64,
}

impl Hotspots {
    /// Rank every function of `trie`; rows come sorted by self weight.
    pub fn from_trie(trie: &StackTrie, frames: &FrameTable) -> Self {
        let n = frames.len();
        let mut self_w = vec![0u64; n];
        let mut occurrences = vec![0u64; n];
        let mut total_occurrences = 0u64;
        for id in trie.ids() {
            let node = trie.node(id);
            if let Some(f) = node.frame() {
                // Saturating: occurrences are frames × samples, which passes u64 for a
                // deep stack of a huge count (a folded file may hold up to 2^63 - 1).
                self_w[f.index()] = self_w[f.index()].saturating_add(node.self_weight);
                // Every sample through a node is one occurrence of its frame.
                occurrences[f.index()] = occurrences[f.index()].saturating_add(node.total_weight);
                total_occurrences = total_occurrences.saturating_add(node.total_weight);
            }
        }
        let identity: Vec<u32> = (0..n as u32).collect();
        let total_w = totals_by_key(trie, &identity, n);

        let mut rows: Vec<Hotspot> = frames
            .ids()
            .filter(|f| occurrences[f.index()] > 0)
            .map(|frame| Hotspot {
                frame,
                self_weight: self_w[frame.index()],
                total_weight: total_w[frame.index()],
                occurrences: occurrences[frame.index()],
            })
            .collect();
        sort_rows(&mut rows, HotspotSort::SelfWeight, frames);
        Self {
            rows,
            total_weight: trie.total_weight(),
            total_occurrences,
        }
    }

    /// Rows from per-frame weights kept elsewhere (a live aggregate): `self_w[frame]`,
    /// `total_w[frame]` (once per sample), `occurrences[frame]`; frames beyond a vector's
    /// length weigh 0.
    pub fn from_frame_weights(
        frames: &FrameTable,
        self_w: &[u64],
        total_w: &[u64],
        occurrences: &[u64],
        total_weight: u64,
    ) -> Self {
        let at = |v: &[u64], i: usize| v.get(i).copied().unwrap_or(0);
        let mut rows: Vec<Hotspot> = frames
            .ids()
            .filter(|f| at(occurrences, f.index()) > 0)
            .map(|frame| Hotspot {
                frame,
                self_weight: at(self_w, frame.index()),
                total_weight: at(total_w, frame.index()),
                occurrences: at(occurrences, frame.index()),
            })
            .collect();
        sort_rows(&mut rows, HotspotSort::SelfWeight, frames);
        Self {
            rows,
            total_weight,
            total_occurrences: occurrences.iter().fold(0u64, |a, &b| a.saturating_add(b)),
        }
    }

    pub fn sort_by(&mut self, column: HotspotSort, frames: &FrameTable) {
        sort_rows(&mut self.rows, column, frames);
    }

    /// Percentage of all sample weight.
    pub fn percent(&self, weight: u64) -> f64 {
        percent(weight, self.total_weight)
    }

    /// The reference analyzer's percentage: occurrences over all frame occurrences.
    pub fn occurrence_percent(&self, occurrences: u64) -> f64 {
        percent(occurrences, self.total_occurrences)
    }

    pub fn get(&self, frame: FrameId) -> Option<&Hotspot> {
        self.rows.iter().find(|r| r.frame == frame)
    }
}

/// Weight of the samples whose stack contains each key, counted once per sample however
/// often the key repeats on the stack (recursion). `key_of[frame]` maps a frame to its key
/// (`u32::MAX` for none), so functions, or groups of names, can be counted alike.
pub fn totals_by_key(trie: &StackTrie, key_of: &[u32], keys: usize) -> Vec<u64> {
    let mut totals = vec![0u64; keys];
    let mut on_path = vec![0u32; keys];
    // Depth-first, counting each key on the current path: a node adds to its key's total
    // only when the key is not already an ancestor.
    let mut stack: Vec<(NodeId, bool)> = trie.children(NodeId::ROOT).map(|c| (c, false)).collect();
    while let Some((id, leaving)) = stack.pop() {
        let node = trie.node(id);
        let Some(frame) = node.frame() else { continue };
        let key = key_of[frame.index()];
        if key == u32::MAX {
            if !leaving {
                stack.extend(trie.children(id).map(|c| (c, false)));
            }
            continue;
        }
        let k = key as usize;
        if leaving {
            on_path[k] -= 1;
            continue;
        }
        if on_path[k] == 0 {
            totals[k] += node.total_weight;
        }
        on_path[k] += 1;
        stack.push((id, true));
        stack.extend(trie.children(id).map(|c| (c, false)));
    }
    totals
}

pub fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

fn sort_rows(rows: &mut [Hotspot], column: HotspotSort, frames: &FrameTable) {
    // Ties break on the other weights and then on the name, so the order is total.
    rows.sort_by(|a, b| {
        let by_name = || frames.name(a.frame).cmp(frames.name(b.frame));
        match column {
            HotspotSort::SelfWeight => b
                .self_weight
                .cmp(&a.self_weight)
                .then(b.total_weight.cmp(&a.total_weight))
                .then_with(by_name),
            HotspotSort::TotalWeight => b
                .total_weight
                .cmp(&a.total_weight)
                .then(b.self_weight.cmp(&a.self_weight))
                .then_with(by_name),
            HotspotSort::Occurrences => b.occurrences.cmp(&a.occurrences).then_with(by_name),
            HotspotSort::Name => by_name(),
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::sample_list::SampleList;
    use crate::model::sample_list::test_support::profile_from;
    use crate::model::selection::Selection;

    fn hotspots(p: &SampleList) -> Hotspots {
        let t = StackTrie::from_selection(p, &Selection::all());
        Hotspots::from_trie(&t, &p.frames)
    }

    fn row<'a>(p: &SampleList, h: &'a Hotspots, name: &str) -> &'a Hotspot {
        h.get(p.frames.get(name).unwrap()).unwrap()
    }

    #[test]
    fn recursion_counts_once_per_sample_in_total() {
        // fib recurses: main;fib;fib;fib;leaf ×2 and main;fib ×1 (self in fib).
        let p = profile_from(&[
            (&["main", "fib", "fib", "fib", "leaf"], 2, None),
            (&["main", "fib"], 1, None),
        ]);
        let h = hotspots(&p);
        assert_eq!(h.total_weight, 3);
        let fib = row(&p, &h, "fib");
        assert_eq!(fib.total_weight, 3, "each sample counts once");
        assert_eq!(fib.self_weight, 1);
        assert_eq!(fib.occurrences, 2 * 3 + 1, "reference counts every frame");
        let leaf = row(&p, &h, "leaf");
        assert_eq!((leaf.self_weight, leaf.total_weight), (2, 2));
        let main = row(&p, &h, "main");
        assert_eq!((main.self_weight, main.total_weight), (0, 3));
        // main 3 + fib 7 + leaf 2 = 12 frame occurrences.
        assert_eq!(h.total_occurrences, 12);
        assert!((h.occurrence_percent(fib.occurrences) - 7.0 * 100.0 / 12.0).abs() < 1e-9);
        assert!((h.percent(fib.total_weight) - 100.0).abs() < 1e-9);
    }

    #[test]
    fn mutual_recursion_counts_each_function_once() {
        let p = profile_from(&[(&["a", "b", "a", "b", "c"], 4, None)]);
        let h = hotspots(&p);
        for name in ["a", "b", "c"] {
            assert_eq!(row(&p, &h, name).total_weight, 4, "{name}");
        }
        assert_eq!(row(&p, &h, "a").occurrences, 8);
    }

    #[test]
    fn rows_sort_by_each_column() {
        let p = profile_from(&[
            (&["main", "x"], 5, None),
            (&["main", "y", "z"], 7, None),
            (&["main", "y"], 1, None),
        ]);
        let mut h = hotspots(&p);
        let names = |h: &Hotspots| -> Vec<String> {
            h.rows
                .iter()
                .map(|r| p.frames.name(r.frame).to_string())
                .collect()
        };
        assert_eq!(names(&h), ["z", "x", "y", "main"]);
        h.sort_by(HotspotSort::TotalWeight, &p.frames);
        assert_eq!(names(&h), ["main", "y", "z", "x"]);
        h.sort_by(HotspotSort::Name, &p.frames);
        assert_eq!(names(&h), ["main", "x", "y", "z"]);
    }
}
