//! A recorded file as a feed: a qperf.bin symbolized with its kernel ELF (or a kallsyms
//! file), or a folded file — read in batches, so a huge input streams through the engine
//! instead of being held — with an optional console log beside it.

use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{Context, bail};

use crate::model::{InputInfo, Instance, PhaseMarkers, ProfileInfo, Sample, SampleMeta, SourceFacts};
use crate::sources::folded;
use crate::sources::folded_reader::FoldedReader;
use crate::sources::qperf_file::{PluginSummary, QperfReader, ReadEnd, ReadReport, sidecar_path};
use crate::symbols::SymbolStyle;
use crate::symbols::guest_space::Boot;

use super::ingest::QperfIngest;
use super::interned::FeedTables;
use super::{Feed, FeedStatus, SessionStart, Update};

/// Records turned into one batch of samples.
const BATCH_RECORDS: usize = 1 << 16;

/// What to open.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    /// A qperf.bin, symbolized with an ELF or a kallsyms file.
    Qperf { path: PathBuf, symbols: SymbolSource },
    /// Folded stacks.
    Folded { path: PathBuf },
}

impl Input {
    pub fn path(&self) -> &Path {
        match self {
            Input::Qperf { path, .. } | Input::Folded { path } => path,
        }
    }
}

/// Where addresses get their names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SymbolSource {
    Elf(PathBuf),
    Kallsyms(PathBuf),
}

/// How to resolve.
#[derive(Clone, Debug, Default)]
pub struct OpenOptions {
    pub style: SymbolStyle,
    pub kernel_filter: bool,
    /// How the guest kernel was booted (its physical alias depends on it).
    pub boot: Boot,
    /// Guest user programs that name user-space samples (`--user-elf`).
    pub user_elves: Vec<PathBuf>,
}

impl OpenOptions {
    /// These options for the recording `qperf_bin`: a direct boot unless its `qemu.toml`
    /// says the run booted through UEFI.
    pub fn with_recorded_boot(&self, qperf_bin: &Path) -> OpenOptions {
        let mut options = self.clone();
        if options.boot == Boot::Direct {
            options.boot = crate::sources::qemu::config_toml::recorded_boot(qperf_bin);
        }
        options
    }
}

/// Guess what a file is: qperf.bin is binary, folded is text whose lines end in counts.
/// The first stack line is read whole (up to [`MAX_SNIFFED_LINE`]): a 10,000-frame stack
/// is far longer than any fixed head, and a cut line has no count to recognise.
pub fn looks_folded(path: &Path) -> std::io::Result<bool> {
    use std::io::BufRead;
    let file = std::fs::File::open(path)?;
    let mut input = BufReader::new(file.take(MAX_SNIFFED_LINE as u64 * 4));
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = (&mut input)
            .take(MAX_SNIFFED_LINE as u64)
            .read_until(b'\n', &mut line)?;
        if n == 0 {
            return Ok(false);
        }
        let Ok(text) = std::str::from_utf8(&line) else {
            return Ok(false);
        };
        if text.trim().is_empty() || text.starts_with('#') {
            continue;
        }
        return Ok(folded::parse_line(text).is_ok_and(|x| x.is_some()));
    }
}

/// The longest first line [`looks_folded`] reads.
const MAX_SNIFFED_LINE: usize = 4 << 20;

