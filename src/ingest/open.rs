//! Open a recorded input — a qperf.bin with its kernel ELF (or a kallsyms file), or a
//! folded file — into a model profile plus the facts the reports need about the input.

use std::cell::Cell;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use anyhow::{Context, bail};

use crate::model::{InputInfo, Profile, ProfileInfo, SourceFacts};
use crate::sources::folded;
use crate::sources::qperf_file::{PluginSummary, QperfReader, ReadEnd, ReadReport, sidecar_path};
use crate::symbols::SymbolStyle;

use super::QperfIngest;
use super::folded::add_folded;

/// What to open.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    /// A qperf.bin, symbolized with an ELF or a kallsyms file.
    Qperf { path: PathBuf, symbols: SymbolSource },
    /// Folded stacks.
    Folded { path: PathBuf },
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

/// An opened input.
pub struct Opened {
    pub profile: Profile,
    pub facts: SourceFacts,
    pub input: InputInfo,
    /// The plugin's `qperf.summary.txt`, when it sits beside the file.
    pub plugin_summary: Option<PluginSummary>,
    pub warnings: Vec<String>,
}

/// Open `input`; `progress(done, total)` is called as bytes are decoded.
pub fn open(
    input: &Input,
    options: &OpenOptions,
    progress: &mut dyn FnMut(u64, u64),
) -> anyhow::Result<Opened> {
    match input {
        Input::Qperf { path, symbols } => open_qperf(path, symbols, options, progress),
        Input::Folded { path } => open_folded(path),
    }
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

fn open_qperf(
    path: &Path,
    symbols: &SymbolSource,
    options: &OpenOptions,
    progress: &mut dyn FnMut(u64, u64),
) -> anyhow::Result<Opened> {
    let plugin_summary = PluginSummary::read(&sidecar_path(path))
        .with_context(|| format!("cannot read the plugin summary beside {}", path.display()))?;
    let (mut ingest, mut profile) = QperfIngest::new(
        symbols,
        options,
        &path.display().to_string(),
        plugin_summary.as_ref(),
    )?;

    let file = std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let consumed = Rc::new(Cell::new(0u64));
    let mut reader = QperfReader::new(CountingReader {
        inner: file,
        count: consumed.clone(),
    });
    while let Some(record) = reader
        .next_record()
        .with_context(|| format!("cannot read {}", path.display()))?
    {
        ingest.add(&mut profile, &record);
        progress(consumed.get(), size);
    }
    let report = reader.finish();
    if report.records == 0 {
        bail!("{}: {report}", path.display());
    }
    let mut warnings = std::mem::take(&mut ingest.warnings);
    if !matches!(report.end, ReadEnd::CleanEof) {
        warnings.push(format!("{}: {report}", path.display()));
    }
    Ok(Opened {
        facts: ingest.facts(report.version.map(|v| v.as_u8())),
        profile,
        input: input_info(path, &report),
        plugin_summary,
        warnings,
    })
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

fn open_folded(path: &Path) -> anyhow::Result<Opened> {
    let parsed = folded::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    if parsed.lines.is_empty() {
        match parsed.skipped_summary() {
            Some(s) => bail!("{}: no usable folded lines; {s}", path.display()),
            None => bail!("{}: no folded stacks in the file", path.display()),
        }
    }
    let mut profile = Profile::new(ProfileInfo {
        source: path.display().to_string(),
        ..ProfileInfo::default()
    });
    add_folded(&mut profile, &parsed);
    let total_frames = parsed.lines.iter().map(|l| l.frames.len() as u64 * l.count).sum();
    let mut warnings = Vec::new();
    if let Some(s) = parsed.skipped_summary() {
        warnings.push(format!("{}: {s}", path.display()));
    }
    let records = parsed.total_count();
    Ok(Opened {
        profile,
        facts: SourceFacts {
            raw_records: records,
            total_frames,
            ..SourceFacts::default()
        },
        input: InputInfo {
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
        },
        plugin_summary: None,
        warnings,
    })
}

/// Counts bytes read, so a progress bar can follow a streaming decoder.
struct CountingReader<R> {
    inner: R,
    count: Rc<Cell<u64>>,
}

impl<R: Read> Read for CountingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.set(self.count.get() + n as u64);
        Ok(n)
    }
}
