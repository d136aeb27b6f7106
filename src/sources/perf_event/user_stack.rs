//! The two sample fields `--call-graph dwarf` asks for: `PERF_SAMPLE_REGS_USER` (the
//! user-mode registers when the sample was taken) and `PERF_SAMPLE_STACK_USER` (a copy of
//! the user stack from the stack pointer up), borrowed from the record as it lies in the
//! ring. Unwinding them is not done here (see `symbols::host::unwind`).
//!
//! In a sample they come after the raw record (and the branch stack, which perfscope never
//! asks for), in this order:
//!
//! ```text
//! REGS_USER:  u64 abi; u64 regs[popcount(sample_regs_user)]   (no regs when abi == NONE)
//! STACK_USER: u64 size; u8 data[size]; u64 dyn_size           (no dyn_size when size == 0)
//! ```
//!
//! `size` is what the attr asked for (less when the record would pass 64 KiB), `dyn_size`
//! how much of it the kernel could copy (the stack may end before `size` bytes).

use perf_event_open_sys::bindings as b;

/// The largest `sample_stack_user` perf accepts: the record size is a u16, so more can
/// never fit (perf's `--call-graph dwarf,SIZE` limit).
pub const MAX_STACK_BYTES: u32 = 65528;

/// perf's default `--call-graph dwarf` copy.
pub const DEFAULT_STACK_BYTES: u32 = 8192;

/// `PERF_SAMPLE_REGS_ABI_NONE`: a kernel thread, no user registers.
pub const ABI_NONE: u64 = 0;
/// `PERF_SAMPLE_REGS_ABI_32`: a 32-bit process.
pub const ABI_32: u64 = 1;
/// `PERF_SAMPLE_REGS_ABI_64`.
pub const ABI_64: u64 = 2;

/// The registers an unwinder needs, by their `perf_regs.h` index.
#[cfg(target_arch = "x86_64")]
pub mod reg {
    pub const BP: u32 = 6;
    pub const SP: u32 = 7;
    pub const IP: u32 = 8;
}

/// The registers an unwinder needs, by their `perf_regs.h` index.
#[cfg(target_arch = "aarch64")]
pub mod reg {
    /// x29.
    pub const FP: u32 = 29;
    /// x30.
    pub const LR: u32 = 30;
    pub const SP: u32 = 31;
    pub const PC: u32 = 32;
}

/// Elsewhere no registers are sampled ([`UNWIND_REGS_MASK`] is 0): these only keep the
/// callers in one piece.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub mod reg {
    pub const BP: u32 = 63;
    pub const SP: u32 = 63;
    pub const IP: u32 = 63;
}

/// `sample_regs_user` for unwinding on this architecture: x86_64 ip, sp, bp; aarch64 pc,
/// sp, fp (x29), lr (x30). Nothing on other architectures (no DWARF unwinding there).
pub const UNWIND_REGS_MASK: u64 = {
    #[cfg(target_arch = "x86_64")]
    {
        (1 << reg::BP) | (1 << reg::SP) | (1 << reg::IP)
    }
    #[cfg(target_arch = "aarch64")]
    {
        (1 << reg::FP) | (1 << reg::LR) | (1 << reg::SP) | (1 << reg::PC)
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        0
    }
};

/// `PERF_SAMPLE_REGS_USER` of one sample.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct UserRegs<'a> {
    /// [`ABI_NONE`], [`ABI_32`] or [`ABI_64`].
    pub abi: u64,
    /// The attr's `sample_regs_user`: which registers `values` holds, lowest bit first.
    pub mask: u64,
    /// `popcount(mask)` u64 words (none when `abi` is [`ABI_NONE`]).
    values: &'a [u8],
}

impl<'a> UserRegs<'a> {
    pub fn new(abi: u64, mask: u64, values: &'a [u8]) -> UserRegs<'a> {
        UserRegs { abi, mask, values }
    }

    /// The value of register `index` (a `perf_regs.h` number), if it was sampled.
    pub fn get(&self, index: u32) -> Option<u64> {
        if index >= 64 || self.mask & (1 << index) == 0 {
            return None;
        }
        let slot = (self.mask & ((1u64 << index) - 1)).count_ones() as usize;
        let bytes = self.values.get(slot * 8..slot * 8 + 8)?;
        Some(u64::from_le_bytes(bytes.try_into().ok()?))
    }
}

/// `PERF_SAMPLE_STACK_USER` of one sample.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct UserStack<'a> {
    /// The `size` bytes the record carries (what the ring paid for).
    pub copied: &'a [u8],
    /// How many of them the kernel filled: the stack from the sampled stack pointer up.
    pub dyn_size: u64,
}

