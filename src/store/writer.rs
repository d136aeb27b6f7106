//! The recorder's writer thread: rows from the channel into SQLite in batched
//! transactions (one commit per [`COMMIT_INTERVAL`] or [`COMMIT_ROWS`], whichever first),
//! through statements prepared once.

use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender};
use std::time::{Duration, Instant};

use rusqlite::{Connection, params};

use super::error::{SqliteContext, StoreError};

/// How long rows may wait uncommitted: what a crash can lose at most.
pub const COMMIT_INTERVAL: Duration = Duration::from_millis(100);
/// Rows per transaction at most (bounds the WAL growth between commits).
pub const COMMIT_ROWS: u64 = 20_000;

/// An event type, boxed in [`Row`] so the channel's slots stay small.
pub struct EventTypeRow {
    pub id: u16,
    pub system: String,
    pub name: String,
    pub alias: Option<String>,
    pub filter: Option<String>,
    pub layout_json: String,
}

/// One row for the writer.
pub enum Row {
    Meta(Box<(String, String)>),
    Instance {
        id: u32,
        kind: &'static str,
        ext_id: u64,
        label: String,
    },
    Frame {
        id: u32,
        name: Box<str>,
        module: Option<Box<str>>,
        file: Option<Box<str>>,
        /// `kernel`, `user`, `pseudo` ([`crate::model::FrameKind::name`]); NULL unknown.
        kind: Option<&'static str>,
    },
    Stack {
        id: u32,
        frames: Box<[u32]>,
        folded: String,
    },
    Sample {
        time_ns: Option<u64>,
        instance: u32,
        weight: u64,
        stack: u32,
        meta: i64,
    },
    EventType(Box<EventTypeRow>),
    Event {
        time_ns: u64,
        cpu: u32,
        pid: u32,
        tid: u32,
        type_id: u16,
        raw: Box<[u8]>,
        callchain: Box<[u64]>,
        rebuilt: bool,
    },
    Console {
        time_ns: Option<u64>,
        text: String,
    },
    Marker {
        time_ns: Option<u64>,
        kind: Box<str>,
        text: String,
    },
    Symbol(Box<(String, u64, String, u64)>),
    Lost {
        time_ns: Option<u64>,
        cpu: Option<u32>,
        count: u64,
    },
    /// Commit what is pending, then answer.
    Commit(SyncSender<()>),
}

/// What the writer did.
#[derive(Copy, Clone, Debug, Default)]
pub struct WriterTotals {
    pub rows_committed: u64,
    pub commits: u64,
}

fn opt_i64(v: Option<u64>) -> Option<i64> {
    v.map(|v| v as i64)
}

fn callchain_blob(chain: &[u64]) -> Option<Vec<u8>> {
    if chain.is_empty() {
        return None;
    }
    Some(chain.iter().flat_map(|ip| ip.to_le_bytes()).collect())
}

/// The writer's statements, prepared once for the whole recording.
struct Statements<'c> {
    meta: rusqlite::Statement<'c>,
    instance: rusqlite::Statement<'c>,
    frame: rusqlite::Statement<'c>,
    stack: rusqlite::Statement<'c>,
    stack_frame: rusqlite::Statement<'c>,
    sample: rusqlite::Statement<'c>,
    event_type: rusqlite::Statement<'c>,
    event: rusqlite::Statement<'c>,
    console: rusqlite::Statement<'c>,
    marker: rusqlite::Statement<'c>,
    symbol: rusqlite::Statement<'c>,
    lost: rusqlite::Statement<'c>,
}

impl<'c> Statements<'c> {
    fn prepare(conn: &'c Connection) -> rusqlite::Result<Self> {
        Ok(Self {
            meta: conn.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)")?,
            instance: conn.prepare("INSERT INTO instances (id, kind, ext_id, label) VALUES (?1, ?2, ?3, ?4)")?,
            frame: conn.prepare("INSERT INTO frames (id, name, module, file, kind) VALUES (?1, ?2, ?3, ?4, ?5)")?,
            stack: conn.prepare("INSERT INTO stacks (id, depth, folded) VALUES (?1, ?2, ?3)")?,
            stack_frame: conn.prepare("INSERT INTO stack_frames (stack_id, depth, frame_id) VALUES (?1, ?2, ?3)")?,
            sample: conn.prepare("INSERT INTO samples (time_ns, instance_id, weight, stack_id, meta) VALUES (?1, ?2, ?3, ?4, ?5)")?,
            event_type: conn.prepare("INSERT OR REPLACE INTO event_types (id, system, name, alias, filter, layout_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6)")?,
            event: conn.prepare("INSERT INTO events (time_ns, cpu, pid, tid, type_id, raw, callchain, rebuilt) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)")?,
            console: conn.prepare("INSERT INTO console (time_ns, text) VALUES (?1, ?2)")?,
            marker: conn.prepare("INSERT INTO markers (time_ns, kind, text) VALUES (?1, ?2, ?3)")?,
            symbol: conn.prepare("INSERT OR IGNORE INTO symbols (module, address, name, offset) VALUES (?1, ?2, ?3, ?4)")?,
            lost: conn.prepare("INSERT INTO lost (time_ns, cpu, count) VALUES (?1, ?2, ?3)")?,
        })
    }
}

