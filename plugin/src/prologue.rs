//! Prologue and epilogue recognition: the [`FrameState`] of each sample site of a block,
//! decided once when QEMU translates it (see the rule in [`crate::unwind`]).
//!
//! Only the instructions compilers emit to build and tear down a frame record are
//! decoded (the `perfscope-frame-ops` crate, which perfscope uses too to see whether a
//! kernel keeps frame pointers); anything else keeps the state it had.
//!
//! Epilogues reload fp and ra in either order: gcc reloads ra first, clang fp first. After
//! clang's `ld fp` and until its `ld ra` the caller's return address is neither in a frame
//! `fp` points to nor in the link register, but still in the stack slot the coming reload
//! reads: those sites are [`FrameState::FpRestored`], and the unwinder finds the slot by
//! decoding the reload at sample time ([`return_address_reload`]).
//!
//! A block only starts in `BeforeFrame` when its first instruction opens a frame: a
//! function is entered by a call, which always starts a block, while a block starting
//! anywhere else is inside a function whose frame (if it has one) is already set.
//! With shrink-wrapping, blocks that run before a delayed prologue are taken as
//! established: on riscv64/loongarch64 they lose the direct caller; on x86_64 the
//! frameless-function rule of [`crate::unwind`] recovers it (direct calls only).

use perfscope_frame_ops::{FrameOp, instruction_length};

use crate::unwind::{Arch, FrameState};

fn frame_op(arch: Arch, bytes: &[u8]) -> FrameOp {
    perfscope_frame_ops::frame_op(arch.isa(), bytes)
}

/// The state before each instruction of a block, given the instructions' bytes in order.
pub fn block_frame_states<B: AsRef<[u8]>>(arch: Arch, instructions: &[B]) -> Vec<FrameState> {
    let ops: Vec<FrameOp> = instructions.iter().map(|i| frame_op(arch, i.as_ref())).collect();
    let mut states = Vec::with_capacity(ops.len());
    let mut state = match ops.first() {
        Some(FrameOp::OpenFrame) => FrameState::BeforeFrame,
        _ => FrameState::Established,
    };
    for (i, op) in ops.iter().enumerate() {
        states.push(state);
        state = match op {
            FrameOp::SetFp => FrameState::Established,
            // clang's order: the return address is reloaded later in this block.
            FrameOp::RestoreFp if ops[i + 1..].iter().any(|o| matches!(o, FrameOp::RestoreRa(_))) => {
                FrameState::FpRestored
            }
            FrameOp::RestoreFp => FrameState::BeforeFrame,
            FrameOp::RestoreRa(_) if state == FrameState::FpRestored => FrameState::BeforeFrame,
            // x86_64: after `push %rbp` the return address is at [rsp+8] until
            // `mov %rsp,%rbp` (gcc schedules other instructions in between).
            FrameOp::OpenFrame if arch == Arch::X86_64 && instructions[i].as_ref() == [0x55] => {
                FrameState::FpPushed
            }
            FrameOp::OpenFrame | FrameOp::RestoreRa(_) | FrameOp::Other => state,
        };
    }
    states
}

