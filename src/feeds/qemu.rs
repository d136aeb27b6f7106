//! The live QEMU feed: a session (QEMU + plugin + console), the plugin's record stream over
//! a Unix socket decoded and symbolized as it arrives, the console and markers — and, when
//! QEMU has exited, the run's facts for the artifacts.

use std::io::Read;
use std::os::unix::net::UnixListener;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, TryRecvError, channel};
use std::time::{Duration, Instant};

use anyhow::Context;

use crate::model::facts::CallchainFacts;
use crate::model::{ConsoleLog, Finding, Gap, InputInfo, Sample};
use crate::sources::qemu::runtime_dir::RuntimeDir;
use crate::sources::qemu::{QemuSession, SessionOptions};
use crate::sources::qperf_file::{
    PluginSummary, QperfRecord, QperfTail, StreamDecoder, read_file, sidecar_path,
};

use super::file::input_info;
use super::ingest::QperfIngest;
use super::interned::FeedTables;
use super::symbol_options::{OpenOptions, SymbolSource};
use super::{Feed, FeedStatus, SessionStart, Update, Waiting};

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
    /// Where the sockets are (QMP's too); removed when the feed is dropped.
    pub runtime_dir: RuntimeDir,
    /// A label for the status line ("qemu riscv64").
    pub label: String,
    /// The callchain the plugin collects, and why.
    pub callchain: CallchainFacts,
    /// What the callchain choice warns of (no stacks at all, a walk the kernel cannot give).
    pub callchain_warning: Option<String>,
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
enum Records {
    Stream(StreamReader, StreamDecoder),
    File(Option<QperfTail>),
}

/// A QEMU run as a feed.
pub struct QemuFeed {
    session: QemuSession,
    qperf_bin: PathBuf,
    stream_socket: PathBuf,
    records: Records,
    ingest: QperfIngest,
    tables: FeedTables,
    start: Option<SessionStart>,
    started: Instant,
    /// QEMU exited; draining what the stream still holds.
    exited_at: Option<Instant>,
    /// The plugin's frequency, once its summary says it.
    frequency_known: bool,
    /// The console as the guest printed it (profile.stdout).
    console: ConsoleLog,
    /// Dropped after `session` (fields drop in order): QEMU is gone before its sockets.
    _runtime_dir: RuntimeDir,
    /// The whole seconds of waiting for the prompt last told (`None`: not waiting).
    waiting_told: Option<u64>,
    /// Said once, with the start.
    callchain: Option<(CallchainFacts, Option<String>)>,
    done: bool,
}

impl QemuFeed {
    /// Listen for the stream and start QEMU.
    pub fn start(options: QemuSourceOptions) -> anyhow::Result<QemuFeed> {
        let (ingest, info) = QperfIngest::new(
            &options.symbols,
            &options.open,
            &options.qperf_bin.display().to_string(),
            None,
        )?;
        let reader = listen(&options.stream_socket)?;
        let target = options.session.launch.kernel.display().to_string();
        let epoch_ns = options.session.epoch_ns;
        let session = QemuSession::start(options.session)?;
        Ok(QemuFeed {
            session,
            qperf_bin: options.qperf_bin,
            stream_socket: options.stream_socket,
            records: Records::Stream(reader, StreamDecoder::new()),
            ingest,
            tables: FeedTables::new(info),
            start: Some(SessionStart {
                label: options.label,
                kind: "qemu".into(),
                target,
                time_origin_ns: 0,
                // The plugin's clock is CLOCK_MONOTONIC since the epoch.
                live_clock_offset_ns: i64::try_from(epoch_ns).ok(),
                options: None,
            }),
            // The artifact is the whole console.
            console: ConsoleLog::keeping(usize::MAX),
            started: Instant::now(),
            exited_at: None,
            frequency_known: false,
            _runtime_dir: options.runtime_dir,
            waiting_told: None,
            callchain: Some((options.callchain, options.callchain_warning)),
            done: false,
        })
    }

