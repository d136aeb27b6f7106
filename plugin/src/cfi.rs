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
//! The table, what it reads and what it costs: [`crate::cfi_table`].
//!
//! # Where a walk ends
//!
//! - At an undefined return-address rule or a zero return address: the outermost frame.
//! - Before a return address that is the first instruction of a function: no call
//!   returns there; it is a task entered by a context switch with its return address set
//!   to its own entry (StarryOS's `TaskContext::init`), whose frame is the one just walked
//!   (the return into its body), the task's root. Named one byte earlier it would be the
//!   function before it, and the rules there are that function's, which say nothing about
//!   this stack.
//! - At a return address outside the kernel text ([`AddressFilter::return_address`]).
//! - At a return address without CFI: hand-written assembly, typically the trap entry's
//!   return label after its call into the handler, the root of a trap's stack, or the
//!   boot code that called the kernel's main. The kernel is unwound with CFI because it
//!   keeps no frame pointers, so its frame-pointer register there holds whatever the
//!   interrupted code kept in it (a data pointer): a frame-pointer walk from it would read
//!   data as return addresses. Counted as [`StopReason::End`] when the unwound frame
//!   pointer is zero (an entry point that cleared it), else [`StopReason::CfiMissing`].
//!
//! # Leaves without CFI
//!
//! An assembly function's entry (a block starting with the stack-pointer decrement of a
//! prologue, [`FrameState::BeforeFrame`]) still has its caller's return address in the link
//! register (x86_64: at `[rsp]`, or `[rsp+8]` after `push %rbp`), and the stack pointer is
//! the caller's: the walk continues from there with CFI. Anywhere else in assembly nothing
//! says where the return address is, and the sample is its leaf alone.

use crate::cfi_table::{Cfa, CfiTable, Saved};
use crate::filter::AddressFilter;
use crate::unwind::{Arch, FrameState, GuestMemory, SampleRegisters};

/// Why an unwind ended; counted per sample and written to the sidecar.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// The outermost frame: a zero return address, an undefined return address rule (what
    /// CFI says at a thread's first frame), or a task's entry function.
    End,
    /// An address with no CFI (assembly, such as the trap entry, or outside the ELF's FDEs).
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

/// The caller of an assembly leaf without CFI, and the stack pointer at its call: known
/// only at a function's entry (see the module docs).
fn caller_of_asm_leaf(
    arch: Arch,
    regs: SampleRegisters,
    state: FrameState,
    memory: &dyn GuestMemory,
) -> Option<(u64, u64)> {
    match (arch, state) {
        (Arch::X86_64, FrameState::BeforeFrame) => Some((memory.read_u64(regs.sp)?, regs.sp.checked_add(8)?)),
        (Arch::X86_64, FrameState::FpPushed) => Some((
            memory.read_u64(regs.sp.checked_add(8)?)?,
            regs.sp.checked_add(16)?,
        )),
        (Arch::Riscv64 | Arch::Loongarch64, FrameState::BeforeFrame) => Some((regs.link?, regs.sp)),
        _ => None,
    }
}

