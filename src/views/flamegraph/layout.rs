//! Flamegraph layout: which trie node gets which columns on which row. Pure arithmetic over
//! a [`StackTrie`] — no terminal, no styles — so the widths can be pinned by unit tests and
//! shared by the full view, the per-instance panes and the mouse hit-test.
//!
//! Decisions, in the order a reader asks about them:
//!
//! - **Zoom.** Row 0 is the zoom root spanning the whole width (the trie root reads "all").
//!   Its ancestors are *omitted* from the grid; the renderer names them in a breadcrumb line
//!   instead, so every row of a small terminal shows the zoomed subtree.
//! - **Rounding.** A parent's columns are split over its children *and its self-weight gap*
//!   by largest-remainder rounding, so children plus gap add up to the parent exactly and
//!   no column drifts to the right edge (flamelens truncates and loses up to one column per
//!   child).
//! - **Sub-cell children.** Children whose exact share is under one column are merged into
//!   one "+N" cell placed after the wide children (before the gap). The group is apportioned
//!   like a child, so it gets columns when its combined share rounds to ≥ 1; when it rounds
//!   to 0 it takes one column from the gap, or else from the widest child that has ≥ 2. It
//!   is dropped only when every column of the parent already belongs to a wide child of
//!   width 1. A group of one is drawn as that child's own frame cell.
//! - **Order.** Wide children come in name order (`children_by_name` order).
//! - **Cost.** Only nodes that get a cell are descended into; the work is the visible cells
//!   plus the children lists of visible cells, never the whole trie (it can have millions of
//!   nodes). Scratch buffers are reused across parents so a layout allocates per row only.

use std::cmp::Ordering;

use crate::model::{FrameTable, NodeId, StackTrie};

/// What a cell shows.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CellKind {
    /// One trie node (`Cell::node` is `Some`).
    Frame,
    /// `count` sub-cell siblings drawn together as "+count" (`Cell::node` is `None`).
    Merged { count: usize, weight: u64 },
}

/// One run of columns on one row.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Cell {
    pub node: Option<NodeId>,
    pub x: u16,
    pub width: u16,
    /// Row of the cell: 0 is the zoom root, 1 its children, and so on.
    pub depth: u16,
    pub kind: CellKind,
}

impl Cell {
    /// Whether column `x` falls inside the cell.
    pub fn contains(&self, x: u16) -> bool {
        x >= self.x && x - self.x < self.width
    }
}

/// The cells of every laid-out row, each row in x order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlameLayout {
    rows: Vec<Vec<Cell>>,
    zoom: Option<NodeId>,
    zoom_depth: u32,
}

impl FlameLayout {
    pub fn rows(&self) -> &[Vec<Cell>] {
        &self.rows
    }

    /// The cells of row `depth` (empty past the last row).
    pub fn row(&self, depth: usize) -> &[Cell] {
        self.rows.get(depth).map_or(&[], Vec::as_slice)
    }

    /// The node the layout starts from.
    pub fn zoom(&self) -> Option<NodeId> {
        self.zoom
    }

    /// The cell covering column `x` of row `depth`.
    pub fn cell_at(&self, depth: usize, x: u16) -> Option<&Cell> {
        let row = self.row(depth);
        let i = row.partition_point(|c| c.x + c.width <= x);
        row.get(i).filter(|c| c.contains(x))
    }

    /// Row and index in the row of `node`'s cell, when it has one.
    pub fn find(&self, trie: &StackTrie, node: NodeId) -> Option<(usize, usize)> {
        let depth = trie.node(node).depth.checked_sub(self.zoom_depth)? as usize;
        let i = self.row(depth).iter().position(|c| c.node == Some(node))?;
        Some((depth, i))
    }
}

/// Rows between the zoom root and `node`.
pub fn row_of(trie: &StackTrie, zoom: NodeId, node: NodeId) -> usize {
    trie.node(node).depth.saturating_sub(trie.node(zoom).depth) as usize
}

