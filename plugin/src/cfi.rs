//! `callchain=dwarf`: unwinding the guest kernel with its own DWARF call-frame information
//! (`.eh_frame` or `.debug_frame` of the ELF given as `cfi=`), so a kernel built without
//! frame pointers still gets whole stacks.
//!
//! # Why the unwind runs here, in the plugin
//!
//! The alternative is perf's: copy a window of the stack and the registers into every
//! record and unwind on the host. Here that would multiply the record size by a hundred
//! (a kernel stack window is kilobytes; a v3 record with its trace is ~100 bytes), through
//! the queue, the file and the live stream, and would change the qperf.bin format the
//! reference tools read. A CFI rule can also point anywhere below the CFA, which a
//! fixed window may not hold. The plugin already reads registers and guest memory at the
//! sample (the frame-pointer walk does), so it evaluates the rules where the memory is, and
//! the file stays a plain v3 file whose trace is the unwound chain (`callchain` byte 2).
//!
//! # Cost
//!
//! The sections are parsed once at load into an address-sorted FDE index. The rule row
//! for an address is computed once per vCPU thread and cached ([`Rules`]): in the
//! sampling path an unwind step is a hash lookup, one or two guest reads and arithmetic.
//!
//! # Frames without CFI
//!
//! Hand-written assembly (boot code, trap entry) usually has no FDE. A leaf there falls
//! back to the frame-pointer / return-address rules of [`crate::unwind`]; a return address
//! there ends the walk (counted as [`StopReason::CfiMissing`]) unless the frame-pointer
//! chain continues from it (a trap frame that saved one).

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use gimli::{
    BaseAddresses, CfaRule, DebugFrame, EhFrame, EndianSlice, FrameDescriptionEntry, LittleEndian, Register,
    RegisterRule, UnwindContext, UnwindSection,
};
use object::{Object, ObjectSection};

use crate::filter::AddressFilter;
use crate::unwind::{self, Arch, FrameState, GuestMemory, SampleRegisters};

type Reader = EndianSlice<'static, LittleEndian>;

/// Why an unwind ended; counted per sample and written to the sidecar.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// The outermost frame: a zero return address or frame pointer, or an undefined return
    /// address rule (what CFI says at a thread's first frame).
    End,
    /// An address with no CFI (assembly, or outside the ELF's FDEs).
    CfiMissing,
    /// A guest read failed, or a rule the unwinder does not evaluate (expressions).
    BadRead,
    /// `max_depth` frames.
    DepthLimit,
    /// A return address outside the kernel text.
    LeftKernelText,
}

impl StopReason {
    pub const ALL: [StopReason; 5] = [
        StopReason::End,
        StopReason::CfiMissing,
        StopReason::BadRead,
        StopReason::DepthLimit,
        StopReason::LeftKernelText,
    ];

    /// The sidecar key (`unwind_stop_<name>`).
    pub fn name(self) -> &'static str {
        match self {
            StopReason::End => "end",
            StopReason::CfiMissing => "cfi_missing",
            StopReason::BadRead => "bad_read",
            StopReason::DepthLimit => "depth_limit",
            StopReason::LeftKernelText => "left_kernel_text",
        }
    }

    pub fn index(self) -> usize {
        self as usize
    }
}

/// Where the CFA is: a register of the three the sampler reads, plus an offset.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Cfa {
    Sp(i64),
    Fp(i64),
}

/// How a register of the caller is recovered.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Saved {
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
struct Rules {
    cfa: Cfa,
    return_address: Saved,
    fp: Saved,
}