    /// Take stream bytes (or file records) as samples; returns whether the stream closed.
    fn take_records(&mut self, out: &mut Vec<Update>) -> bool {
        let mut records: Vec<QperfRecord> = Vec::new();
        let mut closed = false;
        match &mut self.records {
            Records::Stream(reader, decoder) => {
                loop {
                    match reader.bytes.try_recv() {
                        Ok(bytes) => records.extend(decoder.push(&bytes)),
                        Err(TryRecvError::Empty) => break,
                        Err(TryRecvError::Disconnected) => {
                            closed = reader.connected.load(Ordering::Relaxed);
                            break;
                        }
                    }
                }
                if let Some(end) = decoder.end() {
                    out.push(Update::Warning(format!("plugin stream stopped: {end:?}")));
                    closed = true;
                }
            }
            Records::File(tail) => {
                if tail.is_none() {
                    *tail = QperfTail::open(&self.qperf_bin).ok();
                }
                if let Some(t) = tail
                    && let Ok(batch) = t.poll()
                {
                    records = batch.records;
                }
                closed = self.exited_at.is_some();
            }
        }
        let samples: Vec<Sample> = records
            .iter()
            .filter_map(|r| self.ingest.add(&mut self.tables.tables, r))
            .collect();
        self.tables.hand_over(samples, out);
        closed
    }

    /// What the session waits for, once a second while it waits and once when it stops.
    fn tell_waiting(&mut self, out: &mut Vec<Update>) {
        match self.session.waiting_for_prompt() {
            Some((what, elapsed)) if self.waiting_told != Some(elapsed.as_secs()) => {
                self.waiting_told = Some(elapsed.as_secs());
                out.push(Update::Waiting(Some(Waiting {
                    what,
                    elapsed,
                    hint: "set --shell-prefix".into(),
                })));
            }
            None if self.waiting_told.take().is_some() => out.push(Update::Waiting(None)),
            _ => {}
        }
    }

    /// QEMU is gone and the records are in: the run's facts. `Err` when QEMU ended on
    /// its own with a failure before the plugin sent anything (it failed to start).
    fn finish(&mut self, out: &mut Vec<Update>) -> anyhow::Result<()> {
        // The socket is a rendezvous, not an artifact (its directory goes with the feed).
        let _ = std::fs::remove_file(&self.stream_socket);
        let report = self.session.report();
        // Nobody asked QEMU to stop and it did not exit 0: it failed or was killed.
        let died = (report.window.stop_method.is_none() && report.exit_status != 0)
            .then(|| qemu_death(report.exit_status));
        // QEMU that ended on its own before a single sample — failed, or exited 0 at once
        // (`--qemu /bin/true`) — produced nothing usable: an error, exit 1.
        let ended_alone = report.window.stop_method.is_none();
        if ended_alone && self.ingest.records() == 0 {
            let died = died.clone().unwrap_or_else(|| qemu_death(report.exit_status));
            let stderr = report.qemu_stderr.trim();
            anyhow::bail!(
                "{died} before the plugin sent a sample{}",
                if stderr.is_empty() {
                    String::new()
                } else {
                    format!("; QEMU said: {stderr}")
                }
            );
        }
        out.push(Update::Markers(self.session.markers()));
        // The session's warnings travel in the window facts (report.json window.warnings).
        out.push(Update::Window(report.window.clone()));
        if let Ok(Some(summary)) = PluginSummary::read(&sidecar_path(&self.qperf_bin)) {
            if !self.frequency_known
                && let Some(hz) = summary.frequency_hz()
            {
                self.tables.tables.info.frequency_hz = Some(u64::from(hz));
                self.tables.delta(out);
            }
            out.push(Update::PluginSummary(summary.entries.clone()));
        } else {
            out.push(Update::Warning(
                "the plugin wrote no summary (qperf.summary.txt): QEMU may have been killed".into(),
            ));
        }
        // The file the plugin wrote is the record of the run: read it whole and check
        // that it says what the stream said.
        match read_file(&self.qperf_bin) {
            Ok((records, file_report)) => {
                let streamed = self.ingest.records();
                if records.len() as u64 != streamed {
                    out.push(Update::Finding(Finding::new(
                        Gap::SourcesDisagree,
                        Some((records.len() as u64).abs_diff(streamed)),
                        format!(
                            "qperf.bin has {} records but the live stream delivered {streamed}",
                            records.len()
                        ),
                    )));
                }
                out.push(Update::Facts(
                    self.ingest.facts(file_report.version.map(|v| v.as_u8())),
                ));
                let mut input = input_info(&self.qperf_bin, &file_report);
                if let Some(died) = &died {
                    // The run was cut short: what was read is not the whole workload.
                    input.clean = false;
                    input.end = format!("{}; {died} before perfscope stopped it", input.end);
                }
                out.push(Update::Input(input));
            }
            Err(e) => {
                out.push(Update::Warning(format!(
                    "cannot read {}: {e}",
                    self.qperf_bin.display()
                )));
                out.push(Update::Input(InputInfo {
                    kind: "qperf".into(),
                    path: self.qperf_bin.display().to_string(),
                    ..InputInfo::default()
                }));
            }
        }
        let mut console = Vec::new();
        for (_, line) in self.console.lines_from(0) {
            console.extend_from_slice(line.text.as_bytes());
            console.push(b'\n');
        }
        console.extend_from_slice(self.console.partial().as_bytes());
        out.push(Update::ExtraFile {
            name: "profile.stdout".into(),
            bytes: console,
        });
        out.push(Update::ExtraFile {
            name: "profile.stderr".into(),
            bytes: report.qemu_stderr.clone().into_bytes(),
        });
        out.push(Update::ExtraFile {
            name: "qemu.toml".into(),
            bytes: report.qemu_toml.clone().into_bytes(),
        });
        out.push(Update::ExtraFile {
            name: "qemu.time.txt".into(),
            bytes: report.time_txt.clone().into_bytes(),
        });
        if let Some(csv) = &report.perf_csv {
            out.push(Update::ExtraFile {
                name: "qemu.perf.csv".into(),
                bytes: csv.clone().into_bytes(),
            });
        }
        if let Some(died) = died {
            out.push(Update::Finding(Finding::new(
                Gap::SourceFailed,
                None,
                format!("{died} before perfscope stopped it"),
            )));
        }
        Ok(())
    }
}

