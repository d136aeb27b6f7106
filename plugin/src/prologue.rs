//! Prologue and epilogue recognition: the [`FrameState`] of each sample site of a block,
//! decided once when QEMU translates it (see the rule in [`crate::unwind`]).
//!
//! Only the instructions compilers emit to build and tear down a frame record are
//! decoded; anything else keeps the state it had:
//!
//! - riscv64 (RV64GC): `addi sp,sp,-N` / `c.addi sp,-N` / `c.addi16sp` (entry), `addi s0,sp,N` /
//!   `c.addi4spn s0,sp,N` (fp set), `ld s0,N(sp)` / `c.ldsp s0` (fp restored), `ld ra,N(sp)` /
//!   `c.ldsp ra` (return address restored).
//! - loongarch64: `addi.d $sp,$sp,-N`, `addi.d $fp,$sp,N`, `ld.d $fp,$sp,N`, `ld.d $ra,$sp,N`.
//! - x86_64: `push %rbp` (optionally after `endbr64`) at entry, `mov %rsp,%rbp`,
//!   `pop %rbp` / `leave`.
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

use crate::unwind::{Arch, FrameState};

/// What one instruction does to the frame.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum FrameOp {
    /// Allocates the stack frame: the first instruction of a prologue.
    OpenFrame,
    /// Points fp at the new frame: the frame is established after it.
    SetFp,
    /// Reloads the caller's fp: the frame is gone after it.
    RestoreFp,
    /// Reloads the return address from `[sp + offset]` into the link register.
    RestoreRa(i64),
    Other,
}

fn riscv64_op(bytes: &[u8]) -> FrameOp {
    if bytes.len() >= 4 && bytes[0] & 3 == 3 {
        let insn = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        let opcode = insn & 0x7f;
        let funct3 = (insn >> 12) & 7;
        let rd = (insn >> 7) & 31;
        let rs1 = (insn >> 15) & 31;
        let imm = (insn as i32) >> 20;
        return match (opcode, funct3, rd, rs1) {
            (0x13, 0, 2, 2) if imm < 0 => FrameOp::OpenFrame,
            (0x13, 0, 8, 2) => FrameOp::SetFp,
            (0x03, 3, 8, 2) => FrameOp::RestoreFp,
            (0x03, 3, 1, 2) => FrameOp::RestoreRa(i64::from(imm)),
            _ => FrameOp::Other,
        };
    }
    if bytes.len() < 2 {
        return FrameOp::Other;
    }
    let half = u16::from_le_bytes([bytes[0], bytes[1]]);
    let quadrant = half & 3;
    let funct3 = (half >> 13) & 7;
    let rd = (half >> 7) & 31;
    match (quadrant, funct3) {
        // c.addi sp,-N (what gcc emits for small frames) and c.addi16sp: rd = sp, bit 12
        // is the immediate's sign.
        (1, 0 | 3) if rd == 2 && half & (1 << 12) != 0 => FrameOp::OpenFrame,
        // c.addi4spn rd' = x8 (s0), non-zero immediate.
        (0, 0) if (half >> 2) & 7 == 0 && half & 0x1fe0 != 0 => FrameOp::SetFp,
        // c.ldsp s0 / ra; its offset is uimm[5] at bit 12, uimm[4:3] at 6:5, uimm[8:6] at 4:2.
        (2, 3) if rd == 8 => FrameOp::RestoreFp,
        (2, 3) if rd == 1 => {
            let h = u64::from(half);
            let offset = ((h >> 12) & 1) << 5 | ((h >> 5) & 3) << 3 | ((h >> 2) & 7) << 6;
            FrameOp::RestoreRa(offset as i64)
        }
        _ => FrameOp::Other,
    }
}

fn loongarch64_op(bytes: &[u8]) -> FrameOp {
    if bytes.len() < 4 {
        return FrameOp::Other;
    }
    let insn = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    let major = insn >> 22;
    let rd = insn & 31;
    let rj = (insn >> 5) & 31;
    // si12 in bits 21..10, sign-extended.
    let si12 = ((insn << 10) as i32) >> 20;
    match (major, rd, rj) {
        (0x00b, 3, 3) if si12 < 0 => FrameOp::OpenFrame, // addi.d $sp, $sp, -N
        (0x00b, 22, 3) => FrameOp::SetFp,                // addi.d $fp, $sp, N
        (0x0a3, 22, 3) => FrameOp::RestoreFp,            // ld.d $fp, $sp, N
        (0x0a3, 1, 3) => FrameOp::RestoreRa(i64::from(si12)), // ld.d $ra, $sp, N
        _ => FrameOp::Other,
    }
}

fn x86_64_op(bytes: &[u8]) -> FrameOp {
    match bytes {
        [0x55] | [0xf3, 0x0f, 0x1e, 0xfa] => FrameOp::OpenFrame, // push %rbp, endbr64
        [0x48, 0x89, 0xe5] | [0x48, 0x8b, 0xec] => FrameOp::SetFp, // mov %rsp,%rbp
        [0x5d] | [0xc9] => FrameOp::RestoreFp,                   // pop %rbp, leave
        _ => FrameOp::Other,
    }
}

fn frame_op(arch: Arch, bytes: &[u8]) -> FrameOp {
    match arch {
        Arch::Riscv64 => riscv64_op(bytes),
        Arch::Loongarch64 => loongarch64_op(bytes),
        Arch::X86_64 => x86_64_op(bytes),
    }
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
        let len = match arch {
            Arch::Riscv64 if code[at] & 3 != 3 => 2,
            Arch::Riscv64 | Arch::Loongarch64 => 4,
            Arch::X86_64 => return None,
        };
        let insn = code.get(at..at + len)?;
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
