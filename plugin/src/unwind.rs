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
//! the direct caller and not in the walk yet, so there is nothing to de-duplicate.
//!
//! One more case on riscv64/loongarch64: gcc 12 builds leaf functions with
//! `-fno-omit-frame-pointer` by saving only `fp` (at `fp-8`) and never `ra`: a leaf makes no
//! call, so its return address stays in the link register for its whole body. Such a
//! frame is recognised by `[fp-8]` holding a stack address just above `fp` (a saved frame
//! pointer) instead of code; its return address is then the link register, which is
//! live because the function could not have made a call without saving it.
//!
//! x86_64 has no link register; its `BeforeFrame` return address is `[rsp]` (pushed by
//! `call`, popped by `ret`), which is exact at a `push %rbp` entry and after `pop %rbp`.

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
    if max_depth <= 1 {
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

/// Follow frame records from `fp` until the chain ends, leaves the kernel, stops growing
/// towards higher addresses (which also rules out loops), or `max_depth` is reached.
fn walk_frames(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::TextRange;
    use std::collections::HashMap;

    struct FakeStack(HashMap<u64, u64>);

    impl GuestMemory for FakeStack {
        fn read_u64(&self, address: u64) -> Option<u64> {
            self.0.get(&address).copied()
        }
        fn read_pair(&self, address: u64) -> Option<(u64, u64)> {
            Some((self.read_u64(address)?, self.read_u64(address + 8)?))
        }
    }

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
