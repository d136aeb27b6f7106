//! Focus: keep only samples whose resolved stack has a frame matching a regex.
//!
//! The whole stack is kept unchanged (not re-rooted at the match), as the reference
//! analyzer does. Matching is decided once per frame and once per interned stack, so a
//! focus over a million samples costs one regex test per distinct name.

use regex::Regex;

use super::frames::FrameTable;
use super::tables::ProfileTables;

/// A compiled focus pattern (Rust `regex` syntax, unanchored).
#[derive(Clone, Debug)]
pub struct Focus {
    regex: Regex,
}

impl Focus {
    pub fn new(pattern: &str) -> Result<Self, regex::Error> {
        Ok(Self {
            regex: Regex::new(pattern)?,
        })
    }

    pub fn pattern(&self) -> &str {
        self.regex.as_str()
    }

    pub fn matches_name(&self, name: &str) -> bool {
        self.regex.is_match(name)
    }

    /// For every frame id, whether its name matches.
    pub fn frame_mask(&self, frames: &FrameTable) -> Vec<bool> {
        frames
            .ids()
            .map(|id| self.matches_name(frames.name(id)))
            .collect()
    }

    /// For every stack id, whether any of its frames matches.
    pub fn stack_mask(&self, profile: &ProfileTables) -> Vec<bool> {
        let frame_mask = self.frame_mask(&profile.frames);
        profile
            .stacks
            .ids()
            .map(|stack| profile.stack_frames(stack).any(|f| frame_mask[f.index()]))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::sample_list::test_support::profile_from;

    #[test]
    fn a_stack_matches_when_any_frame_matches() {
        let p = profile_from(&[
            (&["kmain", "run_bench", "hash_block", "mix_leaf"], 1, None),
            (&["kmain", "run_bench", "sort_workload"], 1, None),
            (&["kmain", "readline"], 1, None),
        ]);
        let focus = Focus::new("hash|sort_").unwrap();
        let mask = focus.stack_mask(&p);
        let kept: Vec<bool> = p.samples().iter().map(|s| mask[s.stack.index()]).collect();
        assert_eq!(kept, [true, true, false]);
        assert!(Focus::new("(").is_err());
    }
}
