//! Live modes and windows apply to analyses as to samples, end to end: the real app on a
//! TestBackend over a real `syscalls` session (perf_event + tracefs, as root) whose
//! workload reads at a steady rate. `r` makes the Latency and Tables views count what
//! arrives after it; `w` (2 s) shows about 2 s worth of reads; a range marked on the
//! timeline selects the same events in the Latency view, the Tables view and the status
//! line; `e` writes the tables and distributions and report.json says `ok`.

mod common;

use std::path::Path;
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use common::host::{build_fixture, ensure_tracefs};
use perfscope::analyzers::options::{AnalyzerKind, TraceOptions};
use perfscope::app::{App, AppConfig, AppEvent};
use perfscope::config::keymap::Keymap;
use perfscope::config::theme::Theme;
use perfscope::engine::LiveMode;
use perfscope::engine::export::ExportRequest;
use perfscope::feeds::host::options::{HostRunOptions, HostTarget, RingOptions};
use perfscope::feeds::host::tracing_feed::HostTraceFeed;
use perfscope::model::Selection;
use perfscope::views::ViewKind;

const WAIT: Duration = Duration::from_secs(30);

fn start(dir: &Path) -> (App, Receiver<AppEvent>) {
    let reader = build_fixture(dir, "reader", &["-static"]);
    let run = HostRunOptions {
        target: HostTarget {
            // Far longer than the test, ~1 ms apart: a steady rate to count against.
            workload: vec![reader.display().to_string(), "1000000".into(), "1000".into()],
            ..HostTarget::default()
        },
        ring: RingOptions {
            pages: Some(1024),
            watermark_percent: None,
            realtime: false,
        },
        record: None,
        duration: None,
        out: dir.join("out"),
        exit_after: None,
    };
    let trace = TraceOptions::new(AnalyzerKind::Syscalls, Vec::new());
    let feed = HostTraceFeed::start(&run, &trace).expect("a syscalls session (run as root)");
    let config = AppConfig {
        keymap: Keymap::builtin("default").unwrap(),
        theme: Theme::default(),
        mouse: false,
        export: ExportRequest::new(dir.join("out")),
        refresh: Duration::from_millis(100),
        sliding_seconds: 2.0,
        decay_factor: 0.875,
        selection: Selection::all(),
        mode: LiveMode::Accumulate,
        initial_view: ViewKind::Histogram,
        hidden_views: Vec::new(),
        export_on_finish: None,
        select_workload_on_stop: false,
        recording: None,
    };
    let (tx, rx) = channel();
    let app = App::new(config, Box::new(feed), "syscalls", tx).unwrap();
    (app, rx)
}

/// Handle model events until `done(app)`; fail after `WAIT`.
fn pump(app: &mut App, rx: &Receiver<AppEvent>, what: &str, done: impl Fn(&App) -> bool) {
    let start = Instant::now();
    while !done(app) {
        let left = WAIT.saturating_sub(start.elapsed());
        assert!(!left.is_zero(), "timed out waiting for {what}");
        if let Ok(ev) = rx.recv_timeout(left.min(Duration::from_millis(100))) {
            app.handle(ev);
        }
        app.update_wants();
    }
}

/// Handle model events for `d`.
fn run_for(app: &mut App, rx: &Receiver<AppEvent>, d: Duration) {
    let until = Instant::now() + d;
    while let Some(left) = until.checked_duration_since(Instant::now()) {
        if let Ok(ev) = rx.recv_timeout(left.min(Duration::from_millis(50))) {
            app.handle(ev);
        }
    }
}

fn press(app: &mut App, keys: &str) {
    for c in keys.chars() {
        app.handle(AppEvent::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)));
        app.update_wants();
    }
}

