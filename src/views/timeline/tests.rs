use ratatui::buffer::Buffer;

use super::*;
use crate::config::Theme;
use crate::engine::Snapshot;
use crate::engine::testing::snapshot_with;
use crate::model::Counted;
use crate::model::Selection;
use crate::model::sample_list::test_support::profile_from;
use crate::views::test_support::{ctx, render, rows, text};

const S: u64 = 1_000_000_000;

/// 81 samples 100 ms apart from 1 s to 9 s, weights rising 1..=10 in every second; markers
/// at 3 s and 7 s; the window 4 s – 6 s selected.
fn fixture_with(window: TimeWindow, markers: PhaseMarkers) -> Snapshot {
    let stacks: Vec<(&[&str], u64, Option<u64>)> = (0..=80u64)
        .map(|i| (&["main", "work"][..], 1 + i % 10, Some(S + i * S / 10)))
        .collect();
    let p = profile_from(&stacks);
    snapshot_with(&p, Selection::window(window), markers)
}

fn fixture() -> Snapshot {
    fixture_with(
        TimeWindow::new(Some(4 * S), Some(6 * S)),
        PhaseMarkers {
            start_ns: Some(3 * S),
            stop_ns: Some(7 * S),
        },
    )
}

fn draw(view: &mut TimelineView, snapshot: &Snapshot, w: u16, h: u16) -> Buffer {
    let theme = Theme::builtin_dark();
    render(view, &ctx(snapshot, &theme, false), w, h)
}

fn press(view: &mut TimelineView, snapshot: &Snapshot, action: Action) -> Effect {
    let theme = Theme::builtin_dark();
    view.handle(action, &ctx(snapshot, &theme, false))
}

#[test]
fn draws_bars_markers_axis_and_detail_at_80x24() {
    let snap = fixture();
    let mut view = TimelineView::new();
    let buf = draw(&mut view, &snap, 80, 24);
    assert_eq!(
        text(&buf),
        "\
┌ timeline · full bar = 19 samples ────────────────────────────────────────────┐
│                   ▼ start                                ▼ stop              │
│                   │                                      │                 █ │
│                   │                                      │                 █ │
│                   │                                      │                 █ │
│                   │                                      │                 █ │
│                   │                                      │                 █ │
│                   │                                      │                 █ │
│                   │                                      │                 █ │
│                   │                                      │                 █ │
│                   │                  █                   │                 █ │
│        █         █│        █         █        █         █│        █        █ │
│       ██        ██│       ██        ██       ██        ██│       ██        █ │
│      ███       ███│      ███       ███      ███       ███│      ███       ██ │
│     ████      ████│     ████      ████     ████      ████│     ████      ███ │
│    █████     █████│    █████     █████    █████     █████│    █████     ████ │
│   ██████    ██████│   ██████    ██████   ██████    ██████│   ██████    █████ │
│  ███████   ███████│  ███████   ███████  ███████   ███████│  ███████   ██████ │
│█████████  ████████│ ████████  ████████ ████████  ████████│ ████████  ███████ │
│█████████ █████████│█████████ ██████████████████ █████████│█████████ ████████ │
│██████████████████████████████████████████████████████████████████████████████│
│╵1.0s     ╵2.0s     ╵3.1s     ╵4.1s     ╵5.1s     ╵6.1s     ╵7.2s     ╵8.2s   │
│cursor 1.00s · 3 samples  │  window 4.00s → 6.00s                             │
└──────────────────────────────────────────────────────────────────────────────┘"
    );
    let theme = Theme::builtin_dark();
    let window_bg = theme.window.bg.unwrap();
    // The start marker column (3 s → column 19) and its label in the marker colour.
    assert_eq!(buf[(20, 2)].symbol(), "│");
    assert_eq!(buf[(20, 2)].fg, theme.marker.fg.unwrap());
    assert_eq!(buf[(20, 20)].fg, theme.marker.fg.unwrap());
    assert_eq!(buf[(22, 1)].fg, theme.marker.fg.unwrap());
    assert_eq!(buf[(59, 2)].fg, theme.marker.fg.unwrap());
    // Bars in the bar colour; the window 4 s – 6 s shades columns 29..=48.
    assert_eq!(buf[(10, 20)].fg, theme.bar.fg.unwrap());
    assert_ne!(buf[(29, 3)].bg, window_bg);
    assert_eq!(buf[(30, 3)].bg, window_bg);
    assert_eq!(buf[(49, 3)].bg, window_bg);
    assert_ne!(buf[(50, 3)].bg, window_bg);
    // The cursor column (0) is highlighted over the whole bar height.
    assert_eq!(buf[(1, 2)].bg, theme.selected.bg.unwrap());
    assert_eq!(buf[(1, 20)].bg, theme.selected.bg.unwrap());
    assert_ne!(buf[(2, 20)].bg, theme.selected.bg.unwrap());
}

