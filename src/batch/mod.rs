//! Headless commands for scripts and CI: `perfscope report`, `diff`, and the `--no-tui`
//! runs of the live sources (QEMU sessions, host sampling and tracepoint analyzers).

pub mod diff;
pub mod host_trace;
pub mod progress;
pub mod report;
pub mod session;
