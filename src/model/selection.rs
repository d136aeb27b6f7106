//! Selection: which samples a view or an export looks at — a time window, an optional
//! focus and an optional single instance.

use super::focus::Focus;
use super::profile::Profile;
use super::sample::{InstanceId, Sample};
use super::window::{TimeWindow, WindowPosition};

/// What to look at.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    pub window: TimeWindow,
    pub focus: Option<Focus>,
    pub instance: Option<InstanceId>,
}

/// Why a sample is or is not selected (statistics count each reason).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Selected,
    BeforeWindow,
    AfterWindow,
    OtherInstance,
    NoFocusMatch,
}

impl Selection {
    pub fn all() -> Self {
        Self::default()
    }

    pub fn window(window: TimeWindow) -> Self {
        Self {
            window,
            ..Self::default()
        }
    }

    pub fn with_focus(mut self, focus: Option<Focus>) -> Self {
        self.focus = focus;
        self
    }

    pub fn with_instance(mut self, instance: Option<InstanceId>) -> Self {
        self.instance = instance;
        self
    }

    /// Precompute what the selection needs (the focus mask) for this profile.
    pub fn matcher(&self, profile: &Profile) -> SelectionMatcher {
        SelectionMatcher {
            window: self.window,
            instance: self.instance,
            focus_mask: self.focus.as_ref().map(|f| f.stack_mask(profile)),
        }
    }
}

/// A selection bound to one profile state.
#[derive(Clone, Debug)]
pub struct SelectionMatcher {
    window: TimeWindow,
    instance: Option<InstanceId>,
    focus_mask: Option<Vec<bool>>,
}

impl SelectionMatcher {
    pub fn verdict(&self, sample: &Sample) -> Verdict {
        match self.window.position(sample.time_ns) {
            WindowPosition::Before => return Verdict::BeforeWindow,
            WindowPosition::After => return Verdict::AfterWindow,
            WindowPosition::Inside => {}
        }
        if self.instance.is_some_and(|i| i != sample.instance) {
            return Verdict::OtherInstance;
        }
        if let Some(mask) = &self.focus_mask {
            // A stack interned after the mask was built cannot have been checked.
            if !mask.get(sample.stack.index()).copied().unwrap_or(false) {
                return Verdict::NoFocusMatch;
            }
        }
        Verdict::Selected
    }

    pub fn selects(&self, sample: &Sample) -> bool {
        self.verdict(sample) == Verdict::Selected
    }

    /// The selected samples of `profile`.
    pub fn samples<'p>(&'p self, profile: &'p Profile) -> impl Iterator<Item = &'p Sample> + 'p {
        profile.samples().iter().filter(move |s| self.selects(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::profile::test_support::profile_from;

    #[test]
    fn window_focus_and_instance_combine() {
        let p = profile_from(&[
            (&["a", "b"], 1, Some(5)),
            (&["a", "c"], 1, Some(15)),
            (&["a", "b"], 1, Some(25)),
            (&["a", "c"], 1, Some(16)),
        ]);
        let sel = Selection::window(TimeWindow::new(Some(10), Some(20)))
            .with_focus(Some(Focus::new("^c$").unwrap()));
        let m = sel.matcher(&p);
        let verdicts: Vec<Verdict> = p.samples().iter().map(|s| m.verdict(s)).collect();
        assert_eq!(
            verdicts,
            [
                Verdict::BeforeWindow,
                Verdict::Selected,
                Verdict::AfterWindow,
                Verdict::Selected
            ]
        );
        let other = Selection::all().with_instance(Some(InstanceId(7))).matcher(&p);
        assert_eq!(other.samples(&p).count(), 0);
    }
}
