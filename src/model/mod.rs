//! The profile model: plain data and pure functions, no terminal and no I/O.
//!
//! [`tables`] intern [`frames`] (function names), [`location`]s (an address and its inline
//! chain), [`stack`]s (paths of locations) and instances; a [`sample`] points into them.
//! Samples reduce to [`counts`] (a weight per distinct stack, instance and record facts),
//! and analyses to typed, mergeable [`analysis`] rows: that is what the engine keeps per
//! time slice. Everything a view or an export shows is built from counts through a
//! [`selection`] (time window, focus, instance) by the one [`aggregate`] builder into a
//! [`trie`] and [`hotspots`]; analyses are shaped for showing by [`present`].
//!
//! [`facts`] are what is known about an input besides its samples: what was read, what
//! the source counted, and the marker window of the run; the [`verdict`] says whether
//! the session's figures are everything that happened, and if not, what is missing. [`units`] writes durations for
//! people (`771ns`, `3.85ms`).

pub mod aggregate;
pub mod analysis;
pub mod call_rows;
pub mod console;
pub mod counts;
pub mod diff;
pub mod facts;
pub mod fault_counts;
pub mod fit;
pub mod focus;
pub mod frames;
pub mod hash;
pub mod heatmap;
pub mod histogram;
pub mod hotspots;
pub mod latency_stats;
pub mod location;
pub mod lockup_warnings;
pub mod memory_stacks;
pub mod name_forms;
pub mod period_counts;
pub mod present;
pub mod sample;
pub mod sample_list;
pub mod scale;
pub mod selection;
pub mod sql_rows;
pub mod stack;
pub mod stack_copies;
pub mod tables;
#[cfg(test)]
pub(crate) mod test_rng;
pub mod text;
pub mod threads;
pub mod timeline;
pub mod timer_samples;
pub mod trie;
pub mod units;
pub mod usage;
pub mod verdict;
pub mod window;

pub use console::{ConsoleLine, ConsoleLog};
pub use counts::{SampleKey, StackCounts};
pub use diff::{FunctionDelta, ProfileDiff};
pub use facts::{InputInfo, KernelFilterFacts, SourceFacts, Target, WindowInfo};
pub use focus::Focus;
pub use frames::{FrameId, FrameKind, FrameOrigin, FrameTable};
pub use histogram::LatencyHistogram;
pub use hotspots::{Hotspot, HotspotSort, Hotspots};
pub use location::{Line, Location, LocationId, LocationTable};
pub use sample::{Callchain, Instance, InstanceId, InstanceKind, Sample, SampleMeta};
pub use selection::{SampleSource, Selection};
pub use stack::{StackId, StackTable};
pub use tables::{ProfileInfo, ProfileTables};
pub use timeline::{Counted, Timeline};
pub use trie::{NodeId, StackTrie, TrieNode, TrieOrder};
pub use verdict::{Finding, Gap, Verdict};
pub use window::{Phase, PhaseMarkers, TimeWindow};
