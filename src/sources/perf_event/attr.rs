//! The `perf_event_attr` of one event, built from what the user asked for.
//!
//! Every event gets the same housekeeping: `disabled=1` (enabled after every ring is
//! mapped), `use_clockid` with `CLOCK_MONOTONIC` (the clock perfscope's console markers
//! use), `sample_id_all` and `PERF_SAMPLE_IDENTIFIER` (so any record of a shared ring can
//! be traced back to its event), and perf-prof's `--watermark` wake-up policy.

use perf_event_open_sys::bindings::{self as b, perf_event_attr};

use super::error::PerfEventError;
use super::record::SampleFormat;

/// What is counted.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// A tracepoint, by its tracefs `id`.
    Tracepoint {
        id: u64,
    },
    CpuClock,
    TaskClock,
    /// Hardware CPU cycles; [`EventAttr::fallback`] turns it into `CpuClock` where the
    /// machine has no PMU (VMs).
    HardwareCycles,
    /// A `PERF_TYPE_SOFTWARE` event by its `PERF_COUNT_SW_*` config (`page-faults`, …).
    Software {
        config: u32,
    },
}

impl EventKind {
    pub fn name(&self) -> String {
        match self {
            EventKind::Tracepoint { id } => format!("tracepoint id {id}"),
            EventKind::CpuClock => "cpu-clock".into(),
            EventKind::TaskClock => "task-clock".into(),
            EventKind::HardwareCycles => "cycles".into(),
            EventKind::Software { config } => format!("software event {config}"),
        }
    }
}

/// How often a sample is taken.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Sampling {
    /// `freq=1, sample_freq=HZ` (`-F`).
    FrequencyHz(u64),
    /// One sample every `n` events (`sample_period`; 1 for tracepoints).
    Period(u64),
}

/// When the kernel wakes a reader sleeping in poll(2), as perf-prof's `--watermark`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Wakeup {
    /// `--watermark W`: once W % of the ring is filled (W = 0 means every event).
    WatermarkPercent(u32),
    /// `wakeup_events = n`.
    EveryEvents(u32),
}

impl Default for Wakeup {
    /// perf-prof's default for tracepoint analyzers and profile: half the ring.
    fn default() -> Self {
        Wakeup::WatermarkPercent(50)
    }
}

/// One event's attr, as a builder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventAttr {
    pub kind: EventKind,
    pub sampling: Sampling,
    /// `PERF_SAMPLE_*` bits besides `IDENTIFIER` (always added).
    pub sample_type: u64,
    pub exclude_user: bool,
    pub exclude_kernel: bool,
    pub exclude_idle: bool,
    pub exclude_callchain_user: bool,
    pub exclude_callchain_kernel: bool,
    /// `sample_max_stack` (0 = the kernel's `perf_event_max_stack`).
    pub max_stack: u16,
    /// Ask for COMM (with exec), MMAP2 and FORK/EXIT records: the host symbolizer learns
    /// processes and their mappings from them. Set it on one event per ring.
    pub task_records: bool,
    /// `PERF_RECORD_SWITCH_CPU_WIDE` records (CPU-wide events only).
    pub context_switch: bool,
    /// Ask for COMM records (with exec) and FORK/EXIT records, no mappings: a tracepoint
    /// session names the threads of its tables from them (a child takes its parent's name
    /// until it execs), even threads that exited before the table was printed.
    /// Set it on one event per ring.
    pub comm_records: bool,
    pub wakeup: Wakeup,
    /// `sample_regs_user` (with `PERF_SAMPLE_REGS_USER`): the user registers each sample
    /// carries, by `perf_regs.h` bit.
    pub regs_user: u64,
    /// `sample_stack_user` (with `PERF_SAMPLE_STACK_USER`): bytes of user stack copied
    /// into each sample.
    pub stack_user_bytes: u32,
}

/// The sample fields every sampling event wants: where, who, when, which CPU.
const BASE_SAMPLE: u32 = b::PERF_SAMPLE_TID | b::PERF_SAMPLE_TIME | b::PERF_SAMPLE_CPU;

/// `PERF_FORMAT_LOST` (Linux 6.0): `read(2)` returns `{ value, lost }`.
pub const READ_FORMAT_LOST: u64 = 1 << 4;

impl EventAttr {
    /// A tracepoint sampled on every hit with its raw record.
    pub fn tracepoint(id: u64) -> EventAttr {
        EventAttr::new(EventKind::Tracepoint { id }, Sampling::Period(1))
            .with_sample(b::PERF_SAMPLE_RAW | b::PERF_SAMPLE_PERIOD)
    }

