//! Sources read raw profiling data and hand it on as plain records. A source knows nothing
//! of symbols, views or exports.

pub mod block_device;
pub mod clock;
pub mod folded;
pub mod folded_reader;
pub mod perf_event;
pub mod prompt_wakeup;
pub mod qemu;
pub mod qperf_file;
pub mod tracefs;
