//! Sessions in SQLite on real files: a profile recorded from the assets recording and
//! reopened is the same profile; events and their layouts round trip and `field()` decodes
//! them; `perfscope sql` prints pinned text; a recorder killed with SIGKILL leaves a file
//! with every committed row; a file that is not a session is refused with a clear error;
//! `perfscope qemu --record` on the test kernel replays with the run's own hotspots.

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use perfscope::batch::headless::{self, Headless};
use perfscope::engine::{Engine, EngineOptions, LiveMode, SlicePolicy};
use perfscope::export::folded::folded_lines;
use perfscope::feeds::file::{FileFeed, Input};
use perfscope::feeds::ingest::QperfIngest;
use perfscope::feeds::memory::updates_of;
use perfscope::feeds::symbol_options::{OpenOptions, SymbolSource};
use perfscope::feeds::{SessionStart, Update};
use perfscope::model::sample_list::SampleList;
use perfscope::model::tables::TableMark;
use perfscope::model::{
    ConsoleLog, HotspotSort, Hotspots, Instance, PhaseMarkers, SampleMeta, SampleSource, Selection, StackTrie,
};
use perfscope::sources::qperf_file::{PluginSummary, ReadEnd, read_file, sidecar_path};
use perfscope::store::schema::SCHEMA_VERSION;
use perfscope::store::sql::run_on;
use perfscope::store::{
    Recorder, SessionMeta, SqlOutput, StoreError, open_session, run_sql, sql::query_connection,
};
use perfscope::trace::event::{EventIndex, EventLayout, FieldKind, FieldLayout, TraceEvent};

fn asset(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets").join(name)
}

fn assets_input() -> Input {
    Input::Qperf {
        path: asset("tinyk-riscv64.qperf.bin"),
        symbols: SymbolSource::Elf(asset("tinyk-riscv64.elf")),
    }
}

/// The assets recording, every sample kept: the qperf.bin decoded and symbolized with the
/// same ingest (and plugin summary) the file feed uses.
fn assets_profile() -> SampleList {
    let path = asset("tinyk-riscv64.qperf.bin");
    let summary = PluginSummary::read(&sidecar_path(&path)).expect("read the plugin summary");
    let (mut ingest, info) = QperfIngest::new(
        &SymbolSource::Elf(asset("tinyk-riscv64.elf")),
        &OpenOptions::default(),
        "assets",
        summary.as_ref(),
    )
    .expect("open the assets symbols");
    let mut list = SampleList::new(info);
    let (records, report) = read_file(&path).expect("read the assets recording");
    assert!(matches!(report.end, ReadEnd::CleanEof), "{report}");
    for record in &records {
        if let Some(sample) = ingest.add(&mut list.tables, record) {
            list.push_sample(sample);
        }
    }
    list
}

/// The assets recording read by the file feed, through the engine to its end.
fn assets_through_the_engine() -> Engine {
    let feed = FileFeed::new(
        assets_input(),
        OpenOptions::default(),
        None,
        PhaseMarkers::default(),
    );
    let headless = Headless {
        selection: Selection::all(),
        export: None,
        recording: None,
        progress: None,
    };
    headless::run(Box::new(feed), headless, &mut [])
        .expect("read the assets recording")
        .engine
}

fn meta() -> SessionMeta {
    let mut m = SessionMeta::now("test", "tinyk-riscv64.elf");
    m.arch = Some("riscv64".into());
    m.start_unix_ns = 1_700_000_000_000_000_000;
    m.command_line = "perfscope test".into();
    m
}

/// How the test sessions say they start (the recording sink keeps it as meta).
fn session_start() -> Update {
    Update::Start(SessionStart {
        label: "test".into(),
        kind: "test".into(),
        target: "tinyk-riscv64.elf".into(),
        time_origin_ns: 0,
        live_clock_offset_ns: None,
        options: None,
    })
}

/// An engine recording into `path`, as a live `--record` session runs one.
fn recording_engine(path: &Path) -> Engine {
    Engine::new(EngineOptions {
        policy: SlicePolicy::live(10_000_000_000),
        selection: Selection::all(),
        mode: LiveMode::Accumulate,
        refresh: Duration::from_secs(1),
        recording: Some(Recorder::create(path, &meta()).unwrap()),
    })
}

/// Record all of `profile` into a session at `path` through the engine's recording sink.
fn record_profile(path: &Path, profile: &SampleList) {
    let mut engine = recording_engine(path);
    let mut updates = vec![session_start()];
    updates.extend(updates_of(profile));
    engine.apply(updates);
    engine.finish();
    // No row dropped, no writer error (the sink's `finish` would warn).
    assert_eq!(engine.state.provenance.warnings, Vec::<String>::new());
}

