//! Frame-pointer unwinding per architecture, and the rule for the return-address register.
//!
//! Frame records (what the compiler's prologue stores, and where the frame pointer points):
//!
//! | arch        | fp reg | record            | layout                                  |
//! |-------------|--------|-------------------|-----------------------------------------|
//! | riscv64     | `fp`   | `fp - 16`         | `[fp-16]` = caller's fp, `[fp-8]` = ra  |
//! | loongarch64 | `r22`  | `fp - 16`         | same                                    |
//! | x86_64      | `rbp`  | `rbp`             | `[rbp]` = caller's rbp, `[rbp+8]` = ret |
//!
//! # The return-address register rule
//!
//! A frame-pointer walk is only right when `fp` belongs to the function being sampled. It
//! does not before that function's prologue has set `fp` (its first block: exactly where a
//! TB-start sampler lands on every call) or after its epilogue restored the caller's `fp`.
//! There `fp` is still the caller's, so the walk starts at the *grand*-caller and the
//! direct caller is lost, unless we take it from where the call left it: the link register
//! (`ra` on riscv64, `r1` on loongarch64) or, on x86_64, the top of the stack `[rsp]`.
//!
//! Reading the link register everywhere would be wrong twice over: inside an established
//! frame it either equals the record's saved return address (a duplicate) or is stale (it
//! points after the last call this function made). Comparing values cannot tell these
//! cases from recursion, where a real caller legitimately has the same return address as
//! its own caller. So the decision is taken from the code instead: when QEMU translates a
//! block, [`crate::prologue`] decodes its instructions and marks each sample site
//! [`FrameState::Established`] or [`FrameState::BeforeFrame`] (block starts with the
//! stack-pointer decrement of a prologue; in insn mode also instructions after the
//! prologue's `sp` decrement and before it sets `fp`, and after the epilogue reloads
//! `fp`). Only `BeforeFrame` sites use the link register, and there it is by construction
//! the direct caller and not in the walk yet, so there is nothing to de-duplicate. An
//! epilogue that reloads `fp` before `ra` (clang) leaves a window where the link register
//! still holds the return address of this function's last call: those sites are
//! [`FrameState::FpRestored`], whose return address is read from the slot the coming `ra`
//! reload reads.
//!
//! One more case on riscv64/loongarch64: gcc 12 builds leaf functions with
//! `-fno-omit-frame-pointer` by saving only `fp` (at `fp-8`) and never `ra`: a leaf makes no
//! call, so its return address stays in the link register for its whole body. Such a
//! frame is recognised by `[fp-8]` holding a stack address just above `fp` (a saved frame
//! pointer) instead of code; its return address is then the link register, which is
//! live because the function could not have made a call without saving it.
//!
//! x86_64 has no link register; its `BeforeFrame` return address is `[rsp]` (pushed by
//! `call`, popped by `ret`), which is exact at a `push %rbp` entry and after `pop %rbp`;
//! between `push %rbp` and `mov %rsp,%rbp` ([`FrameState::FpPushed`]) it is `[rsp+8]`.
//!
//! # x86_64 functions without a frame
//!
//! gcc (12, `-O2 -fno-omit-frame-pointer`) gives *no* frame to a leaf that needs no stack
//! (mix_leaf): `-mno-omit-leaf-frame-pointer` does not change that. Shrink-wrapping also
//! runs the first blocks of a function (a test and an early return) before its delayed
//! `push %rbp`. In both, `rbp` is the caller's and `rsp` is unchanged since the call, so
//! `[rsp]` is the return address, but no instruction at hand says so. The code does, at
//! sample time: a return address follows a `call rel32` (`e8`) whose target is the entry
//! of the function called. If `[rsp]` is such an address whose call target `T` is at or
//! below the pc, the sampled function starts at or after `T`; if the record at `rbp`
//! returns from a call whose target is below `T` or above the pc, that record cannot be
//! the sampled function's own, so the function has no frame yet and `[rsp]` is its
//! caller. In an established frame the record's target is the function's own entry, and
//! a stale `[rsp]` slot would need a call target inside the function's body: the rule does
//! not fire (tail calls and indirect calls are outside it; it then adds nothing).

