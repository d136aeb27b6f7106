//! Sampling: the per-vCPU flags a timer thread raises at `freq`, and what a vCPU does
//! when its flag is up (read registers, unwind, queue a record).
//!
//! The flags live in a QEMU scoreboard (one u64 per vCPU). Every instrumented block (or
//! instruction) carries a *conditional* callback on its vCPU's flag: QEMU emits the
//! `flag != 0` test inline in the generated code, so the host call happens only once per
//! tick (measured ≈1.07× guest slowdown, notes/environment.md §5, against ≈20× for the
//! reference's clock read + try_lock in every block). The callback clears the flag first.
//!
//! A vCPU halted in WFI/HLT/`idle` runs no block, so no callback can sample it: QEMU's vCPU
//! idle and resume callbacks mark it halted on the scoreboard, and each tick records a
//! halted vCPU as an idle sample itself (a record with callchain byte
//! [`crate::record::CALLCHAIN_IDLE`]): idle time is counted at the sampling rate. Only a
//! halt that follows a halting instruction counts ([`VcpuBoard::halting`]): QEMU calls the
//! same callback when it stops a vCPU itself.
//!
//! A tick that finds a running vCPU's flag still raised means that vCPU ran no instrumented
//! code for a whole period (firmware, user space, or filtered code): the tick is counted as
//! `skipped_samples` instead of being silently lost. The check and the clear race
//! harmlessly (a tick landing while the callback runs may count one skip too many).

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use crate::args::{CallchainMode, PluginArgs};
use crate::cfi::{self, StopReason};
use crate::cfi_table::CfiTable;
use crate::counters;
use crate::qemu::{self, RegisterHandle, VcpuU64};
use crate::record::Record;
use crate::unwind::{self, Arch, FrameState, GuestMemory, SampleRegisters};
use crate::writer::SampleQueue;

/// The register handles frame-pointer sampling reads.
#[derive(Copy, Clone, Debug)]
pub struct RegisterSet {
    pub sp: RegisterHandle,
    pub fp: RegisterHandle,
    pub link: Option<RegisterHandle>,
}

/// The scoreboard fields: the sampling flag, whether the vCPU is halted, and the
/// executed-block counters ([`crate::counters`]: one slot per block length, index 0 =
/// longer blocks).
#[derive(Clone)]
pub struct VcpuBoard {
    pub flag: VcpuU64,
    /// Non-zero between QEMU's vCPU idle and resume callbacks.
    pub idle: VcpuU64,
    /// Set by an inline store right before the vCPU runs a halting instruction (WFI, HLT,
    /// `idle`; [`crate::halt`]), cleared when it resumes or takes a sample: QEMU's idle
    /// callback is the guest's idle only then, not when QEMU stops a vCPU (created and not
    /// started yet, paused at `quit`).
    pub halting: VcpuU64,
    pub block_lengths: Vec<VcpuU64>,
    pub long_block_instructions: VcpuU64,
}

impl VcpuBoard {
    /// Lay the fields out over one scoreboard: flag, idle, halting, then the counters.
    pub fn new() -> Option<Self> {
        let mut fields = qemu::new_scoreboard(3 + counters::FIELDS)?;
        let long_block_instructions = fields.pop()?;
        let flag = fields.remove(0);
        let idle = fields.remove(0);
        let halting = fields.remove(0);
        Some(VcpuBoard {
            flag,
            idle,
            halting,
            block_lengths: fields,
            long_block_instructions,
        })
    }

    /// `(executed blocks, executed instructions)` over all vCPUs.
    pub fn executed(&self) -> (u64, u64) {
        let slots: Vec<u64> = self.block_lengths.iter().map(|slot| slot.sum()).collect();
        counters::totals(&slots, self.long_block_instructions.sum())
    }
}

/// The running plugin: settings plus everything vCPU callbacks share.
pub struct Profiler {
    pub args: PluginArgs,
    /// `None` for targets without a frame layout (leaf mode only).
    pub arch: Option<Arch>,
    pub target: String,
    pub epoch_ns: u64,
    pub board: VcpuBoard,
    pub queue: SampleQueue,
    /// One past the highest vCPU index QEMU has initialised.
    pub vcpus: AtomicU32,
    /// Set at the first vCPU init in fp mode; `None` inside = registers not found.
    pub registers: OnceLock<Option<RegisterSet>>,
    pub skipped: AtomicU64,
    /// Ticks that found their vCPU halted, recorded as idle samples.
    pub idle_samples: AtomicU64,
    pub stopping: AtomicBool,
    /// The kernel's CFI (`callchain=dwarf`).
    pub cfi: Option<CfiTable>,
    /// Why each dwarf unwind ended, by [`StopReason::index`].
    pub unwind_stops: [AtomicU64; StopReason::ALL.len()],
}

struct VcpuMemory;

impl GuestMemory for VcpuMemory {
    fn read_u64(&self, address: u64) -> Option<u64> {
        let mut bytes = [0u8; 8];
        qemu::read_guest(address, &mut bytes).then(|| u64::from_le_bytes(bytes))
    }

    fn read_pair(&self, address: u64) -> Option<(u64, u64)> {
        let mut bytes = [0u8; 16];
        if !qemu::read_guest(address, &mut bytes) {
            return None;
        }
        let (low, high) = bytes.split_at(8);
        Some((
            u64::from_le_bytes(low.try_into().ok()?),
            u64::from_le_bytes(high.try_into().ok()?),
        ))
    }
}

