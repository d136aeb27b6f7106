//! What the Tables view's offender pane and the Latency view's heatmap show is saved by
//! an export (issue 26): a `syscalls --than` session, fed to the real engine as its host
//! feed would feed it, exported through the engine's export (the `e` key's, `--out`'s),
//! writes offenders.txt with the pane's lines, offenders.json with one record per pair,
//! and heatmap.csv with the heatmap's counts, and report.json and report.md list them. A
//! later export of a session with neither removes them and lists none.

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use perfscope::analyzers::latency::{LatencyStats, PairPrint, SlowPair};
use perfscope::engine::export::ExportRequest;
use perfscope::engine::{Engine, EngineOptions, LiveMode, SlicePolicy, Snapshot};
use perfscope::feeds::{EventFormat, Offenders, RowsUpdate, SessionStart, Update};
use perfscope::model::Selection;
use perfscope::model::analysis::{
    AnalysisInfo, AnalysisRows, AnalysisSchema, LatencyKey, LatencyRows, SyscallsSchema,
};
use perfscope::model::heatmap::LatencyHeatmap;
use perfscope::model::tables::ProfileTables;
use perfscope::sources::tracefs::EventPrinter;
use perfscope::trace::event::{EventIndex, EventLayout, FieldKind, FieldLayout, OwnedTraceEvent};
use serde_json::Value;

use common::event_lines::same_event_line;

/// The reader's thread.
const READER: u32 = 4242;

fn field(name: &str, offset: usize, size: usize, kind: FieldKind) -> FieldLayout {
    FieldLayout {
        name: name.into(),
        declaration: format!("long {name}"),
        offset,
        size,
        kind,
    }
}

fn syscall_layout(name: &str, id: u64, print_fmt: &str) -> EventLayout {
    EventLayout {
        system: "raw_syscalls".into(),
        name: name.into(),
        id,
        fields: vec![
            field("common_type", 0, 2, FieldKind::Unsigned),
            field("id", 8, 8, FieldKind::Signed),
            field("ret", 16, 8, FieldKind::Signed),
        ],
        print_fmt: print_fmt.into(),
    }
}

/// A raw_syscalls event of `read` (NR 0) returning `ret`.
fn read_event(index: u16, time_ns: u64, ret: i64, callchain: &[u64], rebuilt: bool) -> OwnedTraceEvent {
    let mut raw = vec![0u8; 24];
    raw[16..24].copy_from_slice(&ret.to_le_bytes());
    OwnedTraceEvent {
        time_ns,
        cpu: 1,
        pid: READER,
        tid: READER,
        event: EventIndex(index),
        raw,
        callchain: callchain.to_vec(),
        rebuilt,
    }
}

/// read(0) latencies of one span of the session.
fn rows_at(time_ns: u64, latencies_ns: &[u64]) -> Update {
    let mut stats = LatencyStats::default();
    for &ns in latencies_ns {
        stats.record(ns, Some(1_000));
    }
    let mut rows = LatencyRows::default();
    rows.rows.insert(
        LatencyKey {
            instance: 0,
            series: 0,
        },
        stats,
    );
    Update::Rows(RowsUpdate {
        time_ns: Some(time_ns),
        rows: AnalysisRows::Latency(rows),
        events: 2 * latencies_ns.len() as u64,
    })
}

/// A `syscalls --than 1us` session as the host feed starts it.
fn session_start() -> Vec<Update> {
    let layouts = vec![
        syscall_layout("sys_enter", 21, "\"NR %ld\", REC->id"),
        syscall_layout("sys_exit", 22, "\"NR %ld = %ld\", REC->id, REC->ret"),
    ];
    vec![
        Update::Start(SessionStart {
            label: "host syscalls".into(),
            kind: "host-trace".into(),
            target: "./reader".into(),
            time_origin_ns: 0,
            live_clock_offset_ns: Some(0),
            options: None,
        }),
        Update::Analysis(Arc::new(AnalysisInfo {
            name: "syscalls".into(),
            schema: AnalysisSchema::Syscalls(SyscallsSchema {
                perins: false,
                than_ns: Some(1_000),
            }),
        })),
        Update::EventFormat(Arc::new(EventFormat {
            printer: EventPrinter::new(&layouts),
            layouts,
            execs: Vec::new(),
        })),
        Update::ThreadName {
            tid: READER,
            name: "reader".into(),
        },
    ]
}

fn engine() -> Engine {
    Engine::new(EngineOptions {
        policy: SlicePolicy::live(10_000_000_000),
        selection: Selection::all(),
        mode: LiveMode::Accumulate,
        refresh: Duration::from_secs(1),
        recording: None,
    })
}

