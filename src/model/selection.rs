//! Selection: which samples a view or an export looks at — a time window, an optional
//! focus and an optional single instance — over any holder of sample counts (the engine's
//! time slices, a test's list of samples) through [`SampleSource`].

use super::counts::SampleKey;
use super::focus::Focus;
use super::sample::InstanceId;
use super::tables::ProfileTables;
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

/// A count of samples as a [`SampleSource`] hands it out: a key, its weight, and where the
/// samples lie relative to the window asked about.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Counted {
    pub key: SampleKey,
    pub weight: u64,
    pub position: WindowPosition,
    /// The samples have timestamps (a window can be applied to them).
    pub timed: bool,
}

/// Anything that keeps sample counts with their times, however coarsely.
pub trait SampleSource {
    /// The tables the keys point into.
    fn tables(&self) -> &ProfileTables;

    /// Every count, with where it lies relative to `window`.
    fn visit_counts(&self, window: &TimeWindow, visit: &mut dyn FnMut(Counted));

    /// Earliest and latest sample time, when the samples have times.
    fn time_range_ns(&self) -> Option<(u64, u64)>;
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

    /// Precompute what the selection needs (the focus mask) for these tables.
    pub fn matcher(&self, tables: &ProfileTables) -> SelectionMatcher {
        SelectionMatcher {
            window: self.window,
            instance: self.instance,
            focus_mask: self.focus.as_ref().map(|f| f.stack_mask(tables)),
        }
    }

    /// Visit the counts of `source` with their verdicts.
    pub fn classify(&self, source: &dyn SampleSource, visit: &mut dyn FnMut(Counted, Verdict)) {
        let matcher = self.matcher(source.tables());
        source.visit_counts(&self.window, &mut |counted| {
            visit(counted, matcher.verdict(&counted))
        });
    }

    /// Visit the selected counts of `source`.
    pub fn for_each_selected(&self, source: &dyn SampleSource, visit: &mut dyn FnMut(Counted)) {
        self.classify(source, &mut |counted, verdict| {
            if verdict == Verdict::Selected {
                visit(counted);
            }
        });
    }
}

/// A selection bound to one state of the tables.
#[derive(Clone, Debug)]
pub struct SelectionMatcher {
    window: TimeWindow,
    instance: Option<InstanceId>,
    focus_mask: Option<Vec<bool>>,
}

impl SelectionMatcher {
    pub fn window(&self) -> &TimeWindow {
        &self.window
    }

    /// The verdict on a count whose window position is already known.
    pub fn verdict(&self, counted: &Counted) -> Verdict {
        match counted.position {
            WindowPosition::Before => return Verdict::BeforeWindow,
            WindowPosition::After => return Verdict::AfterWindow,
            WindowPosition::Inside => {}
        }
        self.key_verdict(&counted.key)
    }

    /// The verdict on a key inside the window: its instance and its focus.
    pub fn key_verdict(&self, key: &SampleKey) -> Verdict {
        if self.instance.is_some_and(|i| i != key.instance) {
            return Verdict::OtherInstance;
        }
        if let Some(mask) = &self.focus_mask {
            // A stack interned after the mask was built cannot have been checked.
            if !mask.get(key.stack.index()).copied().unwrap_or(false) {
                return Verdict::NoFocusMatch;
            }
        }
        Verdict::Selected
    }

    /// The verdict on a sample at `time_ns` (`None`: untimed, inside every window).
    pub fn verdict_at(&self, time_ns: Option<u64>, key: &SampleKey) -> Verdict {
        match self.window.position(time_ns) {
            WindowPosition::Before => Verdict::BeforeWindow,
            WindowPosition::After => Verdict::AfterWindow,
            WindowPosition::Inside => self.key_verdict(key),
        }
    }

    pub fn selects(&self, counted: &Counted) -> bool {
        self.verdict(counted) == Verdict::Selected
    }
}
