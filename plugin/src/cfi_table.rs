//! The kernel's DWARF call-frame information as the `callchain=dwarf` unwinder
//! ([`crate::cfi`]) uses it: an address-sorted FDE index, the rules at an address reduced to
//! what the walk needs, and which addresses start a function.
//!
//! # What is read
//!
//! Only the section the unwinder uses (`.eh_frame`, else `.debug_frame`) and the ELF headers
//! needed to find it are read from the file, never the whole ELF: a StarryOS debug build is
//! ~300 MB, almost all of it `.debug_info`/`.debug_line`, against ~1 MB of `.debug_frame`,
//! and reading it whole kept those 300 MB resident in QEMU for the whole run.
//!
//! # Cost
//!
//! The rule row for an address is computed once per vCPU thread and cached ([`Rules`]): in
//! the sampling path an unwind step is a hash lookup, one or two guest reads and arithmetic.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fs::File;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use gimli::{
    BaseAddresses, CfaRule, DebugFrame, EhFrame, EndianSlice, FrameDescriptionEntry, LittleEndian, Register,
    RegisterRule, UnwindContext, UnwindSection,
};
use object::{Object, ObjectSection, ReadCache};

use crate::unwind::Arch;

type Reader = EndianSlice<'static, LittleEndian>;

/// Where the CFA is: a register of the three the sampler reads, plus an offset.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Cfa {
    Sp(i64),
    Fp(i64),
}

/// How a register of the caller is recovered.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Saved {
    /// Not saved by this frame: still in the register.
    InRegister,
    /// At `CFA + offset`.
    AtCfa(i64),
    /// Nothing to recover: the outermost frame.
    Undefined,
    /// A rule this unwinder does not evaluate.
    Unsupported,
}

/// The rules at one address, reduced to what the walk needs.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Rules {
    pub cfa: Cfa,
    pub return_address: Saved,
    pub fp: Saved,
}

/// The DWARF register numbers of the stack and frame pointers.
pub fn dwarf_registers(arch: Arch) -> (Register, Register) {
    match arch {
        Arch::Riscv64 => (Register(2), Register(8)), // sp = x2, fp = s0 = x8
        Arch::Loongarch64 => (Register(3), Register(22)), // sp = r3, fp = r22
        Arch::X86_64 => (Register(7), Register(6)),  // rsp, rbp
    }
}

enum Section {
    Eh(EhFrame<Reader>),
    Debug(DebugFrame<Reader>),
}

/// The kernel's CFI, indexed by address.
pub struct CfiTable {
    /// Unique per table, for the rules cache.
    id: usize,
    pub arch: Arch,
    section: Section,
    bases: BaseAddresses,
    /// `(start, end, fde)`, sorted by start, non-overlapping in practice.
    fdes: Vec<(u64, u64, FrameDescriptionEntry<Reader>)>,
}

thread_local! {
    /// Rules per (table, address), per vCPU thread: no lock in the sampling path. (One
    /// table per plugin; the table's id keeps tests' tables apart.)
    static RULES: RefCell<HashMap<(usize, u64), Option<Rules>>> = RefCell::new(HashMap::new());
}
/// Past this many cached addresses a vCPU's cache starts over (a kernel has far fewer
/// distinct sampled sites and return addresses).
const RULES_CACHE_LIMIT: usize = 1 << 20;

/// A section's bytes copied out of the file, kept for the plugin's lifetime, and its
/// address.
fn copy_section<'a>(
    file: &object::File<'a, &'a ReadCache<File>>,
    name: &str,
) -> Result<Option<(u64, &'static [u8])>, String> {
    let Some(section) = file.section_by_name(name) else {
        return Ok(None);
    };
    if section
        .compressed_file_range()
        .is_ok_and(|range| range.format != object::CompressionFormat::None)
    {
        return Err(format!(
            "{name} is compressed; link the kernel without --compress-debug-sections"
        ));
    }
    let data = section.data().map_err(|e| format!("cannot read {name}: {e}"))?;
    if data.is_empty() {
        return Ok(None);
    }
    let data: &'static [u8] = Box::leak(data.to_vec().into_boxed_slice());
    Ok(Some((section.address(), data)))
}

impl CfiTable {
    /// Read `.eh_frame` (preferred: what unwinders at run time use) or `.debug_frame` from
    /// the ELF at `path`: the headers and that section only.
    pub fn open(path: &Path, arch: Arch) -> Result<CfiTable, String> {
        let fail = |e: String| format!("cfi={}: {e}", path.display());
        let file = File::open(path).map_err(|e| fail(e.to_string()))?;
        // Reads what the parser asks for and keeps it until dropped, at the end of this
        // function: the section bytes are copied out first.
        let cache = ReadCache::new(file);
        let elf = object::File::parse(&cache).map_err(|e| fail(format!("not an ELF: {e}")))?;
        let text = elf.section_by_name(".text").map(|s| s.address());
        if let Some((address, data)) = copy_section(&elf, ".eh_frame").map_err(fail)? {
            let mut bases = BaseAddresses::default().set_eh_frame(address);
            if let Some(text) = text {
                bases = bases.set_text(text);
            }
            let table = CfiTable::new(arch, Section::Eh(EhFrame::new(data, LittleEndian)), bases);
            if !table.fdes.is_empty() {
                return Ok(table);
            }
        }
        if let Some((_, data)) = copy_section(&elf, ".debug_frame").map_err(fail)? {
            return Ok(CfiTable::from_debug_frame(data, arch));
        }
        Err(fail(
            "no .eh_frame or .debug_frame with call-frame information: build the kernel with -g (or -fasynchronous-unwind-tables)"
                .into(),
        ))
    }

