//! Headless commands for scripts and CI: the engine run to the end ([`headless`]) for
//! `perfscope report`, `open --no-tui` and the `--no-tui` runs of live sessions, with
//! perf-prof's interval text for tracepoint analyzers ([`trace_text`]) and trace's
//! `--flame-graph` file ([`folded_stacks`]), perf-prof's profile lines ([`profile_text`],
//! `--than` by [`busy_filter`]); `perfscope diff`.

pub mod busy_filter;
pub mod diff;
pub mod folded_stacks;
pub mod headless;
pub mod profile_text;
pub mod progress;
pub mod report;
pub mod trace_text;
