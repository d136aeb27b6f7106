//! How a QEMU session is run and watched: the launch, the clock's zero, the prompt, the
//! workload and its markers, the timeouts. Read by the session and written down by
//! config_toml (qemu.toml).

use std::time::Duration;

use super::machine::QemuLaunch;

/// How to run and watch the session.
#[derive(Clone, Debug)]
pub struct SessionOptions {
    pub launch: QemuLaunch,
    /// The session clock's zero (CLOCK_MONOTONIC ns), shared with the plugin.
    pub epoch_ns: u64,
    /// Texts of the shell prompt (any of them); the init command waits for it.
    pub shell_prompts: Vec<String>,
    /// Typed once the prompt is up (`--shell-init-cmd` / `--workload`).
    pub init_cmd: Option<String>,
    pub start_marker: Option<String>,
    pub stop_marker: Option<String>,
    /// After the start marker, stop QEMU after this long without a stop marker.
    pub workload_timeout: Option<Duration>,
    /// Stop QEMU after this long whatever happens.
    pub timeout: Option<Duration>,
    /// perf_event counters of the QEMU process (`--host-perf-events`).
    pub host_perf_events: Option<String>,
}