    /// A table over a `.debug_frame` section's bytes.
    pub fn from_debug_frame(data: &'static [u8], arch: Arch) -> CfiTable {
        let mut frame = DebugFrame::new(data, LittleEndian);
        // DWARF 64-bit targets: the section's addresses are 8 bytes.
        frame.set_address_size(8);
        CfiTable::new(arch, Section::Debug(frame), BaseAddresses::default())
    }

    fn new(arch: Arch, section: Section, bases: BaseAddresses) -> CfiTable {
        let mut fdes = match &section {
            Section::Eh(s) => index_fdes(s, &bases),
            Section::Debug(s) => index_fdes(s, &bases),
        };
        fdes.sort_by_key(|(start, _, _)| *start);
        static NEXT_ID: AtomicUsize = AtomicUsize::new(0);
        CfiTable {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            arch,
            section,
            bases,
            fdes,
        }
    }

    /// How many functions the table covers.
    pub fn functions(&self) -> usize {
        self.fdes.len()
    }

    /// Whether a function's FDE starts exactly at `address`: a return address there is no
    /// return into the function before it, but a task entered with its return address set
    /// to its own entry (StarryOS's `TaskContext::init`).
    pub fn starts_function(&self, address: u64) -> bool {
        self.fdes
            .binary_search_by_key(&address, |(start, _, _)| *start)
            .is_ok()
    }

    fn fde_for(&self, address: u64) -> Option<&FrameDescriptionEntry<Reader>> {
        let i = self.fdes.partition_point(|(start, _, _)| *start <= address);
        let (start, end, fde) = self.fdes.get(i.checked_sub(1)?)?;
        (*start..*end).contains(&address).then_some(fde)
    }

    /// The rules at `address`, cached per thread; `None` where no FDE covers it.
    pub fn rules(&self, address: u64) -> Option<Rules> {
        let key = (self.id, address);
        RULES.with(|cache| {
            let mut cache = cache.borrow_mut();
            if let Some(rules) = cache.get(&key) {
                return *rules;
            }
            if cache.len() >= RULES_CACHE_LIMIT {
                cache.clear();
            }
            let rules = self.compute_rules(address);
            cache.insert(key, rules);
            rules
        })
    }

    pub fn compute_rules(&self, address: u64) -> Option<Rules> {
        let fde = self.fde_for(address)?;
        let mut ctx = UnwindContext::new();
        let row = match &self.section {
            Section::Eh(s) => fde.unwind_info_for_address(s, &self.bases, &mut ctx, address),
            Section::Debug(s) => fde.unwind_info_for_address(s, &self.bases, &mut ctx, address),
        }
        .ok()?;
        let (sp, fp) = dwarf_registers(self.arch);
        let cfa = match *row.cfa() {
            CfaRule::RegisterAndOffset { register, offset } if register == sp => Cfa::Sp(offset),
            CfaRule::RegisterAndOffset { register, offset } if register == fp => Cfa::Fp(offset),
            _ => {
                return Some(Rules {
                    cfa: Cfa::Sp(0),
                    return_address: Saved::Unsupported,
                    fp: Saved::Unsupported,
                });
            }
        };
        let saved = |register: Register| match row.register(register) {
            None | Some(RegisterRule::SameValue) => Saved::InRegister,
            Some(RegisterRule::Offset(offset)) => Saved::AtCfa(offset),
            Some(RegisterRule::Undefined) => Saved::Undefined,
            Some(_) => Saved::Unsupported,
        };
        Some(Rules {
            cfa,
            return_address: saved(fde.cie().return_address_register()),
            fp: saved(fp),
        })
    }
}

fn index_fdes<S: UnwindSection<Reader>>(
    section: &S,
    bases: &BaseAddresses,
) -> Vec<(u64, u64, FrameDescriptionEntry<Reader>)> {
    let mut fdes = Vec::new();
    let mut entries = section.entries(bases);
    while let Ok(Some(entry)) = entries.next() {
        if let gimli::CieOrFde::Fde(partial) = entry
            && let Ok(fde) = partial.parse(S::cie_from_offset)
            && fde.len() > 0
        {
            fdes.push((fde.initial_address(), fde.initial_address() + fde.len(), fde));
        }
    }
    fdes
}
