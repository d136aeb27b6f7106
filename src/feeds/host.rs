//! Host feeds: perf_event CPU sampling and tracepoint analyzers. Each runs a reader thread
//! that drains the rings promptly (so the kernel loses as little as possible) and hands
//! typed batches to the engine.

pub mod dwarf_stacks;
pub mod event_lines;
pub mod event_plan;
pub mod every_cpu_targets;
pub mod heatmap;
pub mod missed_switch;
pub mod offender_stacks;
pub mod options;
pub mod probes;
pub mod raw;
pub mod sample_counters;
pub mod sample_resolver;
pub mod sampling;
pub mod sampling_feed;
pub mod targets;
pub mod tracing;
pub mod tracing_feed;
pub mod workload;
