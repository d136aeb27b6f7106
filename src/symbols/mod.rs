//! Symbols: turn code addresses into function names, source lines and inline chains.
//!
//! - [`elf`]: a kernel (or any) ELF — DWARF through addr2line, then its symbol table.
//! - [`kallsyms`]: a Linux kallsyms file.
//! - [`symtab`]: the bounded address → symbol table both fall back on.
//! - [`demangle`] and [`style`]: how names are cleaned and shortened.
//! - [`guest_space`]: which region of a guest a sampled address lies in (kernel image,
//!   its physical alias, firmware, user space), decided before it is named.
//! - [`resolver`]: the per-address cache in front of a symbolizer, with the `ip − 1` rule
//!   for return addresses and the kernel-text filter.

pub mod demangle;
pub mod elf;
pub mod guest_space;
pub mod host;
pub mod kallsyms;
pub mod resolver;
pub mod style;
pub mod symtab;

pub use elf::ElfImage;
pub use resolver::{ResolveCounters, ResolvedFrame, Resolver, ResolverOptions};
pub use style::SymbolStyle;

/// A half-open address range `[start, end)`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct AddressRange {
    pub start: u64,
    pub end: u64,
}

impl AddressRange {
    pub fn contains(&self, address: u64) -> bool {
        self.start <= address && address < self.end
    }
}

/// One function of an address's inline chain, as a symbolizer reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SymbolFrame {
    /// Demangled name (not yet styled).
    pub name: String,
    pub file: Option<String>,
    /// 0 when unknown.
    pub line: u32,
    /// Offset from the symbol start when the name came from a symbol table; `None` for
    /// DWARF names. Not part of the frame's name (a frame is a function).
    pub offset: Option<u64>,
}

/// Where an address lands after mapping a physical alias onto linked addresses.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Canonical {
    pub address: u64,
    /// The address was in a physical alias of the image and was moved.
    pub aliased: bool,
}

/// Something that can name addresses.
pub trait Symbolizer: Send {
    /// The inline chain at `address`, innermost first; empty when nothing is known.
    fn symbolize(&self, address: u64) -> Vec<SymbolFrame>;

    /// Map an address the sampler saw onto the address space of the symbols.
    fn canonicalize(&self, address: u64) -> Canonical {
        Canonical {
            address,
            aliased: false,
        }
    }

    /// The kernel's text range, for `--kernel-filter`.
    fn kernel_text(&self) -> Option<AddressRange> {
        None
    }

    /// The region of a canonical address: only [`Region::Kernel`] is looked up among the
    /// symbols. Without a known address space, everything is.
    fn region(&self, _address: u64) -> guest_space::Region {
        guest_space::Region::Kernel
    }

    /// The kernel image's physical alias, when it has one.
    fn kernel_alias(&self) -> Option<guest_space::KernelAlias> {
        None
    }

    /// Whether a function (a text symbol) starts exactly at `address`.
    fn is_function_start(&self, _address: u64) -> bool {
        false
    }

    /// Whether `address` lies in code (an executable section, inside a function where the
    /// symbols say); without that information everything is.
    fn is_code(&self, _address: u64) -> bool {
        true
    }
}

/// A kallsyms table as a symbolizer (names and offsets only: kallsyms has no lines).
pub struct KallsymsSymbolizer {
    table: symtab::SymbolTable,
    text: Option<AddressRange>,
}

impl KallsymsSymbolizer {
    pub fn new(table: symtab::SymbolTable, text: Option<AddressRange>) -> Self {
        Self { table, text }
    }

    /// Read a kallsyms file; the kernel text is `_stext`/`_text` … `_etext` when present.
    pub fn open(path: &std::path::Path) -> Result<(Self, kallsyms::KallsymsStats), kallsyms::KallsymsError> {
        let k = kallsyms::read(path)?;
        Ok((Self::new(k.table, k.text), k.stats))
    }
}

impl Symbolizer for KallsymsSymbolizer {
    fn symbolize(&self, address: u64) -> Vec<SymbolFrame> {
        self.table
            .lookup(address)
            .map(|hit| {
                vec![SymbolFrame {
                    name: demangle::demangle(hit.name),
                    file: None,
                    line: 0,
                    offset: Some(hit.offset),
                }]
            })
            .unwrap_or_default()
    }

    fn kernel_text(&self) -> Option<AddressRange> {
        self.text
    }

    fn is_function_start(&self, address: u64) -> bool {
        self.table.lookup(address).is_some_and(|hit| hit.offset == 0)
    }
}
