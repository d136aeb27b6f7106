//! Folded stacks from the trie: one line per distinct call path that has self weight, in
//! name order. Unlike the reference analyzer (one line per sample), identical stacks are
//! merged, so the file is as small as the profile allows.

use std::borrow::Cow;

use crate::model::{FrameId, FrameTable, NodeId, StackTrie};
use crate::sources::folded::escape_frame;

/// Folded lines (`a;b;c 12`, root first, no newline) with the node each one ends at.
///
/// A child whose total weight is below `min_total` is not descended into: its weight is
/// added to its parent's line instead. That is exactly what a flamegraph with a minimum
/// frame width shows (the parent keeps its width, the thin child is not drawn), at a
/// fraction of the lines. `min_total = 0` keeps every path.
pub fn folded_stacks(trie: &StackTrie, frames: &FrameTable, min_total: u64) -> Vec<(NodeId, String)> {
    let escaped: Vec<String> = frames
        .ids()
        .map(|f| escape_frame(frames.name(f)).into_owned())
        .collect();
    let mut out = Vec::new();
    walk_paths(
        trie,
        |frame| Cow::Borrowed(escaped[frame.index()].as_str()),
        |id, path| {
            let children = trie.children_by_name(id, frames);
            if id != NodeId::ROOT {
                let pruned: u64 = children
                    .iter()
                    .map(|&c| trie.node(c).total_weight)
                    .filter(|&w| w < min_total)
                    .sum();
                let weight = trie.node(id).self_weight + pruned;
                if weight > 0 {
                    out.push((id, format!("{path} {weight}")));
                }
            }
            children
                .into_iter()
                .filter(|&c| trie.node(c).total_weight >= min_total.max(1))
                .collect()
        },
    );
    out
}

/// Depth first over `trie` from the root, keeping the `;`-joined path of frame names
/// (`name` of each frame) down to the node: `visit(node, path)` emits what it wants and
/// returns the children to descend into, in order. The root is visited first, with an
/// empty path. Iterative, so a 10,000-deep profile does not overflow the thread's stack;
/// folded files and the flamegraph's lines both walk this way.
pub(super) fn walk_paths<'n>(
    trie: &StackTrie,
    name: impl Fn(FrameId) -> Cow<'n, str>,
    mut visit: impl FnMut(NodeId, &str) -> Vec<NodeId>,
) {
    // Enter a node, or leave one: truncate the path back to the length it had.
    enum Step {
        Enter(NodeId),
        Leave(usize),
    }
    let mut path = String::new();
    let mut todo: Vec<Step> = visit(NodeId::ROOT, "")
        .into_iter()
        .rev()
        .map(Step::Enter)
        .collect();
    while let Some(step) = todo.pop() {
        let id = match step {
            Step::Leave(len) => {
                path.truncate(len);
                continue;
            }
            Step::Enter(id) => id,
        };
        let Some(frame) = trie.node(id).frame() else {
            continue;
        };
        let restore = path.len();
        if !path.is_empty() {
            path.push(';');
        }
        path.push_str(&name(frame));
        let children = visit(id, &path);
        todo.push(Step::Leave(restore));
        todo.extend(children.into_iter().rev().map(Step::Enter));
    }
}

/// Just the lines of [`folded_stacks`] with every path kept.
pub fn folded_lines(trie: &StackTrie, frames: &FrameTable) -> Vec<String> {
    folded_stacks(trie, frames, 0)
        .into_iter()
        .map(|(_, l)| l)
        .collect()
}

/// Folded lines as a file's text, a newline after each.
pub fn text<S: AsRef<str>>(lines: &[S]) -> String {
    let mut text = String::with_capacity(lines.iter().map(|l| l.as_ref().len() + 1).sum());
    for line in lines {
        text.push_str(line.as_ref());
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Selection;
    use crate::model::sample_list::test_support::profile_from;

    #[test]
    fn merges_identical_stacks_and_sorts() {
        let p = profile_from(&[
            (&["main", "b"], 1, None),
            (&["main", "a", "x"], 2, None),
            (&["main", "b"], 4, None),
            (&["main", "a"], 1, None),
        ]);
        let t = StackTrie::from_selection(&p, &Selection::all());
        assert_eq!(
            folded_lines(&t, &p.frames),
            ["main;a 1", "main;a;x 2", "main;b 5"]
        );
    }

    #[test]
    fn thin_children_fold_into_their_parent() {
        let p = profile_from(&[
            (&["main", "big"], 90, None),
            (&["main", "tiny", "deeper"], 3, None),
            (&["main", "small"], 7, None),
        ]);
        let t = StackTrie::from_selection(&p, &Selection::all());
        let lines: Vec<String> = folded_stacks(&t, &p.frames, 5)
            .into_iter()
            .map(|(_, l)| l)
            .collect();
        assert_eq!(lines, ["main 3", "main;big 90", "main;small 7"]);
        let total: u64 = lines
            .iter()
            .map(|l| l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap())
            .sum();
        assert_eq!(total, 100, "no weight is lost");
    }

    #[test]
    fn semicolons_in_names_stay_inside_their_frame() {
        let p = profile_from(&[(&["main", "<[u8; 32] as Debug>::fmt"], 2, None)]);
        let t = StackTrie::from_selection(&p, &Selection::all());
        let lines = folded_lines(&t, &p.frames);
        let back = crate::sources::folded::parse_line(&lines[0]).unwrap().unwrap();
        assert_eq!(back.frames, ["main", "<[u8; 32] as Debug>::fmt"]);
    }
}
