//! perf-prof's `watchdog` as model data: the lockups it predicted (a CPU whose watchdog
//! thread did not run for the soft-lockup period, or whose watchdog hrtimer stopped
//! firing for the hard-lockup one), the moment every watched CPU's watchdog timer was
//! found, and how many watchdog ticks were seen. Rows of two spans merge by putting the
//! warnings side by side in time order and adding the counts.

use super::memory_stacks::StackRef;
use super::scale::scale;

/// Which lockup a warning predicts.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum LockupKind {
    /// The watchdog thread (`migration/N`) did not run: `[now - touch > thresh]` in the
    /// kernel's `ns >> 30` seconds.
    Soft,
    /// The watchdog hrtimer did not fire between two ticks of the sampling event:
    /// `[now - touch > thresh]` in ns.
    Hard,
}

/// One predicted lockup, with the numbers perf-prof prints.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockupWarning {
    pub time_ns: u64,
    pub cpu: u32,
    pub kind: LockupKind,
    pub now: u64,
    pub touch: u64,
    pub thresh: u64,
    /// A hard lockup's tick's kernel stack (`-g`): where the CPU was when the check ran.
    pub stack: Option<StackRef>,
}

/// Warnings beyond this many per span are counted, not kept.
pub const MAX_WARNINGS: usize = 10_000;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LockupRows {
    pub warnings: Vec<LockupWarning>,
    pub dropped: u64,
    /// When every watched CPU's watchdog hrtimer was known, and how many CPUs that is
    /// (perf-prof's ` == collect all N watchdog hrtimer`).
    pub collected: Option<(u64, u32)>,
    /// Watchdog hrtimer expiries seen.
    pub watchdog_ticks: u64,
}

impl LockupRows {
    pub fn push(&mut self, warning: LockupWarning) {
        if self.warnings.len() >= MAX_WARNINGS {
            self.dropped = self.dropped.saturating_add(1);
        } else {
            self.warnings.push(warning);
        }
    }

    /// Add `other`. A warning is an event: decay scales the tick count only.
    pub fn merge_scaled(&mut self, other: &LockupRows, factor: f64) {
        let room = MAX_WARNINGS.saturating_sub(self.warnings.len());
        let taken = other.warnings.len().min(room);
        self.warnings.extend_from_slice(&other.warnings[..taken]);
        self.warnings.sort_by_key(|w| (w.time_ns, w.cpu));
        self.dropped = self
            .dropped
            .saturating_add(other.dropped)
            .saturating_add((other.warnings.len() - taken) as u64);
        self.collected = match (self.collected, other.collected) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.watchdog_ticks = self
            .watchdog_ticks
            .saturating_add(scale(other.watchdog_ticks, factor));
    }

    pub fn is_empty(&self) -> bool {
        self.warnings.is_empty() && self.collected.is_none() && self.watchdog_ticks == 0
    }

    pub fn heap_bytes(&self) -> usize {
        self.warnings.capacity() * std::mem::size_of::<LockupWarning>()
    }
}
