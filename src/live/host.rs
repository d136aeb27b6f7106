//! Host sources: perf_event CPU sampling and tracepoint analyzers, as model sources.
//! Each runs a reader thread that drains the rings promptly (so the kernel loses as little
//! as possible) and hands finished work to the model thread.

pub mod analysis;
pub mod comms;
pub mod options;
pub mod replay;
pub mod sample_session;
pub mod sample_source;
pub mod targets;
pub mod trace_session;
pub mod trace_source;
pub mod workload;

/// The session meta key that keeps a host session's start (CLOCK_MONOTONIC ns, what
/// [`crate::live::state::ModelState::time_origin_ns`] counts from) for a replay.
pub const TIME_ORIGIN_META: &str = "time_origin_ns";
