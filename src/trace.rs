//! Host tracepoints, independent of where their records come from: the event layouts and
//! records ([`event`]: a tracefs `format` file's fields, one event's raw bytes) and the
//! C-like filter/expression language evaluated over them ([`expr`]: `key=`, `top-by=`,
//! `printkey=`, user-space filters and the `print fmt:` text).
//!
//! Plain data and pure functions, no I/O: this module may import only [`crate::model`],
//! nothing above it (sources, analyzers, live, …) — they import it.

pub mod event;
pub mod event_help;
pub mod expr;
pub mod field_units;
