//! The session recorder: the API every live source records through, cheap on the
//! caller's thread (interning and a non-blocking channel send) with the SQLite work on a
//! writer thread of its own.
//!
//! Bulk rows (samples, events, console lines, markers, symbols, lost counts) never block
//! the caller: when the channel is full they are counted as dropped and reported by
//! [`Recorder::finish`]. Rows other rows point at (frames, stacks, instances, event types)
//! are rare and always delivered, so a kept sample never points at a missing stack.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{SyncSender, TrySendError, sync_channel};
use std::thread::JoinHandle;
use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, params};
use rustc_hash::FxHashMap;

use super::error::{SqliteContext, StoreError};
use super::layout_json::layout_to_json;
use super::schema;
use super::writer::{self, EventTypeRow, Row, WriterTotals};
use crate::model::FrameOrigin;
use crate::model::{Instance, SampleMeta, Verdict};
use crate::trace::event::{EventIndex, EventLayout, TraceEvent};

/// Rows the channel holds. At 100k rows/s a commit every 100 ms needs ~10k; the rest is
/// headroom for a writer that stalls on a WAL checkpoint.
pub const CHANNEL_ROWS: usize = 1 << 17;

/// What a session is of, written to `meta` when the file is created.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionMeta {
    /// `qemu`, `host`, `test`…
    pub source_kind: String,
    /// What was profiled: the kernel image, the command, `system-wide`.
    pub target: String,
    pub arch: Option<String>,
    /// Wall-clock start, ns since the Unix epoch.
    pub start_unix_ns: u64,
    /// The perfscope command line, space-separated.
    pub command_line: String,
    /// Anything else a source wants to keep (key, value).
    pub extra: Vec<(String, String)>,
}

impl SessionMeta {
    /// Meta of a session starting now, with this process's command line.
    pub fn now(source_kind: &str, target: &str) -> Self {
        Self {
            source_kind: source_kind.into(),
            target: target.into(),
            arch: None,
            start_unix_ns: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(0),
            command_line: std::env::args().collect::<Vec<_>>().join(" "),
            extra: Vec::new(),
        }
    }

    /// The `meta` rows (key, value).
    pub fn rows(&self) -> Vec<(String, String)> {
        let mut rows = vec![
            ("format".to_string(), "perfscope-session".to_string()),
            ("perfscope_version".into(), env!("CARGO_PKG_VERSION").into()),
            ("source_kind".into(), self.source_kind.clone()),
            ("target".into(), self.target.clone()),
            ("start_unix_ns".into(), self.start_unix_ns.to_string()),
            ("command_line".into(), self.command_line.clone()),
        ];
        if let Some(arch) = &self.arch {
            rows.push(("arch".into(), arch.clone()));
        }
        rows.extend(self.extra.iter().cloned());
        rows
    }
}

/// A frame written to the session (`frames.id`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct FrameRef(pub u32);
/// A stack written to the session (`stacks.id`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct StackRef(pub u32);
/// An instance written to the session (`instances.id`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct InstanceRef(pub u32);

/// What a finished recording wrote.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub struct RecordSummary {
    /// Rows committed to the file.
    pub rows_written: u64,
    /// Bulk rows dropped because the writer fell behind (or had stopped).
    pub rows_dropped: u64,
    pub commits: u64,
    /// Size of the session file after the final checkpoint.
    pub bytes: u64,
}

/// Records one session into an SQLite file.
pub struct Recorder {
    /// The session's name.
    path: PathBuf,
    /// Where its rows go: `path`, or a name beside it while a previous session there waits
    /// to be replaced.
    file_path: PathBuf,
    /// The lock of the file being written (held for the recorder's life).
    own_lock: File,
    /// The previous session's lock, while this recording replaces it.
    previous: Option<File>,
    tx: Option<SyncSender<Row>>,
    dropped: Arc<AtomicU64>,
    writer: Option<JoinHandle<Result<WriterTotals, StoreError>>>,
    frames: FxHashMap<(Box<str>, Option<Box<str>>), FrameRef>,
    stacks: FxHashMap<Box<[u32]>, StackRef>,
    frame_names: Vec<Box<str>>,
    instances: FxHashMap<Instance, InstanceRef>,
    event_types: Vec<bool>,
}