/// The `--than` session: latencies over three seconds, two offender pairs (the first
/// exit with a stack the feed interned, the second rebuilt), one more dropped.
fn than_session() -> Engine {
    let mut engine = engine();
    let mut updates = session_start();
    let mut tables = ProfileTables::default();
    let mut mark = tables.mark();
    let stack = tables.intern_named_stack(&["main", "do_read", "ksys_read"]);
    updates.push(Update::Tables(tables.take_delta(&mut mark)));
    updates.push(rows_at(1_000_000_000, &[500, 5_000, 5_000]));
    updates.push(rows_at(2_000_000_000, &[5_000]));
    updates.push(rows_at(3_000_000_000, &[20_000, 800]));
    let mut slow = SlowPair::new(
        read_event(0, 1_000_000_000, 0, &[], false),
        &read_event(1, 1_000_005_000, 1, &[0x4011aa, 0x401100, 0x400f00], false).as_event(),
        5_000,
        PairPrint::TraceLines,
    );
    slow.stacks[1] = Some(stack);
    let slower = SlowPair::new(
        read_event(0, 3_000_000_000, 0, &[], false),
        &read_event(1, 3_000_020_000, 4096, &[], true).as_event(),
        20_000,
        PairPrint::TraceLines,
    );
    updates.push(Update::Offenders(Offenders {
        pairs: vec![slow, slower],
        dropped: 1,
    }));
    engine.apply(updates);
    engine
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}\n{text}", path.display()))
}

/// The path report.json lists under `label`.
fn listed(report: &Value, label: &str) -> Option<PathBuf> {
    report["artifacts"][label].as_str().map(PathBuf::from)
}

/// heatmap.csv as (column, range) → count, checked against the map's bounds.
fn heatmap_rows(csv: &str, map: &LatencyHeatmap) -> Vec<((usize, usize), u64)> {
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("time_start_ns,time_end_ns,latency_low_ns,latency_high_ns,count")
    );
    lines
        .map(|line| {
            let cells: Vec<u64> = line.split(',').map(|c| c.parse().unwrap()).collect();
            let [start, end, low, high, count] = cells[..] else {
                panic!("{line}");
            };
            assert_eq!(end - start, map.column_ns, "{line}");
            let column = ((start - map.start_ns) / map.column_ns) as usize;
            let range = (0..65)
                .find(|&r| LatencyHeatmap::row_bounds(r) == (low, high))
                .unwrap_or_else(|| panic!("{line}: not a heatmap range"));
            ((column, range), count)
        })
        .collect()
}

fn screen_and_export(engine: &mut Engine, out: &Path) -> (Snapshot, PathBuf) {
    let snapshot = engine.snapshot();
    let set = engine
        .export(&ExportRequest::new(out.to_path_buf()))
        .unwrap_or_else(|e| panic!("export: {e:#}"));
    (snapshot, set.layout.work_dir)
}

