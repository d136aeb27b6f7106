//! Building the tree widget's items from a stack trie, lazily: only the children of
//! opened nodes become items (a closed node with children gets one hidden placeholder so
//! the widget draws its ▶ marker), children come sorted by total weight and capped, with
//! one "… N more" item for the rest. A trie of millions of nodes costs only what is open.

use std::collections::{HashMap, HashSet};

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use tui_tree_widget::TreeItem;

use crate::config::Theme;
use crate::model::hotspots::percent;
use crate::model::{FrameTable, NodeId, StackTrie};
use crate::views::text::{display_width, fit_name, truncate_end};

/// Children shown per node before the "… N more" item.
pub const CHILD_CAP: usize = 200;
/// Identifier of the synthetic items (the placeholder of a closed node, "… N more").
/// Path hashes are 64-bit hashes, so a clash with this value is as unlikely as any other.
pub const SYNTHETIC_ID: u64 = u64::MAX;

/// The widget's items carry owned text.
pub type Item = TreeItem<'static, u64>;

/// Width of the expand marker the widget draws before each line ("▶ ").
const MARKER_WIDTH: u16 = 2;
/// Optional columns drop until the name at depth 0 has this much room.
const MIN_NAME_WIDTH: u16 = 16;
/// The total % column, the last to go, stays while the name has this much.
const MIN_NAME_WIDTH_LAST: u16 = 8;
const PERCENT_WIDTH: u16 = 6;
/// Wide enough for "samples"-sized headers ("total", "self").
const MIN_SAMPLES_WIDTH: u16 = 6;

/// A number column of the tree.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Column {
    TotalPercent,
    TotalSamples,
    SelfPercent,
    SelfSamples,
}

impl Column {
    fn header(self) -> &'static str {
        match self {
            Column::TotalPercent => "total%",
            Column::TotalSamples => "total",
            Column::SelfPercent => "self%",
            Column::SelfSamples => "self",
        }
    }
}

/// The number columns that fit, right-aligned at the tree's right edge.
#[derive(Clone, Debug, PartialEq)]
pub struct Columns {
    pub columns: Vec<(Column, u16)>,
    /// Total width of the numbers (each column plus one space before it).
    pub width: u16,
}

impl Columns {
    /// Bottom-up trees have no self columns: in a leaf-first trie the self weight of a
    /// node would be the weight of stacks that *start* there, which reads as nonsense.
    pub fn fit(tree_width: u16, max_weight: u64, bottom_up: bool) -> Self {
        let samples = (max_weight.to_string().len() as u16).max(MIN_SAMPLES_WIDTH);
        let mut columns = vec![
            (Column::TotalPercent, PERCENT_WIDTH),
            (Column::TotalSamples, samples),
        ];
        if !bottom_up {
            columns.push((Column::SelfPercent, PERCENT_WIDTH));
            columns.push((Column::SelfSamples, samples));
        }
        let width = |cols: &[(Column, u16)]| cols.iter().map(|(_, w)| w + 1).sum::<u16>();
        for drop in [
            Column::SelfSamples,
            Column::TotalSamples,
            Column::SelfPercent,
            Column::TotalPercent,
        ] {
            let min_name = if drop == Column::TotalPercent {
                MIN_NAME_WIDTH_LAST
            } else {
                MIN_NAME_WIDTH
            };
            if tree_width.saturating_sub(MARKER_WIDTH + width(&columns)) >= min_name {
                break;
            }
            columns.retain(|(c, _)| *c != drop);
        }
        let width = width(&columns);
        Columns { columns, width }
    }
}

/// What the items are built from.
pub struct BuildContext<'a> {
    pub trie: &'a StackTrie,
    pub frames: &'a FrameTable,
    pub opened: &'a HashSet<Vec<u64>>,
    /// Raised caps of nodes whose "… more" item was opened, by path hash.
    pub caps: &'a HashMap<u64, usize>,
    pub columns: &'a Columns,
    pub tree_width: u16,
    /// Per frame: does its name match the search.
    pub matches: Option<&'a [bool]>,
    pub theme: &'a Theme,
}

impl BuildContext<'_> {
    pub fn cap(&self, node: NodeId) -> usize {
        let hash = self.trie.node(node).path_hash;
        self.caps.get(&hash).copied().unwrap_or(CHILD_CAP)
    }
}

/// Children of `node` by total weight, heaviest first; ties by name so the order is stable.
pub fn sorted_children(trie: &StackTrie, frames: &FrameTable, node: NodeId) -> Vec<NodeId> {
    let mut kids: Vec<NodeId> = trie.children(node).collect();
    let name = |id: NodeId| trie.node(id).frame().map_or("", |f| frames.name(f));
    kids.sort_by(|&a, &b| {
        trie.node(b)
            .total_weight
            .cmp(&trie.node(a).total_weight)
            .then_with(|| name(a).cmp(name(b)))
    });
    kids
}

