use std::sync::Arc;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::*;
use crate::config::Theme;
use crate::engine::{AnalysisView, Snapshot};
use crate::model::analysis::{AnalysisInfo, AnalysisSchema, NumDistSchema, SyscallsSchema};
use crate::model::latency_stats::LatencyStats;
use crate::views::test_support::{rows, snapshot_of, text};

fn snapshot_with(series: Vec<LatencySeries>) -> Snapshot {
    let schema = AnalysisSchema::Syscalls(SyscallsSchema {
        perins: false,
        than_ns: None,
    });
    snapshot_of_analysis("syscalls", schema, series)
}

fn snapshot_of_analysis(name: &str, schema: AnalysisSchema, series: Vec<LatencySeries>) -> Snapshot {
    let mut s = snapshot_of(&[(&["main"], 1, Some(5))]);
    s.analysis = Some(Arc::new(AnalysisView {
        info: Arc::new(AnalysisInfo {
            name: name.into(),
            schema,
        }),
        events: 0,
        series,
        table: Default::default(),
        offenders: Default::default(),
        heatmap: None,
    }));
    s
}

fn series_of(snapshot: &Snapshot) -> &[LatencySeries] {
    &snapshot.analysis.as_ref().unwrap().series
}

fn fixture() -> Snapshot {
    let mut read = LatencyHistogram::new();
    read.record_n(800, 50);
    read.record_n(1_500, 30);
    read.record_n(3_000, 10);
    read.record(70_000);
    let mut futex = LatencyHistogram::new();
    futex.record_n(50_000_000, 16);
    futex.record(50_300_000);
    snapshot_with(vec![
        LatencySeries {
            name: "read(0)".into(),
            instance: None,
            stats: LatencyStats {
                histogram: read,
                than: 0,
                errors: 3,
                extra_ns: 0,
            },
            unit: ValueUnit::Nanoseconds,
            counts_errors: true,
        },
        LatencySeries {
            name: "futex(202)".into(),
            instance: Some("cpu 1".into()),
            stats: LatencyStats {
                histogram: futex,
                than: 0,
                errors: 0,
                extra_ns: 0,
            },
            unit: ValueUnit::Nanoseconds,
            counts_errors: false,
        },
    ])
}

fn draw(view: &mut HistogramView, snapshot: &Snapshot, w: u16, h: u16) -> Buffer {
    let theme = Theme::builtin_dark();
    let ctx = ViewContext {
        snapshot,
        theme: &theme,
        focused: true,
        keys: crate::config::keymap::Keymap::standard(),
    };
    let mut buf = Buffer::empty(Rect::new(0, 0, w, h));
    view.render(Rect::new(0, 0, w, h), &mut buf, &ctx);
    buf
}

fn press(view: &mut HistogramView, snapshot: &Snapshot, action: Action) -> Effect {
    let theme = Theme::builtin_dark();
    let ctx = ViewContext {
        snapshot,
        theme: &theme,
        focused: true,
        keys: crate::config::keymap::Keymap::standard(),
    };
    view.handle(action, &ctx)
}

#[test]
fn draws_list_summary_and_log2_bars_at_80x24() {
    let snap = fixture();
    let mut view = HistogramView::new();
    let buf = draw(&mut view, &snap, 80, 24);
    let rows = rows(&buf);
    assert_eq!(
        rows[..12].join("\n"),
        "\
┌ latency histograms ──────────────────────────────────────────────────────────┐
│read(0)           │count 91  min 800ns  avg 2.03us  p50 804ns  p95 2.99us     │
│futex(202) · cpu 1│p99 70.0us  p99.9 70.0us  max 70.0us  total 185us  err 3   │
│                  │[ 512ns, 1.02us)    50 ████████████████████████████████████│
│                  │[1.02us, 2.05us)    30 █████████████████████▋              │
│                  │[2.05us, 4.10us)    10 ███████▎                            │
│                  │[4.10us, 8.19us)     0                                     │
│                  │[8.19us, 16.4us)     0                                     │
│                  │[16.4us, 32.8us)     0                                     │
│                  │[32.8us, 65.5us)     0                                     │
│                  │[65.5us,  131us)     1 ▊                                   │
│                  │                                                           │"
    );
    assert_eq!(rows[23], format!("└{}┘", "─".repeat(78)));
    let theme = Theme::builtin_dark();
    // Bars in the bar colour, the selected series highlighted across the list width.
    assert_eq!(buf[(45, 3)].fg, theme.bar.fg.unwrap());
    assert_eq!(buf[(43, 10)].symbol(), "▊");
    assert_eq!(buf[(43, 10)].fg, theme.bar.fg.unwrap());
    assert_eq!(buf[(1, 1)].bg, theme.selected.bg.unwrap());
    assert_eq!(buf[(17, 1)].bg, theme.selected.bg.unwrap());
    assert_ne!(buf[(1, 2)].bg, theme.selected.bg.unwrap());
    assert_eq!(buf[(0, 0)].fg, theme.border_focused.fg.unwrap());
}