    /// CPU sampling at `hz` with the instruction pointer: cycles (falls back to cpu-clock).
    pub fn cpu_profile(hz: u64) -> EventAttr {
        EventAttr::new(EventKind::HardwareCycles, Sampling::FrequencyHz(hz))
            .with_sample(b::PERF_SAMPLE_IP | b::PERF_SAMPLE_PERIOD)
    }

    pub fn new(kind: EventKind, sampling: Sampling) -> EventAttr {
        EventAttr {
            kind,
            sampling,
            sample_type: u64::from(BASE_SAMPLE),
            exclude_user: false,
            exclude_kernel: false,
            exclude_idle: false,
            exclude_callchain_user: false,
            exclude_callchain_kernel: false,
            max_stack: 0,
            task_records: false,
            context_switch: false,
            comm_records: false,
            wakeup: Wakeup::default(),
            regs_user: 0,
            stack_user_bytes: 0,
        }
    }

    /// Add `PERF_SAMPLE_*` bits.
    pub fn with_sample(mut self, bits: u32) -> EventAttr {
        self.sample_type |= u64::from(bits);
        self
    }

    /// `-g`: sample callchains (kernel and user unless excluded).
    pub fn with_callchain(self) -> EventAttr {
        self.with_sample(b::PERF_SAMPLE_CALLCHAIN)
    }

    /// `--call-graph dwarf,SIZE`: each sample carries the user registers an unwinder needs
    /// and `stack_bytes` of user stack, and the kernel no longer walks the user frame
    /// pointers (as perf: the user part of the chain comes from the unwinder; the kernel
    /// part stays in the callchain).
    pub fn with_user_stack(mut self, stack_bytes: u32) -> EventAttr {
        self.regs_user = super::user_stack::UNWIND_REGS_MASK;
        self.stack_user_bytes = stack_bytes;
        self.exclude_callchain_user = true;
        self.with_sample(b::PERF_SAMPLE_REGS_USER | b::PERF_SAMPLE_STACK_USER)
    }

    /// `--user-only`: count user mode only.
    pub fn user_only(mut self) -> EventAttr {
        (self.exclude_kernel, self.exclude_user) = (true, false);
        self
    }

    /// `--kernel-only`: count kernel mode only.
    pub fn kernel_only(mut self) -> EventAttr {
        (self.exclude_user, self.exclude_kernel) = (true, false);
        self
    }

    pub fn with_task_records(mut self) -> EventAttr {
        self.task_records = true;
        self
    }

    pub fn with_comm_records(mut self) -> EventAttr {
        self.comm_records = true;
        self
    }

    /// Switch records: this kernel delivers no tracepoint sample while a CPU's idle task is
    /// current, so `sched_switch` away from idle never arrives; the switch record of the
    /// task coming in does (see `feeds/host/missed_switch.rs`).
    pub fn with_context_switch(mut self) -> EventAttr {
        self.context_switch = true;
        self
    }

    pub fn with_wakeup(mut self, wakeup: Wakeup) -> EventAttr {
        self.wakeup = wakeup;
        self
    }

    pub fn with_max_stack(mut self, frames: u16) -> EventAttr {
        self.max_stack = frames;
        self
    }

    /// The event to try when the kernel has no PMU for this one: cpu-clock instead of
    /// cycles (with `exclude_idle`, as perf-prof in a guest, so idle CPUs do not sample).
    pub fn fallback(&self) -> Option<EventAttr> {
        (self.kind == EventKind::HardwareCycles).then(|| EventAttr {
            kind: EventKind::CpuClock,
            exclude_idle: true,
            ..self.clone()
        })
    }

    /// How this event's records are laid out.
    pub fn sample_format(&self) -> SampleFormat {
        SampleFormat {
            sample_type: self.sample_type | u64::from(b::PERF_SAMPLE_IDENTIFIER),
            read_format: 0,
            sample_id_all: true,
            regs_user: self.regs_user,
        }
    }

