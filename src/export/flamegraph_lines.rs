//! The folded lines an SVG flamegraph is drawn from: every sample of the profile (so the
//! root and every percentage are the real totals), with what is too thin or too deep to
//! draw merged into labelled bars, and the whole bounded so a browser can open it.
//!
//! - Children narrower than `--min-percent` become one `[N frames below X%]` bar under
//!   their parent (at the top too: dropping thin roots made the root total lie).
//! - Stacks deeper than [`MAX_SVG_DEPTH`] end in a `[deeper frames cut at depth D]` bar.
//! - When more than [`MAX_SVG_FRAMES`] frames would still be drawn, the minimum width is
//!   raised until they fit, and the subtitle says so.
//!
//! The folded file and pprof keep every frame; only the picture is cut.

use crate::model::{FrameTable, NodeId, StackTrie};
use crate::sources::folded::escape_frame;

use super::folded::walk_paths;

/// Frames deeper than this are cut from the SVG (a 10k-deep stack made a 162 MB file).
pub const MAX_SVG_DEPTH: u32 = 512;
/// At most this many frames are drawn; the minimum width is raised to stay under it.
pub const MAX_SVG_FRAMES: usize = 50_000;

/// What was left out of the picture, to be stated on it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SvgCuts {
    /// The minimum width in effect, percent of the total (may be above `--min-percent`).
    pub min_percent: f64,
    /// The minimum width was raised to keep the frame count under [`MAX_SVG_FRAMES`].
    pub raised_for_frame_limit: bool,
    /// Frames merged into `[N frames below X%]` bars.
    pub merged_frames: u64,
    /// Samples whose stacks went deeper than [`MAX_SVG_DEPTH`].
    pub depth_cut_samples: u64,
}