fn trie(p: &SampleList) -> StackTrie {
    StackTrie::from_selection(p, &Selection::all())
}

/// Top `n` hotspots by `sort` as (name, self, total).
fn top(p: &SampleList, sort: HotspotSort, n: usize) -> Vec<(String, u64, u64)> {
    let mut h = Hotspots::from_trie(&trie(p), &p.frames);
    h.sort_by(sort, &p.frames);
    h.rows
        .iter()
        .take(n)
        .map(|r| (p.frames.name(r.frame).to_string(), r.self_weight, r.total_weight))
        .collect()
}

fn sorted_folded(p: &SampleList) -> Vec<String> {
    let mut lines = folded_lines(&trie(p), &p.frames);
    lines.sort();
    lines
}

#[test]
fn a_recorded_profile_reopens_with_the_same_samples_hotspots_and_stacks() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.db");
    let profile = assets_profile();
    assert!(profile.samples().len() > 100, "the assets recording has samples");
    // The samples decoded here are what the file feed hands the engine.
    let mut engine = assets_through_the_engine();
    assert_eq!(engine.state.stats.samples, profile.samples().len() as u64);
    let snapshot = engine.snapshot();
    let mut from_engine = folded_lines(&snapshot.trie, &snapshot.frames);
    from_engine.sort();
    assert_eq!(from_engine, sorted_folded(&profile));
    let (first, last) = profile.time_range_ns().expect("timestamps");
    let markers = PhaseMarkers {
        start_ns: Some(first + (last - first) / 4),
        stop_ns: Some(first + (last - first) * 3 / 4),
    };
    let console_text = std::fs::read(asset("tinyk-riscv64.console.txt")).unwrap();
    let mut console = ConsoleLog::new();
    console.push_bytes(Some(first), &console_text);
    assert!(console.len() > 3);

    let mut engine = recording_engine(&path);
    // Two steps, as a live source grows: half the samples, then the rest (the tables
    // delta of the first step already covers every stack).
    let half = profile.samples().len() / 2;
    let mut tables = profile.tables.clone();
    let delta = tables.take_delta(&mut TableMark::default());
    engine.apply(vec![
        session_start(),
        Update::Tables(delta),
        Update::Samples(profile.samples()[..half].to_vec()),
        Update::Markers(PhaseMarkers::default()),
        Update::Lost {
            total: 0,
            time_ns: None,
        },
    ]);
    engine.apply(vec![
        Update::Samples(profile.samples()[half..].to_vec()),
        Update::Console {
            time_ns: Some(first),
            bytes: console_text.clone(),
        },
        Update::Markers(markers),
        Update::Lost {
            total: 7,
            time_ns: Some(last),
        },
    ]);
    engine.finish();
    // No row dropped, no writer error (the sink's `finish` would warn), no marker moved.
    assert_eq!(engine.state.provenance.warnings, Vec::<String>::new());
    assert!(std::fs::metadata(&path).unwrap().len() > 0);
    assert!(
        !Path::new(&format!("{}-wal", path.display())).exists()
            || std::fs::metadata(format!("{}-wal", path.display()))
                .unwrap()
                .len()
                == 0,
        "finish checkpoints the WAL into the file"
    );

    let back = open_session(&path).unwrap();
    let p = &back.profile;
    assert_eq!(p.samples().len(), profile.samples().len());
    assert_eq!(p.total_weight(), profile.total_weight());
    assert_eq!(p.time_range_ns(), profile.time_range_ns());
    assert_eq!(
        top(p, HotspotSort::SelfWeight, 10),
        top(&profile, HotspotSort::SelfWeight, 10)
    );
    assert_eq!(
        top(p, HotspotSort::TotalWeight, 10),
        top(&profile, HotspotSort::TotalWeight, 10)
    );
    assert_eq!(sorted_folded(p), sorted_folded(&profile));
    for (a, b) in p.samples().iter().zip(profile.samples()) {
        assert_eq!((a.time_ns, a.weight, a.meta), (b.time_ns, b.weight, b.meta));
        assert_eq!(p.instance_info(a.instance), profile.instance_info(b.instance));
        let names = |q: &SampleList, s| {
            q.stack_frames(s)
                .map(|f| q.frames.name(f).to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(names(p, a.stack), names(&profile, b.stack));
    }
    assert_eq!(p.info.arch, profile.info.arch);
    assert_eq!(p.info.frequency_hz, profile.info.frequency_hz);
    assert!(back.console.lines_from(0).eq(console.lines_from(0)));
    assert_eq!(back.console.len(), console.len());
    assert_eq!(back.phase_markers(), markers);
    assert_eq!(back.lost_total(), 7);
    assert_eq!(back.meta.get("source_kind").map(String::as_str), Some("test"));
    assert_eq!(
        back.meta.get("target").map(String::as_str),
        Some("tinyk-riscv64.elf")
    );
    assert_eq!(back.meta.get("time_origin_ns").map(String::as_str), Some("0"));
    assert_eq!(
        back.meta.get("format").map(String::as_str),
        Some("perfscope-session")
    );

    // The stack tables are queryable as documented: leaf frames by self weight.
    let conn = query_connection(&path).unwrap();
    // Every sample and console line is a row of the file.
    let (samples, lines): (i64, i64) = conn
        .query_row(
            "SELECT (SELECT COUNT(*) FROM samples), (SELECT COUNT(*) FROM console)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(
        (samples as usize, lines as usize),
        (profile.samples().len(), console.len())
    );
    let (leaf, weight): (String, i64) = conn
        .query_row(
            "SELECT f.name, SUM(s.weight) FROM samples s JOIN stacks st ON st.id = s.stack_id \
             JOIN stack_frames sf ON sf.stack_id = s.stack_id AND sf.depth = st.depth - 1 \
             JOIN frames f ON f.id = sf.frame_id GROUP BY f.name ORDER BY 2 DESC, 1 LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let hottest = &top(&profile, HotspotSort::SelfWeight, 1)[0];
    assert_eq!((leaf.as_str(), weight as u64), (hottest.0.as_str(), hottest.1));
    // The README's total-weight query gives the hotspot totals.
    let mut stmt = conn
        .prepare(
            "SELECT f.name, SUM(s.weight) FROM samples s \
             JOIN (SELECT DISTINCT stack_id, frame_id FROM stack_frames) sf ON sf.stack_id = s.stack_id \
             JOIN frames f ON f.id = sf.frame_id GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 5",
        )
        .unwrap();
    let totals: Vec<(String, u64)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as u64)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let mut expected: Vec<(String, u64)> = top(&profile, HotspotSort::TotalWeight, usize::MAX)
        .into_iter()
        .map(|(name, _, total)| (name, total))
        .collect();
    expected.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    expected.truncate(5);
    assert_eq!(totals, expected);
    let hex: String = conn
        .query_row("SELECT printf('%x', -1)", [], |r| r.get(0))
        .unwrap();
    assert_eq!(hex, "ffffffffffffffff", "as the README says of kernel addresses");
}

fn field(name: &str, declaration: &str, offset: usize, size: usize, kind: FieldKind) -> FieldLayout {
    FieldLayout {
        name: name.into(),
        declaration: declaration.into(),
        offset,
        size,
        kind,
    }
}

fn sched_switch() -> EventLayout {
    EventLayout {
        system: "sched".into(),
        name: "sched_switch".into(),
        id: 316,
        fields: vec![
            field(
                "common_type",
                "unsigned short common_type",
                0,
                2,
                FieldKind::Unsigned,
            ),
            field("common_pid", "int common_pid", 4, 4, FieldKind::Signed),
            field("prev_comm", "char prev_comm[16]", 8, 16, FieldKind::CharArray),
            field("prev_pid", "pid_t prev_pid", 24, 4, FieldKind::Signed),
            field("prev_state", "long prev_state", 32, 8, FieldKind::Signed),
            field("next_pid", "pid_t next_pid", 40, 4, FieldKind::Signed),
            field(
                "name",
                "__data_loc char[] name",
                44,
                4,
                FieldKind::DataLoc { is_string: true },
            ),
        ],
        print_fmt: "\"prev_comm=%s\", REC->prev_comm".into(),
    }
}

fn sys_enter() -> EventLayout {
    EventLayout {
        system: "raw_syscalls".into(),
        name: "sys_enter".into(),
        id: 21,
        fields: vec![
            field(
                "common_type",
                "unsigned short common_type",
                0,
                2,
                FieldKind::Unsigned,
            ),
            field("id", "long id", 8, 8, FieldKind::Signed),
            field(
                "args",
                "unsigned long args[2]",
                16,
                16,
                FieldKind::Array { element_size: 8 },
            ),
        ],
        print_fmt: "\"NR %ld\", REC->id".into(),
    }
}

fn switch_raw(prev_comm: &str, prev_pid: i32, state: i64, next_pid: i32, name: &str) -> Vec<u8> {
    let mut raw = vec![0u8; 48];
    raw[0..2].copy_from_slice(&316u16.to_le_bytes());
    raw[4..8].copy_from_slice(&prev_pid.to_le_bytes());
    raw[8..8 + prev_comm.len()].copy_from_slice(prev_comm.as_bytes());
    raw[24..28].copy_from_slice(&prev_pid.to_le_bytes());
    raw[32..40].copy_from_slice(&state.to_le_bytes());
    raw[40..44].copy_from_slice(&next_pid.to_le_bytes());
    let loc = 48u32 | ((name.len() as u32 + 1) << 16);
    raw[44..48].copy_from_slice(&loc.to_le_bytes());
    raw.extend_from_slice(name.as_bytes());
    raw.push(0);
    raw
}

/// A small session with known events, samples, console lines and markers.
fn known_session(path: &Path) {
    let mut r = Recorder::create(path, &meta()).unwrap();
    r.event_type(EventIndex(0), &sched_switch(), None, Some("prev_pid > 0"));
    r.event_type(EventIndex(1), &sys_enter(), Some("enter"), None);
    let events = [
        ("sh", 100, 1, 7, "a"),
        ("sh", 100, 1, 0, "bb"),
        ("kworker/0:1", 12, -1, 100, "ccc"),
        ("sh", 100, 0, 12, ""),
    ];
    for (i, (comm, prev, state, next, name)) in events.iter().enumerate() {
        let raw = switch_raw(comm, *prev, *state, *next, name);
        let chain = [0xffff_ffff_8100_0000u64 + i as u64, 0x40_1000];
        r.event(&TraceEvent {
            time_ns: 1_000 + i as u64 * 10,
            cpu: (i % 2) as u32,
            pid: *prev as u32,
            tid: *prev as u32,
            event: EventIndex(0),
            raw: &raw,
            callchain: if i == 0 { &chain } else { &[] },
            rebuilt: false,
        })
        .unwrap();
    }
    let mut enter = vec![0u8; 32];
    enter[8..16].copy_from_slice(&0i64.to_le_bytes());
    enter[16..24].copy_from_slice(&3u64.to_le_bytes());
    enter[24..32].copy_from_slice(&4096u64.to_le_bytes());
    r.event(&TraceEvent {
        time_ns: 1_005,
        cpu: 0,
        pid: 100,
        tid: 101,
        event: EventIndex(1),
        raw: &enter,
        callchain: &[],
        rebuilt: false,
    })
    .unwrap();
    let cpu0 = r.instance(&Instance::cpu(0));
    let cpu1 = r.instance(&Instance::cpu(1));
    let hot = r.named_stack(&["main", "work", "hash"]);
    let idle = r.named_stack(&["main", "idle"]);
    for (t, inst, stack, w) in [(10, cpu0, hot, 3), (20, cpu1, hot, 1), (30, cpu0, idle, 2)] {
        r.sample(Some(t), inst, w, stack, &SampleMeta::default());
    }
    r.console_line(Some(15), "boot ok");
    r.marker(Some(12), "start", "=== start ===");
    r.symbol("[kernel]", 0xffff_ffff_8100_0000, "schedule", 0);
    r.lost(Some(1_020), Some(1), 5);
    assert!(matches!(
        r.event(&TraceEvent {
            time_ns: 0,
            cpu: 0,
            pid: 0,
            tid: 0,
            event: EventIndex(9),
            raw: &[],
            callchain: &[],
            rebuilt: false,
        }),
        Err(StoreError::UndeclaredEventType { index: 9 })
    ));
    let s = r.finish().unwrap();
    // Meta rows are written at create; through the writer: 2 types, 5 events,
    // 2 instances, 4 frames, 2 stacks, 3 samples, console, marker, symbol, lost.
    assert_eq!(s.rows_written, 2 + 5 + 2 + 4 + 2 + 3 + 4);
    assert_eq!(s.rows_dropped, 0);
}

#[test]
fn events_and_layouts_round_trip_and_field_decodes_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    known_session(&path);
    let back = open_session(&path).unwrap();
    assert_eq!(back.event_types.len(), 2);
    assert_eq!(back.event_types[0].layout, sched_switch());
    assert_eq!(back.event_types[0].filter.as_deref(), Some("prev_pid > 0"));
    assert_eq!(back.event_types[1].layout, sys_enter());
    assert_eq!(back.event_types[1].table_name(), "enter");
    assert_eq!(back.events.len(), 5);
    let first = &back.events[0];
    assert_eq!(first.raw, switch_raw("sh", 100, 1, 7, "a"));
    assert_eq!(first.callchain, [0xffff_ffff_8100_0000, 0x40_1000]);
    assert!(back.events[1].callchain.is_empty());
    assert_eq!((back.events[4].event, back.events[4].tid), (EventIndex(1), 101));
    // Decoded with the stored layout, as an analyzer replaying the session would.
    let layout = &back.event_type(first.event).unwrap().layout;
    assert_eq!(
        layout.field("prev_comm").unwrap().read_str(&first.raw).as_deref(),
        Some("sh")
    );
    assert_eq!(back.symbols[0].name, "schedule");
    assert_eq!(back.symbols[0].address, 0xffff_ffff_8100_0000);
    assert_eq!((back.lost[0].cpu, back.lost[0].count), (Some(1), 5));
    assert_eq!(back.profile.total_weight(), 6);

    let conn = query_connection(&path).unwrap();
    let q = |sql: &str| -> Vec<String> {
        let mut stmt = conn.prepare(sql).unwrap();
        stmt.query_map([], |r| r.get_ref(0).map(perfscope::store::table::csv_cell))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    assert_eq!(
        q("SELECT field(0, raw, 'next_pid') FROM events WHERE type_id = 0 ORDER BY id"),
        ["7", "0", "100", "12"]
    );
    assert_eq!(
        q("SELECT field('sched:sched_switch', raw, 'name') FROM events WHERE type_id = 0 ORDER BY id"),
        ["a", "bb", "ccc", ""]
    );
    assert_eq!(
        q("SELECT field('enter', raw, 'args') FROM events WHERE type_id = 1"),
        ["03000000000000000010000000000000"]
    );
    assert_eq!(
        q("SELECT prev_state FROM sched_switch WHERE prev_comm = 'kworker/0:1'"),
        ["-1"]
    );
    let err = conn
        .query_row("SELECT field(0, raw, 'nope') FROM events", [], |r| {
            r.get::<_, i64>(0)
        })
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("has no field `nope`") && err.contains("prev_comm"),
        "{err}"
    );
}

