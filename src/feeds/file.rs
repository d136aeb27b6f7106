//! A recorded file as a feed: a qperf.bin symbolized with its kernel ELF (or a kallsyms
//! file), or a folded file — read in batches, so a huge input streams through the engine
//! instead of being held — with an optional console log beside it.
//!
//! Each file is opened once and read once ([`InputFile`]): its format is told from a
//! peeked prefix ([`super::guess`]) and the read goes on from there, so a pipe or a process
//! substitution (`report <(cat x.qperf.bin)`) gives what the file gives. Only a regular
//! file has a plugin summary and a `qemu.toml` beside it.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{Context, bail};

use crate::input::{BoundedLines, InputFile, InputKind};
use crate::model::{InputInfo, Instance, PhaseMarkers, ProfileInfo, Sample, SampleMeta, SourceFacts};
use crate::sources::folded_reader::FoldedReader;
use crate::sources::qperf_file::{PluginSummary, QperfReader, ReadEnd, ReadReport, sidecar_path};

use super::guess::{self, Format};
use super::ingest::QperfIngest;
use super::interned::FeedTables;
use super::symbol_options::{OpenOptions, SymbolSource};
use super::{Feed, FeedStatus, SessionStart, Update};

/// Records turned into one batch of samples.
const BATCH_RECORDS: usize = 1 << 16;

/// Console bytes handed to the engine per poll: the log streams through, never held whole.
const CONSOLE_BATCH_BYTES: usize = 1 << 20;

/// What to open.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    /// A qperf.bin, symbolized with an ELF or a kallsyms file.
    Qperf { path: PathBuf, symbols: SymbolSource },
    /// Folded stacks.
    Folded { path: PathBuf },
    /// Either, told from the file's first bytes (`report FILE`, `open FILE`, `diff A B`);
    /// a qperf.bin needs `symbols`.
    Guess {
        path: PathBuf,
        symbols: Option<SymbolSource>,
    },
}

impl Input {
    pub fn path(&self) -> &Path {
        match self {
            Input::Qperf { path, .. } | Input::Folded { path } | Input::Guess { path, .. } => path,
        }
    }
}

