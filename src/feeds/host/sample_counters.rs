//! A sampling reader's counters: what it read, lost and unwound, for the status line, the
//! closing summary and the verdict.

use crate::model::verdict::SourceCounts;

/// Counters for the status line and the closing summary.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct SampleCounters {
    pub samples: u64,
    pub lost: u64,
    /// With `-N`: records the rings reported lost before the limit was reached.
    pub lost_before_limit: u64,
    /// perfscope's own samples left out (`--exclude-self`).
    pub own_samples: u64,
    /// `--call-graph dwarf`: samples that carried a user stack copy.
    pub stack_samples: u64,
    /// Bytes of stack copies the rings carried (each the asked size: what the ring pays).
    pub stack_bytes: u64,
    /// Of them, the bytes that held stack (the kernel's `dyn_size`).
    pub stack_used_bytes: u64,
    /// User frames the unwinder found.
    pub user_frames: u64,
    /// Walks that reached the outermost frame.
    pub unwound_to_root: u64,
    /// Time the reader spent unwinding.
    pub unwind_ns: u64,
    /// Ring records that did not decode, and throttles.
    pub source: SourceCounts,
}
