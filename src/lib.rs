//! perfscope: a live terminal-UI profiler for QEMU guest kernels and Linux hosts.
//!
//! The data travels one way:
//!
//! ```text
//! sources/   raw readers: perf_event rings, tracefs, qperf.bin, QEMU + QMP, folded, SQLite
//!    │         (symbols/ names addresses; analyzers/ turn tracepoint events into rows)
//! feeds/     one per kind of session: raw records → typed batches of model data
//!    ▼
//! engine/    the model thread: applies batches, keeps per-time-slice aggregates, live
//!    │       modes and windows, builds the one Snapshot, feeds recording and export
//!    ▼
//! views/ + app/ (TUI)     export/ (artifacts)     store/ (SQLite)     batch/ (headless)
//! ```
//!
//! - [`model`] is plain data and pure functions: interned tables, sample counts, typed
//!   analysis rows, the stack trie, hotspots, windows; [`trace`] holds tracepoint layouts
//!   and the expression language over them.
//! - [`sources`] read raw data and know nothing of views; [`symbols`] turn addresses into
//!   function names; [`analyzers`] are perf-prof's analyzers as pure state machines.
//! - [`feeds`] turn a session's raw records into [`feeds::Update`]s; [`engine`] is the
//!   only writer of model state; [`views`] draw its snapshots, [`export`] writes its
//!   artifacts, [`store`] records and replays sessions, [`batch`] runs it headless.
//! - [`stdio`] is the process's standard streams: results on stdout and notices on stderr,
//!   written by every layer without a panic (a full disk, a reader that quit).
//!
//! [`input`] is the one bounded reader every file goes through (caps on lines and sizes,
//! read once); [`stop`] is the process's one request to stop, which its waits heed.
//!
//! A module imports only modules listed before it in this order: stdio, stop, input, model, trace, symbols,
//! sources, store, analyzers, export, feeds, engine, config, views, app, batch, cli
//! (tests/layers.rs checks it).

pub mod analyzers;
pub mod app;
pub mod batch;
pub mod cli;
pub mod config;
pub mod engine;
pub mod export;
pub mod feeds;
pub mod input;
pub mod model;
pub mod sources;
pub mod stdio;
pub mod stop;
pub mod store;
pub mod symbols;
pub mod trace;
pub mod views;
