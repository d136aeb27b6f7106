//! The executed instruction/block counters, at one inline operation per executed block.
//!
//! Two inline adds per block (blocks += 1, instructions += n) cost ≈0.2× guest slowdown
//! on the test kernel (bench 300, tb+leaf: 1.19× against 0.97× without them). Instead
//! every block bumps one counter chosen by its length in instructions: a per-vCPU
//! histogram of executed block lengths. Then at exit
//!   blocks       = Σ count[n]
//!   instructions = Σ n · count[n]
//! exactly, from a single add per block. QEMU caps a block at 512 guest instructions
//! (TCG_MAX_INSNS); a longer one (never seen) falls back to the two-add form on slot 0
//! plus a separate instruction counter, so the totals stay exact whatever QEMU does.

/// Longest block with a slot of its own.
pub const MAX_SLOT_LENGTH: usize = 512;

/// Scoreboard fields the counters take: slot 0 (longer blocks) + one per length, and the
/// instruction counter of the longer blocks.
pub const FIELDS: usize = MAX_SLOT_LENGTH + 2;

// Slot 0, slots 1..=512 and the long-block instruction counter.
const _: () = assert!(FIELDS > MAX_SLOT_LENGTH + 1);

/// Where a block of `n_insns` instructions is counted.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Slot {
    /// Add 1 to the slot of this length; nothing else.
    Length(usize),
    /// Add 1 to slot 0 and `n` to the long-block instruction counter.
    Long(u64),
}

pub fn slot_of(n_insns: usize) -> Slot {
    if (1..=MAX_SLOT_LENGTH).contains(&n_insns) {
        Slot::Length(n_insns)
    } else {
        Slot::Long(n_insns as u64)
    }
}

/// `(blocks, instructions)` from the summed slots (index = length, 0 = long blocks) and
/// the long-block instruction counter.
pub fn totals(slots: &[u64], long_instructions: u64) -> (u64, u64) {
    let blocks = slots.iter().fold(0u64, |sum, &count| sum.wrapping_add(count));
    let instructions = slots
        .iter()
        .enumerate()
        .skip(1)
        .fold(long_instructions, |sum, (length, &count)| {
            sum.wrapping_add(count.wrapping_mul(length as u64))
        });
    (blocks, instructions)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_length_a_block_can_have_gets_its_own_slot() {
        assert_eq!(slot_of(1), Slot::Length(1));
        assert_eq!(slot_of(MAX_SLOT_LENGTH), Slot::Length(MAX_SLOT_LENGTH));
        assert_eq!(slot_of(MAX_SLOT_LENGTH + 1), Slot::Long(513));
    }

    #[test]
    fn totals_recover_blocks_and_instructions_exactly() {
        // Executed: 10 blocks of 3, 2 of 512, 1 of 700 (a long block).
        let mut slots = vec![0u64; MAX_SLOT_LENGTH + 1];
        slots[3] = 10;
        slots[512] = 2;
        slots[0] = 1;
        assert_eq!(totals(&slots, 700), (13, 10 * 3 + 2 * 512 + 700));
        assert_eq!(totals(&vec![0; MAX_SLOT_LENGTH + 1], 0), (0, 0));
    }
}