use crate::filter::AddressFilter;

/// Guest architectures with a known frame-record layout.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Arch {
    Riscv64,
    Loongarch64,
    X86_64,
}

/// Where the caller's frame pointer and the return address sit relative to `fp`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct FrameLayout {
    /// Added to `fp` to get the 16-byte record `[saved fp, return address]`.
    pub record_offset: i64,
}

/// QEMU's (gdb) register names for one architecture.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RegisterNames {
    pub sp: &'static str,
    pub fp: &'static str,
    /// `None` where the return address is on the stack (x86_64).
    pub link: Option<&'static str>,
}

impl Arch {
    /// From QEMU's `target_name`.
    pub fn from_target(name: &str) -> Option<Arch> {
        match name {
            "riscv64" => Some(Arch::Riscv64),
            "loongarch64" => Some(Arch::Loongarch64),
            "x86_64" => Some(Arch::X86_64),
            _ => None,
        }
    }

    pub fn layout(self) -> FrameLayout {
        match self {
            Arch::Riscv64 | Arch::Loongarch64 => FrameLayout { record_offset: -16 },
            Arch::X86_64 => FrameLayout { record_offset: 0 },
        }
    }

    pub fn registers(self) -> RegisterNames {
        match self {
            Arch::Riscv64 => RegisterNames {
                sp: "sp",
                fp: "fp",
                link: Some("ra"),
            },
            Arch::Loongarch64 => RegisterNames {
                sp: "r3",
                fp: "r22",
                link: Some("r1"),
            },
            Arch::X86_64 => RegisterNames {
                sp: "rsp",
                fp: "rbp",
                link: None,
            },
        }
    }

    /// The instruction set, for the frame-instruction decoder.
    pub fn isa(self) -> perfscope_frame_ops::Isa {
        match self {
            Arch::Riscv64 => perfscope_frame_ops::Isa::Riscv64,
            Arch::Loongarch64 => perfscope_frame_ops::Isa::Loongarch64,
            Arch::X86_64 => perfscope_frame_ops::Isa::X86_64,
        }
    }

    /// Whether leaves may save only the frame pointer (the gcc riscv/loongarch case above).
    fn has_fp_only_leaf_frames(self) -> bool {
        matches!(self, Arch::Riscv64 | Arch::Loongarch64)
    }
}

/// Whether, at a sample site, the frame pointer already belongs to the sampled function.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FrameState {
    Established,
    /// Before the prologue set `fp` or after the epilogue restored it: the direct caller's
    /// return address is in the link register (or at `[sp]` on x86_64).
    BeforeFrame,
    /// x86_64 after `push %rbp`, before `mov %rsp,%rbp`: the return address is at `[rsp+8]`.
    FpPushed,
    /// riscv64/loongarch64 between an epilogue's `fp` reload and its later `ra` reload
    /// (clang's order): the return address is in the stack slot that reload reads.
    FpRestored,
}

/// The registers read at sample time.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct SampleRegisters {
    pub sp: u64,
    pub fp: u64,
    /// The link register; `None` on x86_64 or when it could not be read.
    pub link: Option<u64>,
}

/// Guest memory of the sampled vCPU.
pub trait GuestMemory {
    fn read_u64(&self, address: u64) -> Option<u64>;
    /// `[address]` and `[address + 8]` in one read.
    fn read_pair(&self, address: u64) -> Option<(u64, u64)>;
}

/// A saved frame pointer lies a little above the current one (stacks grow down); a code
/// address does not. 1 MiB is far more than any kernel frame.
const MAX_FRAME_BYTES: u64 = 1 << 20;

fn looks_like_saved_fp(value: u64, fp: u64, filter: &AddressFilter) -> bool {
    value > fp && value - fp <= MAX_FRAME_BYTES && value.is_multiple_of(8) && !filter.is_kernel_code(value)
}

