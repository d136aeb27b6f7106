//! The real app on a `TestBackend`: the model thread opens the assets recording (a real
//! qperf.bin and ELF), scripted keys drive it, and the screen and state are asserted.

use std::path::Path;
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::*;
use crate::feeds::file::{FileFeed, Input};
use crate::feeds::symbol_options::{OpenOptions, SymbolSource};
use crate::model::{PhaseMarkers, TimeWindow};

fn assets() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets")
}

fn start(out: &Path) -> (App, Receiver<AppEvent>) {
    let (tx, rx) = channel();
    let source = FileFeed::new(
        Input::Qperf {
            path: assets().join("tinyk-riscv64.qperf.bin"),
            symbols: SymbolSource::Elf(assets().join("tinyk-riscv64.elf")),
        },
        OpenOptions::default(),
        Some(assets().join("tinyk-riscv64.console.txt")),
        PhaseMarkers::default(),
    );
    let config = AppConfig {
        keymap: Keymap::builtin("default").unwrap(),
        theme: Theme::default(),
        mouse: true,
        export: ExportRequest::new(out.to_path_buf()),
        refresh: Duration::from_millis(100),
        sliding_seconds: 10.0,
        decay_factor: 0.875,
        selection: Selection::all(),
        mode: LiveMode::Accumulate,
        initial_view: ViewKind::Flamegraph,
        hidden_views: Vec::new(),
        export_on_finish: None,
        select_workload_on_stop: false,
        recording: None,
    };
    let mut app = App::new(config, Box::new(source), "assets", tx).unwrap();
    pump(&mut app, &rx, "the recording", |a| {
        a.snapshot.stats.samples == 1435
    });
    (app, rx)
}

/// Handle model events until `done(app)`; fail after a generous timeout.
fn pump(app: &mut App, rx: &Receiver<AppEvent>, what: &str, done: impl Fn(&App) -> bool) {
    let start = Instant::now();
    while !done(app) {
        let left = Duration::from_secs(30).saturating_sub(start.elapsed());
        assert!(!left.is_zero(), "timed out waiting for {what}");
        if let Ok(ev) = rx.recv_timeout(left.min(Duration::from_millis(200))) {
            app.handle(ev);
        }
        app.update_wants();
    }
}

fn press(app: &mut App, keys: &str) {
    for c in keys.chars() {
        let code = match c {
            '\n' => KeyCode::Enter,
            '\x1b' => KeyCode::Esc,
            '\t' => KeyCode::Tab,
            c => KeyCode::Char(c),
        };
        app.handle(AppEvent::Key(KeyEvent::new(code, KeyModifiers::NONE)));
        app.update_wants();
    }
}

