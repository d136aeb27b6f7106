//! The `-plugin` argument: perfscope's plugin with arguments compatible with the reference
//! qperf (so existing scripts' values mean the same), plus the live stream socket and the
//! session clock's epoch. The kernel text range for the address filter comes from the ELF
//! the way `cargo xtask starry perf` computes it; its physical alias does not (see
//! [`kernel_text_of`]).

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use object::{Object, ObjectSection};

use crate::symbols::guest_space::{Boot, GuestSpace};

/// Where samples are taken.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SampleMode {
    /// At translation-block starts (cheap).
    Tb,
    /// At any instruction (exact, slower).
    Insn,
}

/// How stacks are collected.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CallchainMode {
    /// The sampled address only.
    Leaf,
    /// The frame-pointer chain (build the kernel with frame pointers).
    Fp,
    /// The kernel ELF's DWARF call-frame information (.eh_frame / .debug_frame): whole
    /// stacks without frame pointers. `logical` is xtask's name for it.
    #[value(alias = "logical")]
    Dwarf,
}

/// The kernel's text and its physical alias (early boot runs before the MMU is on).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct KernelText {
    pub start: u64,
    pub end: u64,
    /// `(start, end, offset)`: addresses in `[start, end)` are canonicalized by adding offset.
    pub alias: Option<(u64, u64, u64)>,
}

impl KernelText {
    /// The text of a kernel booted by `boot`: under UEFI, without the alias (the firmware
    /// loads the image anywhere; see [`Boot`]).
    pub fn booted_by(self, boot: Boot) -> KernelText {
        match boot {
            Boot::Direct => self,
            Boot::Uefi => KernelText { alias: None, ..self },
        }
    }
}

/// The union of `.head.text` and `.text` of `elf`, with its physical alias: the text's
/// part of the kernel image's own physical range ([`GuestSpace`]: the load address from
/// the program headers, e.g. the x86_64 test kernel's 32-bit entry at 1 MiB for
/// 0xffffffff80100000, else the arch's boot protocol — never xtask's low-32-bit mask, which
/// aliases OpenSBI onto a kernel linked at RAM's base). `None` when neither section exists.
pub fn kernel_text_of(elf: &Path) -> anyhow::Result<Option<KernelText>> {
    // Mapped, not read whole: a kernel ELF with DWARF is hundreds of MiB.
    let data = crate::input::map(elf, "a kernel ELF")?;
    let file =
        object::File::parse(&*data).with_context(|| format!("{} is not an ELF file", elf.display()))?;
    let mut range: Option<(u64, u64)> = None;
    for section in file.sections() {
        let name = section.name().unwrap_or("");
        if (name == ".head.text" || name == ".text") && section.address() != 0 && section.size() != 0 {
            let (a, b) = (section.address(), section.address() + section.size());
            range = Some(range.map_or((a, b), |(x, y)| (x.min(a), y.max(b))));
        }
    }
    let alias = GuestSpace::of(&file).and_then(|space| space.alias());
    Ok(range.map(|(start, end)| {
        let alias = alias.map(|alias| {
            let offset = alias.offset();
            let phys = start.wrapping_sub(offset);
            (phys, phys + (end - start), offset)
        });
        KernelText { start, end, alias }
    }))
}

/// Arguments of perfscope's plugin.
#[derive(Clone, Debug)]
pub struct PluginOptions {
    pub library: PathBuf,
    pub freq_hz: u32,
    pub out: PathBuf,
    pub max_depth: u32,
    pub queue_size: u32,
    pub mode: SampleMode,
    pub callchain: CallchainMode,
    pub kernel_text: Option<KernelText>,
    /// Drop samples outside the kernel text (firmware, user space).
    pub filter_kernel: bool,
    /// The Unix socket perfscope listens on for the live stream.
    pub stream: Option<PathBuf>,
    /// CLOCK_MONOTONIC ns the sample timestamps count from.
    pub epoch_ns: u64,
    /// The plugin's executed-instruction/block counters (`--guest-counters`; they cost
    /// guest time, so they are off unless asked for).
    pub counters: bool,
    /// The kernel ELF whose call-frame information `--callchain dwarf` unwinds with.
    pub cfi: Option<PathBuf>,
}

fn path_value(what: &str, p: &Path) -> anyhow::Result<String> {
    let s = p
        .to_str()
        .with_context(|| format!("{what} path {} is not UTF-8", p.display()))?;
    // QEMU splits plugin arguments at commas and does not unescape them.
    if s.contains(',') {
        bail!(
            "{what} path {s} contains a comma, which QEMU's -plugin option cannot carry: use another directory"
        );
    }
    Ok(s.to_string())
}