/// "QEMU exited with status 1", "QEMU was killed by signal 9" (the session reports a
/// signal as 128 + its number, as a shell does).
fn qemu_death(status: i32) -> String {
    match status {
        129..=192 => format!("QEMU was killed by signal {}", status - 128),
        _ => format!("QEMU exited with status {status}"),
    }
}

impl Feed for QemuFeed {
    /// QMP `quit`, then the plugin's flush of qperf.bin and its summary, then the file read
    /// whole: seconds, not milliseconds.
    fn stop_grace(&self) -> Duration {
        Duration::from_secs(5)
    }

    fn poll(&mut self, out: &mut Vec<Update>) -> anyhow::Result<FeedStatus> {
        if self.done {
            return Ok(FeedStatus::Finished);
        }
        let mut progress = false;
        if let Some(start) = self.start.take() {
            out.push(Update::Start(start));
            out.extend(self.ingest.warnings.iter().cloned().map(Update::Warning));
            if let Some((callchain, warning)) = self.callchain.take() {
                out.push(Update::Callchain(callchain));
                out.extend(warning.map(Update::Warning));
            }
            progress = true;
        }
        let update = self.session.poll();
        progress |= !update.console.is_empty() || update.markers_changed;
        for (t, bytes) in update.console {
            self.console.push_bytes(Some(t), &bytes);
            out.push(Update::Console {
                time_ns: Some(t),
                bytes,
            });
        }
        if update.markers_changed {
            out.push(Update::Markers(self.session.markers()));
        }
        self.tell_waiting(out);
        if let Records::Stream(reader, _) = &self.records
            && !reader.connected.load(Ordering::Relaxed)
            && (self.started.elapsed() > STREAM_CONNECT_GRACE || update.exited)
        {
            out.push(Update::Warning(
                "the plugin did not connect to the live stream; reading qperf.bin instead".into(),
            ));
            reader.stop.store(true, Ordering::Relaxed);
            self.records = Records::File(None);
        }
        let before = out.len();
        let closed = self.take_records(out);
        progress |= out.len() > before;
        if update.exited && self.exited_at.is_none() {
            self.exited_at = Some(Instant::now());
        }
        if let Some(at) = self.exited_at {
            // The plugin flushes at exit and closes the stream; give it a moment.
            if closed || at.elapsed() > Duration::from_secs(3) {
                self.take_records(out);
                self.done = true;
                self.finish(out)?;
                return Ok(FeedStatus::Finished);
            }
        }
        Ok(if progress {
            FeedStatus::Progress
        } else {
            FeedStatus::Idle
        })
    }

    fn is_live(&self) -> bool {
        true
    }

    fn send_input(&mut self, bytes: &[u8]) {
        self.session.send_input(bytes);
    }

    fn stop(&mut self) {
        self.session.stop("user");
    }
}