#[test]
fn cursor_moves_by_columns_and_pages() {
    let snap = fixture();
    let mut view = TimelineView::new();
    draw(&mut view, &snap, 80, 24);
    press(&mut view, &snap, Action::Left);
    assert_eq!(view.cursor, 0);
    for _ in 0..5 {
        press(&mut view, &snap, Action::Right);
    }
    assert_eq!(view.cursor, 5);
    press(&mut view, &snap, Action::PageDown);
    assert_eq!(view.cursor, 15);
    press(&mut view, &snap, Action::PageUp);
    assert_eq!(view.cursor, 5);
    press(&mut view, &snap, Action::Bottom);
    assert_eq!(view.cursor, 77);
    press(&mut view, &snap, Action::Right);
    assert_eq!(view.cursor, 77);
    press(&mut view, &snap, Action::Top);
    assert_eq!(view.cursor, 0);
    // Mouse: a click puts the cursor under the pointer, the wheel moves it.
    let theme = Theme::builtin_dark();
    let ctx = ViewContext {
        snapshot: &snap,
        theme: &theme,
        focused: false,
        keys: crate::config::keymap::Keymap::standard(),
    };
    assert_eq!(view.click(11, 5, false, &ctx), Effect::None);
    assert_eq!(view.cursor, 10);
    view.scroll(3, &ctx);
    assert_eq!(view.cursor, 13);
    view.scroll(-100, &ctx);
    assert_eq!(view.cursor, 0);
    // A narrower render keeps the cursor near the same time.
    view.cursor = 40;
    draw(&mut view, &snap, 41, 24);
    assert_eq!(view.cursor, 20);
}

#[test]
fn marking_and_applying_sets_the_exact_window() {
    let snap = fixture();
    let mut view = TimelineView::new();
    draw(&mut view, &snap, 80, 24);
    assert_eq!(
        press(&mut view, &snap, Action::Activate),
        Effect::Message("no range marked: mark a start and/or a stop at the cursor first".into())
    );
    for _ in 0..2 {
        press(&mut view, &snap, Action::PageDown);
    }
    assert_eq!(press(&mut view, &snap, Action::MarkStart), Effect::None);
    for _ in 0..20 {
        press(&mut view, &snap, Action::Right);
    }
    press(&mut view, &snap, Action::MarkStop);
    // Column 20 starts at 1 s + 8 s × 20/78; the stop is the end of column 40.
    let buf = draw(&mut view, &snap, 80, 24);
    assert_eq!(
        rows(&buf)[22],
        "│cursor 5.10s · 3 samples  │  pending 3.05s → 5.21s · 115 samples  │  window 4…│"
    );
    let theme = Theme::builtin_dark();
    // The pending range is a band on the axis row (columns 20..=40).
    assert_ne!(buf[(20, 21)].bg, theme.selected.bg.unwrap());
    assert_eq!(buf[(21, 21)].bg, theme.selected.bg.unwrap());
    assert_eq!(buf[(41, 21)].bg, theme.selected.bg.unwrap());
    assert_ne!(buf[(42, 21)].bg, theme.selected.bg.unwrap());
    assert_eq!(
        press(&mut view, &snap, Action::Activate),
        Effect::SetWindow(TimeWindow::new(Some(3_051_282_051), Some(5_205_128_205)))
    );
    // Applied: the pending range is gone.
    assert_eq!(view.pending_start_ns, None);
    // A stop before the start is refused.
    press(&mut view, &snap, Action::MarkStart);
    press(&mut view, &snap, Action::Top);
    press(&mut view, &snap, Action::MarkStop);
    assert_eq!(
        press(&mut view, &snap, Action::Activate),
        Effect::Message("the marked start is not before the stop: mark again".into())
    );
    // Only a start is an open-ended window.
    press(&mut view, &snap, Action::Back);
    press(&mut view, &snap, Action::MarkStart);
    assert_eq!(
        press(&mut view, &snap, Action::Activate),
        Effect::SetWindow(TimeWindow::new(Some(S), None))
    );
}