/// A qperf.bin given without the symbols that name its addresses: the command line's fault.
fn needs_symbols(path: &Path) -> anyhow::Error {
    crate::model::usage::UsageError(format!(
        "{} is a qperf.bin: pass the kernel ELF with --elf (or a kallsyms file with --kallsyms)",
        path.display()
    ))
    .into()
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

enum Reading {
    NotStarted,
    /// The console log, streamed to the engine before the profile.
    Console {
        lines: Box<BoundedLines<InputFile>>,
    },
    Qperf {
        reader: Box<QperfReader<InputFile>>,
        ingest: Box<QperfIngest>,
        tables: Box<FeedTables>,
    },
    Folded {
        reader: Box<FoldedReader<InputFile>>,
        tables: Box<FeedTables>,
        instance: crate::model::InstanceId,
    },
    Done,
}

/// The profile, opened and its format told, before it is read.
struct Opened {
    file: InputFile,
    format: Format,
    symbols: Option<SymbolSource>,
}

/// A recorded file read in batches.
pub struct FileFeed {
    input: Input,
    options: OpenOptions,
    console: Option<PathBuf>,
    markers: PhaseMarkers,
    opened: Option<Opened>,
    reading: Reading,
    /// A signal asked to stop: the read ends at the next batch (an endless pipe ends too).
    stopped: bool,
    /// Bytes decoded so far and the file's size (progress).
    consumed: Arc<AtomicU64>,
    size: u64,
}

impl FileFeed {
    /// A feed that opens its input at the first poll.
    pub fn new(input: Input, options: OpenOptions, console: Option<PathBuf>, markers: PhaseMarkers) -> Self {
        Self {
            input,
            options,
            console,
            markers,
            opened: None,
            reading: Reading::NotStarted,
            stopped: false,
            consumed: Arc::new(AtomicU64::new(0)),
            size: 0,
        }
    }

    /// A feed whose input is opened and its format told now, so a wrong input is an error
    /// before a terminal UI starts.
    pub fn open(
        input: Input,
        options: OpenOptions,
        console: Option<PathBuf>,
        markers: PhaseMarkers,
    ) -> anyhow::Result<Self> {
        let mut feed = Self::new(input, options, console, markers);
        feed.open_input()?;
        Ok(feed)
    }

    /// Open the profile once and tell its format from its first bytes.
    fn open_input(&mut self) -> anyhow::Result<()> {
        if self.opened.is_some() {
            return Ok(());
        }
        let mut file = InputFile::open(self.input.path())?;
        let (format, symbols) = match &self.input {
            Input::Folded { .. } => {
                guess::check_folded(&mut file)?;
                (Format::Folded, None)
            }
            Input::Qperf { symbols, .. } => {
                guess::refuse_foreign(&mut file)?;
                (Format::Qperf, Some(symbols.clone()))
            }
            Input::Guess { symbols, .. } => (guess::guess(&mut file)?, symbols.clone()),
        };
        if format == Format::Qperf && symbols.is_none() {
            return Err(needs_symbols(file.path()));
        }
        self.size = file.remaining_len().unwrap_or(0);
        file.count_into(self.consumed.clone());
        self.opened = Some(Opened {
            file,
            format,
            symbols,
        });
        Ok(())
    }

    fn start(&mut self, out: &mut Vec<Update>) -> anyhow::Result<()> {
        self.open_input()?;
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
        self.reading = match &self.console {
            Some(console) => Reading::Console {
                lines: Box::new(BoundedLines::new(
                    InputFile::open(console).context("cannot read the console log")?,
                    console,
                    InputKind::ConsoleLog,
                )),
            },
            None => self.start_profile(out)?,
        };
        Ok(())
    }

    /// Begin reading the profile from where its format was told.
    fn start_profile(&mut self, out: &mut Vec<Update>) -> anyhow::Result<Reading> {
        let Some(Opened {
            file,
            format,
            symbols,
        }) = self.opened.take()
        else {
            bail!("{}: the input was already read", self.input.path().display());
        };
        let path = file.path().to_path_buf();
        Ok(match (format, symbols) {
            (Format::Qperf, Some(symbols)) => {
                // A pipe has no folder: nothing lies beside it.
                let beside = file.is_regular();
                let summary = match beside {
                    true => PluginSummary::read(&sidecar_path(&path)).with_context(|| {
                        format!("cannot read the plugin summary beside {}", path.display())
                    })?,
                    false => None,
                };
                let options = match beside {
                    true => self.options.with_recorded_boot(&path),
                    false => self.options.clone(),
                };
                let (ingest, info) =
                    QperfIngest::new(&symbols, &options, &path.display().to_string(), summary.as_ref())?;
                for w in &ingest.warnings {
                    out.push(Update::Warning(w.clone()));
                }
                if let Some(summary) = summary {
                    out.push(Update::PluginSummary(summary.entries));
                }
                Reading::Qperf {
                    reader: Box::new(QperfReader::of_input(file)),
                    ingest: Box::new(ingest),
                    tables: Box::new(FeedTables::new(info)),
                }
            }
            (Format::Qperf, None) => return Err(needs_symbols(&path)),
            (Format::Folded, _) => {
                let mut tables = FeedTables::new(ProfileInfo {
                    source: path.display().to_string(),
                    ..ProfileInfo::default()
                });
                let instance = tables.tables.instance(Instance::unknown());
                Reading::Folded {
                    reader: Box::new(FoldedReader::new(file, path)),
                    tables: Box::new(tables),
                    instance,
                }
            }
        })
    }

    /// Hand the engine the next batch of the console log; the profile follows it.
    fn poll_console(&mut self, out: &mut Vec<Update>) -> anyhow::Result<FeedStatus> {
        let Reading::Console { lines } = &mut self.reading else {
            return Ok(FeedStatus::Progress);
        };
        let mut bytes = Vec::new();
        // Stopped: the profile matters more than the rest of its log (which may never end).
        let mut ended = self.stopped;
        while !ended && bytes.len() < CONSOLE_BATCH_BYTES {
            match lines.next_line().context("cannot read the console log")? {
                Some(line) => bytes.extend_from_slice(line),
                None => {
                    ended = true;
                    break;
                }
            }
        }
        if !bytes.is_empty() {
            out.push(Update::Console { time_ns: None, bytes });
        }
        if ended {
            self.reading = self.start_profile(out)?;
        }
        Ok(FeedStatus::Progress)
    }
}

impl Feed for FileFeed {
    fn is_recorded(&self) -> bool {
        true
    }

    fn stop(&mut self) {
        self.stopped = true;
    }

    fn progress(&self) -> Option<(u64, u64)> {
        Some((self.consumed.load(Ordering::Relaxed), self.size))
    }

    fn poll(&mut self, out: &mut Vec<Update>) -> anyhow::Result<FeedStatus> {
        if matches!(self.reading, Reading::NotStarted) {
            self.start(out)?;
            return Ok(FeedStatus::Progress);
        }
        if matches!(self.reading, Reading::Console { .. }) {
            return self.poll_console(out);
        }
        let path = self.input.path().to_path_buf();
        let stopped = self.stopped;
        match &mut self.reading {
            Reading::NotStarted | Reading::Console { .. } | Reading::Done => Ok(FeedStatus::Finished),
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
                if !ended && !stopped {
                    return Ok(FeedStatus::Progress);
                }
                let Reading::Qperf {
                    reader, mut ingest, ..
                } = std::mem::replace(&mut self.reading, Reading::Done)
                else {
                    unreachable!("matched above");
                };
                // Stopped: the rest is not read (a pipe may never end); the interruption is
                // the verdict's, said by the headless run.
                let report = if ended { reader.finish() } else { reader.so_far() };
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
                let mut input = input_info(&path, &report);
                if !ended {
                    input.end = format!("{}; stopped before the end", input.end);
                    input.clean = false;
                }
                out.push(Update::Input(input));
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
                    let Some(line) = reader.next_line()? else {
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
                if !ended && !stopped {
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
                let mut end = format!(
                    "{} stacks, {} samples; {}",
                    reader.stacks,
                    records,
                    skipped.clone().unwrap_or_else(|| "clean end of file".into())
                );
                if !ended {
                    end = format!(
                        "{} stacks, {} samples; stopped before the end",
                        reader.stacks, records
                    );
                }
                out.push(Update::Input(InputInfo {
                    kind: "folded".into(),
                    path: path.display().to_string(),
                    format: None,
                    records,
                    bytes_read: self.consumed.load(Ordering::Relaxed),
                    end,
                    clean: skipped.is_none() && ended,
                    bytes_lost: 0,
                }));
                Ok(FeedStatus::Finished)
            }
        }
    }
}
