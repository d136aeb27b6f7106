//! Headless commands for scripts and CI: the engine run to the end ([`headless`]) for
//! `perfscope report`, `open --no-tui` and the `--no-tui` runs of live sessions, with
//! perf-prof's interval text for tracepoint analyzers ([`trace_text`]); `perfscope diff`.

pub mod diff;
pub mod headless;
pub mod progress;
pub mod report;
pub mod trace_text;