#[test]
fn workload_and_clear_set_marker_and_whole_windows() {
    let snap = fixture();
    let mut view = TimelineView::new();
    assert_eq!(
        press(&mut view, &snap, Action::ApplyWorkload),
        Effect::SetWindow(TimeWindow::new(Some(3 * S), Some(7 * S)))
    );
    assert_eq!(
        press(&mut view, &snap, Action::ClearWindow),
        Effect::SetWindow(TimeWindow::ALL)
    );
    let unmarked = fixture_with(TimeWindow::ALL, PhaseMarkers::default());
    assert_eq!(
        press(&mut view, &unmarked, Action::ApplyWorkload),
        Effect::Message("no start/stop markers in this run: mark a range on the timeline instead".into())
    );
    // The whole run is not shaded.
    let buf = draw(&mut view, &unmarked, 80, 24);
    let theme = Theme::builtin_dark();
    assert!((2..79).all(|x| buf[(x, 3)].bg != theme.window.bg.unwrap()));
    assert_eq!(rows(&buf)[1], format!("│{}│", " ".repeat(78)));
}

#[test]
fn narrow_areas_drop_rows_in_order_and_never_panic() {
    let snap = fixture();
    let mut view = TimelineView::new();
    let buf = draw(&mut view, &snap, 40, 8);
    assert_eq!(
        text(&buf),
        "\
┌ timeline · full bar = 20 samples ────┐
│         ▼ start            ▼ stop    │
│   ▄    ▄│  ▂▇   ▂█   ▄    ▄│  ▂▇   ▂█│
│ ▃██▅ ▃███ ▅██  ▅██ ▃██▅ ▃███ ▅██  ▅██│
│▇████▆████████▄████▆████▆████████▄████│
│╵1.0s     ╵3.1s     ╵5.2s     ╵7.3s   │
│cursor 1.00s · 6 samples  │  window 4…│
└──────────────────────────────────────┘"
    );
    let buf = draw(&mut view, &snap, 12, 4);
    assert_eq!(
        text(&buf),
        "\
┌ timeline ┐
│▇▆▇▇█▇▆▇▇█│
│cursor 1.…│
└──────────┘"
    );
    for (w, h) in [(10, 3), (0, 5), (5, 0), (1, 1), (2, 2), (3, 3), (80, 1)] {
        draw(&mut view, &snap, w, h);
    }
}

#[test]
fn untimed_profiles_show_a_hint() {
    let p = profile_from(&[(&["main"], 1, None)]);
    let snap = snapshot_with(&p, Selection::all(), PhaseMarkers::default());
    let mut view = TimelineView::new();
    let buf = draw(&mut view, &snap, 70, 5);
    assert_eq!(
        rows(&buf)[2],
        "│  no timestamped samples or events yet (folded input has no times)  │"
    );
    assert_eq!(press(&mut view, &snap, Action::Right), Effect::None);
    assert_eq!(view.cursor, 0);
    draw(&mut view, &snap, 10, 3);
}