fn screen(app: &mut App) -> String {
    let mut terminal = Terminal::new(TestBackend::new(120, 30)).unwrap();
    app.dirty = true;
    app.draw(&mut terminal).unwrap();
    let buf = terminal.backend().buffer();
    (0..30)
        .map(|y| (0..120).map(|x| buf[(x, y)].symbol()).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

/// read(0)'s count as the Latency view draws it (its summary's `count N`, with the list
/// filtered to read(0) by the search regex), and as the Tables view draws it (the `calls`
/// cell of the read(0) row): the two views of one snapshot.
fn drawn_counts(app: &mut App) -> (u64, u64) {
    press(app, "4");
    let mut latency = screen(app);
    let first = |s: &str| {
        s.lines()
            .nth(2)
            .unwrap_or_default()
            .trim_start_matches('│')
            .to_string()
    };
    if !first(&latency).starts_with("read(0)") || first(&latency).is_empty() {
        press(app, "/");
        for c in "^read\\(0".chars() {
            app.handle(AppEvent::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)));
        }
        app.handle(AppEvent::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)));
        latency = screen(app);
        assert!(
            first(&latency).starts_with("read(0)"),
            "the filter keeps read(0):\n{latency}"
        );
    }
    let count = latency
        .split("count ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse::<u64>().ok())
        .unwrap_or_else(|| panic!("no count in the latency view:\n{latency}"));
    press(app, "8");
    let tables = screen(app);
    let calls = tables
        .lines()
        .find_map(|l| {
            let cells: Vec<&str> = l.trim_start_matches('│').split_whitespace().collect();
            (cells.first() == Some(&"read(0)")).then(|| cells[1].parse::<u64>().ok())?
        })
        .unwrap_or_else(|| panic!("no read(0) row in the tables view:\n{tables}"));
    (count, calls)
}

