//! Memory analyses as model data (perf-prof's kmemleak and kmemprof): bytes and objects
//! per allocation or free stack. Stacks are named once, when an analyzer first meets them
//! (a process may be gone by the time its leaks print), and shared by reference: a row
//! keys on the stack's id, so rows of many time slices merge without comparing frames.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use rustc_hash::FxHashMap;

/// One frame of a named stack: the address and `name+0xoff (module)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameText {
    pub address: u64,
    pub text: String,
}

/// A stack as an analyzer named it, leaf first. Equal and hashed by `id` alone (ids are
/// unique within a session); id 0 is "no stack" (an event without `stack`).
#[derive(Clone, Debug)]
pub struct NamedStack {
    pub id: u32,
    pub frames: Vec<FrameText>,
}

impl PartialEq for NamedStack {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

impl Eq for NamedStack {}

impl Hash for NamedStack {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.id.hash(state);
    }
}

pub type StackRef = Arc<NamedStack>;

/// Bytes and objects of one stack. Signed: a slice where more of a stack's allocations
/// were freed than made holds a negative count (the slices still add up to what lives).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct MemCell {
    pub bytes: i64,
    pub objects: i64,
}

impl MemCell {
    pub fn add(&mut self, other: MemCell) {
        self.bytes = self.bytes.saturating_add(other.bytes);
        self.objects = self.objects.saturating_add(other.objects);
    }

    fn scaled(self, factor: f64) -> MemCell {
        if factor >= 1.0 {
            return self;
        }
        MemCell {
            bytes: (self.bytes as f64 * factor).round() as i64,
            objects: (self.objects as f64 * factor).round() as i64,
        }
    }
}

fn merge_cells(into: &mut FxHashMap<StackRef, MemCell>, from: &FxHashMap<StackRef, MemCell>, factor: f64) {
    for (stack, cell) in from {
        into.entry(stack.clone()).or_default().add(cell.scaled(factor));
    }
    into.retain(|_, c| *c != MemCell::default());
}

fn cells_heap_bytes(cells: &FxHashMap<StackRef, MemCell>) -> usize {
    cells.capacity() * std::mem::size_of::<(StackRef, MemCell)>()
}

/// kmemleak: per allocation stack, what was allocated and not freed (allocations minus
/// the frees that matched them); over the whole run, what is still live.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LeakRows {
    pub stacks: FxHashMap<StackRef, MemCell>,
    /// Alloc and free events seen (perf-prof's `TOTAL alloc N free M`).
    pub allocs: u64,
    pub frees: u64,
}

impl LeakRows {
    pub fn merge_scaled(&mut self, other: &LeakRows, factor: f64) {
        merge_cells(&mut self.stacks, &other.stacks, factor);
        self.allocs = self
            .allocs
            .saturating_add(super::scale::scale(other.allocs, factor));
        self.frees = self
            .frees
            .saturating_add(super::scale::scale(other.frees, factor));
    }

    pub fn is_empty(&self) -> bool {
        self.stacks.is_empty() && self.allocs == 0 && self.frees == 0
    }

    /// Live objects and bytes over every stack.
    pub fn live(&self) -> MemCell {
        let mut total = MemCell::default();
        for cell in self.stacks.values() {
            total.add(*cell);
        }
        total
    }

    pub fn heap_bytes(&self) -> usize {
        cells_heap_bytes(&self.stacks)
    }
}

/// Which events a kmemprof block is about: an alloc event and the free event that freed
/// its objects, or `free: None` for the allocations never freed (counted at the end).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AllocPair {
    pub alloc: u16,
    pub free: Option<u16>,
}

/// One kmemprof block: bytes by allocation stack and by free stack.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProfBlock {
    pub alloc: FxHashMap<StackRef, MemCell>,
    pub free: FxHashMap<StackRef, MemCell>,
    pub allocated: MemCell,
    pub freed: MemCell,
}

/// kmemprof: per (alloc event, free event), what the freed allocations weighed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProfRows {
    pub blocks: FxHashMap<AllocPair, ProfBlock>,
}