/// Refuse a file that starts with another format's magic number before decoding it: the
/// qperf format has none, so an ELF would decode as a few nonsense records.
pub(crate) fn refuse_foreign(path: &Path) -> anyhow::Result<()> {
    let mut head = [0u8; 16];
    let mut file = std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut n = 0;
    while n < head.len() {
        match file.read(&mut head[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        }
    }
    if let Some(what) = crate::sources::qperf_file::foreign_format(&head[..n]) {
        bail!(
            "{} is {what}, not a qperf.bin (the sample file the QEMU plugin writes): give the \
             samples file as the input and the kernel ELF with --elf",
            path.display()
        );
    }
    Ok(())
}

/// The input facts of a qperf read that ended with `report`.
pub fn input_info(path: &Path, report: &ReadReport) -> InputInfo {
    InputInfo {
        kind: "qperf".into(),
        path: path.display().to_string(),
        format: report.version.map(|v| v.to_string()),
        records: report.records,
        bytes_read: report.bytes_read,
        end: report.to_string(),
        clean: matches!(report.end, ReadEnd::CleanEof),
        bytes_lost: report.bytes_lost(),
    }
}

/// Counts bytes read, so progress can follow a streaming decoder.
struct CountingReader<R> {
    inner: R,
    count: Arc<AtomicU64>,
}

impl<R: Read> Read for CountingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

enum Reading {
    NotStarted,
    Qperf {
        reader: Box<QperfReader<CountingReader<std::fs::File>>>,
        ingest: Box<QperfIngest>,
        tables: Box<FeedTables>,
    },
    Folded {
        reader: Box<FoldedReader<BufReader<CountingReader<std::fs::File>>>>,
        tables: Box<FeedTables>,
        instance: crate::model::InstanceId,
    },
    Done,
}

/// A recorded file read in batches.
pub struct FileFeed {
    input: Input,
    options: OpenOptions,
    console: Option<PathBuf>,
    markers: PhaseMarkers,
    reading: Reading,
    /// Bytes decoded so far and the file's size (progress).
    consumed: Arc<AtomicU64>,
    size: u64,
}

impl FileFeed {
    pub fn new(input: Input, options: OpenOptions, console: Option<PathBuf>, markers: PhaseMarkers) -> Self {
        Self {
            input,
            options,
            console,
            markers,
            reading: Reading::NotStarted,
            consumed: Arc::new(AtomicU64::new(0)),
            size: 0,
        }
    }

    fn start(&mut self, out: &mut Vec<Update>) -> anyhow::Result<()> {
        let path = self.input.path().to_path_buf();
        out.push(Update::Start(SessionStart {
            label: path.display().to_string(),
            kind: "file".into(),
            target: path.display().to_string(),
            ..SessionStart::default()
        }));
        if self.markers != PhaseMarkers::default() {
            out.push(Update::Markers(self.markers));
        }
        if let Some(console) = &self.console {
            let text = std::fs::read(console)
                .with_context(|| format!("cannot read console log {}", console.display()))?;
            out.push(Update::Console {
                time_ns: None,
                bytes: text,
            });
        }
        self.reading = match &self.input {
            Input::Qperf { path, symbols } => {
                refuse_foreign(path)?;
                let summary = PluginSummary::read(&sidecar_path(path))
                    .with_context(|| format!("cannot read the plugin summary beside {}", path.display()))?;
                let (ingest, info) = QperfIngest::new(
                    symbols,
                    &self.options.with_recorded_boot(path),
                    &path.display().to_string(),
                    summary.as_ref(),
                )?;
                for w in &ingest.warnings {
                    out.push(Update::Warning(w.clone()));
                }
                if let Some(summary) = summary {
                    out.push(Update::PluginSummary(summary.entries));
                }
                let file =
                    std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
                self.size = file.metadata().map(|m| m.len()).unwrap_or(0);
                Reading::Qperf {
                    reader: Box::new(QperfReader::new(CountingReader {
                        inner: file,
                        count: self.consumed.clone(),
                    })),
                    ingest: Box::new(ingest),
                    tables: Box::new(FeedTables::new(info)),
                }
            }
            Input::Folded { path } => {
                let file =
                    std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
                self.size = file.metadata().map(|m| m.len()).unwrap_or(0);
                let mut tables = FeedTables::new(ProfileInfo {
                    source: path.display().to_string(),
                    ..ProfileInfo::default()
                });
                let instance = tables.tables.instance(Instance::unknown());
                Reading::Folded {
                    reader: Box::new(FoldedReader::new(BufReader::with_capacity(
                        256 * 1024,
                        CountingReader {
                            inner: file,
                            count: self.consumed.clone(),
                        },
                    ))),
                    tables: Box::new(tables),
                    instance,
                }
            }
        };
        Ok(())
    }
}

impl Feed for FileFeed {
    fn is_recorded(&self) -> bool {
        true
    }

    fn progress(&self) -> Option<(u64, u64)> {
        Some((self.consumed.load(Ordering::Relaxed), self.size))
    }

    fn poll(&mut self, out: &mut Vec<Update>) -> anyhow::Result<FeedStatus> {
        if matches!(self.reading, Reading::NotStarted) {
            self.start(out)?;
            return Ok(FeedStatus::Progress);
        }
        let path = self.input.path().to_path_buf();
        match &mut self.reading {
            Reading::NotStarted | Reading::Done => Ok(FeedStatus::Finished),
            Reading::Qperf {
                reader,
                ingest,
                tables,
            } => {
                let mut samples = Vec::with_capacity(BATCH_RECORDS.min(4096));
                let mut ended = false;
                while samples.len() < BATCH_RECORDS {
                    match reader
                        .next_record()
                        .with_context(|| format!("cannot read {}", path.display()))?
                    {
                        Some(record) => {
                            if let Some(sample) = ingest.add(&mut tables.tables, &record) {
                                samples.push(sample);
                            }
                        }
                        None => {
                            ended = true;
                            break;
                        }
                    }
                }
                tables.hand_over(samples, out);
                if !ended {
                    return Ok(FeedStatus::Progress);
                }
                let Reading::Qperf {
                    reader, mut ingest, ..
                } = std::mem::replace(&mut self.reading, Reading::Done)
                else {
                    unreachable!("matched above");
                };
                let report = reader.finish();
                if report.records == 0 {
                    bail!("{}: {report}", path.display());
                }
                for w in std::mem::take(&mut ingest.warnings) {
                    out.push(Update::Warning(w));
                }
                if !matches!(report.end, ReadEnd::CleanEof) {
                    out.push(Update::Warning(format!("{}: {report}", path.display())));
                }
                out.push(Update::Facts(ingest.facts(report.version.map(|v| v.as_u8()))));
                out.push(Update::Input(input_info(&path, &report)));
                Ok(FeedStatus::Finished)
            }
            Reading::Folded {
                reader,
                tables,
                instance,
            } => {
                let mut samples = Vec::new();
                let mut ended = false;
                while samples.len() < BATCH_RECORDS {
                    let Some(line) = reader.next_line().with_context(|| path.display().to_string())? else {
                        ended = true;
                        break;
                    };
                    if line.count == 0 {
                        continue;
                    }
                    let stack = tables.tables.intern_named_stack(&line.frames);
                    samples.push(Sample {
                        time_ns: None,
                        instance: *instance,
                        weight: line.count,
                        stack,
                        meta: SampleMeta {
                            raw_depth: u16::try_from(line.frames.len()).unwrap_or(u16::MAX),
                            ..SampleMeta::default()
                        },
                    });
                }
                tables.hand_over(samples, out);
                if !ended {
                    return Ok(FeedStatus::Progress);
                }
                let Reading::Folded { reader, .. } = std::mem::replace(&mut self.reading, Reading::Done)
                else {
                    unreachable!("matched above");
                };
                let skipped = reader.skipped_summary();
                if reader.stacks == 0 {
                    match skipped {
                        Some(s) => bail!("{}: no usable folded lines; {s}", path.display()),
                        None => bail!("{}: no folded stacks in the file", path.display()),
                    }
                }
                if let Some(s) = &skipped {
                    out.push(Update::Warning(format!("{}: {s}", path.display())));
                }
                let records = reader.total_count;
                out.push(Update::Facts(SourceFacts {
                    raw_records: records,
                    total_frames: reader.total_frames,
                    ..SourceFacts::default()
                }));
                out.push(Update::Input(InputInfo {
                    kind: "folded".into(),
                    path: path.display().to_string(),
                    format: None,
                    records,
                    bytes_read: self.consumed.load(Ordering::Relaxed),
                    end: format!(
                        "{} stacks, {} samples; {}",
                        reader.stacks,
                        records,
                        skipped.clone().unwrap_or_else(|| "clean end of file".into())
                    ),
                    clean: skipped.is_none(),
                    bytes_lost: 0,
                }));
                Ok(FeedStatus::Finished)
            }
        }
    }
}
