//! `--call-graph dwarf` at ingest: each sample's user registers and stack copy become the
//! user part of its call chain, in place of the frame pointer walk the kernel no longer
//! does (`exclude_callchain_user`); the kernel part stays the kernel's callchain.
//!
//! The unwinding runs here, on the thread that drains the rings, as each sample is read:
//! the copy (8 KiB by default) is read where it lies in the ring and the ring's space is
//! given back at once. Handing the copies to the resolver thread instead would move every
//! byte again and park them in its queue (1024 batches deep, so gigabytes while a big
//! file's DWARF loads there); unwinding needs only the files' `.eh_frame` tables, which
//! load in milliseconds, never their names. What comes out is a few return addresses,
//! exactly what a frame pointer sample hands over, so the resolver names both alike.

use std::time::Instant;

use crate::sources::perf_event::record::{MappedFile, Record, Sample};
use crate::sources::perf_event::user_stack::{ABI_64, UserRegs, reg};
use crate::symbols::host::FileKey;
use crate::symbols::host::unwind::{UnwinderOptions, UserRegisters, UserUnwinder, WalkEnd};

use super::sampling::SampleCounters;

/// The unwinder and what the side-band records tell it.
pub struct DwarfStacks {
    unwinder: UserUnwinder,
}

impl Default for DwarfStacks {
    fn default() -> Self {
        Self::new()
    }
}

impl DwarfStacks {
    pub fn new() -> DwarfStacks {
        DwarfStacks {
            unwinder: UserUnwinder::new(UnwinderOptions::default()),
        }
    }

    /// Keep the processes' mappings current (call with every record, in ring order).
    pub fn on_record(&mut self, record: &Record<'_>) {
        match record {
            Record::Mmap2(m) => {
                let file = match m.file {
                    MappedFile::Inode { maj, min, ino, .. } => Some(FileKey::new(maj, min, ino)),
                    MappedFile::BuildId(_) => None,
                };
                let path = String::from_utf8_lossy(m.filename);
                self.unwinder.on_mmap(m.pid, m.addr, m.len, m.pgoff, &path, file);
            }
            Record::Comm(c) if c.exec => self.unwinder.on_exec(c.pid),
            Record::Fork(t) if t.pid != t.ppid => self.unwinder.on_fork(t.ppid, t.pid),
            Record::Exit(t) if t.pid == t.tid => self.unwinder.on_exit(t.pid),
            _ => {}
        }
    }

    /// The user frames of `sample` of process `pid`, leaf first (the sampled user address,
    /// then return addresses), counting what its stack copy cost into `counters`.
    pub fn user_frames(&mut self, pid: u32, sample: &Sample<'_>, counters: &mut SampleCounters) -> Vec<u64> {
        let stack = sample.user_stack.unwrap_or_default();
        counters.stack_samples += 1;
        counters.stack_bytes += stack.copied.len() as u64;
        counters.stack_used_bytes += stack.data().len() as u64;
        let Some(regs) = sample.user_regs.and_then(|r| unwind_registers(&r)) else {
            // A kernel thread (no user registers), or a 32-bit process: the sampled user
            // address at most, as its registers give it.
            return sample
                .user_regs
                .and_then(|r| r.get(PC))
                .filter(|&pc| pc != 0)
                .into_iter()
                .collect();
        };
        let started = Instant::now();
        let mut frames = Vec::new();
        let end = self.unwinder.unwind(pid, regs, stack.data(), &mut frames);
        counters.unwind_ns += started.elapsed().as_nanos() as u64;
        counters.user_frames += frames.len() as u64;
        if end == WalkEnd::Root {
            counters.unwound_to_root += 1;
        }
        frames
    }
}

#[cfg(target_arch = "aarch64")]
const PC: u32 = reg::PC;
#[cfg(not(target_arch = "aarch64"))]
const PC: u32 = reg::IP;

/// The registers a walk starts from, for a 64-bit process whose registers were sampled.
fn unwind_registers(regs: &UserRegs<'_>) -> Option<UserRegisters> {
    if regs.abi != ABI_64 {
        return None;
    }
    #[cfg(target_arch = "aarch64")]
    let (fp, lr) = (regs.get(reg::FP)?, regs.get(reg::LR)?);
    #[cfg(not(target_arch = "aarch64"))]
    let (fp, lr) = (regs.get(reg::BP)?, 0);
    Some(UserRegisters {
        pc: regs.get(PC)?,
        sp: regs.get(reg::SP)?,
        fp,
        lr,
    })
}