impl<'a> UserStack<'a> {
    /// The bytes that hold the stack (`copied` cut to `dyn_size`).
    pub fn data(&self) -> &'a [u8] {
        let len = usize::try_from(self.dyn_size)
            .unwrap_or(usize::MAX)
            .min(self.copied.len());
        &self.copied[..len]
    }
}

/// What reading the two fields did not find.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct UserTailError {
    /// The field that ran past the bytes.
    pub what: &'static str,
    /// The length (from the start of the bytes given) it needed.
    pub needed: usize,
}

/// The user registers and stack at the start of `bytes` (the part of a sample after its
/// raw record), as `sample_type` and `regs_mask` say they are there; `Ok` with the bytes
/// they took. `None` for a field the format lacks.
pub fn read_user_tail(
    bytes: &[u8],
    sample_type: u64,
    regs_mask: u64,
) -> Result<(Option<UserRegs<'_>>, Option<UserStack<'_>>, usize), UserTailError> {
    let has = |bit: u32| sample_type & u64::from(bit) != 0;
    let mut at = 0usize;
    let take = |at: &mut usize, len: usize, what: &'static str| -> Result<&[u8], UserTailError> {
        let end = at.checked_add(len).filter(|&end| end <= bytes.len());
        let end = end.ok_or(UserTailError {
            what,
            needed: at.saturating_add(len),
        })?;
        let slice = &bytes[*at..end];
        *at = end;
        Ok(slice)
    };
    let word = |at: &mut usize, what: &'static str| -> Result<u64, UserTailError> {
        let slice = take(at, 8, what)?;
        let mut word = [0u8; 8];
        word.copy_from_slice(slice);
        Ok(u64::from_le_bytes(word))
    };
    let regs = if has(b::PERF_SAMPLE_REGS_USER) {
        let abi = word(&mut at, "regs_user abi")?;
        let values = if abi == ABI_NONE {
            &[][..]
        } else {
            take(&mut at, regs_mask.count_ones() as usize * 8, "regs_user values")?
        };
        Some(UserRegs::new(abi, regs_mask, values))
    } else {
        None
    };
    let stack = if has(b::PERF_SAMPLE_STACK_USER) {
        let size = usize::try_from(word(&mut at, "stack_user size")?).unwrap_or(usize::MAX);
        let copied = take(&mut at, size, "stack_user data")?;
        let dyn_size = if size == 0 {
            0
        } else {
            word(&mut at, "stack_user dyn_size")?
        };
        Some(UserStack { copied, dyn_size })
    } else {
        None
    };
    Ok((regs, stack, at))
}

/// `--call-graph dwarf,SIZE`: the stack copy size perf accepts — a multiple of 8, from 8
/// to [`MAX_STACK_BYTES`] (decimal or `0x` hex) — or a sentence saying what to give.
pub fn parse_stack_bytes(text: &str) -> Result<u32, String> {
    let text = text.trim();
    let parsed = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse::<u64>(),
    };
    let Ok(size) = parsed else {
        return Err(format!(
            "dwarf stack size '{text}' is not a number: give bytes, e.g. dwarf,8192"
        ));
    };
    if size == 0 || size > u64::from(MAX_STACK_BYTES) {
        return Err(format!(
            "dwarf stack size {size} is out of range: give 8 to {MAX_STACK_BYTES} bytes (default {DEFAULT_STACK_BYTES})"
        ));
    }
    if !size.is_multiple_of(8) {
        return Err(format!(
            "dwarf stack size {size} is not a multiple of 8: try {}",
            size.next_multiple_of(8).min(u64::from(MAX_STACK_BYTES))
        ));
    }
    Ok(size as u32)
}

#[cfg(test)]
#[path = "user_stack_tests.rs"]
mod tests;
