//! Tracepoints through tracefs: mounting it, the event list, each event's `format` file,
//! and the perf-prof event selector syntax.

mod format;

pub use format::{FormatError, parse_format};
