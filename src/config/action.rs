//! Actions: what a key means. Keymaps (keymaps/*.toml) bind keys to these names, the help
//! overlay lists them with their descriptions, and views receive them — never raw keys.

use serde::Deserialize;

/// Where a binding applies. A key is looked up in the focused view's context first, then
/// in `Global`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KeyContext {
    Global,
    Hotspots,
    Flamegraph,
    CallTree,
    Histogram,
    Table,
    Timeline,
    Console,
    Instances,
}

impl KeyContext {
    pub const ALL: [KeyContext; 9] = [
        KeyContext::Global,
        KeyContext::Hotspots,
        KeyContext::Flamegraph,
        KeyContext::CallTree,
        KeyContext::Histogram,
        KeyContext::Table,
        KeyContext::Timeline,
        KeyContext::Console,
        KeyContext::Instances,
    ];

    /// The section name in a keymap file.
    pub fn name(self) -> &'static str {
        match self {
            KeyContext::Global => "global",
            KeyContext::Hotspots => "hotspots",
            KeyContext::Flamegraph => "flamegraph",
            KeyContext::CallTree => "call_tree",
            KeyContext::Histogram => "histogram",
            KeyContext::Table => "table",
            KeyContext::Timeline => "timeline",
            KeyContext::Console => "console",
            KeyContext::Instances => "instances",
        }
    }
}

macro_rules! actions {
    ($($variant:ident => $name:literal, $help:literal;)*) => {
        /// Everything a key can do.
        #[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Action {
            $($variant,)*
        }

        impl Action {
            pub const ALL: &'static [Action] = &[$(Action::$variant,)*];

            /// The name used in keymap files (`zoom_in = ["enter"]`).
            pub fn name(self) -> &'static str {
                match self {
                    $(Action::$variant => $name,)*
                }
            }

            /// One line for the help overlay.
            pub fn help(self) -> &'static str {
                match self {
                    $(Action::$variant => $help,)*
                }
            }

            pub fn from_name(name: &str) -> Option<Action> {
                match name {
                    $($name => Some(Action::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

actions! {
    // Application
    Quit => "quit", "quit and restore the terminal";
    Help => "help", "show or hide this help";
    NextView => "next_view", "next view";
    PrevView => "prev_view", "previous view";
    ShowHotspots => "show_hotspots", "hotspot table";
    ShowFlamegraph => "show_flamegraph", "flamegraph";
    ShowCallTree => "show_call_tree", "call tree";
    ShowHistogram => "show_histogram", "latency histograms";
    ShowTable => "show_table", "analyzer tables (perf-prof's columns)";
    ShowTimeline => "show_timeline", "timeline and time window";
    ShowConsole => "show_console", "guest console";
    ToggleInstances => "toggle_instances", "split the view per CPU / vCPU / thread";
    NextInstance => "next_instance", "show the next instance full-screen (then all again)";
    PrevInstance => "prev_instance", "show the previous instance full-screen";
    Export => "export", "write the artifact set for what is on screen";
    // Live modes
    ModeAccumulate => "mode_accumulate", "live mode: accumulate everything";
    ModeSliding => "mode_sliding", "live mode: sliding window of the last N seconds";
    ModeDecay => "mode_decay", "live mode: decay old samples each refresh";
    ToggleFreeze => "toggle_freeze", "freeze or resume the display";
    Reset => "reset", "every view (samples and analyses) counts from now";
    RefreshFaster => "refresh_faster", "refresh more often";
    RefreshSlower => "refresh_slower", "refresh less often";
    // Movement, shared by the views
    Up => "up", "move up";
    Down => "down", "move down";
    Left => "left", "move left";
    Right => "right", "move right";
    PageUp => "page_up", "page up";
    PageDown => "page_down", "page down";
    Top => "top", "go to the first row";
    Bottom => "bottom", "go to the last row";
    Activate => "activate", "open / zoom / jump to the selected item";
    Back => "back", "go back (zoom out, clear)";
    // Search
    Search => "search", "search (regex)";
    NextMatch => "next_match", "next match";
    PrevMatch => "prev_match", "previous match";
    ClearSearch => "clear_search", "clear the search";
    // Flamegraph
    Parent => "parent", "select the parent frame";
    Child => "child", "select the widest child frame";
    PrevSibling => "prev_sibling", "select the previous sibling";
    NextSibling => "next_sibling", "select the next sibling";
    ZoomIn => "zoom_in", "zoom into the selected frame";
    ZoomOut => "zoom_out", "zoom out one level";
    ZoomReset => "zoom_reset", "show the whole graph";
    Focus => "focus", "keep only stacks through the selected function";
    Unfocus => "unfocus", "drop the focus";
    ToggleInverted => "toggle_inverted", "inverted: callers of the selected leaf";
    // Tables and trees
    SortNext => "sort_next", "sort by the next column";
    SortReverse => "sort_reverse", "reverse the sort order";
    PercentUp => "percent_up", "hide more small rows (raise the percent limit)";
    PercentDown => "percent_down", "show more small rows (lower the percent limit)";
    Expand => "expand", "expand the node";
    Collapse => "collapse", "collapse the node";
    ToggleBottomUp => "toggle_bottom_up", "switch top-down / bottom-up";
    ToggleOffenders => "toggle_offenders", "list the --than offenders as perf-prof prints them";
    ToggleHeatmap => "toggle_heatmap", "latency heatmap over time instead of the histograms";
    // Timeline
    MarkStart => "mark_start", "start the time range at the cursor";
    MarkStop => "mark_stop", "end the time range at the cursor";
    ApplyWorkload => "window_workload", "select the marker window (workload)";
    ClearWindow => "clear_window", "select the whole run";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for &a in Action::ALL {
            assert!(seen.insert(a.name()), "duplicate action name {}", a.name());
            assert_eq!(Action::from_name(a.name()), Some(a));
            assert!(!a.help().is_empty());
        }
        assert_eq!(Action::from_name("no_such_action"), None);
    }
}