/// Whether `path` may be recorded into: nothing there, or (with `replace`, the command
/// line's `--force`) a previous session — never a symbolic link (SQLite would write through
/// it) or another kind of file. Returns the previous session's lock when there is one: it is
/// held until this recording replaces it, so two recorders never take one file.
fn previous_session(path: &Path, replace: bool) -> Result<Option<File>, StoreError> {
    let Ok(link_meta) = std::fs::symlink_metadata(path) else {
        return Ok(None);
    };
    if link_meta.file_type().is_symlink() {
        return Err(StoreError::Symlink { path: path.into() });
    }
    if !replace {
        return Err(StoreError::Exists { path: path.into() });
    }
    let is_session = link_meta.len() == 0
        || (schema::is_sqlite_file(path)?
            && Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
                .ok()
                .is_some_and(|c| schema::check(path, &c).is_ok()));
    if !is_session {
        return Err(StoreError::WouldClobber { path: path.into() });
    }
    lock(path).map(Some)
}

/// Take `path`'s exclusive lock (`flock`, beside SQLite's own POSIX locks): refused at once
/// when another recorder holds it.
fn lock(path: &Path) -> Result<File, StoreError> {
    let io = |cause| StoreError::Io {
        path: path.into(),
        cause,
    };
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(io)?;
    // SAFETY: flock on a descriptor this function owns.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        let e = std::io::Error::last_os_error();
        return Err(match e.raw_os_error() {
            Some(libc::EWOULDBLOCK) => StoreError::Busy { path: path.into() },
            _ => io(e),
        });
    }
    Ok(file)
}

/// `dir/.name.new-<pid>-<n>`: where a recording that replaces a session is written until
/// it is complete (the old session stays whole until then).
fn replacement_name(path: &Path) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(
        ".{name}.new-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ))
}

/// `path` and its WAL files.
fn with_wal_files(path: &Path) -> [PathBuf; 3] {
    ["", "-wal", "-shm"].map(|suffix| PathBuf::from(format!("{}{suffix}", path.display())))
}

impl Recorder {
    /// Create (or replace a previous session at) `path`, write its meta and start the
    /// writer thread.
    pub fn create(path: &Path, meta: &SessionMeta) -> Result<Recorder, StoreError> {
        Self::create_with_capacity(path, meta, CHANNEL_ROWS)
    }

    /// As [`Recorder::create`], but an existing file at `path` is refused unless `replace`
    /// (the command line's `--force`): a recording must not silently wipe an earlier one.
    pub fn create_with(path: &Path, meta: &SessionMeta, replace: bool) -> Result<Recorder, StoreError> {
        Self::open_recording(path, meta, replace, CHANNEL_ROWS)
    }

    /// As [`Recorder::create`] with a channel of `capacity` rows.
    pub fn create_with_capacity(
        path: &Path,
        meta: &SessionMeta,
        capacity: usize,
    ) -> Result<Recorder, StoreError> {
        Self::open_recording(path, meta, true, capacity)
    }

    /// A new session at `path`. A previous one there (`replace`) stays whole, and locked,
    /// until this recording is complete: the rows go to a name of their own beside it, which
    /// replaces it at [`Recorder::finish`]. A full disk, or a run that fails, leaves the old
    /// session as it was.
    fn open_recording(
        path: &Path,
        meta: &SessionMeta,
        replace: bool,
        capacity: usize,
    ) -> Result<Recorder, StoreError> {
        let previous = previous_session(path, replace)?;
        let file_path = if previous.is_some() {
            replacement_name(path)
        } else {
            path.to_path_buf()
        };
        match Self::start_writing(&file_path, path, meta, capacity) {
            Ok(mut recorder) => {
                recorder.previous = previous;
                Ok(recorder)
            }
            Err(e) => {
                if previous.is_some() {
                    for p in with_wal_files(&file_path) {
                        let _ = std::fs::remove_file(p);
                    }
                }
                Err(e)
            }
        }
    }