/// The DWARF register numbers of the three registers the sampler reads.
fn dwarf_registers(arch: Arch) -> (Register, Register) {
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
    arch: Arch,
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

impl CfiTable {
    /// Read `.eh_frame` (preferred: what unwinders at run time use) or `.debug_frame` from
    /// the ELF at `path`. The section bytes live as long as the plugin.
    pub fn open(path: &Path, arch: Arch) -> Result<CfiTable, String> {
        let bytes = std::fs::read(path).map_err(|e| format!("cfi={}: {e}", path.display()))?;
        let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
        let file =
            object::File::parse(bytes).map_err(|e| format!("cfi={}: not an ELF: {e}", path.display()))?;
        let section_data = |name: &str| -> Option<(u64, &'static [u8])> {
            let section = file.section_by_name(name)?;
            let data = section.data().ok()?;
            (!data.is_empty()).then_some((section.address(), data))
        };
        let text = file.section_by_name(".text").map(|s| s.address());
        if let Some((address, data)) = section_data(".eh_frame") {
            let mut bases = BaseAddresses::default().set_eh_frame(address);
            if let Some(text) = text {
                bases = bases.set_text(text);
            }
            let table = CfiTable::new(arch, Section::Eh(EhFrame::new(data, LittleEndian)), bases);
            if !table.fdes.is_empty() {
                return Ok(table);
            }
        }
        if let Some((_, data)) = section_data(".debug_frame") {
            return Ok(CfiTable::from_debug_frame(data, arch));
        }
        Err(format!(
            "cfi={}: no .eh_frame or .debug_frame with call-frame information: build the kernel with -g (or -fasynchronous-unwind-tables)",
            path.display()
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

    fn fde_for(&self, address: u64) -> Option<&FrameDescriptionEntry<Reader>> {
        let i = self.fdes.partition_point(|(start, _, _)| *start <= address);
        let (start, end, fde) = self.fdes.get(i.checked_sub(1)?)?;
        (*start..*end).contains(&address).then_some(fde)
    }

    /// The rules at `address`, cached per thread.
    fn rules(&self, address: u64) -> Option<Rules> {
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

    fn compute_rules(&self, address: u64) -> Option<Rules> {
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

/// The trace `[leaf, return_1, …]` (at most `max_depth` entries) and why it ended.
pub fn unwind(
    table: &CfiTable,
    pc: u64,
    regs: SampleRegisters,
    state: FrameState,
    memory: &dyn GuestMemory,
    filter: &AddressFilter,
    max_depth: usize,
) -> (Vec<u64>, StopReason) {
    let arch = table.arch;
    // A leaf outside the kernel (firmware, user space) runs on a stack the kernel's CFI
    // does not describe: its leaf alone.
    if filter.text.is_some() && !filter.is_kernel_code(pc) {
        return (vec![pc], StopReason::LeftKernelText);
    }
    // A leaf with no CFI (assembly): the frame-pointer walk with its rules for code before
    // a frame exists does what can be done there.
    if table.rules(pc).is_none() {
        let trace = unwind::unwind(arch, pc, regs, state, memory, filter, max_depth);
        let reason = if trace.len() >= max_depth {
            StopReason::DepthLimit
        } else {
            StopReason::CfiMissing
        };
        return (trace, reason);
    }
    let mut trace = Vec::with_capacity(max_depth.min(32));
    trace.push(pc);
    let (mut pc, mut sp, mut fp) = (pc, regs.sp, regs.fp);
    let mut link = regs.link;
    loop {
        if trace.len() >= max_depth {
            return (trace, StopReason::DepthLimit);
        }
        // A return address is looked up at the call, one byte before it.
        let lookup = if trace.len() == 1 { pc } else { pc - 1 };
        let Some(rules) = table.rules(lookup) else {
            // Assembly between kernel frames: follow its frame-pointer chain, if any.
            let before = trace.len();
            unwind::walk_frames(arch.layout(), fp, memory, filter, max_depth, &mut trace);
            let reason = if trace.len() >= max_depth {
                StopReason::DepthLimit
            } else if trace.len() > before || fp == 0 {
                StopReason::End
            } else {
                StopReason::CfiMissing
            };
            return (trace, reason);
        };
        let base = match rules.cfa {
            Cfa::Sp(offset) => sp.checked_add_signed(offset),
            Cfa::Fp(offset) => fp.checked_add_signed(offset),
        };
        let Some(cfa) = base else {
            return (trace, StopReason::BadRead);
        };
        let read_at = |offset: i64| cfa.checked_add_signed(offset).and_then(|a| memory.read_u64(a));
        let ret = match rules.return_address {
            Saved::AtCfa(offset) => read_at(offset),
            // Only the sampled frame can still have it in the link register: a caller's
            // link register was overwritten by the call it made.
            Saved::InRegister => link.take(),
            Saved::Undefined => return (trace, StopReason::End),
            Saved::Unsupported => None,
        };
        let Some(ret) = ret else {
            return (trace, StopReason::BadRead);
        };
        let caller_fp = match rules.fp {
            Saved::AtCfa(offset) => read_at(offset),
            Saved::InRegister | Saved::Undefined => Some(fp),
            Saved::Unsupported => None,
        };
        let Some(caller_fp) = caller_fp else {
            return (trace, StopReason::BadRead);
        };
        if ret == 0 {
            return (trace, StopReason::End);
        }
        // Kernel stacks never return into anything but kernel text (a trap starts a new
        // chain): past it the rules would be applied to another address space's frames.
        let in_kernel = filter.text.is_none() || filter.is_kernel_code(ret);
        let Some(ret) = filter.return_address(ret).filter(|_| in_kernel) else {
            return (trace, StopReason::LeftKernelText);
        };
        trace.push(ret);
        link = None;
        (pc, sp, fp) = (ret, cfa, caller_fp);
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use gimli::write::{
        Address, CallFrameInstruction as Cfi, CommonInformationEntry, EndianVec,
        FrameDescriptionEntry as Fde, FrameTable,
    };
    use gimli::{Encoding, Format};

    use super::*;
    use crate::filter::TextRange;
    use crate::unwind::FakeStack;

    const KMAIN: u64 = 0x1000;
    const OUTER: u64 = 0x1100;
    const LEAF: u64 = 0x1200;
    const ASM: u64 = 0x1300; // no FDE
    const STACK: u64 = 0x8000;

    /// The shapes compilers give a frame-pointer-less kernel, for `arch`'s registers:
    /// kmain and outer allocate 32 / 48 bytes and save the return address at CFA-8 (kmain
    /// also saves fp at CFA-16); leaf makes no frame (riscv64/loongarch64: the return
    /// address stays in the link register; x86_64: at CFA-8, pushed by the call).
    fn debug_frame(arch: Arch) -> &'static [u8] {
        let (sp, fp) = dwarf_registers(arch);
        let (ra, entry_cfa) = match arch {
            Arch::X86_64 => (Register(16), 8),
            Arch::Riscv64 | Arch::Loongarch64 => (Register(1), 0),
        };
        let encoding = Encoding {
            format: Format::Dwarf32,
            version: 1,
            address_size: 8,
        };
        let mut cie = CommonInformationEntry::new(encoding, 1, -8, ra);
        cie.add_instruction(Cfi::Cfa(sp, entry_cfa));
        if arch == Arch::X86_64 {
            cie.add_instruction(Cfi::Offset(ra, -8));
        }
        let mut table = FrameTable::default();
        let cie = table.add_cie(cie);
        let mut kmain = Fde::new(Address::Constant(KMAIN), 0x100);
        kmain.add_instruction(4, Cfi::CfaOffset(32));
        kmain.add_instruction(8, Cfi::Offset(ra, -8));
        kmain.add_instruction(8, Cfi::Offset(fp, -16));
        table.add_fde(cie, kmain);
        let mut outer = Fde::new(Address::Constant(OUTER), 0x100);
        outer.add_instruction(4, Cfi::CfaOffset(48));
        outer.add_instruction(8, Cfi::Offset(ra, -8));
        table.add_fde(cie, outer);
        table.add_fde(cie, Fde::new(Address::Constant(LEAF), 0x100));
        let mut out = gimli::write::DebugFrame::from(EndianVec::new(LittleEndian));
        table.write_debug_frame(&mut out).unwrap();
        Box::leak(out.slice().to_vec().into_boxed_slice())
    }

    fn filter() -> AddressFilter {
        AddressFilter {
            text: Some(TextRange {
                start: 0x1000,
                end: 0x2000,
            }),
            alias: None,
            kernel_only: false,
        }
    }

    /// leaf (sampled at LEAF+0x10, sp = STACK) ← outer (CFA = STACK+48) ← kmain (CFA =
    /// STACK+80, whose saved return address is 0: the outermost frame).
    fn stack(arch: Arch) -> (SampleRegisters, FakeStack) {
        let mut m = HashMap::new();
        let leaf_cfa = match arch {
            Arch::X86_64 => {
                m.insert(STACK, OUTER + 0x50); // pushed by outer's call
                STACK + 8
            }
            _ => STACK,
        };
        m.insert(leaf_cfa + 48 - 8, KMAIN + 0x50); // outer's saved return address
        let kmain_cfa = leaf_cfa + 48 + 32;
        m.insert(kmain_cfa - 8, 0);
        m.insert(kmain_cfa - 16, 0);
        let link = (arch != Arch::X86_64).then_some(OUTER + 0x50);
        (
            SampleRegisters {
                sp: STACK,
                fp: 0xdead_0000, // fp is a general register here: never followed
                link,
            },
            FakeStack(m),
        )
    }

    #[test]
    fn every_arch_unwinds_a_frame_pointerless_stack_to_its_end() {
        for arch in [Arch::Riscv64, Arch::Loongarch64, Arch::X86_64] {
            let table = CfiTable::from_debug_frame(debug_frame(arch), arch);
            assert_eq!(table.functions(), 3, "{arch:?}");
            let (regs, memory) = stack(arch);
            let (trace, stop) = unwind(
                &table,
                LEAF + 0x10,
                regs,
                FrameState::Established,
                &memory,
                &filter(),
                64,
            );
            assert_eq!(
                trace,
                [LEAF + 0x10, OUTER + 0x50, KMAIN + 0x50],
                "{arch:?} {stop:?}"
            );
            assert_eq!(stop, StopReason::End, "{arch:?}");
        }
    }

    #[test]
    fn rules_follow_the_prologue_instruction_by_instruction() {
        let table = CfiTable::from_debug_frame(debug_frame(Arch::Riscv64), Arch::Riscv64);
        let at = |address| table.compute_rules(address).unwrap();
        // outer's entry: nothing allocated yet, ra still in the register.
        assert_eq!(
            at(OUTER),
            Rules {
                cfa: Cfa::Sp(0),
                return_address: Saved::InRegister,
                fp: Saved::InRegister
            }
        );
        // After `addi sp,sp,-48`, before the store of ra.
        assert_eq!(at(OUTER + 4).cfa, Cfa::Sp(48));
        assert_eq!(at(OUTER + 4).return_address, Saved::InRegister);
        // After the store.
        assert_eq!(at(OUTER + 8).return_address, Saved::AtCfa(-8));
        assert_eq!(at(KMAIN + 8).fp, Saved::AtCfa(-16));
        assert_eq!(table.compute_rules(ASM), None, "no FDE");
    }

    #[test]
    fn limits_bad_reads_and_foreign_return_addresses_end_the_walk_with_their_reason() {
        let arch = Arch::Riscv64;
        let table = CfiTable::from_debug_frame(debug_frame(arch), arch);
        let (regs, memory) = stack(arch);
        let f = filter();
        let at = |memory: &FakeStack, depth| {
            unwind(
                &table,
                LEAF + 0x10,
                regs,
                FrameState::Established,
                memory,
                &f,
                depth,
            )
        };
        assert_eq!(
            at(&memory, 2),
            (vec![LEAF + 0x10, OUTER + 0x50], StopReason::DepthLimit)
        );
        let mut unreadable = FakeStack(memory.0.clone());
        unreadable.0.remove(&(STACK + 40));
        assert_eq!(
            at(&unreadable, 64),
            (vec![LEAF + 0x10, OUTER + 0x50], StopReason::BadRead)
        );
        let mut user = FakeStack(memory.0.clone());
        user.0.insert(STACK + 40, 0x40_0000);
        assert_eq!(
            at(&user, 64),
            (vec![LEAF + 0x10, OUTER + 0x50], StopReason::LeftKernelText)
        );
        // A return into code without CFI whose frame-pointer chain ends at once: the end.
        let mut asm = FakeStack(memory.0.clone());
        asm.0.insert(STACK + 40, ASM + 0x10);
        let (trace, stop) = at(&asm, 64);
        assert_eq!(trace, [LEAF + 0x10, OUTER + 0x50, ASM + 0x10]);
        assert_eq!(stop, StopReason::CfiMissing, "fp 0xdead0000 leads nowhere");
    }

    #[test]
    fn a_leaf_without_cfi_falls_back_to_the_frame_pointer_rules() {
        let arch = Arch::Riscv64;
        let table = CfiTable::from_debug_frame(debug_frame(arch), arch);
        let (mut regs, memory) = stack(arch);
        regs.fp = 0;
        let (trace, stop) = unwind(
            &table,
            ASM + 4,
            regs,
            FrameState::BeforeFrame,
            &memory,
            &filter(),
            64,
        );
        // BeforeFrame: the caller from the link register, then the (empty) fp chain.
        assert_eq!(trace, [ASM + 4, OUTER + 0x50]);
        assert_eq!(stop, StopReason::CfiMissing);
    }
}