impl SvgCuts {
    /// A subtitle that states the limits that cut something, or `None`.
    pub fn describe(&self) -> Option<String> {
        let mut parts = Vec::new();
        if self.merged_frames > 0 {
            let mut text = format!(
                "{} frames narrower than {}% drawn as [N frames below] bars",
                self.merged_frames,
                percent_text(self.min_percent)
            );
            if self.raised_for_frame_limit {
                text.push_str(&format!(
                    " (width raised to draw at most {MAX_SVG_FRAMES} frames)"
                ));
            }
            parts.push(text);
        }
        if self.depth_cut_samples > 0 {
            parts.push(format!(
                "stacks cut at depth {MAX_SVG_DEPTH} ({} samples); the folded file has them whole",
                self.depth_cut_samples
            ));
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}

/// The SVG's folded lines and what they leave out.
pub struct SvgStacks {
    pub lines: Vec<String>,
    pub cuts: SvgCuts,
}

/// `0.3`, `1.25`, `0.004`: a percentage without trailing zeros.
fn percent_text(p: f64) -> String {
    let text = format!("{p:.3}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text.is_empty() || text == "0" {
        format!("{p:.1e}")
    } else {
        text.to_string()
    }
}

/// The lines to draw for `trie` with frames narrower than `min_percent` merged.
pub fn svg_stacks(trie: &StackTrie, frames: &FrameTable, min_percent: f64) -> SvgStacks {
    let total = trie.total_weight();
    let mut min_total = ((min_percent.max(0.0) * total as f64 / 100.0).ceil() as u64).max(1);
    let mut raised = false;
    while drawn_frames(trie, min_total) > MAX_SVG_FRAMES {
        min_total = min_total.saturating_mul(2);
        raised = true;
    }
    let effective_percent = if raised && total > 0 {
        min_total as f64 * 100.0 / total as f64
    } else {
        min_percent.max(0.0)
    };
    let mut cuts = SvgCuts {
        min_percent: effective_percent,
        raised_for_frame_limit: raised,
        ..SvgCuts::default()
    };
    let thin_label = |n: usize| format!("[{n} frames below {}%]", percent_text(effective_percent));
    let cut_label = format!("[deeper frames cut at depth {MAX_SVG_DEPTH}]");

    let mut lines = Vec::new();
    // Emits the bars of `id`'s children that are not drawn, returns those that are.
    let split_children = |id: NodeId, prefix: &str, lines: &mut Vec<String>, cuts: &mut SvgCuts| {
        let node = trie.node(id);
        let children = trie.children_by_name(id, frames);
        let sep = if prefix.is_empty() { "" } else { ";" };
        if node.depth >= MAX_SVG_DEPTH && !children.is_empty() {
            let deeper = node.total_weight.saturating_sub(node.self_weight);
            cuts.depth_cut_samples = cuts.depth_cut_samples.saturating_add(deeper);
            lines.push(format!("{prefix}{sep}{cut_label} {deeper}"));
            return Vec::new();
        }
        let (kept, thin): (Vec<NodeId>, Vec<NodeId>) = children
            .into_iter()
            .filter(|&c| trie.node(c).total_weight > 0)
            .partition(|&c| trie.node(c).total_weight >= min_total);
        if !thin.is_empty() {
            let weight = thin
                .iter()
                .map(|&c| trie.node(c).total_weight)
                .fold(0u64, u64::saturating_add);
            cuts.merged_frames += thin.len() as u64;
            lines.push(format!("{prefix}{sep}{} {weight}", thin_label(thin.len())));
        }
        kept
    };
    // Frame names are escaped as the walk meets them, not for the whole frame table: most
    // frames of a huge profile are merged into bars and never named.
    walk_paths(
        trie,
        |frame| escape_frame(frames.name(frame)),
        |id, path| {
            let self_weight = trie.node(id).self_weight;
            if id != NodeId::ROOT && self_weight > 0 {
                lines.push(format!("{path} {self_weight}"));
            }
            split_children(id, path, &mut lines, &mut cuts)
        },
    );
    SvgStacks { lines, cuts }
}

/// Differential lines (`a;b;c before after`) for an SVG, with stacks deeper than
/// [`MAX_SVG_DEPTH`] ending in a `[deeper frames cut at depth D]` frame (their weights
/// merged), and the samples of both profiles that were cut.
pub fn differential_lines(stacks: &[crate::model::diff::DiffStack]) -> (Vec<String>, u64) {
    let limit = MAX_SVG_DEPTH as usize;
    let cut_label = format!("[deeper frames cut at depth {MAX_SVG_DEPTH}]");
    let mut cut_samples = 0u64;
    // Order kept (the stacks come sorted); cut stacks sharing a prefix merge into one line.
    let mut merged: Vec<(Vec<String>, u64, u64)> = Vec::with_capacity(stacks.len());
    let mut index: rustc_hash::FxHashMap<Vec<String>, usize> = Default::default();
    for s in stacks {
        if s.frames.len() <= limit {
            merged.push((s.frames.clone(), s.weight_a, s.weight_b));
            continue;
        }
        cut_samples = cut_samples.saturating_add(s.weight_a.saturating_add(s.weight_b));
        let mut frames = s.frames[..limit].to_vec();
        frames.push(cut_label.clone());
        match index.get(&frames) {
            Some(&i) => {
                merged[i].1 = merged[i].1.saturating_add(s.weight_a);
                merged[i].2 = merged[i].2.saturating_add(s.weight_b);
            }
            None => {
                index.insert(frames.clone(), merged.len());
                merged.push((frames, s.weight_a, s.weight_b));
            }
        }
    }
    let lines = merged
        .into_iter()
        .map(|(frames, a, b)| format!("{} {b}", crate::sources::folded::format_line(&frames, a)))
        .collect();
    (lines, cut_samples)
}

/// How many frames would be drawn with this minimum weight (bars count as one each).
fn drawn_frames(trie: &StackTrie, min_total: u64) -> usize {
    let mut count = 0usize;
    let mut todo = vec![NodeId::ROOT];
    while let Some(id) = todo.pop() {
        let node = trie.node(id);
        if node.depth >= MAX_SVG_DEPTH {
            continue;
        }
        let mut thin = false;
        for c in trie.children(id) {
            if trie.node(c).total_weight >= min_total {
                count += 1;
                todo.push(c);
            } else {
                thin = true;
            }
        }
        count += usize::from(thin);
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Selection;
    use crate::model::sample_list::test_support::profile_from;

    fn total(lines: &[String]) -> u64 {
        lines
            .iter()
            .map(|l| l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap())
            .sum()
    }

    #[test]
    fn thin_frames_become_one_bar_and_no_weight_is_lost() {
        let p = profile_from(&[
            (&["main", "big"], 90, None),
            (&["main", "tiny", "deeper"], 3, None),
            (&["main", "small"], 4, None),
            (&["stray"], 3, None),
        ]);
        let t = StackTrie::from_selection(&p, &Selection::all());
        let s = svg_stacks(&t, &p.frames, 5.0);
        assert_eq!(
            s.lines,
            [
                "[1 frames below 5%] 3",
                "main;[2 frames below 5%] 7",
                "main;big 90"
            ]
        );
        assert_eq!(total(&s.lines), 100);
        assert_eq!(s.cuts.merged_frames, 3);
        assert!(s.cuts.describe().unwrap().contains("3 frames narrower than 5%"));
    }

    #[test]
    fn deep_stacks_are_cut_at_the_limit_with_their_weight() {
        let names: Vec<String> = (0..MAX_SVG_DEPTH + 40).map(|i| format!("f{i}")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let p = profile_from(&[(&refs, 7, None), (&["f0"], 1, None)]);
        let t = StackTrie::from_selection(&p, &Selection::all());
        let s = svg_stacks(&t, &p.frames, 0.0);
        assert_eq!(total(&s.lines), 8);
        assert_eq!(s.cuts.depth_cut_samples, 7);
        let deepest = s.lines.iter().map(|l| l.matches(';').count()).max().unwrap();
        assert_eq!(
            deepest as u32, MAX_SVG_DEPTH,
            "the limit's frames plus the cut bar"
        );
        assert!(
            s.lines
                .iter()
                .any(|l| l.ends_with("[deeper frames cut at depth 512] 7"))
        );
    }

    #[test]
    fn too_many_frames_raise_the_minimum_width() {
        let names: Vec<String> = (0..MAX_SVG_FRAMES + 10).map(|i| format!("leaf{i}")).collect();
        let stacks: Vec<(Vec<&str>, u64)> = names
            .iter()
            .enumerate()
            .map(|(i, n)| (vec!["main", n.as_str()], 1 + (i % 3) as u64))
            .collect();
        let rows: Vec<(&[&str], u64, Option<u64>)> =
            stacks.iter().map(|(s, w)| (s.as_slice(), *w, None)).collect();
        let p = profile_from(&rows);
        let t = StackTrie::from_selection(&p, &Selection::all());
        let s = svg_stacks(&t, &p.frames, 0.0);
        assert!(s.lines.len() <= MAX_SVG_FRAMES, "{}", s.lines.len());
        assert!(s.cuts.raised_for_frame_limit);
        assert_eq!(total(&s.lines), t.total_weight());
    }
}
