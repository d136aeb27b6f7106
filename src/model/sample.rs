//! Samples and the instances (CPU, vCPU, thread) they were taken on.

use super::stack::StackId;

/// Index of an instance in a profile's instance list.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InstanceId(pub u32);

impl InstanceId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// What an instance is: the axis a per-instance view splits on.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum InstanceKind {
    /// The source gave no instance (folded files, v1/v2 qperf records).
    Unknown,
    /// A host CPU.
    Cpu,
    /// A guest vCPU (QEMU's vCPU index).
    Vcpu,
    /// A host thread (the id is the tid).
    Thread,
}

/// A CPU, vCPU or thread that samples were taken on.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Instance {
    pub kind: InstanceKind,
    pub id: u64,
    pub label: String,
}

impl Instance {
    pub fn unknown() -> Self {
        Self {
            kind: InstanceKind::Unknown,
            id: 0,
            label: "all".into(),
        }
    }

    pub fn vcpu(index: u32) -> Self {
        Self {
            kind: InstanceKind::Vcpu,
            id: u64::from(index),
            label: format!("vCPU {index}"),
        }
    }

    pub fn cpu(index: u32) -> Self {
        Self {
            kind: InstanceKind::Cpu,
            id: u64::from(index),
            label: format!("CPU {index}"),
        }
    }

    pub fn thread(tid: u32, comm: &str) -> Self {
        Self {
            kind: InstanceKind::Thread,
            id: u64::from(tid),
            label: format!("{tid} {comm}"),
        }
    }
}

/// How the stack of a sample was collected.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub enum Callchain {
    /// The source does not say (v1/v2 records, folded input).
    #[default]
    Unknown,
    /// Only the sampled address.
    Leaf,
    /// Frame-pointer unwinding.
    FramePointer,
    /// DWARF call-frame-information unwinding.
    Dwarf,
    /// No stack: the vCPU was halted (idle) when the sample was due.
    Idle,
    /// A method code the model does not know.
    Other(u8),
}

impl Callchain {
    pub fn name(self) -> &'static str {
        match self {
            Callchain::Unknown => "unknown",
            Callchain::Leaf => "leaf",
            Callchain::FramePointer => "fp",
            Callchain::Dwarf => "dwarf",
            Callchain::Idle => "idle",
            Callchain::Other(_) => "other",
        }
    }
}

/// Facts about the raw record behind a sample, kept so that resolve statistics can be
/// computed from the model for any window or focus, not only at decode time.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct SampleMeta {
    /// Length of the raw address trace (before symbolization and filtering).
    pub raw_depth: u16,
    pub flags: u8,
    pub callchain: Callchain,
}

impl SampleMeta {
    pub const HAS_PC: u8 = 1;
    pub const HAS_SP: u8 = 2;
    pub const HAS_FP: u8 = 4;
    pub const HAS_CPU: u8 = 8;
    /// No address of the sample resolved to a symbol; its stack is `??`.
    pub const UNRESOLVED: u8 = 16;

    pub fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }
}

/// One sample: when, where, how much, and which stack.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Sample {
    /// Nanoseconds on the source's clock; `None` when the source has no timestamps.
    pub time_ns: Option<u64>,
    pub instance: InstanceId,
    /// Count, or period in the source's unit (1 per sample for qperf).
    pub weight: u64,
    pub stack: StackId,
    pub meta: SampleMeta,
}