/// The trace `[leaf, return_1, …]`, at most `max_depth` entries, leaf = `pc`.
pub fn unwind(
    arch: Arch,
    pc: u64,
    regs: SampleRegisters,
    state: FrameState,
    memory: &dyn GuestMemory,
    filter: &AddressFilter,
    max_depth: usize,
) -> Vec<u64> {
    let mut trace = Vec::with_capacity(max_depth.min(32));
    trace.push(pc);
    // A leaf outside the kernel (firmware, user space) runs on a stack that is not the
    // kernel's: its frame pointers lead to values the kernel's physical alias would give
    // kernel names. Such a sample is its leaf alone (the host names it by region).
    if max_depth <= 1 || (filter.text.is_some() && !filter.is_kernel_code(pc)) {
        return trace;
    }
    let mut fp = regs.fp;
    match state {
        FrameState::BeforeFrame => {
            let caller = match arch.registers().link {
                Some(_) => regs.link,
                None => memory.read_u64(regs.sp),
            };
            // A link value that is no kernel code (with filter_kernel) means the site was
            // misclassified or the register is garbage: keep the walk, drop the value.
            if let Some(ret) = caller.and_then(|ret| filter.return_address(ret)) {
                trace.push(ret);
            }
        }
        FrameState::FpPushed => {
            if let Some(ret) = regs
                .sp
                .checked_add(8)
                .and_then(|slot| memory.read_u64(slot))
                .and_then(|ret| filter.return_address(ret))
            {
                trace.push(ret);
            }
        }
        FrameState::FpRestored => {
            if let Some(ret) =
                pending_return_address(arch, pc, regs.sp, memory).and_then(|ret| filter.return_address(ret))
            {
                trace.push(ret);
            }
        }
        FrameState::Established if arch == Arch::X86_64 => {
            if let Some(ret) = frameless_caller(pc, regs, memory, filter) {
                trace.push(ret);
            }
        }
        FrameState::Established if arch.has_fp_only_leaf_frames() => {
            // The gcc leaf frame: `[fp-8]` is the caller's fp, the return address is in ra.
            if let Some(slot) = fp.checked_sub(8).and_then(|a| memory.read_u64(a))
                && looks_like_saved_fp(slot, fp, filter)
            {
                match regs.link.and_then(|ret| filter.return_address(ret)) {
                    Some(ret) => trace.push(ret),
                    None => return trace,
                }
                fp = slot;
            }
        }
        FrameState::Established => {}
    }
    walk_frames(arch.layout(), fp, memory, filter, max_depth, &mut trace);
    trace
}

/// The return address an epilogue is about to reload: the code at `pc` decoded for its
/// `ld ra, N(sp)`, then `[sp + N]`.
fn pending_return_address(arch: Arch, pc: u64, sp: u64, memory: &dyn GuestMemory) -> Option<u64> {
    let (a, b) = memory.read_pair(pc)?;
    let code = [a.to_le_bytes(), b.to_le_bytes()].concat();
    let offset = crate::prologue::return_address_reload(arch, &code)?;
    memory.read_u64(sp.checked_add_signed(offset)?)
}

/// The target of the x86_64 `call rel32` that returns to `ret`, canonical; `None` when the
/// five bytes before `ret` are not one (an indirect call, or not a return address).
fn direct_call_target(ret: u64, memory: &dyn GuestMemory, filter: &AddressFilter) -> Option<u64> {
    let call = memory.read_u64(ret.checked_sub(5)?)?.to_le_bytes();
    if call[0] != 0xe8 {
        return None;
    }
    let rel = i32::from_le_bytes([call[1], call[2], call[3], call[4]]);
    filter.sample_ip(ret.wrapping_add_signed(i64::from(rel)))
}

/// x86_64: the caller of a function sampled before it has a frame (the rule in the module
/// docs), or `None` when the frame at `rbp` may be the sampled function's own.
fn frameless_caller(
    pc: u64,
    regs: SampleRegisters,
    memory: &dyn GuestMemory,
    filter: &AddressFilter,
) -> Option<u64> {
    let ret = memory.read_u64(regs.sp)?;
    let callee = direct_call_target(ret, memory, filter)?;
    if callee > pc {
        return None;
    }
    let (_, record_ret) = memory.read_pair(regs.fp)?;
    let record_callee = direct_call_target(record_ret, memory, filter)?;
    if record_callee < callee || record_callee > pc {
        filter.return_address(ret)
    } else {
        None
    }
}

