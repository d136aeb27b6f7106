//! The session file format: tables, indices, the version stamp, and the checks a reader
//! makes before trusting a file. `README.md` beside this file documents every table.

use std::path::Path;

use crate::input::{FileType, InputFile};

use rusqlite::Connection;

use super::error::{SqliteContext, StoreError};

/// `PRAGMA user_version` of the format this code writes and reads. Bump it when a table
/// changes shape; a reader refuses other versions instead of misreading them.
pub const SCHEMA_VERSION: i64 = 2;

/// `PRAGMA application_id`: "pfsc", so `file(1)`-like checks and our reader can tell a
/// session from any other SQLite file.
pub const APPLICATION_ID: i64 = 0x7066_7363;

/// The `meta` key of a finished recording's verdict (JSON of [`crate::model::Verdict`]):
/// written last, so a file without it was killed or is still being written.
pub const VERDICT_META: &str = "verdict";

/// Every table and index of a session, in creation order.
pub const DDL: &str = "
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE instances (
    id INTEGER PRIMARY KEY, kind TEXT NOT NULL, ext_id INTEGER NOT NULL, label TEXT NOT NULL);
CREATE TABLE frames (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL, module TEXT, file TEXT, kind TEXT);
CREATE TABLE stacks (id INTEGER PRIMARY KEY, depth INTEGER NOT NULL, folded TEXT NOT NULL);
CREATE TABLE stack_frames (
    stack_id INTEGER NOT NULL, depth INTEGER NOT NULL, frame_id INTEGER NOT NULL,
    PRIMARY KEY (stack_id, depth)) WITHOUT ROWID;
CREATE INDEX stack_frames_by_frame ON stack_frames (frame_id);
CREATE TABLE samples (
    id INTEGER PRIMARY KEY, time_ns INTEGER, instance_id INTEGER NOT NULL,
    weight INTEGER NOT NULL, stack_id INTEGER NOT NULL, meta INTEGER NOT NULL DEFAULT 0);
CREATE INDEX samples_by_time ON samples (time_ns);
CREATE TABLE event_types (
    id INTEGER PRIMARY KEY, system TEXT NOT NULL, name TEXT NOT NULL, alias TEXT,
    filter TEXT, layout_json TEXT NOT NULL);
CREATE TABLE events (
    id INTEGER PRIMARY KEY, time_ns INTEGER NOT NULL, cpu INTEGER NOT NULL,
    pid INTEGER NOT NULL, tid INTEGER NOT NULL, type_id INTEGER NOT NULL,
    raw BLOB NOT NULL, callchain BLOB, rebuilt INTEGER NOT NULL DEFAULT 0);
CREATE INDEX events_by_type_time ON events (type_id, time_ns);
CREATE TABLE console (id INTEGER PRIMARY KEY, time_ns INTEGER, text TEXT NOT NULL);
CREATE TABLE markers (id INTEGER PRIMARY KEY, time_ns INTEGER, kind TEXT NOT NULL, text TEXT NOT NULL);
CREATE TABLE symbols (
    module TEXT NOT NULL, address INTEGER NOT NULL, name TEXT NOT NULL, offset INTEGER NOT NULL,
    PRIMARY KEY (module, address)) WITHOUT ROWID;
CREATE TABLE lost (time_ns INTEGER, cpu INTEGER, count INTEGER NOT NULL);
";

/// The tables a session has (TEMP views named after events must not shadow them).
pub const TABLES: [&str; 12] = [
    "meta",
    "instances",
    "frames",
    "stacks",
    "stack_frames",
    "samples",
    "event_types",
    "events",
    "console",
    "markers",
    "symbols",
    "lost",
];

/// Settings of a recording connection: WAL so readers (and a crash) see every committed
/// batch, NORMAL sync because WAL makes it safe against corruption and the fsync per
/// commit is what would stall the writer.
pub fn configure_writer(conn: &Connection) -> Result<(), StoreError> {
    conn.pragma_update(None, "journal_mode", "WAL")
        .ctx(|| "cannot switch the session to WAL mode".into())?;
    conn.pragma_update(None, "synchronous", "NORMAL")
        .ctx(|| "cannot set synchronous=NORMAL".into())?;
    Ok(())
}

/// Create the tables of an empty database and stamp it.
pub fn create(conn: &Connection) -> Result<(), StoreError> {
    conn.execute_batch(DDL)
        .ctx(|| "cannot create the session tables".into())?;
    conn.pragma_update(None, "application_id", APPLICATION_ID)
        .ctx(|| "cannot stamp the session".into())?;
    conn.pragma_update(None, "user_version", SCHEMA_VERSION)
        .ctx(|| "cannot stamp the session version".into())?;
    Ok(())
}

/// Whether `path` starts with the SQLite header (checked before SQLite sees it, whose own
/// error for a text file is "file is not a database"). A pipe or a device is not looked
/// at — that would consume what it holds — and is no session: SQLite reads a session in
/// place.
pub fn is_sqlite_file(path: &Path) -> Result<bool, StoreError> {
    // Told by its metadata first: even opening a FIFO has effects.
    if !matches!(FileType::of_path(path)?, FileType::Regular { .. }) {
        return Ok(false);
    }
    Ok(InputFile::open(path)?.peek(16)? == b"SQLite format 3\0")
}

