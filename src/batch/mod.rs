//! Headless commands for scripts and CI: `perfscope report` and `perfscope diff`.

pub mod diff;
pub mod progress;
pub mod report;
pub mod session;
