//! Locations: one code address and the chain of (possibly inlined) functions it belongs to.
//!
//! A location expands to one frame per line, outermost first, when a stack is walked.
//! Sources without addresses (folded files) use address 0 and a single line.

use rustc_hash::FxHashMap;

use super::frames::FrameId;

/// Index of a location in a [`LocationTable`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LocationId(pub u32);

impl LocationId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// One function in an inline chain. `line` is 0 when unknown.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Line {
    pub frame: FrameId,
    pub line: u32,
}

/// An address and its inline chain, innermost first (the pprof order).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Location {
    pub address: u64,
    pub lines: Box<[Line]>,
}

impl Location {
    /// Frames of this location, outermost (caller) first.
    pub fn frames_outermost_first(&self) -> impl Iterator<Item = FrameId> + '_ {
        self.lines.iter().rev().map(|l| l.frame)
    }
}

/// The location interner.
#[derive(Debug, Default, Clone)]
pub struct LocationTable {
    locations: Vec<Location>,
    index: FxHashMap<Location, LocationId>,
}

impl LocationTable {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn intern(&mut self, location: Location) -> LocationId {
        if let Some(&id) = self.index.get(&location) {
            return id;
        }
        let id = LocationId(u32::try_from(self.locations.len()).expect("more than 2^32 locations"));
        self.locations.push(location.clone());
        self.index.insert(location, id);
        id
    }

    pub fn get(&self, id: LocationId) -> &Location {
        &self.locations[id.index()]
    }

    pub fn len(&self) -> usize {
        self.locations.len()
    }

    pub fn is_empty(&self) -> bool {
        self.locations.is_empty()
    }

    /// Bytes on the heap, roughly (each location is kept twice: list and index).
    pub fn heap_bytes(&self) -> usize {
        let each = std::mem::size_of::<Location>() + std::mem::size_of::<LocationId>() + 1;
        self.locations
            .iter()
            .map(|l| 2 * l.lines.len() * std::mem::size_of::<Line>())
            .sum::<usize>()
            + self.locations.capacity() * std::mem::size_of::<Location>()
            + self.index.capacity() * each
    }

    pub fn iter(&self) -> impl Iterator<Item = (LocationId, &Location)> {
        self.locations
            .iter()
            .enumerate()
            .map(|(i, l)| (LocationId(i as u32), l))
    }
}