/// The stack offset of the return-address reload among the first instructions of `code`
/// (what runs next at an [`FrameState::FpRestored`] site), if one comes before anything
/// else that touches the frame.
pub fn return_address_reload(arch: Arch, code: &[u8]) -> Option<i64> {
    let mut at = 0;
    while at < code.len() {
        let len = instruction_length(arch.isa(), &code[at..])?;
        let insn = &code[at..at + len];
        match frame_op(arch, insn) {
            FrameOp::RestoreRa(offset) => return Some(offset),
            FrameOp::Other => at += len,
            _ => return None,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use FrameState::{BeforeFrame as B, Established as E, FpPushed as P, FpRestored as R};

    fn le(insn: u32) -> Vec<u8> {
        insn.to_le_bytes().to_vec()
    }

    #[test]
    fn riscv_gcc_leaf_prologue_and_epilogue_compressed() {
        // mix_leaf as gcc -O2 emits it: c.addi sp,-16 (addi16sp) ; c.sdsp s0,8(sp) ;
        // c.addi4spn s0,sp,16 ; c.li a5,0 ; … ; c.ldsp s0,8(sp) ; c.addi sp,16 ; c.jr ra
        let block: Vec<Vec<u8>> = [0x1141u16, 0xe422, 0x0800, 0x4781]
            .iter()
            .map(|h| h.to_le_bytes().to_vec())
            .collect();
        assert_eq!(block_frame_states(Arch::Riscv64, &block), vec![B, B, B, E]);
        let tail: Vec<Vec<u8>> = [0x853eu16, 0x6422, 0x0141, 0x8082]
            .iter()
            .map(|h| h.to_le_bytes().to_vec())
            .collect();
        assert_eq!(block_frame_states(Arch::Riscv64, &tail), vec![E, E, B, B]);
    }

    #[test]
    fn riscv_32bit_forms() {
        // addi sp,sp,-32 ; sd ra,24(sp) ; sd s0,16(sp) ; addi s0,sp,32 ; ld s0,16(sp)
        let block = [
            le(0xfe010113),
            le(0x00113c23),
            le(0x00813823),
            le(0x02010413),
            le(0x01013403),
            le(0x00000013),
        ];
        assert_eq!(block_frame_states(Arch::Riscv64, &block), vec![B, B, B, B, E, B]);
        // addi sp,sp,32 (positive) does not open a frame.
        assert_eq!(block_frame_states(Arch::Riscv64, &[le(0x02010113)]), vec![E]);
    }

    #[test]
    fn loongarch_forms() {
        // addi.d $sp,$sp,-16 ; st.d $ra,$sp,8 ; addi.d $fp,$sp,16 ; ld.d $fp,$sp,0
        let open = 0x02c0_0000 | ((0xff0u32) << 10) | (3 << 5) | 3;
        let set_fp = 0x02c0_0000 | (16 << 10) | (3 << 5) | 22;
        let restore = 0x28c0_0000 | (3 << 5) | 22;
        let block = [
            le(open),
            le(0x29c0_2061),
            le(set_fp),
            le(restore),
            le(0x4c00_0020),
        ];
        assert_eq!(block_frame_states(Arch::Loongarch64, &block), vec![B, B, B, E, B]);
    }

    #[test]
    fn clang_epilogue_reloads_fp_before_ra() {
        // hash_block's epilogue as zig's clang emits it: ld.d $s1,$sp,0 ; ld.d $s0,$sp,8 ;
        // ld.d $fp,$sp,16 ; ld.d $ra,$sp,24 ; addi.d $sp,$sp,32 ; ret
        let ld = |rd: u32, off: u32| le(0x28c0_0000 | (off << 10) | (3 << 5) | rd);
        let block = [
            ld(24, 0),
            ld(23, 8),
            ld(22, 16),
            ld(1, 24),
            le(0x02c0_0000 | (32 << 10) | (3 << 5) | 3),
            le(0x4c00_0020),
        ];
        assert_eq!(
            block_frame_states(Arch::Loongarch64, &block),
            vec![E, E, E, R, B, B]
        );
        let code: Vec<u8> = block[3..].concat();
        assert_eq!(return_address_reload(Arch::Loongarch64, &code), Some(24));
        // gcc's order (ra first): the fp reload ends the frame, ra is live.
        let gcc = [ld(1, 24), ld(22, 16), le(0x4c00_0020)];
        assert_eq!(block_frame_states(Arch::Loongarch64, &gcc), vec![E, E, B]);
        // riscv64: ld s0,16(sp) ; c.ldsp ra,24(sp) (0x60e2) ; ret
        let rv: Vec<Vec<u8>> = vec![
            le(0x01013403),
            0x60e2u16.to_le_bytes().to_vec(),
            0x8082u16.to_le_bytes().to_vec(),
        ];
        assert_eq!(block_frame_states(Arch::Riscv64, &rv), vec![E, R, B]);
        assert_eq!(return_address_reload(Arch::Riscv64, &rv[1..].concat()), Some(24));
        assert_eq!(return_address_reload(Arch::Riscv64, &le(0x00813083)), Some(8)); // ld ra,8(sp)
        // Anything that touches the frame first: no reload to trust.
        assert_eq!(
            return_address_reload(Arch::Loongarch64, &[ld(22, 16), ld(1, 24)].concat()),
            None
        );
    }

    #[test]
    fn x86_push_rbp_entry_and_leave() {
        let block: Vec<Vec<u8>> = vec![
            vec![0xf3, 0x0f, 0x1e, 0xfa],
            vec![0x55],
            vec![0x48, 0x89, 0xe5],
            vec![0x90],
        ];
        assert_eq!(block_frame_states(Arch::X86_64, &block), vec![B, B, P, E]);
        // gcc schedules work between the push and the mov (hash_workload): still pushed.
        let scheduled: Vec<Vec<u8>> = vec![
            vec![0x55],
            vec![0x45, 0x31, 0xd2],
            vec![0x45, 0x31, 0xdb],
            vec![0x48, 0x89, 0xe5],
            vec![0x53],
        ];
        assert_eq!(block_frame_states(Arch::X86_64, &scheduled), vec![B, P, P, P, E]);
        let tail: Vec<Vec<u8>> = vec![vec![0x90], vec![0xc9], vec![0xc3]];
        assert_eq!(block_frame_states(Arch::X86_64, &tail), vec![E, E, B]);
        let empty: [Vec<u8>; 0] = [];
        assert!(block_frame_states(Arch::X86_64, &empty).is_empty());
    }
}