/// Refuse a session that is not a regular file, before SQLite sees it.
pub fn require_regular(path: &Path) -> Result<(), StoreError> {
    Ok(FileType::require_regular(path, "a session")?)
}

/// Refuse a connection that is not a session of [`SCHEMA_VERSION`].
pub fn check(path: &Path, conn: &Connection) -> Result<(), StoreError> {
    let application_id: i64 = conn
        .pragma_query_value(None, "application_id", |r| r.get(0))
        .ctx(|| format!("{}: cannot read the application id", path.display()))?;
    if application_id != APPLICATION_ID {
        return Err(StoreError::NotSession {
            path: path.into(),
            application_id,
        });
    }
    let found: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .ctx(|| format!("{}: cannot read the schema version", path.display()))?;
    if found != SCHEMA_VERSION {
        return Err(StoreError::WrongVersion {
            path: path.into(),
            found,
            expected: SCHEMA_VERSION,
        });
    }
    Ok(())
}

/// Open an existing session for reading, after the header, id and version checks.
pub fn open_read_only(path: &Path) -> Result<Connection, StoreError> {
    require_regular(path)?;
    if !is_sqlite_file(path)? {
        return Err(StoreError::NotSqlite { path: path.into() });
    }
    let conn = Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .ctx(|| format!("cannot open {}", path.display()))?;
    check(path, &conn)?;
    refuse_other_files(&conn).ctx(|| format!("cannot open {}", path.display()))?;
    Ok(conn)
}

/// A query must not reach any file but the session: no `ATTACH`, and so no `VACUUM INTO
/// 'file'` (which attaches its target) — a read-only connection would still write there.
pub fn refuse_other_files(conn: &Connection) -> rusqlite::Result<()> {
    conn.set_limit(rusqlite::limits::Limit::SQLITE_LIMIT_ATTACHED, 0)
        .map(|_| ())
}

/// Instance kinds as stored in `instances.kind`.
pub fn instance_kind_name(kind: crate::model::InstanceKind) -> &'static str {
    use crate::model::InstanceKind::*;
    match kind {
        Unknown => "unknown",
        Cpu => "cpu",
        Vcpu => "vcpu",
        Thread => "thread",
    }
}

pub fn instance_kind_from_name(name: &str) -> Option<crate::model::InstanceKind> {
    use crate::model::InstanceKind::*;
    Some(match name {
        "unknown" => Unknown,
        "cpu" => Cpu,
        "vcpu" => Vcpu,
        "thread" => Thread,
        _ => return None,
    })
}

/// `samples.meta`: raw depth in bits 0–15, flags in 16–23, callchain method in 24–31
/// (0 unknown, 1 leaf, 2 frame pointer, 3 other with its code in 32–39, 4 dwarf, 5 idle).
pub fn pack_sample_meta(meta: &crate::model::SampleMeta) -> i64 {
    use crate::model::Callchain;
    let (method, code) = match meta.callchain {
        Callchain::Unknown => (0u64, 0u64),
        Callchain::Leaf => (1, 0),
        Callchain::FramePointer => (2, 0),
        Callchain::Other(c) => (3, u64::from(c)),
        Callchain::Dwarf => (4, 0),
        Callchain::Idle => (5, 0),
    };
    (u64::from(meta.raw_depth) | u64::from(meta.flags) << 16 | method << 24 | code << 32) as i64
}

pub fn unpack_sample_meta(packed: i64) -> crate::model::SampleMeta {
    use crate::model::Callchain;
    let v = packed as u64;
    crate::model::SampleMeta {
        raw_depth: (v & 0xffff) as u16,
        flags: ((v >> 16) & 0xff) as u8,
        callchain: match (v >> 24) & 0xff {
            1 => Callchain::Leaf,
            2 => Callchain::FramePointer,
            3 => Callchain::Other(((v >> 32) & 0xff) as u8),
            4 => Callchain::Dwarf,
            5 => Callchain::Idle,
            _ => Callchain::Unknown,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Callchain, SampleMeta};

    #[test]
    fn sample_meta_packs_losslessly() {
        for meta in [
            SampleMeta::default(),
            SampleMeta {
                raw_depth: 65535,
                flags: SampleMeta::HAS_PC | SampleMeta::UNRESOLVED,
                callchain: Callchain::FramePointer,
            },
            SampleMeta {
                raw_depth: 3,
                flags: 0xff,
                callchain: Callchain::Other(7),
            },
            SampleMeta {
                raw_depth: 0,
                flags: 8,
                callchain: Callchain::Idle,
            },
        ] {
            assert_eq!(unpack_sample_meta(pack_sample_meta(&meta)), meta);
        }
    }

    #[test]
    fn a_fresh_database_is_a_session_of_this_version() {
        let conn = Connection::open_in_memory().unwrap();
        create(&conn).unwrap();
        check(Path::new(":memory:"), &conn).unwrap();
        conn.pragma_update(None, "user_version", 99).unwrap();
        let err = check(Path::new("x.db"), &conn).unwrap_err();
        assert!(matches!(err, StoreError::WrongVersion { found: 99, .. }), "{err}");
    }
}
