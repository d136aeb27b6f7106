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

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::model::stack_copies::StackCopies;
use crate::sources::perf_event::record::{MappedFile, Record, Sample};
use crate::sources::perf_event::user_stack::{ABI_64, UserRegs, reg};
use crate::symbols::host::FileKey;
use crate::symbols::host::unwind::{UnwinderOptions, UserRegisters, UserUnwinder, WalkEnd};

use super::sample_counters::SampleCounters;

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

/// The model's facts from the reader's counters: `stack_bytes` asked per sample, `elapsed`
/// since sampling began, the copies' recent rate.
pub fn stack_copies(
    counters: &SampleCounters,
    stack_bytes: u32,
    elapsed: Duration,
    bytes_per_sec: f64,
) -> StackCopies {
    StackCopies {
        stack_bytes,
        samples: counters.stack_samples,
        copied_bytes: counters.stack_bytes,
        used_bytes: counters.stack_used_bytes,
        unwound_to_root: counters.unwound_to_root,
        user_frames: counters.user_frames,
        unwind_ns: counters.unwind_ns,
        elapsed_ns: u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX),
        bytes_per_sec,
        lost_records: counters.lost,
    }
}

/// The span the recent rate of the copies is taken over.
const RATE_WINDOW: Duration = Duration::from_secs(1);

/// The stack copies' recent rate, from the running total at each batch.
#[derive(Default)]
pub struct CopyRate {
    points: VecDeque<(Instant, u64)>,
}

impl CopyRate {
    /// Note the total at `now`; bytes per second since the oldest point still within
    /// about a second (0 until two points are apart).
    pub fn note(&mut self, now: Instant, total_bytes: u64) -> f64 {
        self.points.push_back((now, total_bytes));
        while self.points.len() > 2 && now.duration_since(self.points[1].0) >= RATE_WINDOW {
            self.points.pop_front();
        }
        let Some(&(then, before)) = self.points.front() else {
            return 0.0;
        };
        let seconds = now.duration_since(then).as_secs_f64();
        if seconds <= 0.0 {
            return 0.0;
        }
        total_bytes.saturating_sub(before) as f64 / seconds
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rate_is_taken_over_about_the_last_second() {
        let start = Instant::now();
        let at = |ms: u64| start + Duration::from_millis(ms);
        let mut rate = CopyRate::default();
        assert_eq!(rate.note(at(0), 0), 0.0);
        // 1 MB every 100 ms: 10 MB/s.
        for step in 1..=10u64 {
            let r = rate.note(at(step * 100), step * 1_000_000);
            assert!((r - 1e7).abs() < 1.0, "{step}: {r}");
        }
        // The copies stop: the rate falls to 0 within the window, not over the session.
        rate.note(at(1500), 10_000_000);
        let r = rate.note(at(2600), 10_000_000);
        assert_eq!(r, 0.0);
    }

    #[test]
    fn the_facts_come_from_the_readers_counters() {
        let counters = SampleCounters {
            samples: 10,
            lost: 2,
            stack_samples: 10,
            stack_bytes: 81_920,
            stack_used_bytes: 20_000,
            user_frames: 70,
            unwound_to_root: 9,
            unwind_ns: 30_000,
            ..SampleCounters::default()
        };
        let facts = stack_copies(&counters, 8192, Duration::from_millis(10), 123.0);
        assert_eq!(
            facts,
            StackCopies {
                stack_bytes: 8192,
                samples: 10,
                copied_bytes: 81_920,
                used_bytes: 20_000,
                unwound_to_root: 9,
                user_frames: 70,
                unwind_ns: 30_000,
                elapsed_ns: 10_000_000,
                bytes_per_sec: 123.0,
                lost_records: 2,
            }
        );
    }
}
