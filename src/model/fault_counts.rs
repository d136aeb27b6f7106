//! Page faults as model data: how many faults each thread took in each 2 MiB region of
//! its address space, split user/kernel and read/write — bounded by the regions a thread
//! touches, not by the faults, and merged by plain addition like every analysis row.

use rustc_hash::FxHashMap;

use super::scale::scale;

/// Faults are grouped by `address >> REGION_SHIFT` (2 MiB, a huge page).
pub const REGION_SHIFT: u32 = 21;

/// Whose faults, where.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FaultKey {
    pub tid: u32,
    /// `address >> REGION_SHIFT`.
    pub region: u64,
}

/// The faults of one key.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct FaultCells {
    pub user: u64,
    pub kernel: u64,
    /// Faults on a write access (`error_code` bit 1), user or kernel.
    pub write: u64,
}

impl FaultCells {
    pub fn total(&self) -> u64 {
        self.user.saturating_add(self.kernel)
    }
}

/// Faults per (thread, region).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FaultCounts {
    pub cells: FxHashMap<FaultKey, FaultCells>,
}

impl FaultCounts {
    pub fn merge_scaled(&mut self, other: &FaultCounts, factor: f64) {
        for (key, cells) in &other.cells {
            let into = self.cells.entry(*key).or_default();
            into.user = into.user.saturating_add(scale(cells.user, factor));
            into.kernel = into.kernel.saturating_add(scale(cells.kernel, factor));
            into.write = into.write.saturating_add(scale(cells.write, factor));
        }
        if factor < 1.0 {
            self.cells.retain(|_, c| c.total() > 0);
        }
    }
}