    fn start_writing(
        file_path: &Path,
        path: &Path,
        meta: &SessionMeta,
        capacity: usize,
    ) -> Result<Recorder, StoreError> {
        // Created exclusively: a file (or link) that appeared meanwhile is not ours.
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(file_path)
            .map_err(|cause| match cause.kind() {
                std::io::ErrorKind::AlreadyExists => StoreError::Busy { path: path.into() },
                _ => StoreError::Io {
                    path: file_path.into(),
                    cause,
                },
            })?;
        let own_lock = lock(file_path)?;
        let conn = Connection::open(file_path).ctx(|| format!("cannot create {}", path.display()))?;
        schema::configure_writer(&conn)?;
        conn.execute_batch("BEGIN")
            .ctx(|| "cannot start a transaction".into())?;
        schema::create(&conn)?;
        for (key, value) in meta.rows() {
            conn.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)",
                params![key, value],
            )
            .ctx(|| "cannot write the session meta".into())?;
        }
        conn.execute_batch("COMMIT")
            .ctx(|| "cannot write the session meta".into())?;
        let (tx, rx) = sync_channel(capacity.max(1));
        let writer = std::thread::Builder::new()
            .name("perfscope-store".into())
            .spawn(move || writer::run(conn, rx))
            .map_err(|source| StoreError::Io {
                path: path.into(),
                cause: source,
            })?;
        Ok(Recorder {
            path: path.into(),
            file_path: file_path.into(),
            own_lock,
            previous: None,
            tx: Some(tx),
            dropped: Arc::new(AtomicU64::new(0)),
            writer: Some(writer),
            frames: FxHashMap::default(),
            stacks: FxHashMap::default(),
            frame_names: Vec::new(),
            instances: FxHashMap::default(),
            event_types: Vec::new(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A row others point at: wait for room rather than lose it.
    fn send_definition(&self, row: Row) {
        if let Some(tx) = &self.tx
            && tx.send(row).is_err()
        {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// A bulk row: never wait; count it when there is no room.
    fn send_bulk(&self, row: Row) {
        match &self.tx {
            Some(tx) => match tx.try_send(row) {
                Ok(()) => {}
                Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                    self.dropped.fetch_add(1, Ordering::Relaxed);
                }
            },
            None => {
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Set (or replace) a `meta` entry.
    pub fn meta(&mut self, key: &str, value: &str) {
        self.send_definition(Row::Meta(Box::new((key.into(), value.into()))));
    }

    /// Intern an instance.
    pub fn instance(&mut self, instance: &Instance) -> InstanceRef {
        if let Some(&r) = self.instances.get(instance) {
            return r;
        }
        let r = InstanceRef(self.instances.len() as u32);
        self.instances.insert(instance.clone(), r);
        self.send_definition(Row::Instance {
            id: r.0,
            kind: schema::instance_kind_name(instance.kind),
            ext_id: instance.id,
            label: instance.label.clone(),
        });
        r
    }

    /// Intern a frame: a function `name` from `origin` (kernel or user, its DSO or
    /// `[kernel.kallsyms]`); `file` is its source file when known (kept from the first
    /// sighting).
    pub fn frame(&mut self, name: &str, origin: &FrameOrigin, file: Option<&str>) -> FrameRef {
        let key = (Box::<str>::from(name), origin.module.clone());
        if let Some(&r) = self.frames.get(&key) {
            return r;
        }
        let r = FrameRef(self.frame_names.len() as u32);
        self.frame_names.push(key.0.clone());
        self.send_definition(Row::Frame {
            id: r.0,
            name: key.0.clone(),
            module: key.1.clone(),
            file: file.map(Into::into),
            kind: origin.kind.name(),
        });
        self.frames.insert(key, r);
        r
    }

    /// Intern a stack of frames, root first.
    pub fn stack(&mut self, root_first: &[FrameRef]) -> StackRef {
        let ids: Box<[u32]> = root_first.iter().map(|f| f.0).collect();
        if let Some(&r) = self.stacks.get(&ids) {
            return r;
        }
        let r = StackRef(self.stacks.len() as u32);
        let mut folded = String::new();
        for (i, f) in ids.iter().enumerate() {
            if i > 0 {
                folded.push(';');
            }
            folded.push_str(&self.frame_names[*f as usize]);
        }
        self.send_definition(Row::Stack {
            id: r.0,
            frames: ids.clone(),
            folded,
        });
        self.stacks.insert(ids, r);
        r
    }

    /// Intern a stack given as frame names (no module), root first.
    pub fn named_stack<S: AsRef<str>>(&mut self, root_first: &[S]) -> StackRef {
        let frames: Vec<FrameRef> = root_first
            .iter()
            .map(|n| self.frame(n.as_ref(), &FrameOrigin::default(), None))
            .collect();
        self.stack(&frames)
    }

    /// One sample on an interned instance and stack.
    pub fn sample(
        &mut self,
        time_ns: Option<u64>,
        instance: InstanceRef,
        weight: u64,
        stack: StackRef,
        meta: &SampleMeta,
    ) {
        self.send_bulk(Row::Sample {
            time_ns,
            instance: instance.0,
            weight,
            stack: stack.0,
            meta: schema::pack_sample_meta(meta),
        });
    }

    /// Declare the event type of `index` (the session's opened-event order) before its
    /// first event; `alias` and `filter` as the selector gave them.
    pub fn event_type(
        &mut self,
        index: EventIndex,
        layout: &EventLayout,
        alias: Option<&str>,
        filter: Option<&str>,
    ) {
        let i = usize::from(index.0);
        if self.event_types.len() <= i {
            self.event_types.resize(i + 1, false);
        }
        self.event_types[i] = true;
        self.send_definition(Row::EventType(Box::new(EventTypeRow {
            id: index.0,
            system: layout.system.clone(),
            name: layout.name.clone(),
            alias: alias.map(Into::into),
            filter: filter.map(Into::into),
            layout_json: layout_to_json(layout),
        })));
    }

    /// One tracepoint event of a declared type.
    pub fn event(&mut self, event: &TraceEvent<'_>) -> Result<(), StoreError> {
        if !self
            .event_types
            .get(usize::from(event.event.0))
            .copied()
            .unwrap_or(false)
        {
            return Err(StoreError::UndeclaredEventType { index: event.event.0 });
        }
        self.send_bulk(Row::Event {
            time_ns: event.time_ns,
            cpu: event.cpu,
            pid: event.pid,
            tid: event.tid,
            type_id: event.event.0,
            raw: event.raw.into(),
            callchain: event.callchain.into(),
            rebuilt: event.rebuilt,
        });
        Ok(())
    }

    /// One completed console line.
    pub fn console_line(&mut self, time_ns: Option<u64>, text: &str) {
        self.send_bulk(Row::Console {
            time_ns,
            text: text.into(),
        });
    }

    /// A marker: `kind` is `start` / `stop` for the workload window, anything else is
    /// kept as a note.
    pub fn marker(&mut self, time_ns: Option<u64>, kind: &str, text: &str) {
        self.send_bulk(Row::Marker {
            time_ns,
            kind: kind.into(),
            text: text.into(),
        });
    }

    /// A resolved address: `address` in `module` is `name+offset`.
    pub fn symbol(&mut self, module: &str, address: u64, name: &str, offset: u64) {
        self.send_bulk(Row::Symbol(Box::new((
            module.into(),
            address,
            name.into(),
            offset,
        ))));
    }

    /// Records the kernel (or a plugin) reported lost.
    pub fn lost(&mut self, time_ns: Option<u64>, cpu: Option<u32>, count: u64) {
        self.send_bulk(Row::Lost { time_ns, cpu, count });
    }

    /// The session's verdict, as the last row of a finished recording: a replay says the
    /// same, and a file without it was killed or is still being written.
    pub fn verdict(&mut self, verdict: &Verdict) {
        let json = serde_json::to_string(verdict).unwrap_or_default();
        self.meta(schema::VERDICT_META, &json);
    }

    /// The writer's error, once it has stopped on one (a full disk): every row sent after
    /// it is dropped. `None` while it runs.
    pub fn writer_failure(&mut self) -> Option<StoreError> {
        if self.writer.as_ref().is_some_and(|h| h.is_finished()) {
            return Some(self.writer_error());
        }
        None
    }

    /// Bulk rows dropped so far.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Commit everything sent so far and wait for it (tests, and before a risky step).
    pub fn commit_now(&mut self) -> Result<(), StoreError> {
        let (done_tx, done_rx) = sync_channel(1);
        self.send_definition(Row::Commit(done_tx));
        done_rx.recv().map_err(|_| self.writer_error())
    }

    fn writer_error(&mut self) -> StoreError {
        self.tx = None;
        match self.writer.take().map(|h| h.join()) {
            Some(Ok(Err(e))) => e,
            Some(Err(_)) => StoreError::WriterGone("the writer thread panicked".into()),
            _ => StoreError::WriterGone("the writer thread has stopped".into()),
        }
    }

    /// Flush, commit, checkpoint and close; returns what was written.
    pub fn finish(mut self) -> Result<RecordSummary, StoreError> {
        self.tx = None;
        let written = match self.writer.take().map(|h| h.join()) {
            Some(Ok(result)) => result,
            Some(Err(_)) => return Err(StoreError::WriterGone("the writer thread panicked".into())),
            None => return Err(StoreError::WriterGone("already finished".into())),
        };
        // A file someone replaced under us explains whatever the writer met at its end.
        if self.previous.is_none() && self.replaced() {
            return Err(StoreError::Replaced {
                path: self.path.clone(),
            });
        }
        let totals = written?;
        self.put_in_place()?;
        let bytes = std::fs::metadata(&self.path).map(|m| m.len()).unwrap_or(0);
        Ok(RecordSummary {
            rows_written: totals.rows_committed,
            rows_dropped: self.dropped(),
            commits: totals.commits,
            bytes,
        })
    }
}

impl Recorder {
    /// The closed, complete file under the session's name: it replaces the previous session
    /// now (its WAL files first: they are not this file's); a file recorded in place must
    /// still be the one at `path` (another process may have replaced it).
    fn put_in_place(&mut self) -> Result<(), StoreError> {
        let io = |path: &Path, cause| StoreError::Io {
            path: path.into(),
            cause,
        };
        if self.previous.take().is_some() {
            for p in &with_wal_files(&self.path)[1..] {
                match std::fs::remove_file(p) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(p, e)),
                    _ => {}
                }
            }
            std::fs::rename(&self.file_path, &self.path).map_err(|e| io(&self.file_path, e))?;
            self.file_path = self.path.clone();
            return Ok(());
        }
        if self.replaced() {
            return Err(StoreError::Replaced {
                path: self.path.clone(),
            });
        }
        Ok(())
    }

    /// The file at `path` is no longer the one this recorder writes.
    fn replaced(&self) -> bool {
        let ours = self.own_lock.metadata();
        let there = std::fs::symlink_metadata(&self.path);
        match (ours, there) {
            (Ok(a), Ok(b)) => (a.dev(), a.ino()) != (b.dev(), b.ino()),
            _ => true,
        }
    }
}

impl Drop for Recorder {
    /// A recorder dropped without `finish` (an error path) still commits what it has.
    fn drop(&mut self) {
        self.tx = None;
        if let Some(h) = self.writer.take() {
            let _ = h.join();
        }
        // A replacement that did not finish: the previous session stays as it was.
        if self.previous.is_some() {
            for p in with_wal_files(&self.file_path) {
                let _ = std::fs::remove_file(p);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Instance;

    #[test]
    fn a_full_channel_drops_bulk_rows_counts_them_and_keeps_definitions() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        let mut r = Recorder::create_with_capacity(&path, &SessionMeta::now("test", "t"), 8).unwrap();
        let cpu = r.instance(&Instance::cpu(0));
        let offered = 200_000u64;
        let mut definitions = 1u64;
        for n in 0..offered {
            // A new stack now and then: definitions must get through a full channel.
            let stack = r.named_stack(&["main", &format!("f{}", n / 20_000)]);
            if n % 20_000 == 0 {
                definitions += if n == 0 { 3 } else { 2 };
            }
            r.sample(Some(n), cpu, 1, stack, &SampleMeta::default());
        }
        let s = r.finish().unwrap();
        assert!(s.rows_dropped > 0, "a channel of 8 cannot keep up: {s:?}");
        assert_eq!(s.rows_written + s.rows_dropped, offered + definitions, "{s:?}");
        let back = crate::store::open_session(&path).unwrap();
        assert_eq!(back.profile.samples().len() as u64, offered - s.rows_dropped);
        assert_eq!(back.profile.stacks.len(), 10, "every stack definition arrived");
    }
}
