//! The SQLite session reader (`perfscope open/report/sql FILE.db`): a session file from
//! anywhere. Two kinds of input, so both the file format and the rows are fuzzed:
//!
//! - bytes that start with SQLite's magic are the file itself;
//! - anything else is an edit script applied to a real recorded session: ten bytes an edit
//!   (table, column, row, kind, six bytes of value) setting a cell to NULL, a boundary
//!   integer, a real, text or a blob, or deleting the row.
//!
//! Then the session is opened as `open` does and replayed to every artifact as `report`
//! does. Either may refuse the file; neither may panic, and a refusal must name the file.

use std::path::Path;

use perfscope::batch::report::{ReportInput, ReportOptions, run as report};
use perfscope::model::frames::{FrameKind, FrameOrigin};
use perfscope::model::{Callchain, Instance, InstanceKind, SampleMeta};
use perfscope::sources::tracefs::parse_format;
use perfscope::store::{Recorder, SessionMeta, open_session};
use perfscope::trace::event::{EventIndex, TraceEvent};
use rusqlite::Connection;
use rusqlite::types::Value;

const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";

pub const DICTIONARY: &[&[u8]] = &[
    SQLITE_MAGIC,
    b"\0\0\0\0",
    b"\xff\xff\xff\xff",
    b"perfscope-session",
];

pub fn run(data: &[u8]) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("session.db");
    if data.starts_with(SQLITE_MAGIC) {
        std::fs::write(&path, data).expect("write the session file");
    } else {
        std::fs::write(&path, seed_session()).expect("write the session file");
        apply_edits(&path, data);
    }
    let shown = path.display().to_string();
    if let Err(error) = open_session(&path) {
        let text = format!("{error:#}");
        assert!(text.contains(&shown), "a refusal names the file: {text}");
    }
    let options = ReportOptions::new(ReportInput::Session(path.clone()), dir.path().join("out"));
    if let Ok(set) = report(&options) {
        for (label, written) in &set.files {
            assert!(
                written.exists(),
                "{label} listed as written but missing: {}",
                written.display()
            );
        }
    }
}

/// Apply the edit script in `script` to the session at `path`. SQL errors (a type the
/// table refuses, a constraint) skip that edit: the point is what the reader gets.
///
/// All edits are one transaction and each table's columns are read once: a 1 MiB script
/// is 100,000 edits, and one commit (an fsync) each made such an input take seconds in
/// the harness alone — a "slow input" that said nothing about perfscope.
fn apply_edits(path: &Path, script: &[u8]) {
    let Ok(mut conn) = Connection::open(path) else {
        return;
    };
    let tables: Vec<(String, Vec<String>)> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .and_then(|mut s| {
            s.query_map([], |r| r.get::<_, String>(0))?
                .collect::<Result<Vec<_>, _>>()
        })
        .unwrap_or_default()
        .into_iter()
        .map(|table| {
            let columns = conn
                .prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))
                .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
                .unwrap_or_default();
            (table, columns)
        })
        .collect();
    if tables.is_empty() {
        return;
    }
    let Ok(conn) = conn.transaction() else {
        return;
    };
    for edit in script.chunks(10) {
        let [t, c, r, kind, value @ ..] = edit else {
            break;
        };
        let (table, columns) = &tables[usize::from(*t) % tables.len()];
        if columns.is_empty() {
            continue;
        }
        let column = &columns[usize::from(*c) % columns.len()];
        let row = i64::from(*r) % 8 + 1;
        let value = edit_value(*kind, value);
        let sql = match value {
            None => format!("DELETE FROM \"{table}\" WHERE rowid = ?1"),
            Some(_) => format!("UPDATE \"{table}\" SET \"{column}\" = ?2 WHERE rowid = ?1"),
        };
        let _ = match value {
            None => conn.execute(&sql, rusqlite::params![row]),
            Some(value) => conn.execute(&sql, rusqlite::params![row, value]),
        };
    }
    let _ = conn.commit();
}

