//! The views the app switches between, in tab order.

use crate::config::Action;

/// One full-screen view.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum ViewKind {
    Hotspots,
    Flamegraph,
    CallTree,
    Histogram,
    Table,
    Timeline,
    Console,
}

impl ViewKind {
    pub const ALL: [ViewKind; 7] = [
        ViewKind::Hotspots,
        ViewKind::Flamegraph,
        ViewKind::CallTree,
        ViewKind::Histogram,
        ViewKind::Timeline,
        ViewKind::Console,
        ViewKind::Table,
    ];

    pub fn index(self) -> usize {
        Self::ALL.iter().position(|k| *k == self).unwrap_or(0)
    }

    /// The tab title.
    pub fn title(self) -> &'static str {
        match self {
            ViewKind::Hotspots => "Hotspots",
            ViewKind::Flamegraph => "Flamegraph",
            // Short enough that all seven tabs fit in 80 columns.
            ViewKind::CallTree => "Tree",
            ViewKind::Histogram => "Latency",
            ViewKind::Table => "Tables",
            ViewKind::Timeline => "Timeline",
            ViewKind::Console => "Console",
        }
    }

    /// The action that shows this view (its tab is labelled with that action's key).
    pub fn show_action(self) -> Action {
        match self {
            ViewKind::Hotspots => Action::ShowHotspots,
            ViewKind::Flamegraph => Action::ShowFlamegraph,
            ViewKind::CallTree => Action::ShowCallTree,
            ViewKind::Histogram => Action::ShowHistogram,
            ViewKind::Table => Action::ShowTable,
            ViewKind::Timeline => Action::ShowTimeline,
            ViewKind::Console => Action::ShowConsole,
        }
    }

    /// The view an action shows, if it is a "show" action.
    pub fn shown_by(action: Action) -> Option<ViewKind> {
        Some(match action {
            Action::ShowHotspots => ViewKind::Hotspots,
            Action::ShowFlamegraph => ViewKind::Flamegraph,
            Action::ShowCallTree => ViewKind::CallTree,
            Action::ShowHistogram => ViewKind::Histogram,
            Action::ShowTable => ViewKind::Table,
            Action::ShowTimeline => ViewKind::Timeline,
            Action::ShowConsole => ViewKind::Console,
            _ => return None,
        })
    }

    pub fn next(self) -> ViewKind {
        Self::ALL[(self.index() + 1) % Self::ALL.len()]
    }

    pub fn prev(self) -> ViewKind {
        Self::ALL[(self.index() + Self::ALL.len() - 1) % Self::ALL.len()]
    }

    /// Whether the per-instance split applies to this view.
    pub fn splits_per_instance(self) -> bool {
        matches!(self, ViewKind::Hotspots | ViewKind::Flamegraph)
    }
}
