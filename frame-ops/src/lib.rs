//! What an instruction does to a stack frame, for the three guest architectures perfscope
//! unwinds: the prologue and epilogue instructions compilers emit to build and tear down a
//! frame record. Shared by the QEMU plugin (which decides, per translated block, whether a
//! sample site's frame pointer is its function's) and perfscope (which checks whether a
//! kernel image keeps frame pointers at all), so both read the same instructions the same
//! way. Plain decoding of untrusted bytes: no allocation, never panics.
//!
//! - riscv64 (RV64GC): `addi sp,sp,-N` / `c.addi sp,-N` / `c.addi16sp` (open a frame),
//!   `addi s0,sp,N` / `c.addi4spn s0,sp,N` (set fp), `ld s0,N(sp)` / `c.ldsp s0` (restore
//!   fp), `ld ra,N(sp)` / `c.ldsp ra` (restore the return address).
//! - loongarch64: `addi.d $sp,$sp,-N`, `addi.d $fp,$sp,N`, `ld.d $fp,$sp,N`, `ld.d $ra,$sp,N`.
//! - x86_64: `push %rbp` (or `endbr64`) at entry, `mov %rsp,%rbp`, `pop %rbp` / `leave`.

/// An instruction set whose frame instructions are known.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Isa {
    Riscv64,
    Loongarch64,
    X86_64,
}

/// What one instruction does to the frame.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FrameOp {
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

/// What the instruction in `bytes` (exactly one instruction: x86_64 matches whole
/// instructions; riscv64 and loongarch64 read its first 2 or 4 bytes) does to the frame.
pub fn frame_op(isa: Isa, bytes: &[u8]) -> FrameOp {
    match isa {
        Isa::Riscv64 => riscv64_op(bytes),
        Isa::Loongarch64 => loongarch64_op(bytes),
        Isa::X86_64 => x86_64_op(bytes),
    }
}

/// The length of the instruction at the start of `code` where the encoding says it
/// (riscv64: 2 or 4 bytes, loongarch64: 4); `None` for x86_64 (no decoder here) or too
/// few bytes.
pub fn instruction_length(isa: Isa, code: &[u8]) -> Option<usize> {
    let len = match isa {
        Isa::Riscv64 if *code.first()? & 3 != 3 => 2,
        Isa::Riscv64 | Isa::Loongarch64 => 4,
        Isa::X86_64 => return None,
    };
    (code.len() >= len).then_some(len)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn le(insn: u32) -> [u8; 4] {
        insn.to_le_bytes()
    }

    #[test]
    fn riscv64_frame_instructions_in_both_encodings() {
        let rv = |bytes: &[u8]| frame_op(Isa::Riscv64, bytes);
        assert_eq!(rv(&le(0xfe010113)), FrameOp::OpenFrame); // addi sp,sp,-32
        assert_eq!(rv(&le(0x02010113)), FrameOp::Other); // addi sp,sp,32
        assert_eq!(rv(&le(0x02010413)), FrameOp::SetFp); // addi s0,sp,32
        assert_eq!(rv(&le(0x01013403)), FrameOp::RestoreFp); // ld s0,16(sp)
        assert_eq!(rv(&le(0x00813083)), FrameOp::RestoreRa(8)); // ld ra,8(sp)
        assert_eq!(rv(&0x1141u16.to_le_bytes()), FrameOp::OpenFrame); // c.addi sp,-16
        assert_eq!(rv(&0x0800u16.to_le_bytes()), FrameOp::SetFp); // c.addi4spn s0,sp,16
        assert_eq!(rv(&0x6422u16.to_le_bytes()), FrameOp::RestoreFp); // c.ldsp s0,8(sp)
        assert_eq!(rv(&0x60e2u16.to_le_bytes()), FrameOp::RestoreRa(24)); // c.ldsp ra,24(sp)
        assert_eq!(rv(&[0x13]), FrameOp::Other, "truncated");
        assert_eq!(rv(&[]), FrameOp::Other);
    }

    #[test]
    fn loongarch64_and_x86_64_frame_instructions() {
        let la = |insn| frame_op(Isa::Loongarch64, &le(insn));
        assert_eq!(la(0x02c0_0000 | (0xff0 << 10) | (3 << 5) | 3), FrameOp::OpenFrame);
        assert_eq!(la(0x02c0_0000 | (16 << 10) | (3 << 5) | 22), FrameOp::SetFp);
        assert_eq!(la(0x28c0_0000 | (3 << 5) | 22), FrameOp::RestoreFp);
        assert_eq!(
            la(0x28c0_0000 | (24 << 10) | (3 << 5) | 1),
            FrameOp::RestoreRa(24)
        );
        assert_eq!(frame_op(Isa::Loongarch64, &[0, 0]), FrameOp::Other, "truncated");
        let x86 = |bytes: &[u8]| frame_op(Isa::X86_64, bytes);
        assert_eq!(x86(&[0x55]), FrameOp::OpenFrame);
        assert_eq!(x86(&[0x48, 0x89, 0xe5]), FrameOp::SetFp);
        assert_eq!(x86(&[0xc9]), FrameOp::RestoreFp);
        assert_eq!(x86(&[0x55, 0x48]), FrameOp::Other, "whole instructions only");
    }

    #[test]
    fn instruction_lengths_come_from_the_encoding() {
        assert_eq!(
            instruction_length(Isa::Riscv64, &0x1141u16.to_le_bytes()),
            Some(2)
        );
        assert_eq!(instruction_length(Isa::Riscv64, &le(0xfe010113)), Some(4));
        assert_eq!(
            instruction_length(Isa::Riscv64, &[0x13, 0x01]),
            None,
            "a cut 4-byte one"
        );
        assert_eq!(instruction_length(Isa::Loongarch64, &le(0)), Some(4));
        assert_eq!(instruction_length(Isa::X86_64, &[0x55]), None);
        assert_eq!(instruction_length(Isa::Riscv64, &[]), None);
    }
}
