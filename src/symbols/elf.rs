//! An ELF image as a symbolizer: DWARF (addr2line, inline chains) first, then the bounded
//! symbol table, plus what the image says about its address space as a guest kernel — the
//! kernel text range and the [`GuestSpace`] (its physical alias, firmware, user space).

use std::path::{Path, PathBuf};

use object::{Object, ObjectSection, ObjectSymbol, SectionKind, SymbolKind};

use super::demangle::{demangle, strip_rust_hash};
use super::guest_space::{Boot, GuestSpace, KernelAlias, Region};
use super::symtab::{Symbol, SymbolTable};
use super::{AddressRange, Canonical, SymbolFrame, Symbolizer};

/// Why an ELF could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ElfError {
    /// Opening or mapping it (a pipe or a device is refused: an ELF is mapped in place).
    #[error(transparent)]
    Input(#[from] crate::input::InputError),
    #[error(
        "{path} is not an object file addr2line can read: {reason} (pass the unstripped kernel ELF, not the raw .bin image)"
    )]
    Parse { path: PathBuf, reason: String },
}

/// A loaded ELF.
pub struct ElfImage {
    path: PathBuf,
    /// None without `.debug_info`: addr2line would find no frames there, and its loader
    /// builds a symbol map of its own beside ours (tens of MB for a large library).
    loader: Option<addr2line::Loader>,
    symbols: SymbolTable,
    kernel_text: Option<AddressRange>,
    /// The executable sections.
    code: Vec<AddressRange>,
    space: Option<GuestSpace>,
    arch: Option<&'static str>,
    has_dwarf: bool,
}

impl ElfImage {
    /// The image with its DWARF (inline chains, source lines) when it has any.
    pub fn open(path: &Path) -> Result<Self, ElfError> {
        Self::open_with(path, true)
    }

    /// The image named by its symbol tables alone: no DWARF is read, whose parsed form
    /// costs tens of MB for a large binary or a distribution's debug file.
    pub fn open_symbols_only(path: &Path) -> Result<Self, ElfError> {
        Self::open_with(path, false)
    }

    fn open_with(path: &Path, dwarf: bool) -> Result<Self, ElfError> {
        let parse = |reason: String| ElfError::Parse {
            path: path.to_path_buf(),
            reason,
        };
        // Mapped, not read: an ELF of any size costs address space, not memory. The map is
        // dropped at the end of this function; addr2line maps the file again by its path
        // (a regular file, which `map` has checked).
        let map = crate::input::map(path, "an ELF")?;
        let object = object::File::parse(&*map).map_err(|e| parse(e.to_string()))?;

        let exec_sections: Vec<AddressRange> = object
            .sections()
            .filter(|s| s.kind() == SectionKind::Text && s.size() > 0 && s.address() > 0)
            .map(|s| AddressRange {
                start: s.address(),
                end: s.address() + s.size(),
            })
            .collect();
        let kernel_text = kernel_text_range(&object);
        let symbols = read_symbols(&object, &exec_sections);
        let code = exec_sections.clone();
        let space = GuestSpace::of(&object);
        let arch = arch_name(object.architecture());
        let has_dwarf = object.section_by_name(".debug_info").is_some();
        drop(object);
        drop(map);

        let loader = if has_dwarf && dwarf {
            Some(addr2line::Loader::new(path).map_err(|e| parse(e.to_string()))?)
        } else {
            None
        };
        Ok(Self {
            path: path.to_path_buf(),
            loader,
            symbols,
            kernel_text,
            code,
            space,
            arch,
            has_dwarf,
        })
    }

    /// The image as `boot` put it in the guest (UEFI: no physical alias; see [`Boot`]).
    pub fn booted_by(mut self, boot: Boot) -> Self {
        self.space = self.space.map(|s| s.booted_by(boot));
        self
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `riscv64`, `loongarch64`, `x86_64`, `aarch64`, when recognised.
    pub fn arch(&self) -> Option<&'static str> {
        self.arch
    }

    pub fn has_dwarf(&self) -> bool {
        self.has_dwarf
    }

    pub fn symbol_count(&self) -> usize {
        self.symbols.len()
    }

