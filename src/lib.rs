//! perfscope: a live terminal-UI profiler for QEMU guest kernels and Linux hosts.
//!
//! The data travels one way:
//!
//! ```text
//! sources/ ──raw samples──▶ ingest (symbols/) ──▶ model/ ──▶ export/ (artifacts), views/ (TUI)
//! ```
//!
//! - [`sources`] read raw data (qperf.bin files, folded stacks) and know nothing of views.
//! - [`symbols`] turn addresses into function names (ELF/DWARF, symbol tables, kallsyms).
//! - [`ingest`] glues the two: raw address samples plus a resolver become model samples.
//! - [`model`] is plain data and pure functions: frames, stacks, the stack trie, windows,
//!   hotspots, diffs.
//! - [`export`] writes every artifact from the model; [`batch`] runs the headless commands.
//! - [`trace`] holds host tracepoint event layouts and records and the expression language
//!   over them; [`analyzers`] turn those events into latency and key/value tables.

pub mod analyzers;
pub mod app;
pub mod batch;
pub mod cli;
pub mod config;
pub mod export;
pub mod ingest;
pub mod live;
pub mod model;
pub mod sources;
pub mod store;
pub mod symbols;
pub mod trace;
pub mod views;