/// Lay out the subtree of `zoom` in `width` columns and at most `max_depth` rows.
pub fn layout(
    trie: &StackTrie,
    frames: &FrameTable,
    zoom: NodeId,
    width: u16,
    max_depth: u16,
) -> FlameLayout {
    let mut out = FlameLayout {
        rows: Vec::new(),
        zoom: Some(zoom),
        zoom_depth: trie.node(zoom).depth,
    };
    if width == 0 || max_depth == 0 {
        return out;
    }
    out.rows.push(vec![Cell {
        node: Some(zoom),
        x: 0,
        width,
        depth: 0,
        kind: CellKind::Frame,
    }]);
    let mut scratch = Scratch::default();
    for depth in 1..max_depth {
        let mut next = Vec::new();
        for parent in &out.rows[depth as usize - 1] {
            if let (CellKind::Frame, Some(node)) = (parent.kind, parent.node) {
                split_children(trie, frames, node, parent, depth, &mut scratch, &mut next);
            }
        }
        if next.is_empty() {
            break;
        }
        out.rows.push(next);
    }
    out
}

/// Buffers reused across parents.
#[derive(Default)]
struct Scratch {
    kids: Vec<NodeId>,
    wide: Vec<NodeId>,
    weights: Vec<u64>,
    widths: Vec<u16>,
    order: Vec<usize>,
}

/// Append the cells of `node`'s children (laid over `parent`'s columns) to `out`.
fn split_children(
    trie: &StackTrie,
    frames: &FrameTable,
    node: NodeId,
    parent: &Cell,
    depth: u16,
    s: &mut Scratch,
    out: &mut Vec<Cell>,
) {
    let total = trie.node(node).total_weight;
    if total == 0 {
        return;
    }
    children_in_name_order(trie, frames, node, &mut s.kids);
    if s.kids.is_empty() {
        return;
    }
    let columns = u128::from(parent.width);
    s.wide.clear();
    s.weights.clear();
    let (mut small_count, mut small_weight, mut small_one) = (0usize, 0u64, None);
    let mut children_weight = 0u64;
    for &kid in &s.kids {
        let w = trie.node(kid).total_weight;
        children_weight += w;
        if u128::from(w) * columns >= u128::from(total) {
            s.wide.push(kid);
            s.weights.push(w);
        } else if w > 0 {
            small_count += 1;
            small_weight += w;
            small_one = Some(kid);
        }
    }
    let has_group = small_count > 0;
    if has_group {
        s.weights.push(small_weight);
    }
    s.weights.push(total.saturating_sub(children_weight));
    largest_remainder(parent.width, &s.weights, &mut s.order, &mut s.widths);

    if has_group {
        give_group_a_column(&mut s.widths);
    }
    let mut x = parent.x;
    for (i, &kid) in s.wide.iter().enumerate() {
        let width = s.widths[i];
        if width > 0 {
            out.push(Cell {
                node: Some(kid),
                x,
                width,
                depth,
                kind: CellKind::Frame,
            });
        }
        x += width;
    }
    if has_group {
        let width = s.widths[s.wide.len()];
        if width > 0 {
            let (node, kind) = match (small_count, small_one) {
                (1, Some(only)) => (Some(only), CellKind::Frame),
                _ => (
                    None,
                    CellKind::Merged {
                        count: small_count,
                        weight: small_weight,
                    },
                ),
            };
            out.push(Cell {
                node,
                x,
                width,
                depth,
                kind,
            });
        }
    }
}

/// A merged group that rounded to 0 columns borrows one from the gap (the last entry), else
/// from the widest child that keeps at least one column. `widths` ends with group, gap.
fn give_group_a_column(widths: &mut [u16]) {
    let n = widths.len();
    let (group, gap) = (n - 2, n - 1);
    if widths[group] > 0 {
        return;
    }
    if widths[gap] > 0 {
        widths[gap] -= 1;
        widths[group] = 1;
        return;
    }
    let widest = (0..group)
        .filter(|&i| widths[i] >= 2)
        .max_by(|&a, &b| widths[a].cmp(&widths[b]).then(b.cmp(&a)));
    if let Some(i) = widest {
        widths[i] -= 1;
        widths[group] = 1;
    }
}

/// The children of `node` in name order into `out`. Bulk-built tries already store them in
/// that order, so the common case is one pass of comparisons and no sort.
fn children_in_name_order(trie: &StackTrie, frames: &FrameTable, node: NodeId, out: &mut Vec<NodeId>) {
    out.clear();
    out.extend(trie.children(node));
    let name = |n: &NodeId| trie.node(*n).frame().map_or("", |f| frames.name(f));
    if !out.windows(2).all(|w| name(&w[0]) <= name(&w[1])) {
        out.sort_by(|a, b| name(a).cmp(name(b)));
    }
}