/// The items of the root's children and, recursively, of every opened node.
pub fn build_items(ctx: &BuildContext) -> Vec<Item> {
    children_items(ctx, NodeId::ROOT, &mut Vec::new())
}

fn children_items(ctx: &BuildContext, node: NodeId, path: &mut Vec<u64>) -> Vec<Item> {
    let trie = ctx.trie;
    let kids = sorted_children(trie, ctx.frames, node);
    let cap = ctx.cap(node);
    let depth = path.len() as u16;
    let mut items = Vec::with_capacity(kids.len().min(cap) + 1);
    let mut seen = HashSet::with_capacity(kids.len().min(cap));
    for &kid in kids.iter().take(cap) {
        let hash = trie.node(kid).path_hash;
        // A 64-bit path-hash clash between siblings: the widget needs unique ids.
        if hash == SYNTHETIC_ID || !seen.insert(hash) {
            continue;
        }
        path.push(hash);
        let text = node_line(ctx, kid, depth);
        let children = if trie.children(kid).next().is_none() {
            Vec::new()
        } else if ctx.opened.contains(path.as_slice()) {
            children_items(ctx, kid, path)
        } else {
            vec![TreeItem::new_leaf(SYNTHETIC_ID, "")]
        };
        path.pop();
        let item = match TreeItem::new(hash, text.clone(), children) {
            Ok(item) => item,
            // Unreachable with the dedup above; a leaf beats a missing line.
            Err(_) => TreeItem::new_leaf(hash, text),
        };
        items.push(item);
    }
    if kids.len() > cap {
        let rest: u64 = kids[cap..].iter().map(|&k| trie.node(k).total_weight).sum();
        let text = format!(
            "… {} more ({:.1}%)",
            kids.len() - cap,
            percent(rest, trie.total_weight())
        );
        items.push(TreeItem::new_leaf(
            SYNTHETIC_ID,
            Line::styled(text, ctx.theme.dim),
        ));
    }
    items
}

/// One node's line: the name, padded so the number columns end at the tree's right edge.
fn node_line(ctx: &BuildContext, id: NodeId, depth: u16) -> Line<'static> {
    let theme = ctx.theme;
    let node = ctx.trie.node(id);
    let name = node.frame().map_or("", |f| ctx.frames.name(f));
    let matched = node
        .frame()
        .zip(ctx.matches)
        .is_some_and(|(f, m)| m.get(f.index()).copied().unwrap_or(false));
    let name_style = if matched { theme.search_match } else { theme.text };
    let available = ctx.tree_width.saturating_sub(depth * 2 + MARKER_WIDTH);
    let name_width = available.saturating_sub(ctx.columns.width);
    if name_width == 0 {
        // Too deep for the numbers: the name alone, cut to what is left.
        let name = fit_name(name, available as usize).into_owned();
        return Line::from(Span::styled(name, name_style));
    }
    let shown = fit_name(name, name_width as usize).into_owned();
    let pad = name_width as usize - display_width(&shown);
    let mut spans = vec![Span::styled(shown, name_style), Span::raw(" ".repeat(pad))];
    let total = ctx.trie.total_weight();
    for &(column, width) in &ctx.columns.columns {
        let (text, style) = match column {
            Column::TotalPercent => (format!("{:.1}%", percent(node.total_weight, total)), theme.text),
            Column::TotalSamples => (node.total_weight.to_string(), theme.dim),
            Column::SelfPercent => (format!("{:.1}%", percent(node.self_weight, total)), theme.text),
            Column::SelfSamples => (node.self_weight.to_string(), theme.dim),
        };
        spans.push(Span::styled(format!(" {text:>w$}", w = width as usize), style));
    }
    Line::from(spans)
}

/// The header row above the tree: "function" and the number columns' names.
pub fn draw_header(buf: &mut Buffer, area: Rect, columns: &Columns, style: Style) {
    if area.width == 0 || area.height == 0 {
        return;
    }
    buf.set_style(area, style);
    let mut line = String::new();
    for &(column, width) in &columns.columns {
        line.push_str(&format!(" {:>w$}", column.header(), w = width as usize));
    }
    let name_width = area.width.saturating_sub(MARKER_WIDTH + columns.width) as usize;
    let name = truncate_end("function", name_width);
    let head = format!(
        "{}{}{}",
        " ".repeat(MARKER_WIDTH as usize),
        name,
        " ".repeat(name_width - display_width(&name))
    );
    buf.set_stringn(area.x, area.y, head + &line, area.width as usize, style);
}