const GOLDEN_TABLE: &str = "\
=== SELECT prev_comm, COUNT(*) AS n FROM sched_switch GROUP BY 1 ORDER BY 2 DESC; ===
prev_comm | n
----------+--
sh        | 3
kworker/0:1 | 1

===  SELECT _cpu, _time, next_pid, name, 1.5 AS f, NULL AS z, _raw FROM sched_switch ORDER BY _time LIMIT 2; ===
_cpu | _time | next_pid | name | f | z | _raw
-----+-------+----------+------+---+---+-----
0    | 1000  | 7        | a    | 1.500000 | NULL | [BLOB:50]
1    | 1010  | 0        | bb   | 1.500000 | NULL | [BLOB:51]

=== 
SELECT f.name, SUM(s.weight) AS w FROM samples s JOIN stacks st ON st.id = s.stack_id JOIN stack_frames sf ON sf.stack_id = s.stack_id AND sf.depth = st.depth - 1 JOIN frames f ON f.id = sf.frame_id GROUP BY 1 ORDER BY 2 DESC ===
name | w
-----+--
hash | 4
idle | 2

";

const GOLDEN_QUERY: &str = "SELECT prev_comm, COUNT(*) AS n FROM sched_switch GROUP BY 1 ORDER BY 2 DESC; \
SELECT _cpu, _time, next_pid, name, 1.5 AS f, NULL AS z, _raw FROM sched_switch ORDER BY _time LIMIT 2;
SELECT f.name, SUM(s.weight) AS w FROM samples s JOIN stacks st ON st.id = s.stack_id JOIN stack_frames sf ON sf.stack_id = s.stack_id AND sf.depth = st.depth - 1 JOIN frames f ON f.id = sf.frame_id GROUP BY 1 ORDER BY 2 DESC";

