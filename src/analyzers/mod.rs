//! Analyzers: host tracepoint events in, latency distributions and key/value tables out
//! (syscalls, rundelay, multi-trace delay/pair, top), as perf-prof computes them.
//! Pure state machines over [`crate::model::trace_event::TraceEvent`]s; no I/O.
