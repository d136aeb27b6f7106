//! Which instructions halt a vCPU until an interrupt: riscv64 `wfi`, loongarch64
//! `idle level`, x86_64 `hlt`. The blocks that contain one mark the vCPU as halting right
//! before it runs (an inline store, [`crate::instrument`]), so QEMU's vCPU idle callback can
//! tell the guest's idle time from QEMU's own stops (a vCPU created but not started yet, or
//! paused at `quit`), which call the same callback.

use crate::unwind::Arch;

/// riscv64 `wfi` (SYSTEM, funct12 0x105).
const RISCV_WFI: u32 = 0x1050_0073;
/// loongarch64 `idle level`: the opcode in bits 31..15, the level in 14..0.
const LOONGARCH_IDLE: u32 = 0x0648_8000;
const LOONGARCH_IDLE_MASK: u32 = 0xffff_8000;
/// x86_64 `hlt`.
const X86_HLT: u8 = 0xf4;

/// Whether the instruction in `bytes` (exactly one instruction) halts the vCPU.
pub fn halts(arch: Arch, bytes: &[u8]) -> bool {
    let word = || bytes.try_into().ok().map(u32::from_le_bytes);
    match arch {
        Arch::Riscv64 => word() == Some(RISCV_WFI),
        Arch::Loongarch64 => word().is_some_and(|w| w & LOONGARCH_IDLE_MASK == LOONGARCH_IDLE),
        Arch::X86_64 => bytes == [X86_HLT],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_halting_instructions_and_their_neighbours() {
        assert!(halts(Arch::Riscv64, &0x1050_0073u32.to_le_bytes()));
        assert!(!halts(Arch::Riscv64, &0x0000_0073u32.to_le_bytes()), "ecall");
        assert!(!halts(Arch::Riscv64, &[0x73, 0x00]), "cut short");
        assert!(halts(Arch::Loongarch64, &0x0648_8000u32.to_le_bytes()), "idle 0");
        assert!(halts(Arch::Loongarch64, &0x0648_8003u32.to_le_bytes()), "idle 3");
        assert!(!halts(Arch::Loongarch64, &0x0648_0000u32.to_le_bytes()));
        assert!(halts(Arch::X86_64, &[0xf4]));
        assert!(!halts(Arch::X86_64, &[0xf4, 0x90]), "one instruction only");
        assert!(!halts(Arch::X86_64, &[0x90]));
    }
}
