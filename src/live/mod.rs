//! The live model: a thread that owns the growing profile, applies the live mode
//! (accumulate, sliding window, decay, freeze) and publishes [`Snapshot`]s for the views.

pub mod aggregate;
pub mod build;
pub mod export;
pub mod follow;
pub mod host;
pub mod qemu;
pub mod qemu_setup;
pub mod replay;
pub mod snapshot;
pub mod source;
pub mod state;
pub mod worker;

pub use snapshot::{HistogramSeries, InstanceSlice, LiveMode, Snapshot, SourceStats, TextTable};
