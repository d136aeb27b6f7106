//! Ingest: raw address samples, resolved through the symbols, become model samples
//! interned into the feed's tables.
//!
//! - [`address`]: address traces (qperf records) → samples.
//! - [`qperf`]: how a qperf record maps onto an address trace.
//! - [`qperf_ingest`]: qperf records one at a time (files, tails, the plugin's stream).

pub mod address;
pub mod qperf;
pub mod qperf_ingest;

pub use address::{AddressIngest, AddressSample, IngestStats};
pub use qperf_ingest::QperfIngest;