/// A host session's samples carry seconds since boot: the axis, the cursor and the window
/// count from the session's start instead.
#[test]
fn times_count_from_the_snapshot_origin() {
    let mut snap = fixture();
    snap.time_origin_ns = S;
    let mut view = TimelineView::new();
    let buf = draw(&mut view, &snap, 80, 24);
    let lines = rows(&buf);
    assert!(
        lines[21].starts_with("│╵0.0s     ╵1.0s     ╵2.1s"),
        "{}",
        lines[21]
    );
    assert!(
        lines[22].starts_with("│cursor 0.00s · 3 samples  │  window 3.00s → 5.00s"),
        "{}",
        lines[22]
    );
}

/// An analyzer session's timeline counts events, and a window marked on it selects the
/// analysis's rows as it selects samples.
#[test]
fn an_event_timeline_counts_events_and_takes_a_window() {
    let p = profile_from(&[(&["main"], 1, None)]);
    let mut snap = snapshot_with(&p, Selection::all(), PhaseMarkers::default());
    let mut events = Timeline::spanning(10 * S, 11 * S, 64, PhaseMarkers::default());
    events.counted = Counted::Events;
    for i in 0..100u64 {
        events.add_at(10 * S + i * S / 100, 1, 0);
    }
    snap.timeline = Some(std::sync::Arc::new(events));
    snap.time_origin_ns = 10 * S;
    let mut view = TimelineView::new();
    let buf = draw(&mut view, &snap, 80, 24);
    let lines = rows(&buf);
    assert!(
        lines[22].starts_with("│cursor 0.000s · 2 events"),
        "{}",
        lines[22]
    );
    assert!(lines[22].contains(" events  │  window: all"), "{}", lines[22]);
    assert!(lines[21].starts_with("│╵0.0"), "{}", lines[21]);
    assert_eq!(press(&mut view, &snap, Action::MarkStart), Effect::None);
    assert_eq!(press(&mut view, &snap, Action::Right), Effect::None);
    assert_eq!(view.cursor, 1, "the cursor reads the rate");
    assert_eq!(press(&mut view, &snap, Action::MarkStop), Effect::None);
    match press(&mut view, &snap, Action::Activate) {
        Effect::SetWindow(w) => assert_eq!(w.start_ns, Some(10 * S)),
        other => panic!("marking a range on an event timeline selects it: {other:?}"),
    }
}

#[test]
fn the_scale_is_in_the_title_and_lost_records_are_marked() {
    let mut snap = fixture();
    let mut timeline = (*snap.timeline.clone().unwrap()).clone();
    // 7 records lost in the bin of 5 s.
    let bin = ((5 * S - timeline.start_ns) / timeline.slice_ns) as usize;
    timeline.lost.resize(timeline.weights.len(), 0);
    timeline.lost[bin] = 7;
    snap.timeline = Some(std::sync::Arc::new(timeline));
    let mut view = TimelineView::new();
    let buf = draw(&mut view, &snap, 80, 24);
    let screen = rows(&buf);
    assert!(
        screen[0].starts_with("┌ timeline · full bar = 19 samples · × lost 7 ─"),
        "{}",
        screen[0]
    );
    // 5 s is just short of half-way through 1 s … 9 s (the end is exclusive): column 38
    // of 78, 39 with the frame's border.
    let marks: Vec<usize> = screen[1]
        .chars()
        .enumerate()
        .filter(|(_, c)| *c == '×')
        .map(|(i, _)| i)
        .collect();
    assert_eq!(marks, [39], "{}", screen[1]);
}

#[test]
fn marker_labels_close_together_do_not_overlap() {
    // Start and stop two columns apart near the right edge: "stop" cannot go right, and
    // turned left it would run into "start ▼"; it becomes a bare ▼.
    let snap = fixture_with(
        TimeWindow::default(),
        PhaseMarkers {
            start_ns: Some(8 * S + 6 * S / 10),
            stop_ns: Some(8 * S + 8 * S / 10),
        },
    );
    let mut view = TimelineView::new();
    let buf = draw(&mut view, &snap, 80, 24);
    let row = &rows(&buf)[1];
    assert!(
        row.trim_end_matches('│').trim_end().ends_with("start ▼ ▼"),
        "{row}"
    );
}