/// Follow frame records from `fp` until the chain ends, leaves the kernel, stops growing
/// towards higher addresses (which also rules out loops), or `max_depth` is reached.
pub fn walk_frames(
    layout: FrameLayout,
    mut fp: u64,
    memory: &dyn GuestMemory,
    filter: &AddressFilter,
    max_depth: usize,
    trace: &mut Vec<u64>,
) {
    while trace.len() < max_depth {
        if fp == 0 || !fp.is_multiple_of(8) {
            return;
        }
        let Some(record) = fp.checked_add_signed(layout.record_offset) else {
            return;
        };
        let Some((saved_fp, ret)) = memory.read_pair(record) else {
            return;
        };
        let Some(ret) = filter.return_address(ret) else {
            return;
        };
        trace.push(ret);
        if saved_fp <= fp {
            return;
        }
        fp = saved_fp;
    }
}

/// Guest memory for unit tests: 8-byte words by address (unwind's and cfi's tests).
#[cfg(test)]
pub struct FakeStack(pub std::collections::HashMap<u64, u64>);

#[cfg(test)]
impl GuestMemory for FakeStack {
    fn read_u64(&self, address: u64) -> Option<u64> {
        self.0.get(&address).copied()
    }
    fn read_pair(&self, address: u64) -> Option<(u64, u64)> {
        Some((self.read_u64(address)?, self.read_u64(address + 8)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::TextRange;
    use std::collections::HashMap;

    const TEXT: u64 = 0xffffffc080200000;
    const STACK: u64 = 0xffffffc080210000;

    fn kernel_filter() -> AddressFilter {
        AddressFilter {
            text: Some(TextRange {
                start: TEXT,
                end: TEXT + 0x1000,
            }),
            alias: None,
            kernel_only: true,
        }
    }

    /// run_bench (fp = STACK+0x100, returns to kmain) ← hash_workload (fp = STACK+0x80)
    /// ← hash_block (fp = STACK+0x40), riscv records at fp-16; kmain's record ends the chain.
    fn riscv_chain() -> FakeStack {
        let mut m = HashMap::new();
        let mut record = |fp: u64, saved: u64, ret: u64| {
            m.insert(fp - 16, saved);
            m.insert(fp - 8, ret);
        };
        record(STACK + 0x40, STACK + 0x80, TEXT + 0x300); // hash_block → hash_workload
        record(STACK + 0x80, STACK + 0x100, TEXT + 0x400); // hash_workload → run_bench
        record(STACK + 0x100, 0, TEXT + 0x500); // run_bench → kmain
        FakeStack(m)
    }

    #[test]
    fn a_leaf_outside_the_kernel_is_not_walked() {
        // OpenSBI's frame: its fp chain holds values inside the kernel's alias.
        let filter = AddressFilter {
            alias: Some(crate::filter::AliasRange {
                start: 0x8020_0000,
                end: 0x8020_1000,
                offset: TEXT - 0x8020_0000,
            }),
            kernel_only: false,
            ..kernel_filter()
        };
        let mut m = HashMap::new();
        m.insert(0x8004_0000 - 16, 0x8004_0100);
        m.insert(0x8004_0000 - 8, 0x8020_0300);
        let regs = SampleRegisters {
            sp: 0x8003_ff00,
            fp: 0x8004_0000,
            link: Some(0x8020_0210),
        };
        for state in [
            FrameState::Established,
            FrameState::BeforeFrame,
            FrameState::FpPushed,
        ] {
            let trace = unwind(
                Arch::Riscv64,
                0x8000_1234,
                regs,
                state,
                &FakeStack(m.clone()),
                &filter,
                128,
            );
            assert_eq!(trace, vec![0x8000_1234], "{state:?}");
        }
        // The same frame in the kernel's alias is walked (early boot, MMU off).
        let trace = unwind(
            Arch::Riscv64,
            0x8020_0100,
            regs,
            FrameState::BeforeFrame,
            &FakeStack(m),
            &filter,
            128,
        );
        assert_eq!(trace[..2], [0x8020_0100, TEXT + 0x210]);
    }

    /// clang's epilogue in mix_leaf's caller hash_block, sampled after `ld.d $fp` and before
    /// `ld.d $ra,$sp,24`: fp is already hash_workload's, ra is still the return into
    /// hash_block from its last call, and the return address is at [sp+24].
    #[test]
    fn fp_restored_takes_the_return_address_from_the_pending_reload() {
        let mut stack = riscv_chain().0;
        let pc = TEXT + 0x2f0;
        let ld_ra = 0x28c0_0000u32 | (24 << 10) | (3 << 5) | 1;
        let addi_sp = 0x02c0_0000u32 | (32 << 10) | (3 << 5) | 3;
        stack.insert(pc, u64::from(ld_ra) | u64::from(addi_sp) << 32);
        stack.insert(pc + 8, 0x4c00_0020);
        let sp = STACK + 0x20;
        stack.insert(sp + 24, TEXT + 0x300); // hash_block's saved ra: into hash_workload
        let regs = SampleRegisters {
            sp,
            fp: STACK + 0x80,
            link: Some(TEXT + 0x2ec), // stale: the return from mix_leaf into hash_block
        };
        let trace = unwind(
            Arch::Loongarch64,
            pc,
            regs,
            FrameState::FpRestored,
            &FakeStack(stack),
            &kernel_filter(),
            128,
        );
        assert_eq!(trace, vec![pc, TEXT + 0x300, TEXT + 0x400, TEXT + 0x500]);
    }

    #[test]
    fn established_frame_ignores_a_stale_ra() {
        let regs = SampleRegisters {
            sp: STACK + 0x20,
            fp: STACK + 0x40,
            link: Some(TEXT + 0x210),
        };
        let trace = unwind(
            Arch::Riscv64,
            TEXT + 0x200,
            regs,
            FrameState::Established,
            &riscv_chain(),
            &kernel_filter(),
            128,
        );
        assert_eq!(
            trace,
            vec![TEXT + 0x200, TEXT + 0x300, TEXT + 0x400, TEXT + 0x500]
        );
    }

    #[test]
    fn before_the_prologue_ra_is_the_direct_caller() {
        // mix_leaf's entry block: fp is still hash_block's, ra returns into hash_block.
        let regs = SampleRegisters {
            sp: STACK + 0x30,
            fp: STACK + 0x40,
            link: Some(TEXT + 0x210),
        };
        let trace = unwind(
            Arch::Riscv64,
            TEXT + 0x100,
            regs,
            FrameState::BeforeFrame,
            &riscv_chain(),
            &kernel_filter(),
            128,
        );
        assert_eq!(
            trace,
            vec![
                TEXT + 0x100,
                TEXT + 0x210,
                TEXT + 0x300,
                TEXT + 0x400,
                TEXT + 0x500
            ]
        );
    }

    #[test]
    fn recursion_keeps_equal_return_addresses() {
        // tree_walk called from tree_walk at the same call site as its own caller.
        let mut m = riscv_chain().0;
        m.insert(STACK + 0x40 - 8, TEXT + 0x210);
        let regs = SampleRegisters {
            sp: STACK + 0x30,
            fp: STACK + 0x40,
            link: Some(TEXT + 0x210),
        };
        let trace = unwind(
            Arch::Riscv64,
            TEXT + 0x200,
            regs,
            FrameState::BeforeFrame,
            &FakeStack(m),
            &kernel_filter(),
            128,
        );
        assert_eq!(&trace[..3], &[TEXT + 0x200, TEXT + 0x210, TEXT + 0x210]);
    }

    #[test]
    fn gcc_leaf_frame_uses_ra_then_the_saved_fp() {
        // mix_leaf after its prologue: fp = STACK+0x30, [fp-8] = hash_block's fp, no ra saved.
        let mut m = riscv_chain().0;
        m.insert(STACK + 0x30 - 16, 0x1234); // padding
        m.insert(STACK + 0x30 - 8, STACK + 0x40);
        let regs = SampleRegisters {
            sp: STACK + 0x20,
            fp: STACK + 0x30,
            link: Some(TEXT + 0x210),
        };
        let trace = unwind(
            Arch::Riscv64,
            TEXT + 0x120,
            regs,
            FrameState::Established,
            &FakeStack(m),
            &kernel_filter(),
            128,
        );
        assert_eq!(
            trace,
            vec![
                TEXT + 0x120,
                TEXT + 0x210,
                TEXT + 0x300,
                TEXT + 0x400,
                TEXT + 0x500
            ]
        );
    }

    #[test]
    fn x86_uses_rbp_records_and_rsp_at_entry() {
        let mut m = HashMap::new();
        m.insert(STACK + 0x40, STACK + 0x80); // [rbp] = caller's rbp
        m.insert(STACK + 0x48, TEXT + 0x300); // [rbp+8] = return
        m.insert(STACK + 0x80, 0);
        m.insert(STACK + 0x88, TEXT + 0x400);
        m.insert(STACK + 0x10, TEXT + 0x210); // [rsp] at entry
        let memory = FakeStack(m);
        let regs = SampleRegisters {
            sp: STACK + 0x10,
            fp: STACK + 0x40,
            link: None,
        };
        let entry = unwind(
            Arch::X86_64,
            TEXT + 0x100,
            regs,
            FrameState::BeforeFrame,
            &memory,
            &kernel_filter(),
            128,
        );
        assert_eq!(
            entry,
            vec![TEXT + 0x100, TEXT + 0x210, TEXT + 0x300, TEXT + 0x400]
        );
        let body = unwind(
            Arch::X86_64,
            TEXT + 0x100,
            regs,
            FrameState::Established,
            &memory,
            &kernel_filter(),
            128,
        );
        assert_eq!(body, vec![TEXT + 0x100, TEXT + 0x300, TEXT + 0x400]);
    }

    /// `call rel32` at `ret - 5` to `target`, as the guest's code bytes.
    fn call_site(m: &mut HashMap<u64, u64>, ret: u64, target: u64) {
        let rel = (target.wrapping_sub(ret) as i64) as i32;
        let mut bytes = [0u8; 8];
        bytes[0] = 0xe8;
        bytes[1..5].copy_from_slice(&rel.to_le_bytes());
        m.insert(ret - 5, u64::from_le_bytes(bytes));
    }

    /// gcc's x86_64 bench: hash_block (TEXT+0x200, framed) calls the frameless `leaf` and
    /// returns to TEXT+0x240; hash_workload (TEXT+0x300) calls hash_block, returning to
    /// TEXT+0x340; run_bench (TEXT+0x400) calls hash_workload, returning to TEXT+0x440.
    /// hash_block's frame is at STACK+0x40, hash_workload's at STACK+0x80 (ends the chain).
    fn x86_bench(leaf: u64) -> HashMap<u64, u64> {
        let mut m = HashMap::new();
        call_site(&mut m, TEXT + 0x240, leaf);
        call_site(&mut m, TEXT + 0x340, TEXT + 0x200);
        call_site(&mut m, TEXT + 0x440, TEXT + 0x300);
        m.insert(STACK + 0x40, STACK + 0x80);
        m.insert(STACK + 0x48, TEXT + 0x340);
        m.insert(STACK + 0x80, 0);
        m.insert(STACK + 0x88, TEXT + 0x440);
        m
    }

    fn x86_unwind(pc: u64, sp: u64, fp: u64, state: FrameState, m: HashMap<u64, u64>) -> Vec<u64> {
        let regs = SampleRegisters { sp, fp, link: None };
        unwind(
            Arch::X86_64,
            pc,
            regs,
            state,
            &FakeStack(m),
            &kernel_filter(),
            128,
        )
    }

    #[test]
    fn x86_frameless_leaf_takes_its_caller_from_rsp() {
        // The leaf below its caller in memory (as gcc lays out the test kernel) and above.
        for leaf in [TEXT + 0x100, TEXT + 0x600] {
            let mut m = x86_bench(leaf);
            m.insert(STACK + 0x10, TEXT + 0x240); // [rsp]: the call's return address
            let trace = x86_unwind(
                leaf + 0x20,
                STACK + 0x10,
                STACK + 0x40,
                FrameState::Established,
                m,
            );
            assert_eq!(
                trace,
                vec![leaf + 0x20, TEXT + 0x240, TEXT + 0x340, TEXT + 0x440],
                "leaf at {leaf:#x}"
            );
        }
    }

    #[test]
    fn x86_shrink_wrapped_entry_before_push_rbp_keeps_its_caller() {
        // hash_block's first block (test; jle) runs on hash_workload's rbp.
        let mut m = x86_bench(TEXT + 0x100);
        m.insert(STACK + 0x78, TEXT + 0x340);
        let trace = x86_unwind(
            TEXT + 0x200,
            STACK + 0x78,
            STACK + 0x80,
            FrameState::Established,
            m,
        );
        assert_eq!(trace, vec![TEXT + 0x200, TEXT + 0x340, TEXT + 0x440]);
    }

    #[test]
    fn x86_established_frame_ignores_a_stale_return_address_at_rsp() {
        // In hash_block's body, [rsp] still holds the leaf's old return address: the record
        // at rbp returns from a call to hash_block itself, so it is hash_block's frame.
        let mut m = x86_bench(TEXT + 0x100);
        m.insert(STACK + 0x30, TEXT + 0x240);
        let trace = x86_unwind(
            TEXT + 0x220,
            STACK + 0x30,
            STACK + 0x40,
            FrameState::Established,
            m,
        );
        assert_eq!(trace, vec![TEXT + 0x220, TEXT + 0x340, TEXT + 0x440]);
    }

    #[test]
    fn x86_after_push_rbp_the_return_address_is_above_it() {
        let mut m = x86_bench(TEXT + 0x100);
        m.insert(STACK + 0x38, STACK + 0x80); // the pushed rbp
        m.insert(STACK + 0x40, TEXT + 0x340); // the return address (a fresh stack slot here)
        let trace = x86_unwind(TEXT + 0x208, STACK + 0x38, STACK + 0x80, FrameState::FpPushed, m);
        assert_eq!(trace, vec![TEXT + 0x208, TEXT + 0x340, TEXT + 0x440]);
    }

    #[test]
    fn walk_stops_at_depth_non_kernel_code_and_loops() {
        let regs = SampleRegisters {
            sp: STACK,
            fp: STACK + 0x40,
            link: None,
        };
        let trace = unwind(
            Arch::Riscv64,
            TEXT,
            regs,
            FrameState::Established,
            &riscv_chain(),
            &kernel_filter(),
            2,
        );
        assert_eq!(trace.len(), 2);
        let mut m = riscv_chain().0;
        m.insert(STACK + 0x80 - 8, 0x8000_1000); // OpenSBI
        let trace = unwind(
            Arch::Riscv64,
            TEXT,
            regs,
            FrameState::Established,
            &FakeStack(m),
            &kernel_filter(),
            128,
        );
        assert_eq!(trace, vec![TEXT, TEXT + 0x300]);
        let mut m = riscv_chain().0;
        m.insert(STACK + 0x40 - 16, STACK + 0x40); // a record pointing at itself
        let trace = unwind(
            Arch::Riscv64,
            TEXT,
            regs,
            FrameState::Established,
            &FakeStack(m),
            &kernel_filter(),
            128,
        );
        assert_eq!(trace, vec![TEXT, TEXT + 0x300]);
        let misaligned = SampleRegisters {
            fp: STACK + 0x41,
            ..regs
        };
        let trace = unwind(
            Arch::Riscv64,
            TEXT,
            misaligned,
            FrameState::Established,
            &riscv_chain(),
            &kernel_filter(),
            128,
        );
        assert_eq!(trace, vec![TEXT]);
    }
}
