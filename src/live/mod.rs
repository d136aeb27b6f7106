//! The live model: a thread that owns the growing profile, applies the live mode
//! (accumulate, sliding window, decay, freeze) and publishes [`Snapshot`]s for the views.

pub mod snapshot;

pub use snapshot::{HistogramSeries, InstanceSlice, LiveMode, Snapshot, SourceStats};