fn write_row(st: &mut Statements<'_>, row: Row) -> rusqlite::Result<()> {
    match row {
        Row::Meta(kv) => {
            st.meta.execute(params![kv.0, kv.1])?;
        }
        Row::Instance {
            id,
            kind,
            ext_id,
            label,
        } => {
            st.instance.execute(params![id, kind, ext_id as i64, label])?;
        }
        Row::Frame {
            id,
            name,
            module,
            file,
            kind,
        } => {
            st.frame
                .execute(params![id, &*name, module.as_deref(), file.as_deref(), kind])?;
        }
        Row::Stack { id, frames, folded } => {
            st.stack.execute(params![id, frames.len() as i64, folded])?;
            let insert = &mut st.stack_frame;
            for (depth, frame) in frames.iter().enumerate() {
                insert.execute(params![id, depth as i64, frame])?;
            }
        }
        Row::Sample {
            time_ns,
            instance,
            weight,
            stack,
            meta,
        } => {
            st.sample
                .execute(params![opt_i64(time_ns), instance, weight as i64, stack, meta])?;
        }
        Row::EventType(t) => {
            st.event_type
                .execute(params![t.id, t.system, t.name, t.alias, t.filter, t.layout_json])?;
        }
        Row::Event {
            time_ns,
            cpu,
            pid,
            tid,
            type_id,
            raw,
            callchain,
            rebuilt,
        } => {
            st.event.execute(params![
                time_ns as i64,
                cpu,
                pid,
                tid,
                type_id,
                &*raw,
                callchain_blob(&callchain),
                rebuilt
            ])?;
        }
        Row::Console { time_ns, text } => {
            st.console.execute(params![opt_i64(time_ns), text])?;
        }
        Row::Marker { time_ns, kind, text } => {
            st.marker.execute(params![opt_i64(time_ns), &*kind, text])?;
        }
        Row::Symbol(s) => {
            st.symbol.execute(params![s.0, s.1 as i64, s.2, s.3 as i64])?;
        }
        Row::Lost { time_ns, cpu, count } => {
            st.lost.execute(params![opt_i64(time_ns), cpu, count as i64])?;
        }
        Row::Commit(_) => unreachable!("handled by the loop"),
    }
    Ok(())
}

/// One open transaction and what it holds.
struct Batch {
    started: Instant,
    rows: u64,
}

fn commit(conn: &Connection, batch: &mut Option<Batch>, totals: &mut WriterTotals) -> Result<(), StoreError> {
    if let Some(b) = batch.take() {
        conn.execute_batch("COMMIT")
            .ctx(|| "cannot commit recorded rows".into())?;
        totals.rows_committed += b.rows;
        totals.commits += 1;
    }
    Ok(())
}

/// Write rows until every sender is gone; then commit and checkpoint the WAL into the
/// main file, so a finished session is one self-contained file.
pub fn run(conn: Connection, rows: Receiver<Row>) -> Result<WriterTotals, StoreError> {
    let mut st = Statements::prepare(&conn).ctx(|| "cannot prepare the session statements".into())?;
    let mut totals = WriterTotals::default();
    let mut batch: Option<Batch> = None;
    loop {
        let wait = match &batch {
            Some(b) => COMMIT_INTERVAL.saturating_sub(b.started.elapsed()),
            None => Duration::from_secs(3600),
        };
        match rows.recv_timeout(wait) {
            Ok(Row::Commit(done)) => {
                commit(&conn, &mut batch, &mut totals)?;
                let _ = done.send(());
            }
            Ok(row) => {
                let b = match &mut batch {
                    Some(b) => b,
                    None => {
                        conn.execute_batch("BEGIN")
                            .ctx(|| "cannot start a transaction".into())?;
                        batch.insert(Batch {
                            started: Instant::now(),
                            rows: 0,
                        })
                    }
                };
                b.rows += 1;
                write_row(&mut st, row).ctx(|| "cannot write a recorded row".into())?;
                let due = b.rows >= COMMIT_ROWS || b.started.elapsed() >= COMMIT_INTERVAL;
                if due {
                    commit(&conn, &mut batch, &mut totals)?;
                }
            }
            Err(RecvTimeoutError::Timeout) => commit(&conn, &mut batch, &mut totals)?,
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    commit(&conn, &mut batch, &mut totals)?;
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .ctx(|| "cannot checkpoint the session".into())?;
    // A finished session is one plain file: WAL only served readers while it was written.
    // In WAL mode every reader needs a writable `-shm` beside it — a session on read-only
    // media would not open, and a read-only `sql` would leave `-wal`/`-shm` behind.
    conn.pragma_update(None, "journal_mode", "DELETE")
        .ctx(|| "cannot close the session's write-ahead log".into())?;
    Ok(totals)
}