fn screen(app: &mut App, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    app.dirty = true;
    app.draw(&mut terminal).unwrap();
    let buf = terminal.backend().buffer();
    (0..height)
        .map(|y| (0..width).map(|x| buf[(x, y)].symbol()).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn each_tab_is_labelled_with_the_key_that_shows_it() {
    let out = tempfile::tempdir().unwrap();
    let (mut app, _rx) = start(out.path());
    // All seven fit in 80 columns.
    let s = screen(&mut app, 80, 24);
    let tabs = s.lines().next().unwrap().trim_end().to_string();
    assert_eq!(
        tabs,
        " 1 Hotspots  2 Flamegraph  3 Tree  4 Latency  5 Timeline  6 Console  8 Tables"
    );
    // The key on each tab shows that tab.
    for (key, view) in [
        ("8", ViewKind::Table),
        ("5", ViewKind::Timeline),
        ("6", ViewKind::Console),
        ("4", ViewKind::Histogram),
    ] {
        press(&mut app, key);
        assert_eq!(app.active, view, "key {key}");
    }
}

#[test]
fn opens_the_recording_and_switches_views_by_key() {
    let out = tempfile::tempdir().unwrap();
    let (mut app, _rx) = start(out.path());
    let s = screen(&mut app, 80, 24);
    assert!(
        s.lines().next().unwrap().starts_with(" 1 Hotspots  2 Flamegraph"),
        "{s}"
    );
    assert!(s.contains("mix_leaf"), "{s}");
    assert!(
        s.lines().last().unwrap().starts_with(" done  │ 1435 samples"),
        "{s}"
    );

    press(&mut app, "1");
    assert_eq!(app.active, ViewKind::Hotspots);
    let s = screen(&mut app, 80, 24);
    // The hottest function is the first row, sorted by self.
    let first_row = s.lines().nth(3).unwrap();
    assert!(first_row.contains("mix_leaf") && first_row.contains("791"), "{s}");

    // Sort by total: hash_block's caller chain (total 856) goes above mix_leaf (791).
    press(&mut app, "s");
    let s = screen(&mut app, 80, 24);
    assert!(s.contains("total▼"), "{s}");
    let rows: Vec<&str> = s.lines().skip(3).take(6).collect();
    let pos = |name: &str| rows.iter().position(|r| r.contains(name));
    assert!(pos("hash_block") < pos("mix_leaf"), "{s}");

    // Enter on a hotspot row jumps to that function in the flamegraph.
    press(&mut app, "\n");
    assert_eq!(app.active, ViewKind::Flamegraph);
    let s = screen(&mut app, 80, 24);
    let detail = s.lines().nth(22).unwrap();
    // The widest of mix_leaf's nodes (791 samples in all, 766 on one path).
    assert!(
        detail.starts_with("mix_leaf · total 766 (53.4%) · self 766"),
        "{s}"
    );

    press(&mut app, "\t\t\t\t\t\t\t");
    assert_eq!(app.active, ViewKind::Flamegraph);
    press(&mut app, "6");
    assert!(screen(&mut app, 80, 24).contains("BENCH_START"));
    press(&mut app, "?");
    assert!(screen(&mut app, 80, 24).contains("keys (? closes)"));
    press(&mut app, "?q");
    assert!(app.quit);
}

#[test]
fn search_zoom_focus_and_export_follow_the_keys() {
    let out = tempfile::tempdir().unwrap();
    let (mut app, rx) = start(out.path());

    // Hotspots filter by regex.
    press(&mut app, "1/matmul\n");
    let s = screen(&mut app, 80, 24);
    assert!(s.contains("matmul_inner") && !s.contains("mix_leaf"), "{s}");

    // Flamegraph: search, jump to the match, zoom into it.
    press(&mut app, "2/matmul_inner\n");
    assert!(
        app.views[ViewKind::Flamegraph.index()]
            .hint(crate::config::keymap::Keymap::standard())
            .unwrap()
            .starts_with("match 20.0%")
    );
    press(&mut app, "n\n");
    let s = screen(&mut app, 100, 30);
    assert!(s.contains("zoom: all ›") && s.contains("› matmul_inner"), "{s}");

    // Focus on the selected function: the model thread rebuilds with only its stacks.
    press(&mut app, "f");
    pump(&mut app, &rx, "the focused snapshot", |a| {
        a.snapshot.selection.focus.is_some()
    });
    assert_eq!(app.snapshot.trie.total_weight(), 287);
    assert_eq!(
        app.snapshot.selection.focus.as_ref().unwrap().pattern(),
        "^matmul_inner$"
    );
    press(&mut app, "F");
    pump(&mut app, &rx, "the unfocused snapshot", |a| {
        a.snapshot.selection.focus.is_none()
    });
    assert_eq!(app.snapshot.trie.total_weight(), 1435);

    // Export what is shown: the full artifact set lands where the status line says.
    press(&mut app, "e");
    pump(&mut app, &rx, "the export", |a| a.last_export.is_some());
    let latest = app.last_export.clone().unwrap();
    assert_eq!(latest, out.path().join("perf/riscv64/latest"));
    for file in [
        "report.json",
        "hotspots.csv",
        "qperf/stack.folded",
        "qperf/flamegraph.svg",
    ] {
        assert!(latest.join(file).is_file(), "{file} missing");
    }
    assert!(screen(&mut app, 120, 24).contains("exported"));
}

/// At 80×24 the export message stays on the status line: its directory, too long for
/// the room the state and the sample count leave, gives up its middle, not its place.
#[test]
fn the_export_message_survives_80_columns_with_its_path_cut_in_the_middle() {
    let out = tempfile::tempdir().unwrap();
    let deep = out
        .path()
        .join("an-export-directory-with-a-long-name/for-the-status-line");
    let (mut app, rx) = start(&deep);
    press(&mut app, "e");
    pump(&mut app, &rx, "the export", |a| a.last_export.is_some());
    let full = app.message.clone().unwrap().to_string();
    let dir = deep.join("perf/riscv64/latest");
    assert!(
        full.starts_with("exported ") && full.ends_with(&format!(" files to {}", dir.display())),
        "{full}"
    );
    let s = screen(&mut app, 80, 24);
    let status = s.lines().last().unwrap();
    let (message, rest) = status
        .strip_prefix(" done  │ ")
        .and_then(|m| m.split_once(" │ "))
        .unwrap_or_else(|| panic!("state, message, count: {status:?}"));
    let head = full.split(" files to ").next().unwrap();
    assert!(
        message.starts_with(&format!("{head} files to /")) && message.ends_with("…/perf/riscv64/latest"),
        "{status:?}"
    );
    assert!(rest.starts_with("1435 samples"), "{status:?}");
    assert_eq!(crate::views::text::display_width(status), 80);
}

#[test]
fn timeline_window_selection_drives_the_other_views() {
    let out = tempfile::tempdir().unwrap();
    let (mut app, rx) = start(out.path());
    // The timeline: mark the first column only, apply → a narrow window.
    press(&mut app, "5");
    screen(&mut app, 80, 24);
    app.action(Action::Top);
    app.action(Action::MarkStart);
    app.action(Action::MarkStop);
    app.action(Action::Activate);
    let window = app.selection.window;
    assert!(window.start_ns.is_some() && window.stop_ns.is_some());
    // The engine cuts the window on its slice edges (what every view then shows): within
    // a slice of the asked bounds, never wider than the asked column plus one slice.
    let slice_ns = 20_000_000;
    pump(&mut app, &rx, "the windowed snapshot", |a| {
        let got = a.snapshot.selection.window;
        let near = |x: Option<u64>, y: Option<u64>| x.zip(y).is_some_and(|(x, y)| x.abs_diff(y) <= slice_ns);
        near(got.start_ns, window.start_ns) && near(got.stop_ns, window.stop_ns)
    });
    let selected = app.snapshot.trie.total_weight();
    assert!(selected > 0 && selected < 1435, "{selected}");
    // Clearing the window brings everything back.
    app.action(Action::ClearWindow);
    pump(&mut app, &rx, "the whole run", |a| {
        a.snapshot.selection.window == TimeWindow::ALL
    });
    assert_eq!(app.snapshot.trie.total_weight(), 1435);
}

#[test]
fn live_modes_freeze_and_reset_reach_the_model() {
    let out = tempfile::tempdir().unwrap();
    let (mut app, rx) = start(out.path());
    press(&mut app, "d");
    pump(&mut app, &rx, "decay mode", |a| {
        matches!(a.snapshot.mode, LiveMode::Decay { .. })
    });
    press(&mut app, "w");
    pump(&mut app, &rx, "sliding mode", |a| {
        matches!(a.snapshot.mode, LiveMode::Sliding { .. })
    });
    // The recording lasts under 2 s: a 10 s sliding window still holds all of it.
    assert_eq!(app.snapshot.trie.total_weight(), 1435);
    press(&mut app, "a");
    pump(&mut app, &rx, "accumulate mode", |a| {
        a.snapshot.mode == LiveMode::Accumulate
    });
    press(&mut app, "r");
    pump(&mut app, &rx, "the reset", |a| {
        a.snapshot.trie.total_weight() == 0
    });
    assert_eq!(app.snapshot.stats.samples, 1435, "a reset keeps the recording");
    press(&mut app, " ");
    assert!(app.frozen);
    assert!(
        screen(&mut app, 80, 24)
            .lines()
            .last()
            .unwrap()
            .starts_with(" FROZEN ")
    );
    press(&mut app, "-");
    assert_eq!(app.refresh, Duration::from_millis(250));
}

/// A source that stops with an error: the message says what is kept only as it is —
/// nothing is recorded without `--record`.
#[test]
fn a_failed_source_claims_no_recording_there_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let (mut app, _rx) = start(dir.path());
    app.handle(AppEvent::Model(ModelEvent::SourceFailed(
        "the rings broke".into(),
    )));
    let message = app.message.clone().unwrap_or_default().to_string();
    assert!(
        message.starts_with("source stopped: the rings broke"),
        "{message}"
    );
    assert!(!message.contains("recorded is kept"), "{message}");
    assert!(message.contains("nothing is recorded"), "{message}");
}
