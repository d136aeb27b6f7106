//! A recorded file as a feed: a qperf.bin symbolized with its kernel ELF (or a kallsyms
//! file), or a folded file — read in batches, so a huge input streams through the engine
//! instead of being held — with an optional console log beside it.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{Context, bail};

use crate::model::{InputInfo, Instance, PhaseMarkers, ProfileInfo, Sample, SampleMeta, SourceFacts};
use crate::sources::folded::{self, FoldedLine};
use crate::sources::qperf_file::{PluginSummary, QperfReader, ReadEnd, ReadReport, sidecar_path};
use crate::symbols::SymbolStyle;

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
}

/// Guess what a file is: qperf.bin is binary, folded is text whose lines end in counts.
pub fn looks_folded(path: &Path) -> std::io::Result<bool> {
    let mut head = vec![0u8; 4096];
    let n = std::fs::File::open(path)?.read(&mut head)?;
    head.truncate(n);
    let Ok(text) = std::str::from_utf8(&head) else {
        return Ok(false);
    };
    let first = text.lines().find(|l| !l.trim().is_empty() && !l.starts_with('#'));
    Ok(first.is_some_and(|l| folded::parse_line(l).is_ok_and(|x| x.is_some())))
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
        lines: std::vec::IntoIter<FoldedLine>,
        tables: Box<FeedTables>,
        instance: crate::model::InstanceId,
        /// What the end says (stacks, samples, skipped lines).
        end: Box<(InputInfo, SourceFacts, Vec<String>)>,
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
                let summary = PluginSummary::read(&sidecar_path(path))
                    .with_context(|| format!("cannot read the plugin summary beside {}", path.display()))?;
                let (ingest, info) = QperfIngest::new(
                    symbols,
                    &self.options,
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
                let parsed = folded::read(path).with_context(|| format!("cannot read {}", path.display()))?;
                if parsed.lines.is_empty() {
                    match parsed.skipped_summary() {
                        Some(s) => bail!("{}: no usable folded lines; {s}", path.display()),
                        None => bail!("{}: no folded stacks in the file", path.display()),
                    }
                }
                let mut tables = FeedTables::new(ProfileInfo {
                    source: path.display().to_string(),
                    ..ProfileInfo::default()
                });
                let instance = tables.tables.instance(Instance::unknown());
                let records = parsed.total_count();
                let total_frames = parsed
                    .lines
                    .iter()
                    .map(|l| (l.frames.len() as u64).saturating_mul(l.count))
                    .fold(0u64, u64::saturating_add);
                let mut warnings = Vec::new();
                if let Some(s) = parsed.skipped_summary() {
                    warnings.push(format!("{}: {s}", path.display()));
                }
                let input = InputInfo {
                    kind: "folded".into(),
                    path: path.display().to_string(),
                    format: None,
                    records,
                    bytes_read: std::fs::metadata(path).map(|m| m.len()).unwrap_or(0),
                    end: format!(
                        "{} stacks, {} samples; {}",
                        parsed.lines.len(),
                        records,
                        parsed
                            .skipped_summary()
                            .unwrap_or_else(|| "clean end of file".into())
                    ),
                    clean: parsed.skipped_count == 0,
                    bytes_lost: 0,
                };
                let facts = SourceFacts {
                    raw_records: records,
                    total_frames,
                    ..SourceFacts::default()
                };
                Reading::Folded {
                    lines: parsed.lines.into_iter(),
                    tables: Box::new(tables),
                    instance,
                    end: Box::new((input, facts, warnings)),
                }
            }
        };
        Ok(())
    }
}

impl Feed for FileFeed {
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
                lines,
                tables,
                instance,
                ..
            } => {
                let mut samples = Vec::new();
                for line in lines.by_ref().take(BATCH_RECORDS) {
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
                let more = lines.len() > 0;
                tables.hand_over(samples, out);
                if more {
                    return Ok(FeedStatus::Progress);
                }
                let Reading::Folded { end, .. } = std::mem::replace(&mut self.reading, Reading::Done) else {
                    unreachable!("matched above");
                };
                let (input, facts, warnings) = *end;
                out.extend(warnings.into_iter().map(Update::Warning));
                out.push(Update::Facts(facts));
                out.push(Update::Input(input));
                Ok(FeedStatus::Finished)
            }
        }
    }
}