impl PluginOptions {
    /// The `-plugin` option value.
    pub fn to_arg(&self) -> anyhow::Result<String> {
        if self.freq_hz == 0 {
            crate::usage!("--freq must be at least 1 Hz");
        }
        if self.max_depth == 0 {
            bail!("--max-depth must be at least 1");
        }
        let mut parts = vec![
            path_value("plugin", &self.library)?,
            format!("freq={}", self.freq_hz),
            format!("max_depth={}", self.max_depth),
            format!("queue_size={}", self.queue_size.max(1)),
            format!(
                "mode={}",
                match self.mode {
                    SampleMode::Tb => "tb",
                    SampleMode::Insn => "insn",
                }
            ),
            format!(
                "callchain={}",
                match self.callchain {
                    CallchainMode::Leaf => "leaf",
                    CallchainMode::Fp => "fp",
                    CallchainMode::Dwarf => "dwarf",
                }
            ),
            format!("out={}", path_value("qperf.bin", &self.out)?),
            // Explicit, as xtask does: the plugin's own default differs when a range is given.
            format!("filter_kernel={}", u8::from(self.filter_kernel)),
        ];
        if let Some(t) = self.kernel_text {
            parts.push(format!("filter_start={:#x}", t.start));
            parts.push(format!("filter_end={:#x}", t.end));
            if let Some((a, b, off)) = t.alias {
                parts.push(format!("filter_alias_start={a:#x}"));
                parts.push(format!("filter_alias_end={b:#x}"));
                parts.push(format!("filter_alias_offset={off:#x}"));
            }
        }
        if let Some(s) = &self.stream {
            parts.push(format!("stream={}", path_value("stream socket", s)?));
        }
        parts.push(format!("epoch_ns={}", self.epoch_ns));
        parts.push(format!("counters={}", u8::from(self.counters)));
        match (&self.cfi, self.callchain) {
            (Some(elf), CallchainMode::Dwarf) => {
                parts.push(format!("cfi={}", path_value("kernel ELF", elf)?))
            }
            (None, CallchainMode::Dwarf) => {
                bail!("--callchain dwarf needs the kernel ELF's call-frame information")
            }
            _ => {}
        }
        Ok(parts.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> PluginOptions {
        PluginOptions {
            library: "/p/libperfscope_qemu_plugin.so".into(),
            freq_hz: 1000,
            out: "/o/qperf/qperf.bin".into(),
            max_depth: 128,
            queue_size: 4096,
            mode: SampleMode::Tb,
            callchain: CallchainMode::Fp,
            kernel_text: Some(KernelText {
                start: 0xffffffc080200000,
                end: 0xffffffc080210000,
                alias: Some((0x80200000, 0x80210000, 0xffffffc000000000)),
            }),
            filter_kernel: false,
            stream: Some("/o/qperf/stream.sock".into()),
            epoch_ns: 42,
            counters: false,
            cfi: None,
        }
    }

    #[test]
    fn arguments_match_the_reference_names() {
        assert_eq!(
            options().to_arg().unwrap(),
            "/p/libperfscope_qemu_plugin.so,freq=1000,max_depth=128,queue_size=4096,mode=tb,callchain=fp,\
             out=/o/qperf/qperf.bin,filter_kernel=0,filter_start=0xffffffc080200000,filter_end=0xffffffc080210000,\
             filter_alias_start=0x80200000,filter_alias_end=0x80210000,filter_alias_offset=0xffffffc000000000,\
             stream=/o/qperf/stream.sock,epoch_ns=42,counters=0"
        );
    }

    #[test]
    fn bad_values_say_what_to_do() {
        let mut o = options();
        o.out = "/o,x/qperf.bin".into();
        assert!(o.to_arg().unwrap_err().to_string().contains("contains a comma"));
        let mut o = options();
        o.freq_hz = 0;
        assert!(o.to_arg().unwrap_err().to_string().contains("--freq"));
    }

    #[test]
    fn dwarf_passes_the_kernel_elf_as_cfi_and_needs_it() {
        let mut o = options();
        o.callchain = CallchainMode::Dwarf;
        assert!(o.to_arg().is_err(), "no ELF: refused");
        o.cfi = Some("/k/kernel.elf".into());
        let arg = o.to_arg().unwrap();
        assert!(arg.contains(",callchain=dwarf,"), "{arg}");
        assert!(arg.ends_with(",cfi=/k/kernel.elf"), "{arg}");
        use clap::ValueEnum;
        assert_eq!(CallchainMode::from_str("logical", true), Ok(CallchainMode::Dwarf));
    }

    #[test]
    fn the_test_kernel_text_has_its_physical_alias() {
        let elf = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/tinyk-riscv64.elf");
        let t = kernel_text_of(&elf).unwrap().unwrap();
        assert_eq!(t.start, 0xffffffc080200000);
        assert!(t.end > t.start);
        assert_eq!(
            t.alias,
            Some((0x80200000, 0x80200000 + (t.end - t.start), 0xffffffc000000000))
        );
        assert_eq!(t.booted_by(Boot::Direct), t);
        let uefi = t.booted_by(Boot::Uefi);
        assert_eq!((uefi.start, uefi.end, uefi.alias), (t.start, t.end, None));
    }
}