/// Split `width` columns over `weights` in proportion, rounding by largest remainder: every
/// entry gets the floor of its exact share, and the columns left over go to the largest
/// fractional parts (ties to the earlier entry). The widths add up to `width` exactly when
/// the weights are not all 0.
pub fn largest_remainder(width: u16, weights: &[u64], order: &mut Vec<usize>, widths: &mut Vec<u16>) {
    widths.clear();
    let total: u128 = weights.iter().map(|&w| u128::from(w)).sum();
    if total == 0 {
        widths.resize(weights.len(), 0);
        return;
    }
    let columns = u128::from(width);
    let mut used = 0u128;
    for &w in weights {
        let floor = u128::from(w) * columns / total;
        used += floor;
        widths.push(floor as u16);
    }
    let leftover = (columns - used) as usize;
    if leftover == 0 {
        return;
    }
    let remainder = |i: usize| u128::from(weights[i]) * columns % total;
    order.clear();
    order.extend(0..weights.len());
    order.sort_by(|&a, &b| match remainder(b).cmp(&remainder(a)) {
        Ordering::Equal => a.cmp(&b),
        other => other,
    });
    for &i in order.iter().take(leftover) {
        widths[i] += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Selection;
    use crate::model::sample_list::SampleList;
    use crate::model::sample_list::test_support::profile_from;

    fn trie_of(p: &SampleList) -> StackTrie {
        StackTrie::from_selection(p, &Selection::all())
    }

    fn split(width: u16, weights: &[u64]) -> Vec<u16> {
        let (mut order, mut widths) = (Vec::new(), Vec::new());
        largest_remainder(width, weights, &mut order, &mut widths);
        widths
    }

    /// (name or "+N", x, width) of every cell of a row.
    fn row(p: &SampleList, t: &StackTrie, l: &FlameLayout, depth: usize) -> Vec<(String, u16, u16)> {
        l.row(depth)
            .iter()
            .map(|c| {
                let label = match (c.kind, c.node) {
                    (CellKind::Merged { count, .. }, _) => format!("+{count}"),
                    (CellKind::Frame, Some(n)) => t
                        .node(n)
                        .frame()
                        .map_or("all".to_string(), |f| p.frames.name(f).to_string()),
                    (CellKind::Frame, None) => "?".into(),
                };
                (label, c.x, c.width)
            })
            .collect()
    }

    fn cells(v: &[(&str, u16, u16)]) -> Vec<(String, u16, u16)> {
        v.iter().map(|&(n, x, w)| (n.to_string(), x, w)).collect()
    }

    #[test]
    fn largest_remainder_pins_known_splits() {
        assert_eq!(split(10, &[1, 1, 1]), [4, 3, 3]);
        assert_eq!(split(80, &[50, 30, 20]), [40, 24, 16]);
        assert_eq!(split(7, &[2, 2, 2, 1]), [2, 2, 2, 1]);
        assert_eq!(split(5, &[3, 3, 1]), [2, 2, 1]);
        assert_eq!(split(3, &[0, 0]), [0, 0]);
        assert_eq!(split(0, &[4, 5]), [0, 0]);
    }

    #[test]
    fn largest_remainder_always_adds_up() {
        let mut rng = crate::model::test_rng::TestRng::new(0x9e37_79b9_7f4a_7c15u64);
        let mut next = move || rng.next_u64();
        for round in 0..2000 {
            let n = 1 + (next() % 40) as usize;
            let width = (next() % 300) as u16;
            let weights: Vec<u64> = (0..n)
                .map(|_| match next() % 4 {
                    0 => 0,
                    1 => next() % 3,
                    2 => next() % 1000,
                    _ => next() % 1_000_000_000,
                })
                .collect();
            let widths = split(width, &weights);
            let sum: u32 = widths.iter().map(|&w| u32::from(w)).sum();
            if weights.iter().any(|&w| w > 0) {
                assert_eq!(sum, u32::from(width), "round {round}: {weights:?} in {width}");
            }
            // No entry is more than one column away from its exact share.
            let total: u64 = weights.iter().sum();
            for (w, &cols) in weights.iter().zip(&widths) {
                if total > 0 {
                    let exact = *w as f64 * f64::from(width) / total as f64;
                    assert!((f64::from(cols) - exact).abs() < 1.0, "{cols} vs {exact}");
                }
            }
        }
    }

    #[test]
    fn children_and_gap_fill_the_parent() {
        // main: total 10 = a 5 + c 3 + self 2 over 80 columns.
        let p = profile_from(&[
            (&["main", "a"], 5, None),
            (&["main", "c"], 3, None),
            (&["main"], 2, None),
        ]);
        let t = trie_of(&p);
        let l = layout(&t, &p.frames, NodeId::ROOT, 80, 10);
        assert_eq!(l.rows().len(), 3);
        assert_eq!(row(&p, &t, &l, 0), cells(&[("all", 0, 80)]));
        assert_eq!(row(&p, &t, &l, 1), cells(&[("main", 0, 80)]));
        assert_eq!(row(&p, &t, &l, 2), cells(&[("a", 0, 40), ("c", 40, 24)]));
        assert_eq!(l.cell_at(2, 63).map(|c| c.x), Some(40));
        assert_eq!(l.cell_at(2, 64), None, "the self gap has no cell");
    }

    #[test]
    fn rounding_sums_to_the_parent_in_every_row() {
        let mut rng = crate::model::test_rng::TestRng::new(0x2545_f491_4f6c_dd1du64);
        let mut next = move || rng.next_u64();
        let names = ["a", "b", "c", "d", "e", "f", "g"];
        let mut stacks: Vec<(Vec<&str>, u64)> = Vec::new();
        for _ in 0..300 {
            let depth = 1 + (next() % 5) as usize;
            let frames = (0..depth)
                .map(|_| names[(next() % names.len() as u64) as usize])
                .collect();
            stacks.push((frames, 1 + next() % 50));
        }
        let spec: Vec<(&[&str], u64, Option<u64>)> =
            stacks.iter().map(|(f, w)| (f.as_slice(), *w, None)).collect();
        let p = profile_from(&spec);
        let t = trie_of(&p);
        for width in [1u16, 7, 40, 80, 123, 200] {
            let l = layout(&t, &p.frames, NodeId::ROOT, width, 8);
            for (depth, r) in l.rows().iter().enumerate().skip(1) {
                for parent in l.row(depth - 1) {
                    let Some(node) = parent.node else { continue };
                    let kids: Vec<&Cell> = r
                        .iter()
                        .filter(|c| c.x >= parent.x && c.x < parent.x + parent.width)
                        .collect();
                    let used: u16 = kids.iter().map(|c| c.width).sum();
                    let n = t.node(node);
                    let child_weight: u64 = t.children(node).map(|c| t.node(c).total_weight).sum();
                    // Every column is a child's or the gap's; the gap is its exact share
                    // rounded either way, less the column a merged group may borrow.
                    let self_cols = u64::from(parent.width) * (n.total_weight - child_weight);
                    let gap_floor = (self_cols / n.total_weight) as u16;
                    let gap_ceil = self_cols.div_ceil(n.total_weight) as u16;
                    assert!(used <= parent.width);
                    assert!(
                        used >= parent.width - gap_ceil && used <= parent.width - gap_floor + 1,
                        "width {width}: used {used} of {} (gap {gap_floor}..{gap_ceil})",
                        parent.width
                    );
                    if child_weight == n.total_weight {
                        assert_eq!(used, parent.width, "no self weight: no gap");
                    }
                    // Cells tile without overlap, left to right from the parent's x.
                    let mut x = parent.x;
                    for c in &kids {
                        assert_eq!(c.x, x);
                        x += c.width;
                    }
                }
            }
        }
    }

    #[test]
    fn sub_cell_children_merge_into_one_cell() {
        // 20 columns over total 100: x,y,z weigh 2 each (0.4 column) → one "+3" cell.
        let p = profile_from(&[
            (&["main", "big"], 60, None),
            (&["main", "x"], 2, None),
            (&["main", "y"], 2, None),
            (&["main", "mid"], 34, None),
            (&["main", "z"], 2, None),
        ]);
        let t = trie_of(&p);
        let l = layout(&t, &p.frames, NodeId::ROOT, 20, 4);
        assert_eq!(
            row(&p, &t, &l, 2),
            cells(&[("big", 0, 12), ("mid", 12, 7), ("+3", 19, 1)])
        );
        let merged = l.row(2)[2];
        assert_eq!(merged.node, None);
        assert_eq!(merged.kind, CellKind::Merged { count: 3, weight: 6 });
        // Nothing below the merged cell, and nothing below `big` (a leaf).
        assert_eq!(l.rows().len(), 3);
    }

    #[test]
    fn a_merge_rounding_to_zero_borrows_a_column() {
        // 10 columns over 100: the pair weighs 2 (0.2 column) and the gap 18 (1.8).
        let p = profile_from(&[
            (&["main", "a"], 80, None),
            (&["main", "t1"], 1, None),
            (&["main", "t2"], 1, None),
            (&["main"], 18, None),
        ]);
        let t = trie_of(&p);
        let l = layout(&t, &p.frames, NodeId::ROOT, 10, 4);
        assert_eq!(row(&p, &t, &l, 2), cells(&[("a", 0, 8), ("+2", 8, 1)]));
        // Without a gap the widest child lends the column.
        let p = profile_from(&[
            (&["main", "a"], 98, None),
            (&["main", "t1"], 1, None),
            (&["main", "t2"], 1, None),
        ]);
        let t = trie_of(&p);
        let l = layout(&t, &p.frames, NodeId::ROOT, 10, 4);
        assert_eq!(row(&p, &t, &l, 2), cells(&[("a", 0, 9), ("+2", 9, 1)]));
        // A group of one is the child's own cell.
        let p = profile_from(&[(&["main", "a"], 98, None), (&["main", "t1"], 2, None)]);
        let t = trie_of(&p);
        let l = layout(&t, &p.frames, NodeId::ROOT, 10, 4);
        assert_eq!(row(&p, &t, &l, 2), cells(&[("a", 0, 9), ("t1", 9, 1)]));
        assert_eq!(l.row(2)[1].kind, CellKind::Frame);
    }

    #[test]
    fn zoom_root_spans_the_width_and_rows_are_relative() {
        let p = profile_from(&[
            (&["main", "work", "leaf"], 3, None),
            (&["main", "work", "other"], 1, None),
            (&["main", "idle"], 4, None),
        ]);
        let t = trie_of(&p);
        let main = t.children(NodeId::ROOT).next().unwrap();
        let work = t
            .children(main)
            .find(|&c| p.frames.name(t.node(c).frame().unwrap()) == "work")
            .unwrap();
        let l = layout(&t, &p.frames, work, 40, 10);
        assert_eq!(l.zoom(), Some(work));
        assert_eq!(row(&p, &t, &l, 0), cells(&[("work", 0, 40)]));
        assert_eq!(row(&p, &t, &l, 1), cells(&[("leaf", 0, 30), ("other", 30, 10)]));
        let leaf = l.row(1)[0].node.unwrap();
        assert_eq!(l.find(&t, leaf), Some((1, 0)));
        assert_eq!(
            l.find(&t, main),
            None,
            "ancestors of the zoom root are not laid out"
        );
        // Row limit and degenerate sizes.
        assert_eq!(layout(&t, &p.frames, NodeId::ROOT, 40, 2).rows().len(), 2);
        assert!(layout(&t, &p.frames, NodeId::ROOT, 0, 5).rows().is_empty());
        assert!(layout(&t, &p.frames, NodeId::ROOT, 5, 0).rows().is_empty());
    }

    #[test]
    fn children_come_in_name_order_even_after_live_inserts() {
        let p = profile_from(&[(&["main"], 1, None)]);
        let mut frames = p.frames.clone();
        let main = frames.get("main").unwrap();
        let (z, a) = (frames.intern("zeta", None), frames.intern("alpha", None));
        let mut t = StackTrie::new();
        t.insert([main, z], 5, &frames);
        t.insert([main, a], 5, &frames);
        let l = layout(&t, &frames, NodeId::ROOT, 10, 3);
        let names: Vec<&str> = l
            .row(2)
            .iter()
            .map(|c| frames.name(t.node(c.node.unwrap()).frame().unwrap()))
            .collect();
        assert_eq!(names, ["alpha", "zeta"]);
    }
}