#[test]
fn down_selects_the_next_series_and_its_bars() {
    let snap = fixture();
    let mut view = HistogramView::new();
    draw(&mut view, &snap, 80, 24);
    assert_eq!(press(&mut view, &snap, Action::Down), Effect::None);
    let buf = draw(&mut view, &snap, 80, 24);
    let rows = rows(&buf);
    assert_eq!(
        rows[1..4].join("\n"),
        "\
│read(0)           │count 17  min 50.0ms  avg 50.0ms  p50 50.1ms  p95 50.3ms   │
│futex(202) · cpu 1│p99 50.3ms  p99.9 50.3ms  max 50.3ms  total 850ms          │
│                  │[33.6ms, 67.1ms)    17 ████████████████████████████████████│"
    );
    let theme = Theme::builtin_dark();
    assert_eq!(buf[(1, 2)].bg, theme.selected.bg.unwrap());
    // Down at the end stays; Up and Top go back.
    press(&mut view, &snap, Action::Down);
    assert_eq!(view.selected, 1);
    press(&mut view, &snap, Action::Top);
    assert_eq!(view.selected, 0);
}

#[test]
fn selection_follows_the_series_across_snapshots() {
    let snap = fixture();
    let mut view = HistogramView::new();
    press(&mut view, &snap, Action::Down);
    // The next snapshot lists the series the other way round.
    let mut series = series_of(&fixture()).to_vec();
    series.reverse();
    let reordered = snapshot_with(series);
    let theme = Theme::builtin_dark();
    let ctx = ViewContext {
        snapshot: &reordered,
        theme: &theme,
        focused: false,
        keys: crate::config::keymap::Keymap::standard(),
    };
    view.snapshot_changed(&ctx);
    assert_eq!(view.selected, 0);
    assert_eq!(series_of(&reordered)[view.selected].name, "futex(202)");
}

#[test]
fn narrow_areas_put_the_list_on_top_and_never_panic() {
    let snap = fixture();
    let mut view = HistogramView::new();
    let buf = draw(&mut view, &snap, 40, 10);
    assert_eq!(
        text(&buf),
        "\
┌ latency histograms ──────────────────┐
│read(0)                               │
│futex(202) · cpu 1                    │
│count 91  min 800ns  avg 2.03us       │
│p50 804ns  p95 2.99us  p99 70.0us     │
│p99.9 70.0us  max 70.0us  total 185us │
│err 3                                 │
│[ 512ns, 1.02us)    50 ███████████████│
│[1.02us, 2.05us)    30 █████████      │
└──────────────────────────────────────┘"
    );
    // PageDown scrolls the bars by the rows that fit (2), no further than the last one.
    press(&mut view, &snap, Action::PageDown);
    press(&mut view, &snap, Action::PageDown);
    press(&mut view, &snap, Action::PageDown);
    let buf = draw(&mut view, &snap, 40, 10);
    assert_eq!(rows(&buf)[8], "│[65.5us,  131us)     1 ▎              │");
    for (w, h) in [(10, 3), (0, 5), (5, 0), (1, 1), (2, 2), (3, 8)] {
        draw(&mut view, &snap, w, h);
    }
}