#[test]
fn reset_sliding_and_timeline_windows_apply_to_the_analysis_and_export_writes_it() {
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    let (mut app, rx) = start(dir.path());
    pump(&mut app, &rx, "a few hundred reads", |a| {
        a.snapshot
            .analysis
            .as_ref()
            .and_then(|an| an.series.iter().find(|s| s.name == "read(0)"))
            .is_some_and(|s| s.stats.calls() >= 300)
    });
    // The workload's rate, measured over 2 s of accumulation.
    let (before, _) = drawn_counts(&mut app);
    let t0 = Instant::now();
    run_for(&mut app, &rx, Duration::from_secs(2));
    let (after, tables) = drawn_counts(&mut app);
    assert_eq!(after, tables, "Latency and Tables count the same reads");
    let rate = (after - before) as f64 / t0.elapsed().as_secs_f64();
    assert!(rate > 200.0, "the workload reads {rate:.0}/s");

    // r: the views count from now.
    press(&mut app, "r");
    let reset_at = Instant::now();
    pump(&mut app, &rx, "the reset snapshot", |a| {
        a.snapshot
            .analysis
            .as_ref()
            .is_some_and(|an| an.series.iter().all(|s| s.stats.calls() < 300))
    });
    run_for(&mut app, &rx, Duration::from_secs(1));
    let (count, calls) = drawn_counts(&mut app);
    let expected = rate * reset_at.elapsed().as_secs_f64();
    assert_eq!(count, calls, "Latency and Tables agree after the reset");
    assert!(
        (count as f64) < expected * 1.5 + 50.0 && (count as f64) > expected * 0.5 - 50.0,
        "after the reset: {count} reads, about {expected:.0} arrived since (was {after} before)"
    );

    // w: the last 2 s only, however long the session runs.
    press(&mut app, "w");
    run_for(&mut app, &rx, Duration::from_secs(3));
    let (count, calls) = drawn_counts(&mut app);
    let expected = rate * 2.0;
    assert_eq!(count, calls, "Latency and Tables agree in the sliding window");
    assert!(
        (count as f64 - expected).abs() < expected * 0.35,
        "sliding 2 s: {count} reads, about {expected:.0} expected"
    );

    // A range on the timeline: back to accumulate, mark a stretch in the middle.
    press(&mut app, "a");
    pump(&mut app, &rx, "accumulate", |a| {
        a.snapshot.mode == LiveMode::Accumulate
    });
    press(&mut app, "5");
    screen(&mut app);
    app.action(perfscope::config::Action::Bottom);
    for _ in 0..30 {
        app.action(perfscope::config::Action::Left);
    }
    app.action(perfscope::config::Action::MarkStart);
    for _ in 0..15 {
        app.action(perfscope::config::Action::Right);
    }
    app.action(perfscope::config::Action::MarkStop);
    app.action(perfscope::config::Action::Activate);
    pump(&mut app, &rx, "the windowed snapshot", |a| {
        !a.snapshot.selection.window.is_all()
    });
    run_for(&mut app, &rx, Duration::from_millis(300));
    let (count, calls) = drawn_counts(&mut app);
    assert_eq!(count, calls, "Latency and Tables agree in the window");
    let snapshot = app.snapshot.clone();
    let analysis = snapshot.analysis.as_ref().unwrap();
    let window = snapshot.selection.window;
    let on_timeline = snapshot.timeline.as_ref().unwrap().weight_in(&window);
    // The timeline bins events by their own time, the window takes whole 16 ms cells.
    let slack = (4.0 * 0.016 * rate * 4.0) as u64 + 20;
    assert!(
        analysis.events.abs_diff(on_timeline) <= slack,
        "the window holds {} events, the timeline shows {on_timeline} in it",
        analysis.events
    );
    let status = screen(&mut app).lines().last().unwrap().to_string();
    assert!(
        status.contains(&format!("{}/", analysis.events)),
        "the status line counts the window's events: {status}"
    );
    assert!(
        count > 0 && (count as f64) < rate * 30.0,
        "{count} reads in the window"
    );

    // e: the tables and distributions of what is on screen.
    press(&mut app, "e");
    pump(&mut app, &rx, "the export", |a| a.last_export_result.is_some());
    let work = app
        .last_export_result
        .clone()
        .unwrap()
        .unwrap_or_else(|e| panic!("export failed: {e}"));
    for name in ["syscalls.txt", "syscalls.csv", "syscalls.json", "latency.csv"] {
        let len = std::fs::metadata(work.join(name))
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .len();
        assert!(len > 0, "{name} is empty");
    }
    let text = std::fs::read_to_string(work.join("syscalls.txt")).unwrap();
    let row = text
        .lines()
        .find(|l| l.starts_with("read(0)"))
        .unwrap_or_else(|| panic!("no read(0) in syscalls.txt:\n{text}"));
    assert_eq!(
        row.split_whitespace().nth(1),
        Some(count.to_string().as_str()),
        "the exported table is the one on screen: {row}"
    );
    // The CSV and the JSON are the same typed table: the same row, units in the names.
    let csv = std::fs::read_to_string(work.join("syscalls.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    assert!(header.contains(&"p99_ns") && header.contains(&"calls"), "{csv}");
    let calls = header.iter().position(|c| *c == "calls").unwrap();
    let csv_row = csv
        .lines()
        .find(|l| l.starts_with("read(0),"))
        .unwrap_or_else(|| panic!("{csv}"));
    assert_eq!(
        csv_row.split(',').nth(calls),
        Some(count.to_string().as_str()),
        "{csv}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(work.join("syscalls.json")).unwrap()).unwrap();
    let json_row = json["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["syscall"] == "read(0)")
        .unwrap_or_else(|| panic!("{json:#}"));
    assert_eq!(json_row["calls"], count);
    assert_eq!(json_row.as_object().unwrap().len(), header.len());
    let buckets = std::fs::read_dir(work.join("latency")).unwrap().count();
    assert!(buckets >= 2, "one bucket CSV per distribution");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(work.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["result"], "ok", "{report:#}");
    assert_eq!(report["analysis"]["analyzer"], "syscalls");
    assert_eq!(report["analysis"]["events"], analysis.events);
    let md = std::fs::read_to_string(work.join("report.md")).unwrap();
    assert!(md.contains("## Latency") && md.contains("`read(0)`"), "{md}");
    let message = app.message.clone().unwrap_or_default().to_string();
    let files = message
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or_else(|| panic!("no file count in {message:?}"));
    let mut on_disk = 0;
    for dir in [work.clone(), work.join("qperf"), work.join("latency")] {
        on_disk += std::fs::read_dir(&dir)
            .map(|d| d.filter(|e| e.as_ref().is_ok_and(|e| e.path().is_file())).count())
            .unwrap_or(0);
    }
    assert_eq!(files, on_disk, "the status line counts files: {message}");
}
