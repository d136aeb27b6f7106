//! Open a recorded input — a qperf.bin with its kernel ELF (or a kallsyms file), or a
//! folded file — into a model profile plus the facts the reports need about the input.

use std::cell::Cell;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use anyhow::{Context, bail};

use crate::export::report::InputInfo;
use crate::export::stats::{KernelFilterFacts, SourceFacts};
use crate::model::{Profile, ProfileInfo};
use crate::sources::folded;
use crate::sources::qperf_file::{PluginSummary, QperfReader, ReadEnd, ReadReport, sidecar_path};
use crate::symbols::{ElfImage, KallsymsSymbolizer, Resolver, ResolverOptions, SymbolStyle, Symbolizer};

use super::qperf::address_sample;
use super::{AddressIngest, folded::add_folded};

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

fn open_symbolizer(
    symbols: &SymbolSource,
) -> anyhow::Result<(Box<dyn Symbolizer>, String, Option<&'static str>)> {
    Ok(match symbols {
        SymbolSource::Elf(elf) => {
            let image = ElfImage::open(elf)?;
            let arch = image.arch();
            (Box::new(image), elf.display().to_string(), arch)
        }
        SymbolSource::Kallsyms(file) => {
            let (sym, stats) = KallsymsSymbolizer::open(file)
                .with_context(|| format!("cannot read kallsyms file {}", file.display()))?;
            if stats.text_symbols == 0 {
                bail!(
                    "{} has no usable text symbols ({} hidden at address 0): read /proc/kallsyms as root or set kernel.kptr_restrict=0",
                    file.display(),
                    stats.zero_addresses
                );
            }
            (Box::new(sym), file.display().to_string(), None)
        }
    })
}

fn open_qperf(
    path: &Path,
    symbols: &SymbolSource,
    options: &OpenOptions,
    progress: &mut dyn FnMut(u64, u64),
) -> anyhow::Result<Opened> {
    let (symbolizer, binary, elf_arch) = open_symbolizer(symbols)?;
    let resolver = Resolver::new(
        symbolizer,
        ResolverOptions {
            style: options.style,
            kernel_filter: options.kernel_filter,
        },
        None,
    );
    let mut warnings = Vec::new();
    if options.kernel_filter && resolver.kernel_text().is_none() {
        warnings
            .push("--kernel-filter: the symbols give no kernel text range; nothing was filtered".to_string());
    }
    let kernel_text = resolver.kernel_text().filter(|_| options.kernel_filter);
    let plugin_summary = PluginSummary::read(&sidecar_path(path))
        .with_context(|| format!("cannot read the plugin summary beside {}", path.display()))?;

    let file = std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let consumed = Rc::new(Cell::new(0u64));
    let mut reader = QperfReader::new(CountingReader {
        inner: file,
        count: consumed.clone(),
    });

    let arch = elf_arch
        .map(str::to_string)
        .or_else(|| plugin_summary.as_ref().and_then(|s| s.arch().map(str::to_string)));
    let mut profile = Profile::new(ProfileInfo {
        source: path.display().to_string(),
        arch,
        binary: Some(binary),
        frequency_hz: plugin_summary
            .as_ref()
            .and_then(PluginSummary::frequency_hz)
            .map(u64::from),
    });
    let mut ingest = AddressIngest::new(resolver);
    while let Some(record) = reader
        .next_record()
        .with_context(|| format!("cannot read {}", path.display()))?
    {
        ingest.add(&mut profile, address_sample(&record));
        progress(consumed.get(), size);
    }
    let report = reader.finish();
    if report.records == 0 {
        bail!("{}: {report}", path.display());
    }
    if !matches!(report.end, ReadEnd::CleanEof) {
        warnings.push(format!("{}: {report}", path.display()));
    }
    let stats = ingest.stats;
    let facts = SourceFacts {
        format_version: report.version.map(|v| v.as_u8()),
        raw_records: stats.records,
        total_frames: stats.raw_frames,
        first_sample_ns: stats.first_time_ns,
        last_sample_ns: stats.last_time_ns,
        kernel_filter: kernel_text.map(|t| KernelFilterFacts {
            text_start: t.start,
            text_end: t.end,
            samples_dropped: stats.samples_dropped_by_kernel_filter,
            frames_dropped: stats.frames_dropped_by_kernel_filter,
        }),
        aliased_frames: stats.aliased_frames,
        unknown_frames: stats.unknown_frames,
    };
    Ok(Opened {
        profile,
        facts,
        input: input_info(path, &report),
        plugin_summary,
        warnings,
    })
}

fn input_info(path: &Path, report: &ReadReport) -> InputInfo {
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
