//! Time windows: an arbitrary `[start, stop)` and the boot / workload / post phases that
//! start and stop markers cut a run into.

/// A half-open window `[start_ns, stop_ns)`; an absent bound is open.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub struct TimeWindow {
    pub start_ns: Option<u64>,
    pub stop_ns: Option<u64>,
}

/// Where a timestamp falls relative to a window.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum WindowPosition {
    Before,
    Inside,
    After,
}

impl TimeWindow {
    /// The whole run.
    pub const ALL: TimeWindow = TimeWindow {
        start_ns: None,
        stop_ns: None,
    };

    pub fn new(start_ns: Option<u64>, stop_ns: Option<u64>) -> Self {
        Self { start_ns, stop_ns }
    }

    /// From seconds as the batch CLI takes them (`--start-sec`, `--stop-sec`).
    pub fn from_secs(start_sec: Option<f64>, stop_sec: Option<f64>) -> Self {
        let ns = |s: f64| (s.max(0.0) * 1e9).round() as u64;
        Self::new(start_sec.map(ns), stop_sec.map(ns))
    }

    pub fn is_all(&self) -> bool {
        self.start_ns.is_none() && self.stop_ns.is_none()
    }

    /// Samples without a timestamp cannot be placed, so they count as inside: the window
    /// is not applied to them (the caller warns, as the reference analyzer does).
    pub fn position(&self, time_ns: Option<u64>) -> WindowPosition {
        let Some(t) = time_ns else {
            return WindowPosition::Inside;
        };
        if self.start_ns.is_some_and(|s| t < s) {
            WindowPosition::Before
        } else if self.stop_ns.is_some_and(|s| t >= s) {
            WindowPosition::After
        } else {
            WindowPosition::Inside
        }
    }

    pub fn contains(&self, time_ns: Option<u64>) -> bool {
        self.position(time_ns) == WindowPosition::Inside
    }

    /// The overlap of two windows.
    pub fn intersect(&self, other: &TimeWindow) -> TimeWindow {
        let start = match (self.start_ns, other.start_ns) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        let stop = match (self.stop_ns, other.stop_ns) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        TimeWindow::new(start, stop)
    }
}

/// The phases a marked run splits into.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Phase {
    /// Before the start marker.
    Boot,
    /// Between the start and stop markers.
    Workload,
    /// After the stop marker.
    Post,
}

impl Phase {
    pub const ALL: [Phase; 3] = [Phase::Boot, Phase::Workload, Phase::Post];

    /// The file-name infix the reference tools use (`stack.boot.folded`).
    pub fn name(self) -> &'static str {
        match self {
            Phase::Boot => "boot",
            Phase::Workload => "workload",
            Phase::Post => "post",
        }
    }
}

/// Marker times on the sample clock.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub struct PhaseMarkers {
    pub start_ns: Option<u64>,
    pub stop_ns: Option<u64>,
}

impl PhaseMarkers {
    /// The window of a phase, or `None` when the markers do not define it: boot needs a
    /// start, post needs a stop, workload needs both (as the reference harness decides).
    pub fn window(&self, phase: Phase) -> Option<TimeWindow> {
        match phase {
            Phase::Boot => self.start_ns.map(|s| TimeWindow::new(None, Some(s))),
            Phase::Workload => match (self.start_ns, self.stop_ns) {
                (Some(a), Some(b)) => Some(TimeWindow::new(Some(a), Some(b))),
                _ => None,
            },
            Phase::Post => self.stop_ns.map(|s| TimeWindow::new(Some(s), None)),
        }
    }

    /// The main window: whatever the markers bound, open where a marker is missing.
    pub fn main_window(&self) -> TimeWindow {
        TimeWindow::new(self.start_ns, self.stop_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_is_half_open() {
        let w = TimeWindow::new(Some(10), Some(20));
        assert_eq!(w.position(Some(9)), WindowPosition::Before);
        assert_eq!(w.position(Some(10)), WindowPosition::Inside);
        assert_eq!(w.position(Some(19)), WindowPosition::Inside);
        assert_eq!(w.position(Some(20)), WindowPosition::After);
        assert_eq!(w.position(None), WindowPosition::Inside);
        assert!(TimeWindow::ALL.contains(Some(u64::MAX)));
    }

    #[test]
    fn seconds_convert_to_nanoseconds() {
        let w = TimeWindow::from_secs(Some(1.5), Some(2.000000001));
        assert_eq!(w.start_ns, Some(1_500_000_000));
        assert_eq!(w.stop_ns, Some(2_000_000_001));
    }

    #[test]
    fn phases_follow_markers() {
        let m = PhaseMarkers {
            start_ns: Some(100),
            stop_ns: Some(200),
        };
        assert_eq!(m.window(Phase::Boot), Some(TimeWindow::new(None, Some(100))));
        assert_eq!(
            m.window(Phase::Workload),
            Some(TimeWindow::new(Some(100), Some(200)))
        );
        assert_eq!(m.window(Phase::Post), Some(TimeWindow::new(Some(200), None)));
        let only_start = PhaseMarkers {
            start_ns: Some(100),
            stop_ns: None,
        };
        assert_eq!(only_start.window(Phase::Workload), None);
        assert_eq!(only_start.window(Phase::Post), None);
        assert_eq!(only_start.main_window(), TimeWindow::new(Some(100), None));
    }

    #[test]
    fn intersection_narrows() {
        let a = TimeWindow::new(Some(10), None);
        let b = TimeWindow::new(Some(5), Some(30));
        assert_eq!(a.intersect(&b), TimeWindow::new(Some(10), Some(30)));
    }
}