fn perfscope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_perfscope"))
        .args(args)
        .output()
        .expect("run perfscope")
}

#[test]
fn perfscope_sql_prints_perf_prof_tables_and_csv() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("known.db");
    known_session(&path);
    let db = path.to_str().unwrap();
    let out = perfscope(&["sql", db, GOLDEN_QUERY]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout), GOLDEN_TABLE);

    let out = perfscope(&[
        "sql",
        "--csv",
        db,
        "SELECT _tid, prev_comm, name FROM sched_switch ORDER BY _time LIMIT 3; SELECT id FROM enter",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "_tid,prev_comm,name\n100,sh,a\n100,sh,bb\n12,kworker/0:1,ccc\n\nid\n0\n"
    );

    let out = perfscope(&["sql", db, "SELECT nope FROM samples"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no such column: nope"), "{err}");

    // Read-only: a query cannot change the session.
    let conn = query_connection(&path).unwrap();
    let mut sink = Vec::new();
    let e = run_on(&conn, "DELETE FROM samples", SqlOutput::Table, &mut sink).unwrap_err();
    assert!(e.to_string().contains("readonly"), "{e}");
    let mut sink = Vec::new();
    run_sql(&path, "SELECT COUNT(*) FROM samples", SqlOutput::Csv, &mut sink).unwrap();
    assert_eq!(String::from_utf8(sink).unwrap(), "COUNT(*)\n3\n");
}

#[test]
fn files_that_are_not_sessions_are_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("notes.db");
    std::fs::write(&text, "hello, not a database\n").unwrap();
    let e = open_session(&text).err().expect("a text file is not a session");
    assert!(matches!(e, StoreError::NotSqlite { .. }), "{e}");
    assert!(e.to_string().contains("not an SQLite file"), "{e}");

    let other = dir.path().join("other.db");
    rusqlite::Connection::open(&other)
        .unwrap()
        .execute_batch("CREATE TABLE t (x); PRAGMA user_version = 1;")
        .unwrap();
    let e = open_session(&other).err().expect("another app's database");
    assert!(e.to_string().contains("not a perfscope session"), "{e}");

    let future = dir.path().join("future.db");
    Recorder::create(&future, &meta()).unwrap().finish().unwrap();
    rusqlite::Connection::open(&future)
        .unwrap()
        .pragma_update(None, "user_version", 42)
        .unwrap();
    let e = open_session(&future).err().expect("a newer schema");
    assert!(
        matches!(
            e,
            StoreError::WrongVersion {
                found: 42,
                expected: SCHEMA_VERSION,
                ..
            }
        ),
        "{e}"
    );

    // Recording over a file that is not a session would destroy it: refused.
    let e = Recorder::create(&other, &meta()).err().expect("no clobbering");
    assert!(matches!(e, StoreError::WouldClobber { .. }), "{e}");

    let out = perfscope(&["sql", text.to_str().unwrap(), "SELECT 1"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not an SQLite file"));
    let out = perfscope(&["open", "--no-tui", other.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a perfscope session"));
}

#[test]
fn weights_a_u64_cannot_hold_are_refused_not_overflowed() {
    // Found by the session_db fuzz target: a weight of -1 read as 2^64-1 overflowed a sum.
    let dir = tempfile::tempdir().unwrap();
    let profile = assets_profile();
    for (name, edit) in [
        (
            "negative.db",
            "UPDATE samples SET weight = -1 WHERE id = (SELECT MIN(id) FROM samples)",
        ),
        ("huge.db", "UPDATE samples SET weight = 9223372036854775807"),
    ] {
        let path = dir.path().join(name);
        record_profile(&path, &profile);
        rusqlite::Connection::open(&path)
            .unwrap()
            .execute_batch(edit)
            .unwrap();
        let e = open_session(&path).err().expect("hostile weights are refused");
        assert!(matches!(e, StoreError::Corrupt { .. }), "{name}: {e}");
        let out = perfscope(&["open", "--no-tui", path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1), "{name}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("weight"), "{name}: {err}");
    }
}

/// Run by `a_killed_recorder_leaves_every_committed_row`: records forever, announcing each
/// commit on stdout, until it is killed.
#[test]
#[ignore = "a child process of a_killed_recorder_leaves_every_committed_row"]
fn child_records_until_killed() {
    let path = PathBuf::from(std::env::var("PERFSCOPE_STORE_CHILD_DB").expect("run by the parent test"));
    let mut r = Recorder::create(&path, &meta()).unwrap();
    let cpu = r.instance(&Instance::cpu(0));
    let stacks = [r.named_stack(&["main", "a"]), r.named_stack(&["main", "b", "c"])];
    let mut n = 0u64;
    loop {
        for _ in 0..1000 {
            r.sample(Some(n), cpu, 1, stacks[(n % 2) as usize], &SampleMeta::default());
            n += 1;
        }
        r.console_line(Some(n), &format!("line {n}"));
        r.commit_now().unwrap();
        println!("committed {n}");
    }
}

#[test]
fn a_killed_recorder_leaves_every_committed_row() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("killed.db");
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "child_records_until_killed",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("PERFSCOPE_STORE_CHILD_DB", &path)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut committed = 0u64;
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        if let Some(n) = line.strip_prefix("committed ") {
            committed = n.parse().unwrap();
            if committed >= 20_000 {
                break;
            }
        }
    }
    // SIGKILL: no destructor, no final commit, no checkpoint.
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert!(!status.success());
    assert!(committed >= 20_000, "the child committed {committed} samples");
    assert!(
        Path::new(&format!("{}-wal", path.display())).exists(),
        "a killed recorder leaves its WAL behind"
    );
    let back = open_session(&path).unwrap();
    let n = back.profile.samples().len() as u64;
    assert!(n >= committed, "{n} samples readable, {committed} were committed");
    assert_eq!(n % 1000, 0, "whole batches only: {n}");
    assert!(back.console.len() as u64 >= committed / 1000);
    assert_eq!(back.profile.total_weight(), n);
    // The stacks the samples point at were committed with them.
    let leaves: Vec<&str> = back
        .profile
        .samples()
        .iter()
        .take(2)
        .map(|s| {
            back.profile
                .frames
                .name(back.profile.stack_frames(s.stack).last().unwrap())
        })
        .collect();
    assert_eq!(leaves, ["a", "c"]);
}

#[test]
fn open_and_report_replay_a_session_with_the_same_hotspots_as_the_recording() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("assets.db");
    let profile = assets_profile();
    record_profile(&path, &profile);

    let from_qperf = dir.path().join("qperf");
    let out = perfscope(&[
        "report",
        asset("tinyk-riscv64.qperf.bin").to_str().unwrap(),
        "--elf",
        asset("tinyk-riscv64.elf").to_str().unwrap(),
        "--out",
        from_qperf.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for (cmd, sub) in [("open", "open"), ("report", "report")] {
        let out_dir = dir.path().join(sub);
        let mut args = vec![cmd, path.to_str().unwrap(), "--out", out_dir.to_str().unwrap()];
        if cmd == "open" {
            args.push("--no-tui");
        }
        let out = perfscope(&args);
        assert!(
            out.status.success(),
            "{cmd}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let folded = |root: &Path| -> Vec<String> {
            let p = root.join("perf/riscv64/latest/qperf/stack.folded");
            let mut lines: Vec<String> = std::fs::read_to_string(&p)
                .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
                .lines()
                .map(String::from)
                .collect();
            lines.sort();
            lines
        };
        assert_eq!(folded(&out_dir), folded(&from_qperf), "{cmd} session.db");
    }
}

#[test]
fn qemu_record_stores_the_run_and_replays_with_its_hotspots() {
    let dir = tempfile::tempdir().unwrap();
    let guest = common::guest::build_test_guest();
    let plugin = common::plugin::build_plugin();
    let db = dir.path().join("qemu.db");
    let live_out = dir.path().join("live");
    let o = Command::new(env!("CARGO_BIN_EXE_perfscope"))
        .args(["qemu", "--no-tui", "--arch", "riscv64", "--kernel"])
        .arg(&guest.bin)
        .arg("--elf")
        .arg(&guest.elf)
        .arg("--plugin")
        .arg(&plugin)
        .arg("--out")
        .arg(&live_out)
        .arg("--record")
        .arg(&db)
        .args([
            "--freq",
            "1000",
            "--callchain",
            "fp",
            "--shell-prefix",
            "starry:~# ",
            "--timeout",
            "90",
            "--workload",
            "bench 200",
            "--start-marker",
            "BENCH_START",
            "--stop-marker",
            "BENCH_END",
        ])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "perfscope qemu --record failed:\n{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let session = open_session(&db).unwrap();
    assert_eq!(session.meta.get("source_kind").map(String::as_str), Some("qemu"));
    assert_eq!(session.meta.get("arch").map(String::as_str), Some("riscv64"));
    assert!(
        session.profile.samples().len() > 50,
        "{} samples",
        session.profile.samples().len()
    );
    let markers = session.phase_markers();
    assert!(
        matches!((markers.start_ns, markers.stop_ns), (Some(a), Some(b)) if a < b),
        "{markers:?}"
    );
    assert!(
        session
            .console
            .lines_from(0)
            .any(|(_, l)| l.text.contains("BENCH_START")),
        "the console lines are recorded"
    );
    assert!(
        session.meta.contains_key("plugin.executed_instructions"),
        "{:?}",
        session.meta
    );
    assert_eq!(top(&session.profile, HotspotSort::SelfWeight, 1)[0].0, "mix_leaf");

    // The replayed session writes the artifacts the live run wrote, stack for stack.
    let replay_out = dir.path().join("replay");
    let out = perfscope(&[
        "report",
        db.to_str().unwrap(),
        "--out",
        replay_out.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for f in ["stack.folded", "stack.workload.folded", "stack.boot.folded"] {
        let read = |root: &Path| {
            let p = root.join("perf/riscv64/latest/qperf").join(f);
            let mut lines: Vec<String> = std::fs::read_to_string(&p)
                .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
                .lines()
                .map(String::from)
                .collect();
            lines.sort();
            lines
        };
        assert_eq!(read(&replay_out), read(&live_out), "{f}");
    }
    // The run's window facts come back too (markers, how QEMU was stopped).
    let window = |root: &Path| {
        let p = root.join("perf/riscv64/latest/qperf/window.json");
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        (
            v["start_marker"].clone(),
            v["stop_method"].clone(),
            v["start_time"].clone(),
        )
    };
    assert_eq!(window(&replay_out), window(&live_out));
    assert_eq!(window(&live_out).0, "BENCH_START");
}

/// The screen of the real app over `source`, once it has `samples` samples.
fn app_screen(
    source: Box<dyn perfscope::feeds::Feed>,
    samples: u64,
    view: perfscope::views::ViewKind,
) -> Vec<String> {
    use perfscope::app::{App, AppConfig, AppEvent};
    use perfscope::config::keymap::Keymap;
    use perfscope::config::theme::Theme;
    use perfscope::engine::export::ExportRequest;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use std::time::{Duration, Instant};

    let out = tempfile::tempdir().unwrap();
    let config = AppConfig {
        keymap: Keymap::builtin("default").unwrap(),
        theme: Theme::default(),
        mouse: false,
        export: ExportRequest::new(out.path().to_path_buf()),
        refresh: Duration::from_millis(100),
        sliding_seconds: 10.0,
        decay_factor: 0.875,
        selection: Selection::all(),
        mode: LiveMode::Accumulate,
        initial_view: view,
        hidden_views: Vec::new(),
        export_on_finish: None,
        select_workload_on_stop: false,
        recording: None,
    };
    let (tx, rx) = std::sync::mpsc::channel::<AppEvent>();
    let mut app = App::new(config, source, "test", tx).expect("start the app");
    let start = Instant::now();
    while app.snapshot.stats.samples != samples || !app.snapshot.stats.finished {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the app did not load the source"
        );
        if let Ok(ev) = rx.recv_timeout(Duration::from_millis(200)) {
            app.handle(ev);
        }
    }
    let (w, h) = (100u16, 30u16);
    let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
    app.dirty = true;
    app.draw(&mut terminal).unwrap();
    let buf = terminal.backend().buffer();
    (0..h)
        .map(|y| (0..w).map(|x| buf[(x, y)].symbol()).collect::<String>())
        .collect()
}

#[test]
fn the_tui_shows_a_replayed_session_as_it_shows_the_recording() {
    use perfscope::feeds::replay::ReplayFeed;
    use perfscope::views::ViewKind;

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tui.db");
    let profile = assets_profile();
    record_profile(&path, &profile);
    let n = profile.samples().len() as u64;
    for view in [ViewKind::Hotspots, ViewKind::Flamegraph] {
        let file = FileFeed::new(
            assets_input(),
            OpenOptions::default(),
            None,
            PhaseMarkers::default(),
        );
        let live = app_screen(Box::new(file), n, view);
        let replay = app_screen(Box::new(ReplayFeed::open(&path).unwrap()), n, view);
        assert!(live.iter().any(|l| l.contains("mix_leaf")), "{}", live.join("\n"));
        // Everything but the status line (which names the source) is the same.
        let body = |s: &[String]| s[..s.len() - 1].to_vec();
        assert_eq!(
            body(&replay),
            body(&live),
            "{view:?}:\n{}\n---\n{}",
            replay.join("\n"),
            live.join("\n")
        );
        assert!(
            replay.last().unwrap().contains(&format!("{n} samples")),
            "{}",
            replay.last().unwrap()
        );
    }
}

/// Frames keep where they run (kernel / user / a command-name root) and their module
/// through a session file; a session written before frames had a kind still opens.
#[test]
fn frame_kinds_and_modules_round_trip_and_old_sessions_open() {
    use perfscope::model::{FrameKind, FrameOrigin, ProfileInfo, Sample};
    let mut profile = SampleList::new(ProfileInfo::default());
    let origins = [
        ("hot", FrameKind::Pseudo, None),
        ("hot_leaf", FrameKind::User, Some("hot")),
        ("do_syscall_64", FrameKind::Kernel, Some("[kernel.kallsyms]")),
    ];
    for (name, kind, module) in origins {
        profile
            .frames
            .intern_from(name, None, FrameOrigin::new(kind, module));
    }
    let instance = profile.instance(Instance::unknown());
    let stack = profile.intern_named_stack(&["hot", "hot_leaf", "do_syscall_64"]);
    profile.push_sample(Sample {
        time_ns: Some(1),
        instance,
        weight: 3,
        stack,
        meta: SampleMeta::default(),
    });
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("kinds.db");
    record_profile(&db, &profile);

    let session = open_session(&db).unwrap();
    let frames = &session.profile.frames;
    for (name, kind, module) in origins {
        let id = frames.get(name).unwrap();
        assert_eq!((frames.kind(id), frames.module(id)), (kind, module), "{name}");
    }

    // As written before the column existed: no kind, the module as it was.
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch("ALTER TABLE frames DROP COLUMN kind").unwrap();
    drop(conn);
    let session = open_session(&db).unwrap();
    let frames = &session.profile.frames;
    let leaf = frames.get("hot_leaf").unwrap();
    assert_eq!(frames.kind(leaf), FrameKind::Unknown);
    assert_eq!(frames.module(leaf), Some("hot"));
    assert_eq!(session.profile.samples().len(), 1);
}