    /// The kernel attr for a ring of `ring_bytes` data bytes.
    pub fn to_raw(&self, ring_bytes: usize) -> Result<perf_event_attr, PerfEventError> {
        // SAFETY: an all-zero perf_event_attr is the documented starting point.
        let mut attr: perf_event_attr = unsafe { std::mem::zeroed() };
        attr.size = std::mem::size_of::<perf_event_attr>() as u32;
        (attr.type_, attr.config) = match self.kind {
            EventKind::Tracepoint { id } => (b::PERF_TYPE_TRACEPOINT, id),
            EventKind::CpuClock => (b::PERF_TYPE_SOFTWARE, u64::from(b::PERF_COUNT_SW_CPU_CLOCK)),
            EventKind::TaskClock => (b::PERF_TYPE_SOFTWARE, u64::from(b::PERF_COUNT_SW_TASK_CLOCK)),
            EventKind::HardwareCycles => (b::PERF_TYPE_HARDWARE, u64::from(b::PERF_COUNT_HW_CPU_CYCLES)),
            EventKind::Software { config } => (b::PERF_TYPE_SOFTWARE, u64::from(config)),
        };
        match self.sampling {
            Sampling::FrequencyHz(hz) => {
                attr.set_freq(1);
                attr.__bindgen_anon_1.sample_freq = hz;
            }
            Sampling::Period(n) => attr.__bindgen_anon_1.sample_period = n.max(1),
        }
        attr.sample_type = self.sample_format().sample_type;
        // The kernel's own count of this event's lost samples, readable at any time: a
        // LOST record is only written once the ring has room again, so losses at the very
        // end of a run (a workload's last burst) would otherwise go unreported.
        attr.read_format = READ_FORMAT_LOST;
        attr.set_disabled(1);
        attr.set_sample_id_all(1);
        attr.set_use_clockid(1);
        attr.clockid = libc::CLOCK_MONOTONIC;
        attr.set_exclude_user(u64::from(self.exclude_user));
        attr.set_exclude_kernel(u64::from(self.exclude_kernel));
        attr.set_exclude_idle(u64::from(self.exclude_idle));
        attr.set_exclude_callchain_user(u64::from(self.exclude_callchain_user));
        attr.set_exclude_callchain_kernel(u64::from(self.exclude_callchain_kernel));
        attr.sample_max_stack = self.max_stack;
        if self.stack_user_bytes > super::user_stack::MAX_STACK_BYTES
            || !self.stack_user_bytes.is_multiple_of(8)
        {
            return Err(PerfEventError::BadStackSize(self.stack_user_bytes));
        }
        attr.sample_regs_user = self.regs_user;
        attr.sample_stack_user = self.stack_user_bytes;
        if self.task_records {
            attr.set_comm(1);
            attr.set_comm_exec(1);
            // `mmap` turns executable-mapping records on, `mmap2` selects their format.
            attr.set_mmap(1);
            attr.set_mmap2(1);
            attr.set_task(1);
        }
        if self.context_switch {
            attr.set_context_switch(1);
        }
        if self.comm_records {
            attr.set_comm(1);
            attr.set_comm_exec(1);
            attr.set_task(1);
        }
        match self.wakeup {
            Wakeup::WatermarkPercent(w) if w > 100 => return Err(PerfEventError::BadWatermark(w)),
            Wakeup::WatermarkPercent(0) => attr.__bindgen_anon_2.wakeup_events = 1,
            Wakeup::WatermarkPercent(w) => {
                attr.set_watermark(1);
                let bytes = ring_bytes as u64 * u64::from(w) / 100;
                attr.__bindgen_anon_2.wakeup_watermark = bytes.clamp(1, u64::from(u32::MAX)) as u32;
            }
            Wakeup::EveryEvents(n) => attr.__bindgen_anon_2.wakeup_events = n.max(1),
        }
        Ok(attr)
    }

