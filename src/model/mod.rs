//! The profile model: plain data and pure functions, no terminal and no I/O.
//!
//! A [`Profile`] holds interned [`frames`] (function names), [`location`]s (an address and
//! its inline chain), [`stack`]s (paths of locations) and [`sample`]s that point at them.
//! Everything a view or an export shows is derived from a profile through a
//! [`selection`] (time window, focus, instance) into a [`trie`] and [`hotspots`].
//!
//! [`facts`] are what is known about an input besides its samples: what was read, what
//! the source counted, and the marker window of the run. [`units`] writes durations for
//! people (`771ns`, `3.85ms`).

pub mod console;
pub mod diff;
pub mod facts;
pub mod focus;
pub mod frames;
pub mod hash;
pub mod histogram;
pub mod hotspots;
pub mod instances;
pub mod location;
pub mod profile;
pub mod sample;
pub mod selection;
pub mod stack;
pub mod timeline;
pub mod trie;
pub mod units;
pub mod window;

pub use console::{ConsoleLine, ConsoleLog};
pub use diff::{FunctionDelta, ProfileDiff};
pub use facts::{InputInfo, KernelFilterFacts, SourceFacts, WindowInfo};
pub use focus::Focus;
pub use frames::{FrameId, FrameTable};
pub use histogram::LatencyHistogram;
pub use hotspots::{Hotspot, HotspotSort, Hotspots};
pub use instances::split_by_instance;
pub use location::{Line, Location, LocationId, LocationTable};
pub use profile::{Profile, ProfileInfo};
pub use sample::{Callchain, Instance, InstanceId, InstanceKind, Sample, SampleMeta};
pub use selection::Selection;
pub use stack::{StackId, StackTable};
pub use timeline::{Counted, Timeline};
pub use trie::{NodeId, StackTrie, TrieNode, TrieOrder};
pub use window::{Phase, PhaseMarkers, TimeWindow};
