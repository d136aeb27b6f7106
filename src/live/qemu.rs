//! The live QEMU source: a session (QEMU + plugin + console), the plugin's record stream
//! over a Unix socket decoded and symbolized as it arrives, the console and markers into
//! the model — and, when QEMU has exited, the run's facts for the artifacts.

use std::io::Read;
use std::os::unix::net::UnixListener;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, TryRecvError, channel};
use std::time::{Duration, Instant};

use anyhow::Context;

use crate::ingest::QperfIngest;
use crate::ingest::open::{OpenOptions, SymbolSource};
use crate::model::{InputInfo, Profile};
use crate::sources::qemu::{QemuSession, SessionOptions};
use crate::sources::qperf_file::{PluginSummary, QperfTail, StreamDecoder, read_file, sidecar_path};
use crate::store::{Recorder, SessionTap};

use super::source::{Source, SourcePoll};
use super::state::ModelState;

/// If the plugin has not connected to the stream by then, tail its qperf.bin instead
/// (a plugin build without the stream argument).
const STREAM_CONNECT_GRACE: Duration = Duration::from_secs(5);

/// What the QEMU source needs.
pub struct QemuSourceOptions {
    pub session: SessionOptions,
    pub symbols: SymbolSource,
    pub open: OpenOptions,
    /// Where the plugin writes qperf.bin.
    pub qperf_bin: PathBuf,
    /// The socket the plugin streams to (we listen).
    pub stream_socket: PathBuf,
    /// A label for the status line ("qemu riscv64").
    pub label: String,
}

/// Bytes from the plugin's stream connection.
struct StreamReader {
    bytes: Receiver<Vec<u8>>,
    connected: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
}

fn listen(path: &PathBuf) -> anyhow::Result<StreamReader> {
    let _ = std::fs::remove_file(path);
    let listener =
        UnixListener::bind(path).with_context(|| format!("cannot listen on {}", path.display()))?;
    listener.set_nonblocking(true)?;
    let (tx, rx) = channel();
    let connected = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let (c, s) = (connected.clone(), stop.clone());
    std::thread::Builder::new()
        .name("perfscope-stream".into())
        .spawn(move || {
            // Accept one connection (the plugin), then read until it closes.
            let mut stream = loop {
                if s.load(Ordering::Relaxed) {
                    return;
                }
                match listener.accept() {
                    Ok((stream, _)) => break stream,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(10))
                    }
                    Err(_) => return,
                }
            };
            let _ = stream.set_nonblocking(false);
            c.store(true, Ordering::Relaxed);
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                match stream.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        if tx.send(buf[..n].to_vec()).is_err() {
                            break;
                        }
                    }
                }
            }
        })?;
    Ok(StreamReader {
        bytes: rx,
        connected,
        stop,
    })
}

/// Where records come from.
enum Feed {
    Stream(StreamReader, StreamDecoder),
    File(Option<QperfTail>),
}

/// A QEMU run as a model source.
pub struct QemuSource {
    session: QemuSession,
    qperf_bin: PathBuf,
    stream_socket: PathBuf,
    feed: Feed,
    ingest: QperfIngest,
    profile: Option<Profile>,
    label: String,
    started: Instant,
    /// QEMU exited; draining what the stream still holds.
    exited_at: Option<Instant>,
    done: bool,
    /// `--record`: the session file the model is copied into as it grows.
    record: Option<SessionTap>,
}

impl QemuSource {
    /// Listen for the stream and start QEMU.
    pub fn start(options: QemuSourceOptions) -> anyhow::Result<QemuSource> {
        let (ingest, profile) = QperfIngest::new(
            &options.symbols,
            &options.open,
            &options.qperf_bin.display().to_string(),
            None,
        )?;
        let reader = listen(&options.stream_socket)?;
        let session = QemuSession::start(options.session)?;
        Ok(QemuSource {
            session,
            qperf_bin: options.qperf_bin,
            stream_socket: options.stream_socket,
            feed: Feed::Stream(reader, StreamDecoder::new()),
            ingest,
            profile: Some(profile),
            label: options.label,
            started: Instant::now(),
            exited_at: None,
            done: false,
            record: None,
        })
    }

    /// Record the run (samples, console lines, markers) into a session file as it arrives.
    pub fn record_into(&mut self, recorder: Recorder) {
        self.record = Some(SessionTap::new(recorder));
    }

    /// Copy what the model gained into the session file; at the end, close it.
    fn record_step(&mut self, state: &mut ModelState, finished: bool) {
        let Some(tap) = &mut self.record else { return };
        tap.record(&state.profile, &state.console, &state.markers, state.stats.lost);
        if !finished {
            return;
        }
        tap.record_meta("plugin.", &state.plugin_summary);
        if let Some(window) = &state.window {
            tap.record_meta("", &[("window_json".into(), window.to_json().to_string())]);
        }
        if let Some(warning) = self.record.take().and_then(SessionTap::finish_with_warning) {
            state.warnings.push(warning);
        }
    }