#[test]
fn no_series_shows_how_to_get_some() {
    let snap = snapshot_with(Vec::new());
    let mut view = HistogramView::new();
    let buf = draw(&mut view, &snap, 100, 5);
    assert_eq!(
        rows(&buf)[2],
        "│      no latency data: run `perfscope syscalls` / `rundelay` / `multi-trace` (host sources)       │"
    );
    assert_eq!(press(&mut view, &snap, Action::Down), Effect::None);
    draw(&mut view, &snap, 10, 3);
    draw(&mut view, &snap, 0, 0);
}

#[test]
fn clicking_a_series_selects_it() {
    let snap = fixture();
    let mut view = HistogramView::new();
    draw(&mut view, &snap, 80, 24);
    let theme = Theme::builtin_dark();
    let ctx = ViewContext {
        snapshot: &snap,
        theme: &theme,
        focused: true,
        keys: crate::config::keymap::Keymap::standard(),
    };
    view.click(3, 2, false, &ctx);
    assert_eq!(view.selected, 1);
    view.scroll(-5, &ctx);
    assert_eq!(view.selected, 0);
}

/// num-dist of read sizes (`syscalls:sys_enter_read//num=count/`, 1..=1000 bytes): plain
/// numbers in the summary and the bucket labels (percentiles within the histogram's
/// 1/128), never a duration; an event of another
/// unit beside it leaves the heatmap out and says why.
#[test]
fn num_dist_values_are_numbers_not_durations() {
    let mut sizes = LatencyHistogram::new();
    (1..=1000).for_each(|n| sizes.record(n));
    let series = |name: &str, unit| LatencySeries {
        name: name.into(),
        instance: None,
        stats: LatencyStats {
            histogram: sizes.clone(),
            ..LatencyStats::default()
        },
        unit,
        counts_errors: false,
    };
    let schema = |units: Vec<ValueUnit>| {
        AnalysisSchema::NumDist(NumDistSchema {
            events: vec!["sys_enter_read".into(), "runtime".into()],
            units,
            instance_header: None,
        })
    };
    let snap = snapshot_of_analysis(
        "num-dist",
        schema(vec![ValueUnit::Number]),
        vec![series("sys_enter_read", ValueUnit::Number)],
    );
    let mut view = HistogramView::new();
    let rows = rows(&draw(&mut view, &snap, 80, 24));
    assert_eq!(
        rows[..8].join("\n"),
        "\
┌ latency histograms ──────────────────────────────────────────────────────────┐
│sys_enter_read│count 1000  min 1  avg 500.5  p50 502  p95 948  p99 988        │
│              │p99.9 996  max 1000  total 500500                              │
│              │[     1,      2)     1 ▏                                       │
│              │[     2,      4)     2 ▏                                       │
│              │[     4,      8)     4 ▍                                       │
│              │[     8,     16)     8 ▋                                       │
│              │[    16,     32)    16 █▎                                      │"
    );
    // No figure anywhere carries a time unit.
    let duration = Regex::new(r"\d(ns|us|ms|s)\b").unwrap();
    assert!(!rows.iter().any(|r| duration.is_match(r)), "{rows:#?}");
    // A duration beside it: one axis cannot hold both, and the pane says so.
    let snap = snapshot_of_analysis(
        "num-dist",
        schema(vec![ValueUnit::Number, ValueUnit::Nanoseconds]),
        vec![
            series("sys_enter_read", ValueUnit::Number),
            series("runtime", ValueUnit::Nanoseconds),
        ],
    );
    press(&mut view, &snap, Action::ToggleHeatmap);
    let screen = text(&draw(&mut view, &snap, 80, 24));
    assert!(screen.contains(HEATMAP_MIXED_HINT), "{screen}");
    // The duration series itself still reads as durations.
    press(&mut view, &snap, Action::ToggleHeatmap);
    press(&mut view, &snap, Action::Down);
    let screen = text(&draw(&mut view, &snap, 80, 24));
    assert!(
        screen.contains("min 1ns") && screen.contains("max 1.00us"),
        "{screen}"
    );
}