impl ProfRows {
    pub fn merge_scaled(&mut self, other: &ProfRows, factor: f64) {
        for (pair, block) in &other.blocks {
            let into = self.blocks.entry(*pair).or_default();
            merge_cells(&mut into.alloc, &block.alloc, factor);
            merge_cells(&mut into.free, &block.free, factor);
            into.allocated.add(block.allocated.scaled(factor));
            into.freed.add(block.freed.scaled(factor));
        }
        self.blocks
            .retain(|_, b| b.allocated.objects != 0 || b.freed.objects != 0);
    }

    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    pub fn heap_bytes(&self) -> usize {
        self.blocks
            .values()
            .map(|b| 128 + cells_heap_bytes(&b.alloc) + cells_heap_bytes(&b.free))
            .sum()
    }
}

/// What kmemleak's and kmemprof's rows mean: the events by index (`sys:name`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemSchema {
    pub events: Vec<String>,
    /// By event index: an alloc event (else a free one).
    pub is_alloc: Vec<bool>,
    /// Every alloc event has `size=` (kmemleak then reports leaked bytes).
    pub sized: bool,
    /// kmemleak `--than`: only allocations older than this at the end are reported.
    pub than_ns: Option<u64>,
}

impl MemSchema {
    /// Every (alloc event, free event), alloc events in order, as perf-prof prints them.
    pub fn pairs(&self) -> Vec<(u16, u16)> {
        let of = |alloc: bool| {
            self.is_alloc
                .iter()
                .enumerate()
                .filter(move |(_, a)| **a == alloc)
                .map(|(i, _)| i as u16)
        };
        of(true).flat_map(|a| of(false).map(move |f| (a, f))).collect()
    }
}

/// Stacks sorted as perf-prof prints them: most bytes first, then most objects, then id.
pub fn sorted_stacks(cells: &FxHashMap<StackRef, MemCell>) -> Vec<(&StackRef, MemCell)> {
    let mut sorted: Vec<(&StackRef, MemCell)> = cells.iter().map(|(s, c)| (s, *c)).collect();
    sorted.sort_by(|a, b| {
        b.1.bytes
            .cmp(&a.1.bytes)
            .then(b.1.objects.cmp(&a.1.objects))
            .then(a.0.id.cmp(&b.0.id))
    });
    sorted
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stack(id: u32) -> StackRef {
        Arc::new(NamedStack {
            id,
            frames: Vec::new(),
        })
    }

    #[test]
    fn leak_slices_add_up_to_what_lives() {
        let a = stack(1);
        let mut first = LeakRows::default();
        first.stacks.insert(
            a.clone(),
            MemCell {
                bytes: 96,
                objects: 3,
            },
        );
        first.allocs = 3;
        let mut second = LeakRows::default();
        // Two of the three were freed in the next slice.
        second.stacks.insert(
            a.clone(),
            MemCell {
                bytes: -64,
                objects: -2,
            },
        );
        second.frees = 2;
        first.merge_scaled(&second, 1.0);
        assert_eq!(
            first.stacks[&a],
            MemCell {
                bytes: 32,
                objects: 1
            }
        );
        assert_eq!((first.allocs, first.frees), (3, 2));
        let mut third = LeakRows::default();
        third.stacks.insert(
            a.clone(),
            MemCell {
                bytes: -32,
                objects: -1,
            },
        );
        first.merge_scaled(&third, 1.0);
        assert!(first.stacks.is_empty(), "a stack with nothing live leaves no row");
    }

    #[test]
    fn stacks_sort_by_bytes_then_objects() {
        let mut cells = FxHashMap::default();
        cells.insert(
            stack(1),
            MemCell {
                bytes: 10,
                objects: 1,
            },
        );
        cells.insert(
            stack(2),
            MemCell {
                bytes: 30,
                objects: 1,
            },
        );
        cells.insert(
            stack(3),
            MemCell {
                bytes: 10,
                objects: 5,
            },
        );
        let ids: Vec<u32> = sorted_stacks(&cells).iter().map(|(s, _)| s.id).collect();
        assert_eq!(ids, [2, 3, 1]);
    }
}