    /// The attr fields the kernel may refuse, for an EINVAL message.
    pub fn describe(&self) -> String {
        format!(
            "{} {:?} sample_type={:#x} exclude_user={} exclude_kernel={} exclude_idle={} exclude_callchain_user={} exclude_callchain_kernel={} sample_max_stack={} sample_regs_user={:#x} sample_stack_user={} task_records={} comm_records={} wakeup={:?} clockid=CLOCK_MONOTONIC",
            self.kind.name(),
            self.sampling,
            self.sample_format().sample_type,
            self.exclude_user,
            self.exclude_kernel,
            self.exclude_idle,
            self.exclude_callchain_user,
            self.exclude_callchain_kernel,
            self.max_stack,
            self.regs_user,
            self.stack_user_bytes,
            self.task_records,
            self.comm_records,
            self.wakeup
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tracepoint_attr_has_raw_identifier_clock_and_half_ring_watermark() {
        let attr = EventAttr::tracepoint(321).to_raw(64 * 4096).unwrap();
        assert_eq!((attr.type_, attr.config), (b::PERF_TYPE_TRACEPOINT, 321));
        // SAFETY: reading the unions this builder wrote.
        let (period, watermark_bytes) = unsafe {
            (
                attr.__bindgen_anon_1.sample_period,
                attr.__bindgen_anon_2.wakeup_watermark,
            )
        };
        assert_eq!((period, attr.freq()), (1, 0));
        assert_eq!((attr.watermark(), watermark_bytes), (1, 32 * 4096));
        let wanted =
            b::PERF_SAMPLE_RAW | b::PERF_SAMPLE_IDENTIFIER | b::PERF_SAMPLE_TIME | b::PERF_SAMPLE_TID;
        assert_eq!(attr.sample_type & u64::from(wanted), u64::from(wanted));
        assert_eq!(
            (attr.disabled(), attr.sample_id_all(), attr.use_clockid()),
            (1, 1, 1)
        );
        assert_eq!(attr.clockid, libc::CLOCK_MONOTONIC);
        assert_eq!((attr.comm(), attr.mmap2(), attr.task()), (0, 0, 0));
    }

    #[test]
    fn watermark_zero_wakes_on_every_event_and_over_100_is_refused() {
        let attr = EventAttr::tracepoint(1)
            .with_wakeup(Wakeup::WatermarkPercent(0))
            .to_raw(8192)
            .unwrap();
        // SAFETY: reading the union this builder wrote.
        assert_eq!(
            (attr.watermark(), unsafe { attr.__bindgen_anon_2.wakeup_events }),
            (0, 1)
        );
        let attr = EventAttr::tracepoint(1)
            .with_wakeup(Wakeup::WatermarkPercent(25))
            .to_raw(8192)
            .unwrap();
        // SAFETY: as above.
        assert_eq!(unsafe { attr.__bindgen_anon_2.wakeup_watermark }, 2048);
        let err = EventAttr::tracepoint(1)
            .with_wakeup(Wakeup::WatermarkPercent(101))
            .to_raw(8192);
        assert!(matches!(err, Err(PerfEventError::BadWatermark(101))));
    }

    #[test]
    fn a_profile_attr_samples_by_frequency_with_stacks_and_task_records() {
        let event = EventAttr::cpu_profile(997)
            .with_callchain()
            .user_only()
            .with_task_records()
            .with_max_stack(32);
        let attr = event.to_raw(8192).unwrap();
        assert_eq!(
            (attr.type_, attr.config),
            (b::PERF_TYPE_HARDWARE, u64::from(b::PERF_COUNT_HW_CPU_CYCLES))
        );
        // SAFETY: reading the union this builder wrote.
        assert_eq!(
            (attr.freq(), unsafe { attr.__bindgen_anon_1.sample_freq }),
            (1, 997)
        );
        assert_ne!(
            attr.sample_type & u64::from(b::PERF_SAMPLE_CALLCHAIN | b::PERF_SAMPLE_IP),
            0
        );
        assert_eq!(
            (attr.exclude_kernel(), attr.exclude_user(), attr.sample_max_stack),
            (1, 0, 32)
        );
        assert_eq!(
            (
                attr.comm(),
                attr.comm_exec(),
                attr.mmap(),
                attr.mmap2(),
                attr.task(),
                attr.mmap_data()
            ),
            (1, 1, 1, 1, 1, 0)
        );
        let fallback = event.fallback().unwrap();
        assert_eq!(
            (fallback.kind, fallback.exclude_idle, fallback.sampling),
            (EventKind::CpuClock, true, Sampling::FrequencyHz(997))
        );
        assert_eq!(fallback.fallback(), None, "cpu-clock has nothing to fall back to");
        let kernel = EventAttr::cpu_profile(99).kernel_only().to_raw(4096).unwrap();
        assert_eq!((kernel.exclude_user(), kernel.exclude_kernel()), (1, 0));
    }

    #[test]
    fn a_dwarf_attr_asks_for_user_registers_and_stack_and_no_user_frame_pointers() {
        let event = EventAttr::cpu_profile(997).with_callchain().with_user_stack(8192);
        let attr = event.to_raw(4096).unwrap();
        let wanted = b::PERF_SAMPLE_CALLCHAIN | b::PERF_SAMPLE_REGS_USER | b::PERF_SAMPLE_STACK_USER;
        assert_eq!(attr.sample_type & u64::from(wanted), u64::from(wanted));
        assert_eq!(attr.sample_stack_user, 8192);
        assert_eq!(attr.sample_regs_user, super::super::user_stack::UNWIND_REGS_MASK);
        #[cfg(target_arch = "x86_64")]
        assert_eq!(
            attr.sample_regs_user,
            (1 << 6) | (1 << 7) | (1 << 8),
            "bp, sp, ip"
        );
        assert_eq!(
            (attr.exclude_callchain_user(), attr.exclude_callchain_kernel()),
            (1, 0)
        );
        assert_eq!(event.sample_format().regs_user, attr.sample_regs_user);
        for bad in [12, 65536] {
            let err = EventAttr::cpu_profile(99).with_user_stack(bad).to_raw(4096);
            assert!(matches!(err, Err(PerfEventError::BadStackSize(n)) if n == bad));
        }
    }
}