/// The value an edit writes; `None` deletes the row.
fn edit_value(kind: u8, bytes: &[u8]) -> Option<Value> {
    const BOUNDARY: [i64; 8] = [0, -1, 1, i64::MIN, i64::MAX, u32::MAX as i64, 1 << 32, 65_536];
    let mut eight = [0u8; 8];
    eight[..bytes.len().min(8)].copy_from_slice(&bytes[..bytes.len().min(8)]);
    let number = i64::from_le_bytes(eight);
    Some(match kind % 7 {
        0 => Value::Null,
        1 => Value::Integer(BOUNDARY[(number as u64 % 8) as usize]),
        2 => Value::Integer(number),
        3 => Value::Real(f64::from_bits(number as u64)),
        4 => Value::Text(String::from_utf8_lossy(bytes).into_owned()),
        5 => Value::Blob(bytes.to_vec()),
        _ => return None,
    })
}

/// A small real session: two CPUs, stacks with modules, samples over a second with start
/// and stop markers, a sched_switch event type with events, console lines, a symbol and a
/// loss. Recorded once through perfscope's own recorder and kept as bytes.
pub fn seed_session() -> Vec<u8> {
    static SEED: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    SEED.get_or_init(record_seed_session).clone()
}

fn record_seed_session() -> Vec<u8> {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("seed.db");
    let mut meta = SessionMeta::now("host", "fuzz seed");
    meta.arch = Some("x86_64".into());
    let mut recorder = Recorder::create(&path, &meta).expect("record the seed session");
    let cpus: Vec<_> = (0..2)
        .map(|id| {
            recorder.instance(&Instance {
                kind: InstanceKind::Cpu,
                id,
                label: format!("cpu{id}"),
            })
        })
        .collect();
    let user = FrameOrigin::new(FrameKind::User, Some("/usr/bin/busy"));
    let kernel = FrameOrigin::new(FrameKind::Kernel, Some("[kernel.kallsyms]"));
    let main = recorder.frame("main", &user, Some("busy.c"));
    let work = recorder.frame("work", &user, None);
    let syscall = recorder.frame("do_syscall_64", &kernel, None);
    let stacks = [
        recorder.stack(&[main, work]),
        recorder.stack(&[main, syscall]),
        recorder.named_stack(&["swapper", "cpu_idle"]),
    ];
    let meta = SampleMeta {
        raw_depth: 2,
        flags: SampleMeta::HAS_PC,
        callchain: Callchain::FramePointer,
    };
    recorder.marker(Some(100_000_000), "start", "start marker");
    for i in 0..60u64 {
        let stack = stacks[(i % 3) as usize];
        recorder.sample(
            Some(i * 20_000_000),
            cpus[(i % 2) as usize],
            1 + i % 4,
            stack,
            &meta,
        );
    }
    recorder.marker(Some(900_000_000), "stop", "stop marker");
    let layout = parse_format(
        "sched",
        "sched_switch",
        include_str!("../../seeds/tracefs_format/sched_switch.format"),
    )
    .expect("the sched_switch seed parses");
    recorder.event_type(EventIndex(0), &layout, Some("switch"), Some("prev_pid > 0"));
    let size = layout.fields.iter().map(|f| f.offset + f.size).max().unwrap_or(0);
    for i in 0..8u8 {
        let raw: Vec<u8> = (0..size).map(|b| (b as u8).wrapping_mul(i + 1)).collect();
        let event = TraceEvent {
            time_ns: u64::from(i) * 50_000_000,
            cpu: u32::from(i % 2),
            pid: 10 + u32::from(i),
            tid: 10 + u32::from(i),
            event: EventIndex(0),
            raw: &raw,
            callchain: &[],
            rebuilt: false,
        };
        recorder.event(&event).expect("record an event");
    }
    recorder.console_line(Some(0), "starry:~# ./busy");
    recorder.console_line(None, "done");
    recorder.symbol("/usr/bin/busy", 0x1000, "work", 0x10);
    recorder.lost(Some(500_000_000), Some(1), 3);
    recorder.finish().expect("finish the seed session");
    std::fs::read(&path).expect("read the seed session")
}

/// The seed file itself and a few edit scripts over it.
pub fn generated_seeds() -> Vec<Vec<u8>> {
    vec![
        seed_session(),
        vec![1, 1, 1, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
        (0..=255u8).collect(),
        vec![3, 2, 0, 0, 0, 0, 0, 0, 0, 0, 4, 3, 1, 6, 0, 0, 0, 0, 0, 0],
    ]
}