#[test]
fn an_export_saves_the_offenders_and_the_heatmap_on_screen() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let mut engine = than_session();
    let (snapshot, work) = screen_and_export(&mut engine, &out);
    let analysis = snapshot.analysis.as_ref().expect("an analysis session");
    let report = read_json(&work.join("report.json"));

    // offenders.txt: the pane's lines, then the dropped pair said.
    let pane = &analysis.offenders;
    assert_eq!((pane.pairs, pane.dropped), (2, 1));
    assert_eq!(
        pane.lines.len(),
        2 + 3 + 2,
        "two lines a pair and a 3-frame stack"
    );
    let text_path = listed(&report, "offenders_text").expect("offenders.txt listed");
    assert_eq!(text_path, work.join("offenders.txt"));
    let text = std::fs::read_to_string(&text_path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), pane.lines.len() + 1, "{text}");
    for (pane_line, file_line) in pane.lines.iter().zip(&lines) {
        assert!(
            same_event_line(pane_line, file_line),
            "pane: {pane_line}\nfile: {file_line}"
        );
    }
    assert!(lines[1].contains("reader") && lines[1].ends_with("raw_syscalls:sys_exit: NR 0 = 1"));
    assert_eq!(lines[2], "    00000000004011aa ksys_read");
    assert!(lines[7].starts_with("1 more pair over the --than threshold was dropped"));

    // offenders.json: one record per pair, its events and the stack the pane shows.
    let json_path = listed(&report, "offenders_json").expect("offenders.json listed");
    let json = read_json(&json_path);
    assert_eq!(
        (json["pairs"].as_u64(), json["dropped"].as_u64()),
        (Some(2), Some(1))
    );
    let records = json["offenders"].as_array().unwrap();
    assert_eq!(records.len(), 2);
    let slow = &records[0];
    assert_eq!(slow["latency_ns"], 5_000);
    assert_eq!(slow["first"]["time_ns"], 1_000_000_000u64);
    assert_eq!(slow["second"]["time_ns"], 1_000_005_000u64);
    assert_eq!(slow["first"]["event"], "raw_syscalls:sys_enter");
    assert_eq!(slow["second"]["event"], "raw_syscalls:sys_exit");
    assert_eq!(
        (slow["second"]["tid"].as_u64(), slow["second"]["cpu"].as_u64()),
        (Some(u64::from(READER)), Some(1))
    );
    assert_eq!(slow["second"]["comm"], "reader");
    let frames: Vec<&str> = slow["second"]["stack"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["function"].as_str().unwrap())
        .collect();
    assert_eq!(frames, ["ksys_read", "do_read", "main"]);
    assert_eq!(slow["second"]["stack"][0]["address"], "0x4011aa");
    let slower = &records[1];
    assert_eq!(
        (slower["latency_ns"].as_u64(), slower["rebuilt"].as_bool()),
        (Some(20_000), Some(true))
    );
    // A record for each pair the pane lists, in its order.
    for (record, start) in records.iter().zip(&pane.pair_starts) {
        let fields = record["first"]["fields"].as_str().unwrap();
        assert!(pane.lines[*start].ends_with(fields), "{}", pane.lines[*start]);
    }

    // heatmap.csv: every cell of the heatmap drawn, with its count.
    let map = analysis.heatmap.as_ref().expect("a heatmap on screen");
    let csv_path = listed(&report, "heatmap_csv").expect("heatmap.csv listed");
    assert_eq!(csv_path, work.join("heatmap.csv"));
    let rows = heatmap_rows(&std::fs::read_to_string(&csv_path).unwrap(), map);
    let (low, high) = map.rows_used().unwrap();
    assert_eq!(rows.len(), map.columns * (high - low + 1));
    for &((column, range), count) in &rows {
        assert_eq!(count, map.count(column, range), "column {column}, range {range}");
    }
    let total: u64 = rows.iter().map(|(_, n)| n).sum();
    assert_eq!((total, map.total()), (6, 6), "every latency counted once");
    assert!(map.columns >= 2, "the latencies spread over time");

    // The reports: report.json's analysis says what was written, report.md names the
    // files, and everything listed exists.
    assert_eq!(report["analysis"]["offenders"]["pairs"], 2);
    assert_eq!(report["analysis"]["offenders"]["dropped"], 1);
    assert_eq!(report["analysis"]["heatmap"]["total"], 6);
    let md = std::fs::read_to_string(work.join("report.md")).unwrap();
    for path in [&text_path, &json_path, &csv_path] {
        assert!(md.contains(&format!("`{}`", path.display())), "{md}");
    }
    assert!(md.contains("- --than offenders: 2 pairs, 1 dropped"), "{md}");
    for (label, path) in report["artifacts"].as_object().unwrap() {
        assert!(
            Path::new(path.as_str().unwrap()).exists(),
            "{label} is listed but not there"
        );
    }

    // A session with neither (no --than, untimed rows) exported into the same place: the
    // old files go, nothing is listed.
    let mut plain = engine_without_offenders_or_heatmap();
    let (snapshot, work) = screen_and_export(&mut plain, &out);
    let analysis = snapshot.analysis.as_ref().unwrap();
    assert!(analysis.heatmap.is_none() && analysis.offenders.pairs == 0);
    let report = read_json(&work.join("report.json"));
    for (label, name) in [
        ("offenders_text", "offenders.txt"),
        ("offenders_json", "offenders.json"),
        ("heatmap_csv", "heatmap.csv"),
    ] {
        assert_eq!(listed(&report, label), None, "{label} listed");
        assert!(!work.join(name).exists(), "{name} left from the last export");
    }
    assert!(report["analysis"].get("offenders").is_none());
    assert!(report["analysis"].get("heatmap").is_none());
    assert!(
        work.join("syscalls.txt").exists(),
        "the analysis itself is written"
    );
}

fn engine_without_offenders_or_heatmap() -> Engine {
    let mut engine = engine();
    let mut updates = session_start();
    if let Update::Analysis(info) = &mut updates[1] {
        *info = Arc::new(AnalysisInfo {
            name: "syscalls".into(),
            schema: AnalysisSchema::Syscalls(SyscallsSchema {
                perins: false,
                than_ns: None,
            }),
        });
    }
    // Rows without a time: a table, but no column of a heatmap.
    if let Update::Rows(mut rows) = rows_at(0, &[500, 700]) {
        rows.time_ns = None;
        updates.push(Update::Rows(rows));
    }
    engine.apply(updates);
    engine
}