impl Profiler {
    /// Called from a conditional callback: the vCPU's flag was raised. `pc` is the
    /// canonical address of the block or instruction.
    pub fn sample(&self, vcpu: u32, pc: u64, state: FrameState) {
        self.board.flag.set(vcpu, 0);
        // A halting instruction that did not halt (an interrupt was pending) is behind us.
        self.board.halting.set(vcpu, 0);
        if self.stopping.load(Ordering::Relaxed) {
            return;
        }
        let elapsed_ns = qemu::monotonic_ns().saturating_sub(self.epoch_ns);
        let mut record = Record {
            elapsed_ns,
            pc,
            cpu: vcpu,
            callchain: self.args.callchain.record_byte(),
            ..Record::default()
        };
        match (self.args.callchain, self.arch) {
            (CallchainMode::FramePointer | CallchainMode::Dwarf, Some(arch)) => {
                let Some(regs) = self.read_registers() else {
                    self.queue.failures.fetch_add(1, Ordering::Relaxed);
                    return;
                };
                record.sp = regs.sp;
                record.fp = regs.fp;
                let (memory, filter, depth) = (&VcpuMemory, &self.args.filter, self.args.max_depth);
                // The CFI table exists exactly when callchain=dwarf.
                let stop = match &self.cfi {
                    Some(table) => {
                        let (trace, stop) = cfi::unwind(table, pc, regs, state, memory, filter, depth);
                        record.trace = trace;
                        Some(stop)
                    }
                    None => {
                        record.trace = unwind::unwind(arch, pc, regs, state, memory, filter, depth);
                        None
                    }
                };
                // Counted for the samples the file has, so the stops add up to its records.
                if self.queue.push(record)
                    && let Some(stop) = stop
                {
                    self.unwind_stops[stop.index()].fetch_add(1, Ordering::Relaxed);
                }
            }
            _ => {
                record.trace = vec![pc];
                self.queue.push(record);
            }
        }
    }

    fn read_registers(&self) -> Option<SampleRegisters> {
        let set = (*self.registers.get()?)?;
        Some(SampleRegisters {
            sp: qemu::read_register_u64(set.sp)?,
            fp: qemu::read_register_u64(set.fp)?,
            link: set.link.and_then(qemu::read_register_u64),
        })
    }

    /// A halted vCPU's sample: no code ran, so no pc and no trace, only the time.
    fn sample_idle(&self, vcpu: u32) {
        if self.stopping.load(Ordering::Relaxed) {
            return;
        }
        let elapsed_ns = qemu::monotonic_ns().saturating_sub(self.epoch_ns);
        if self.queue.push(Record::idle(elapsed_ns, vcpu)) {
            self.idle_samples.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// QEMU's vCPU idle callback: after a halting instruction the vCPU halts until an
    /// interrupt (else QEMU stopped it: not the guest's idle). A tick already raised for it
    /// would otherwise be taken by the first block after the wake-up (the interrupt entry):
    /// it is an idle sample, now.
    pub fn vcpu_idle(&self, vcpu: u32) {
        if self.board.halting.get(vcpu) == 0 {
            return;
        }
        self.board.idle.set(vcpu, 1);
        if self.board.flag.get(vcpu) != 0 {
            self.board.flag.set(vcpu, 0);
            self.sample_idle(vcpu);
        }
    }

    /// QEMU's vCPU resume callback: the vCPU runs again.
    pub fn vcpu_resume(&self, vcpu: u32) {
        self.board.idle.set(vcpu, 0);
        self.board.halting.set(vcpu, 0);
    }

    /// Raise every known vCPU's flag; count the ones still raised from the last tick. A
    /// halted vCPU runs no block to take the sample: the tick records it as idle itself,
    /// so halted time counts at the sampling rate instead of as one sample at the wake-up.
    fn tick(&self) {
        for vcpu in 0..self.vcpus.load(Ordering::Acquire) {
            if self.board.idle.get(vcpu) != 0 {
                // Left over from a tick that raced with the vCPU halting.
                self.board.flag.set(vcpu, 0);
                self.sample_idle(vcpu);
            } else if self.board.flag.get(vcpu) != 0 {
                self.skipped.fetch_add(1, Ordering::Relaxed);
            } else {
                self.board.flag.set(vcpu, 1);
            }
        }
    }
}

/// The sampling period for `freq_hz` (≥ 1, checked by the argument parser).
pub fn period(freq_hz: u32) -> Duration {
    Duration::from_nanos((1_000_000_000 / u64::from(freq_hz.max(1))).max(1))
}

/// Start the timer thread. It ticks on a fixed schedule (deadlines, not sleeps, so the
/// rate does not drift) and skips missed deadlines instead of bursting after a stall.
pub fn spawn_timer(profiler: Arc<Profiler>) -> std::io::Result<()> {
    let period = period(profiler.args.freq_hz);
    std::thread::Builder::new()
        .name("perfscope-timer".into())
        .spawn(move || {
            let mut deadline = Instant::now() + period;
            while !profiler.stopping.load(Ordering::Relaxed) {
                let now = Instant::now();
                if deadline > now {
                    std::thread::sleep(deadline - now);
                }
                profiler.tick();
                deadline += period;
                let now = Instant::now();
                if deadline < now {
                    deadline = now + period;
                }
            }
        })?;
    Ok(())
}