    /// Take stream bytes (or file records); returns records added and whether the
    /// stream has closed.
    fn take_records(&mut self, state: &mut ModelState) -> (usize, bool) {
        let mut added = 0;
        let mut closed = false;
        match &mut self.feed {
            Feed::Stream(reader, decoder) => {
                loop {
                    match reader.bytes.try_recv() {
                        Ok(bytes) => {
                            for r in decoder.push(&bytes) {
                                self.ingest.add(&mut state.profile, &r);
                                added += 1;
                            }
                        }
                        Err(TryRecvError::Empty) => break,
                        Err(TryRecvError::Disconnected) => {
                            closed = reader.connected.load(Ordering::Relaxed);
                            break;
                        }
                    }
                }
                if let Some(end) = decoder.end() {
                    state.warnings.push(format!("plugin stream stopped: {end:?}"));
                    closed = true;
                }
            }
            Feed::File(tail) => {
                if tail.is_none() {
                    *tail = QperfTail::open(&self.qperf_bin).ok();
                }
                if let Some(t) = tail
                    && let Ok(batch) = t.poll()
                {
                    for r in &batch.records {
                        self.ingest.add(&mut state.profile, r);
                        added += 1;
                    }
                }
                closed = self.exited_at.is_some();
            }
        }
        (added, closed)
    }

    /// QEMU is gone and the records are in: the run's facts into the state.
    fn finish(&mut self, state: &mut ModelState) {
        // The socket is a rendezvous, not an artifact: do not leave it in the qperf directory.
        let _ = std::fs::remove_file(&self.stream_socket);
        let report = self.session.report();
        state.markers = self.session.markers();
        // The session's warnings travel in the window facts (report.json window.warnings).
        state.window = Some(report.window.clone());
        if let Ok(Some(summary)) = PluginSummary::read(&sidecar_path(&self.qperf_bin)) {
            state.plugin_summary = summary.entries.clone();
            if state.profile.info.frequency_hz.is_none() {
                state.profile.info.frequency_hz = summary.frequency_hz().map(u64::from);
            }
        } else {
            state
                .warnings
                .push("the plugin wrote no summary (qperf.summary.txt): QEMU may have been killed".into());
        }
        // The file the plugin wrote is the record of the run: read it whole and check
        // that it says what the stream said.
        match read_file(&self.qperf_bin) {
            Ok((records, file_report)) => {
                let streamed = self.ingest.records();
                if records.len() as u64 != streamed {
                    state.warnings.push(format!(
                        "qperf.bin has {} records but the live stream delivered {streamed}",
                        records.len()
                    ));
                }
                state.facts = self.ingest.facts(file_report.version.map(|v| v.as_u8()));
                state.input = crate::ingest::open::input_info(&self.qperf_bin, &file_report);
            }
            Err(e) => {
                state
                    .warnings
                    .push(format!("cannot read {}: {e}", self.qperf_bin.display()));
                state.input = InputInfo {
                    kind: "qperf".into(),
                    path: self.qperf_bin.display().to_string(),
                    ..InputInfo::default()
                };
            }
        }
        let mut console = Vec::new();
        for line in state.console.lines() {
            console.extend_from_slice(line.text.as_bytes());
            console.push(b'\n');
        }
        console.extend_from_slice(state.console.partial().as_bytes());
        state.extra_files.push(("profile.stdout".into(), console));
        state
            .extra_files
            .push(("profile.stderr".into(), report.qemu_stderr.clone().into_bytes()));
        state
            .extra_files
            .push(("qemu.time.txt".into(), report.time_txt.clone().into_bytes()));
        if let Some(csv) = &report.perf_csv {
            state
                .extra_files
                .push(("qemu.perf.csv".into(), csv.clone().into_bytes()));
        }
        if report.exit_status != 0 && report.window.stop_method.is_none() {
            state
                .warnings
                .push(format!("QEMU exited with status {}", report.exit_status));
        }
        state.stats.finished = true;
    }
}

impl Source for QemuSource {
    fn poll(&mut self, state: &mut ModelState) -> anyhow::Result<SourcePoll> {
        if self.done {
            return Ok(SourcePoll::Finished);
        }
        if let Some(profile) = self.profile.take() {
            state.profile = profile;
            state.stats.source = self.label.clone();
            state.warnings.extend(self.ingest.warnings.iter().cloned());
        }
        let update = self.session.poll();
        let mut progress = !update.console.is_empty() || update.markers_changed;
        for (t, bytes) in &update.console {
            state.console.push_bytes(Some(*t), bytes);
        }
        if update.markers_changed {
            state.markers = self.session.markers();
        }
        if let Feed::Stream(reader, _) = &self.feed
            && !reader.connected.load(Ordering::Relaxed)
            && (self.started.elapsed() > STREAM_CONNECT_GRACE || update.exited)
        {
            state
                .warnings
                .push("the plugin did not connect to the live stream; reading qperf.bin instead".into());
            reader.stop.store(true, Ordering::Relaxed);
            self.feed = Feed::File(None);
        }
        let (added, closed) = self.take_records(state);
        progress |= added > 0;
        if update.exited && self.exited_at.is_none() {
            self.exited_at = Some(Instant::now());
        }
        if let Some(at) = self.exited_at {
            // The plugin flushes at exit and closes the stream; give it a moment.
            if closed || at.elapsed() > Duration::from_secs(3) {
                self.take_records(state);
                self.finish(state);
                self.record_step(state, true);
                self.done = true;
                return Ok(SourcePoll::Finished);
            }
        }
        self.record_step(state, false);
        Ok(if progress {
            SourcePoll::Progress
        } else {
            SourcePoll::Idle
        })
    }

    fn send_input(&mut self, bytes: &[u8]) {
        self.session.send_input(bytes);
    }

    fn stop(&mut self) {
        self.session.stop("user");
    }
}
