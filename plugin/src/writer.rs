//! The writer thread and the bounded queue that feeds it. vCPU threads never touch a file
//! or socket: they `try_send` a [`Record`] and move on; a full queue drops the sample and
//! counts it (notes/qperf-format.md §2.7).
//!
//! The writer encodes each record once and sends the same bytes to the file and the
//! stream. It flushes whenever the queue runs empty, so a QEMU killed with SIGKILL leaves
//! every record handed to the kernel complete on disk (at worst one partial record at the
//! end, which perfscope's reader reports as a truncated tail). At exit,
//! [`WriterMsg::Shutdown`] makes it drain what was queued before, flush and report.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::thread::JoinHandle;

use crate::record::Record;
use crate::stream::StreamSink;

pub enum WriterMsg {
    Record(Record),
    /// Everything sent before this has been written when the thread returns.
    Shutdown,
}

/// What the writer did, for the summary.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WriterReport {
    pub written_records: u64,
    pub write_failures: u64,
    pub stream_errors: u64,
}

/// The vCPU side of the queue, with the reference's counters.
pub struct SampleQueue {
    sender: SyncSender<WriterMsg>,
    /// Records accepted by the queue.
    pub samples: AtomicU64,
    /// Records dropped because the queue was full.
    pub dropped: AtomicU64,
    /// Samples that failed (register reads, a writer that is gone).
    pub failures: AtomicU64,
}

impl SampleQueue {
    /// Queue `record`; whether the queue took it (else it is counted as dropped or failed).
    pub fn push(&self, record: Record) -> bool {
        match self.sender.try_send(WriterMsg::Record(record)) {
            Ok(()) => {
                self.samples.fetch_add(1, Ordering::Relaxed);
                true
            }
            Err(TrySendError::Full(_)) => {
                self.dropped.fetch_add(1, Ordering::Relaxed);
                false
            }
            Err(TrySendError::Disconnected(_)) => {
                self.failures.fetch_add(1, Ordering::Relaxed);
                false
            }
        }
    }

    /// Blocks until the writer has room: used once, at exit.
    pub fn send_shutdown(&self) -> bool {
        self.sender.send(WriterMsg::Shutdown).is_ok()
    }
}

/// Start the writer thread over an opened `out` file and an optional stream.
pub fn spawn(
    file: File,
    out_path: PathBuf,
    stream: Option<StreamSink>,
    queue_size: usize,
) -> std::io::Result<(SampleQueue, JoinHandle<WriterReport>)> {
    let (sender, receiver) = sync_channel(queue_size);
    let handle = std::thread::Builder::new()
        .name("perfscope-writer".into())
        .spawn(move || run(receiver, file, out_path, stream))?;
    let queue = SampleQueue {
        sender,
        samples: AtomicU64::new(0),
        dropped: AtomicU64::new(0),
        failures: AtomicU64::new(0),
    };
    Ok((queue, handle))
}

struct Sinks {
    file: Option<BufWriter<File>>,
    out_path: PathBuf,
    stream: Option<StreamSink>,
    report: WriterReport,
    bytes: Vec<u8>,
}

impl Sinks {
    fn write(&mut self, record: &Record) {
        self.bytes.clear();
        record.encode(&mut self.bytes);
        if let Some(file) = self.file.as_mut() {
            if let Err(e) = file.write_all(&self.bytes) {
                self.file_failed(&e);
            } else {
                self.report.written_records += 1;
            }
        }
        if let Some(stream) = self.stream.as_mut() {
            stream.write(&self.bytes);
        }
    }

    fn flush(&mut self) {
        if let Some(file) = self.file.as_mut()
            && let Err(e) = file.flush()
        {
            self.file_failed(&e);
        }
        if let Some(stream) = self.stream.as_mut() {
            stream.flush();
        }
    }

    fn file_failed(&mut self, error: &std::io::Error) {
        self.report.write_failures += 1;
        self.file = None;
        eprintln!(
            "perfscope-qemu-plugin: writing {} failed: {error}; no more samples go to the file (check free space and permissions)",
            self.out_path.display()
        );
    }
}

fn run(
    receiver: Receiver<WriterMsg>,
    file: File,
    out_path: PathBuf,
    stream: Option<StreamSink>,
) -> WriterReport {
    let mut sinks = Sinks {
        file: Some(BufWriter::with_capacity(64 * 1024, file)),
        out_path,
        stream,
        report: WriterReport::default(),
        bytes: Vec::with_capacity(256),
    };
    let mut shutdown = false;
    while !shutdown {
        let Ok(first) = receiver.recv() else {
            break;
        };
        let mut next = Some(first);
        // Drain what is queued before flushing: one write per burst, not per record.
        while let Some(message) = next.take() {
            match message {
                WriterMsg::Record(record) => sinks.write(&record),
                WriterMsg::Shutdown => {
                    shutdown = true;
                    break;
                }
            }
            // Empty or disconnected: flush what this burst wrote.
            next = receiver.try_recv().ok();
        }
        sinks.flush();
    }
    sinks.flush();
    sinks.report.stream_errors = sinks.stream.as_ref().map_or(0, StreamSink::errors);
    sinks.report
}