    fn dwarf_frames(&self, address: u64) -> Vec<SymbolFrame> {
        let mut out = Vec::new();
        let Some(Ok(mut frames)) = self.loader.as_ref().map(|l| l.find_frames(address)) else {
            return out;
        };
        while let Ok(Some(frame)) = frames.next() {
            let Some(function) = frame.function else { continue };
            let Ok(raw) = function.raw_name() else { continue };
            let (file, line) = frame
                .location
                .map(|l| (l.file.map(str::to_string), l.line.unwrap_or(0)))
                .unwrap_or((None, 0));
            out.push(SymbolFrame {
                name: demangle(&raw),
                file,
                line,
                offset: None,
            });
        }
        out
    }
}

impl Symbolizer for ElfImage {
    fn symbolize(&self, address: u64) -> Vec<SymbolFrame> {
        let frames = self.dwarf_frames(address);
        if !frames.is_empty() {
            return frames;
        }
        match self.symbols.lookup(address) {
            Some(hit) => vec![SymbolFrame {
                name: demangle(hit.name),
                file: None,
                line: 0,
                offset: Some(hit.offset),
            }],
            None => Vec::new(),
        }
    }

    fn canonicalize(&self, address: u64) -> Canonical {
        match &self.space {
            Some(space) => space.canonicalize(address),
            None => Canonical {
                address,
                aliased: false,
            },
        }
    }

    fn kernel_alias(&self) -> Option<KernelAlias> {
        self.space.as_ref().and_then(GuestSpace::alias)
    }

    fn region(&self, address: u64) -> Region {
        self.space.as_ref().map_or(Region::Kernel, |s| s.region(address))
    }

    fn kernel_text(&self) -> Option<AddressRange> {
        self.kernel_text
    }

    fn is_function_start(&self, address: u64) -> bool {
        self.symbols.lookup(address).is_some_and(|hit| hit.offset == 0)
    }

    /// Inside an executable section and, when the image names its functions, inside one:
    /// the padding between functions runs nothing either.
    fn is_code(&self, address: u64) -> bool {
        let in_section = self.code.is_empty() || self.code.iter().any(|r| r.contains(address));
        in_section && (self.symbols.is_empty() || self.symbols.lookup(address).is_some())
    }
}

/// The union of `.head.text` and `.text` (what xtask passes as the kernel filter), or of
/// all code sections when neither exists.
fn kernel_text_range(object: &object::File<'_>) -> Option<AddressRange> {
    let named: Vec<AddressRange> = [".head.text", ".text"]
        .iter()
        .filter_map(|n| object.section_by_name(n))
        .filter(|s| s.address() > 0 && s.size() > 0)
        .map(|s| AddressRange {
            start: s.address(),
            end: s.address() + s.size(),
        })
        .collect();
    let ranges = if named.is_empty() {
        object
            .sections()
            .filter(|s| s.kind() == SectionKind::Text && s.address() > 0 && s.size() > 0)
            .map(|s| AddressRange {
                start: s.address(),
                end: s.address() + s.size(),
            })
            .collect()
    } else {
        named
    };
    let start = ranges.iter().map(|r| r.start).min()?;
    let end = ranges.iter().map(|r| r.end).max()?;
    Some(AddressRange { start, end })
}

fn read_symbols(object: &object::File<'_>, exec_sections: &[AddressRange]) -> SymbolTable {
    let mut symbols = Vec::new();
    for s in object.symbols().chain(object.dynamic_symbols()) {
        let kind = s.kind();
        if !matches!(kind, SymbolKind::Text | SymbolKind::Data | SymbolKind::Unknown) || s.is_undefined() {
            continue;
        }
        let Ok(name) = s.name() else { continue };
        // Local assembler labels and mapping symbols are not functions.
        if name.is_empty() || name.starts_with(".L") || name.starts_with('$') {
            continue;
        }
        let in_code = exec_sections.iter().any(|r| r.contains(s.address()));
        symbols.push(Symbol {
            address: s.address(),
            size: s.size(),
            name: strip_rust_hash(name).into_owned(),
            is_text: kind == SymbolKind::Text || (kind == SymbolKind::Unknown && in_code),
            is_global: s.is_global(),
        });
    }
    let sections = exec_sections.to_vec();
    SymbolTable::new(symbols, move |addr| {
        sections.iter().find(|r| r.contains(addr)).map(|r| r.end)
    })
}

fn arch_name(arch: object::Architecture) -> Option<&'static str> {
    use object::Architecture as A;
    Some(match arch {
        A::Riscv64 => "riscv64",
        A::LoongArch64 => "loongarch64",
        A::X86_64 => "x86_64",
        A::Aarch64 => "aarch64",
        A::Riscv32 => "riscv32",
        A::I386 => "x86",
        _ => return None,
    })
}