/// The two words at `cfa + low`, the lower first.
fn read_pair_at(memory: &dyn GuestMemory, cfa: u64, low: i64) -> Option<(u64, u64)> {
    memory.read_pair(cfa.checked_add_signed(low)?)
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
    // A leaf outside the kernel (firmware, user space) runs on a stack the kernel's CFI
    // does not describe: its leaf alone.
    if filter.text.is_some() && !filter.is_kernel_code(pc) {
        return (vec![pc], StopReason::LeftKernelText);
    }
    let mut trace = Vec::with_capacity(max_depth.min(32));
    trace.push(pc);
    let (mut pc, mut sp, mut fp) = (pc, regs.sp, regs.fp);
    let mut link = regs.link;
    if table.rules(pc).is_none() {
        let Some((ret, caller_sp)) = caller_of_asm_leaf(table.arch, regs, state, memory) else {
            return (trace, StopReason::CfiMissing);
        };
        if trace.len() >= max_depth {
            return (trace, StopReason::DepthLimit);
        }
        let Some(ret) = filter.return_address(ret) else {
            return (trace, StopReason::LeftKernelText);
        };
        if table.starts_function(ret) {
            return (trace, StopReason::End);
        }
        trace.push(ret);
        (pc, sp, link) = (ret, caller_sp, None);
    }
    loop {
        if trace.len() >= max_depth {
            return (trace, StopReason::DepthLimit);
        }
        // A return address is looked up at the call, one byte before it.
        let lookup = if trace.len() == 1 { pc } else { pc - 1 };
        let Some(rules) = table.rules(lookup) else {
            // Assembly. The unwound frame pointer is what that code had in it: zero where
            // an entry point cleared it to end the chain (boot, a new CPU or task), so the
            // stack is whole; anything else (a trap entry) is counted as code without CFI.
            let reason = if trace.len() > 1 && fp == 0 {
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
        // Prologues store the return address and the saved fp side by side: one guest read
        // for both (a fifth of a dwarf sample's cost on the test kernel).
        let pair = match (rules.return_address, rules.fp) {
            (Saved::AtCfa(ra), Saved::AtCfa(fp)) if ra - fp == 8 => read_pair_at(memory, cfa, fp),
            (Saved::AtCfa(ra), Saved::AtCfa(fp)) if fp - ra == 8 => {
                read_pair_at(memory, cfa, ra).map(|(ret, fp)| (fp, ret))
            }
            _ => None,
        };
        let ret = match rules.return_address {
            Saved::AtCfa(_) if pair.is_some() => pair.map(|(_, ret)| ret),
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
            Saved::AtCfa(_) if pair.is_some() => pair.map(|(fp, _)| fp),
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
        let Some(ret) = filter.return_address(ret) else {
            return (trace, StopReason::LeftKernelText);
        };
        if table.starts_function(ret) {
            return (trace, StopReason::End);
        }
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

    use gimli::{LittleEndian, Register};

    use super::*;
    use crate::cfi_table::{Rules, dwarf_registers};
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

    /// [`FakeStack`] counting the guest reads a walk makes.
    struct CountingStack(FakeStack, std::cell::Cell<usize>);

    impl GuestMemory for CountingStack {
        fn read_u64(&self, address: u64) -> Option<u64> {
            self.1.set(self.1.get() + 1);
            self.0.read_u64(address)
        }
        fn read_pair(&self, address: u64) -> Option<(u64, u64)> {
            self.1.set(self.1.get() + 1);
            self.0.read_pair(address)
        }
    }

    #[test]
    fn a_return_address_beside_the_saved_fp_takes_one_read() {
        // riscv64: outer saves ra only (one read); kmain saves ra at CFA-8 and fp at CFA-16
        // (one read for both, which the walk needs to see kmain's zero return address).
        let arch = Arch::Riscv64;
        let table = CfiTable::from_debug_frame(debug_frame(arch), arch);
        let (regs, memory) = stack(arch);
        let counting = CountingStack(memory, std::cell::Cell::new(0));
        let (trace, stop) = unwind(
            &table,
            LEAF + 0x10,
            regs,
            FrameState::Established,
            &counting,
            &filter(),
            64,
        );
        assert_eq!(
            (trace, stop),
            (vec![LEAF + 0x10, OUTER + 0x50, KMAIN + 0x50], StopReason::End)
        );
        assert_eq!(counting.1.get(), 2);
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
        // A return into code without CFI (a trap entry's return label) is the root.
        let mut asm = FakeStack(memory.0.clone());
        asm.0.insert(STACK + 40, ASM + 0x10);
        let (trace, stop) = at(&asm, 64);
        assert_eq!(trace, [LEAF + 0x10, OUTER + 0x50, ASM + 0x10]);
        assert_eq!(stop, StopReason::CfiMissing, "fp 0xdead0000: a trap entry's");
        // Boot code that cleared the frame pointer before calling in: a whole stack.
        let booted = SampleRegisters { fp: 0, ..regs };
        let (trace, stop) = unwind(&table, LEAF + 0x10, booted, FrameState::Established, &asm, &f, 64);
        assert_eq!((trace.len(), stop), (3, StopReason::End));
    }

    /// What the interrupted code of a kernel without frame pointers leaves in the fp
    /// register: a pointer to data that reads as a frame record whose "return address" is
    /// a data address in the image (`DATA`) or a function pointer (`OUTER`).
    fn fake_record(memory: &mut FakeStack, fp: u64, ret: u64) {
        memory.0.insert(fp - 16, fp + 0x100); // riscv64's record: [fp-16], [fp-8]
        memory.0.insert(fp - 8, ret);
        memory.0.insert(fp + 0x100 - 16, 0);
        memory.0.insert(fp + 0x100 - 8, 0);
    }

    const DATA: u64 = 0x3000; // outside the text

    #[test]
    fn a_return_address_without_cfi_is_not_followed_through_the_fp_register() {
        let arch = Arch::Riscv64;
        let table = CfiTable::from_debug_frame(debug_frame(arch), arch);
        let (mut regs, memory) = stack(arch);
        for garbage in [DATA, OUTER] {
            let mut m = FakeStack(memory.0.clone());
            m.0.insert(STACK + 40, ASM + 0x10); // outer returns into the trap entry
            regs.fp = 0x9000;
            fake_record(&mut m, regs.fp, garbage);
            let (trace, stop) = unwind(
                &table,
                LEAF + 0x10,
                regs,
                FrameState::Established,
                &m,
                &filter(),
                64,
            );
            assert_eq!(trace, [LEAF + 0x10, OUTER + 0x50, ASM + 0x10], "{garbage:#x}");
            assert_eq!(stop, StopReason::CfiMissing);
        }
    }

    #[test]
    fn a_return_address_at_a_function_start_ends_the_walk() {
        // A task entered with ra = outer's entry (task_entry in StarryOS): outer's saved
        // return address is OUTER itself; the rules one byte before it are kmain's.
        let arch = Arch::Riscv64;
        let table = CfiTable::from_debug_frame(debug_frame(arch), arch);
        let (regs, mut memory) = stack(arch);
        memory.0.insert(STACK + 40, OUTER);
        let (trace, stop) = unwind(
            &table,
            LEAF + 0x10,
            regs,
            FrameState::Established,
            &memory,
            &filter(),
            64,
        );
        assert_eq!(trace, [LEAF + 0x10, OUTER + 0x50]);
        assert_eq!(stop, StopReason::End);
        assert!(table.starts_function(OUTER) && !table.starts_function(OUTER + 4));
    }

    #[test]
    fn a_return_address_in_kernel_data_ends_the_walk_unfiltered_too() {
        let arch = Arch::Riscv64;
        let table = CfiTable::from_debug_frame(debug_frame(arch), arch);
        let (regs, mut memory) = stack(arch);
        memory.0.insert(STACK + 40, DATA);
        let unfiltered = AddressFilter {
            kernel_only: false,
            ..filter()
        };
        let (trace, stop) = unwind(
            &table,
            LEAF + 0x10,
            regs,
            FrameState::Established,
            &memory,
            &unfiltered,
            64,
        );
        assert_eq!(
            (trace, stop),
            (vec![LEAF + 0x10, OUTER + 0x50], StopReason::LeftKernelText)
        );
    }

    #[test]
    fn an_assembly_leaf_at_its_entry_continues_from_its_caller_and_elsewhere_is_alone() {
        for arch in [Arch::Riscv64, Arch::Loongarch64, Arch::X86_64] {
            let table = CfiTable::from_debug_frame(debug_frame(arch), arch);
            let (mut regs, mut memory) = stack(arch);
            // At the assembly function's entry: its caller (outer) from the link register
            // or [rsp], then outer's CFI from the stack pointer of the call.
            let entry = unwind(
                &table,
                ASM + 4,
                regs,
                FrameState::BeforeFrame,
                &memory,
                &filter(),
                64,
            );
            assert_eq!(
                entry,
                (vec![ASM + 4, OUTER + 0x50, KMAIN + 0x50], StopReason::End),
                "{arch:?}"
            );
            // Inside it: a pointer in the fp register that reads as a record is not one.
            regs.fp = 0x9000;
            if arch == Arch::X86_64 {
                memory.0.insert(regs.fp, regs.fp + 0x100);
                memory.0.insert(regs.fp + 8, DATA);
            } else {
                fake_record(&mut memory, regs.fp, DATA);
            }
            let body = unwind(
                &table,
                ASM + 8,
                regs,
                FrameState::Established,
                &memory,
                &filter(),
                64,
            );
            assert_eq!(body, (vec![ASM + 8], StopReason::CfiMissing), "{arch:?}");
        }
    }
}
