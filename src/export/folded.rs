//! Folded stacks from the trie: one line per distinct call path that has self weight,
//! sorted by frame names. Unlike the reference analyzer (one line per sample), identical
//! stacks are merged, so the file is as small as the profile allows.

use std::path::Path;

use crate::model::{FrameTable, NodeId, StackTrie};
use crate::sources::folded::format_line;

use super::{ExportError, write_file};

/// Folded lines (`a;b;c 12`), root first, without newlines.
pub fn folded_lines(trie: &StackTrie, frames: &FrameTable) -> Vec<String> {
    let mut lines = Vec::new();
    let mut path: Vec<&str> = Vec::new();
    // Depth-first, children by name; `None` marks leaving a node.
    let mut todo: Vec<Option<NodeId>> = trie
        .children_by_name(NodeId::ROOT, frames)
        .into_iter()
        .rev()
        .map(Some)
        .collect();
    while let Some(item) = todo.pop() {
        let Some(id) = item else {
            path.pop();
            continue;
        };
        let node = trie.node(id);
        let Some(frame) = node.frame() else { continue };
        path.push(frames.name(frame));
        if node.self_weight > 0 {
            lines.push(format_line(&path, node.self_weight));
        }
        todo.push(None);
        todo.extend(trie.children_by_name(id, frames).into_iter().rev().map(Some));
    }
    lines
}

/// Write folded lines to `path`.
pub fn write(lines: &[String], path: &Path) -> Result<(), ExportError> {
    let mut text = String::with_capacity(lines.iter().map(|l| l.len() + 1).sum());
    for line in lines {
        text.push_str(line);
        text.push('\n');
    }
    write_file(path, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Selection;
    use crate::model::profile::test_support::profile_from;

    #[test]
    fn merges_identical_stacks_and_sorts() {
        let p = profile_from(&[
            (&["main", "b"], 1, None),
            (&["main", "a", "x"], 2, None),
            (&["main", "b"], 4, None),
            (&["main", "a"], 1, None),
        ]);
        let t = StackTrie::from_selection(&p, &Selection::all().matcher(&p));
        assert_eq!(
            folded_lines(&t, &p.frames),
            ["main;a 1", "main;a;x 2", "main;b 5"]
        );
    }

    #[test]
    fn semicolons_in_names_stay_inside_their_frame() {
        let p = profile_from(&[(&["main", "<[u8; 32] as Debug>::fmt"], 2, None)]);
        let t = StackTrie::from_selection(&p, &Selection::all().matcher(&p));
        let lines = folded_lines(&t, &p.frames);
        let back = crate::sources::folded::parse_line(&lines[0]).unwrap().unwrap();
        assert_eq!(back.frames, ["main", "<[u8; 32] as Debug>::fmt"]);
    }
}
