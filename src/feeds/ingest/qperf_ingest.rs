//! Symbolizing qperf records one at a time into a feed's tables: shared by files read whole,
//! files tailed while QEMU writes them, and the plugin's live stream.

use anyhow::{Context, bail};

use crate::model::facts::KernelAliasFacts;
use crate::model::{KernelFilterFacts, ProfileInfo, ProfileTables, Sample, SourceFacts};
use crate::sources::qperf_file::{PluginSummary, QperfRecord};
use crate::symbols::guest_space::{AliasSource, Boot};
use crate::symbols::{AddressRange, ElfImage, KallsymsSymbolizer, Resolver, ResolverOptions, Symbolizer};

use super::AddressIngest;
use super::qperf::address_sample;
use crate::feeds::symbol_options::{OpenOptions, SymbolSource};

/// The resolver, its statistics and what the reports need to know about the filter.
pub struct QperfIngest {
    ingest: AddressIngest,
    kernel_text: Option<AddressRange>,
    /// Problems found while setting up (e.g. a kernel filter without a text range).
    pub warnings: Vec<String>,
}

fn open_symbolizer(
    symbols: &SymbolSource,
    boot: Boot,
) -> anyhow::Result<(Box<dyn Symbolizer>, String, Option<&'static str>)> {
    Ok(match symbols {
        SymbolSource::Elf(elf) => {
            let image = ElfImage::open(elf)?.booted_by(boot);
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

impl QperfIngest {
    /// Open the symbols and describe the profile by `source` and the
    /// plugin summary (architecture, frequency).
    pub fn new(
        symbols: &SymbolSource,
        options: &OpenOptions,
        source: &str,
        plugin_summary: Option<&PluginSummary>,
    ) -> anyhow::Result<(QperfIngest, ProfileInfo)> {
        let (symbolizer, binary, elf_arch) = open_symbolizer(symbols, options.boot)?;
        let mut resolver = Resolver::new(
            symbolizer,
            ResolverOptions {
                style: options.style,
                kernel_filter: options.kernel_filter,
            },
            None,
        );
        for elf in &options.user_elves {
            let program = ElfImage::open(elf).with_context(|| format!("--user-elf {}", elf.display()))?;
            resolver
                .add_user_program(Box::new(program))
                .map_err(|why| anyhow::anyhow!("--user-elf {}: {why}", elf.display()))?;
        }
        let mut warnings = Vec::new();
        if options.kernel_filter && resolver.kernel_text().is_none() {
            warnings.push(
                "--kernel-filter: the symbols give no kernel text range; nothing was filtered".to_string(),
            );
        }
        let kernel_text = resolver.kernel_text().filter(|_| options.kernel_filter);
        let arch = elf_arch
            .map(str::to_string)
            .or_else(|| plugin_summary.and_then(|s| s.arch().map(str::to_string)));
        let profile = ProfileInfo {
            source: source.to_string(),
            arch,
            binary: Some(binary),
            frequency_hz: plugin_summary
                .and_then(PluginSummary::frequency_hz)
                .map(u64::from),
        };
        Ok((
            QperfIngest {
                ingest: AddressIngest::new(resolver),
                kernel_text,
                warnings,
            },
            profile,
        ))
    }

    /// Symbolize one record into `tables`; `None` when the kernel filter dropped it.
    pub fn add(&mut self, tables: &mut ProfileTables, record: &QperfRecord) -> Option<Sample> {
        self.ingest.add(tables, address_sample(record))
    }

    /// Records seen so far (kept or filtered).
    pub fn records(&self) -> u64 {
        self.ingest.stats.records
    }

    /// The facts of everything added so far, for the reports.
    pub fn facts(&self, format_version: Option<u8>) -> SourceFacts {
        let stats = &self.ingest.stats;
        SourceFacts {
            format_version,
            raw_records: stats.records,
            total_frames: stats.raw_frames,
            first_sample_ns: stats.first_time_ns,
            last_sample_ns: stats.last_time_ns,
            kernel_filter: self.kernel_text.map(|t| KernelFilterFacts {
                text_start: t.start,
                text_end: t.end,
                samples_dropped: stats.samples_dropped_by_kernel_filter,
                frames_dropped: stats.frames_dropped_by_kernel_filter,
            }),
            aliased_frames: stats.aliased_frames,
            unknown_frames: stats.unknown_frames,
            outside_kernel: stats.outside_kernel,
            kernel_alias: self.ingest.resolver().kernel_alias().map(|a| KernelAliasFacts {
                phys_start: a.phys.start,
                phys_end: a.phys.end,
                offset: a.offset(),
                source: match a.source {
                    AliasSource::ProgramHeaders => "program headers",
                    AliasSource::BootProtocol => "boot protocol",
                },
            }),
            symbols_mismatch: None,
            // From the plugin's summary, which the engine keeps (it comes at QEMU's exit).
            unwind_stops: None,
            // Said by the QEMU feed when the session starts; the engine keeps it.
            callchain: None,
        }
    }
}
