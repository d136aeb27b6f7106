//! Interned stacks: a path of locations, root (outermost caller) first.
//!
//! Samples share stacks heavily, so a sample stores only a [`StackId`].

use rustc_hash::FxHashMap;

use super::frames::FrameId;
use super::location::{LocationId, LocationTable};

/// Index of a stack in a [`StackTable`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StackId(pub u32);

impl StackId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// The stack interner.
#[derive(Debug, Default, Clone)]
pub struct StackTable {
    stacks: Vec<Box<[LocationId]>>,
    index: FxHashMap<Box<[LocationId]>, StackId>,
}

impl StackTable {
    pub fn new() -> Self {
        Self::default()
    }

    /// Intern a root-first path of locations.
    pub fn intern(&mut self, root_first: &[LocationId]) -> StackId {
        if let Some(&id) = self.index.get(root_first) {
            return id;
        }
        let id = StackId(u32::try_from(self.stacks.len()).expect("more than 2^32 stacks"));
        self.stacks.push(root_first.into());
        self.index.insert(root_first.into(), id);
        id
    }

    /// Locations of a stack, root first.
    pub fn locations(&self, id: StackId) -> &[LocationId] {
        &self.stacks[id.index()]
    }

    /// Frames of a stack, root first, inline chains expanded (outermost first).
    pub fn frames<'a>(
        &'a self,
        id: StackId,
        locations: &'a LocationTable,
    ) -> impl Iterator<Item = FrameId> + 'a {
        self.locations(id)
            .iter()
            .flat_map(move |&loc| locations.get(loc).frames_outermost_first())
    }

    pub fn len(&self) -> usize {
        self.stacks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.stacks.is_empty()
    }

    /// Bytes on the heap, roughly (each path is kept twice: list and index).
    pub fn heap_bytes(&self) -> usize {
        let each = std::mem::size_of::<Box<[LocationId]>>();
        self.stacks.iter().map(|s| 2 * s.len() * 4).sum::<usize>()
            + self.stacks.capacity() * each
            + self.index.capacity() * (each + 5)
    }

    pub fn ids(&self) -> impl Iterator<Item = StackId> {
        (0..self.stacks.len() as u32).map(StackId)
    }
}
