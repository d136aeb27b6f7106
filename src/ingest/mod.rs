//! Ingest: raw samples from a source, resolved through the symbols, become model samples.
//!
//! - [`address`]: address traces (qperf records, later perf_event callchains) → samples.
//! - [`qperf`]: how a qperf record maps onto an address trace.
//! - [`folded`]: folded stacks (already names) → samples.
//! - [`qperf_ingest`]: qperf records one at a time into a profile (files, tails, streams).
//! - [`open`]: open a recorded file (qperf.bin + ELF, folded) into a profile.

pub mod address;
pub mod folded;
pub mod open;
pub mod qperf;
pub mod qperf_ingest;

pub use address::{AddressIngest, AddressSample, IngestStats};
pub use qperf_ingest::QperfIngest;
