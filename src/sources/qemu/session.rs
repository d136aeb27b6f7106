//! One profiling session: QEMU started with the plugin, the console watched, the workload
//! typed once the prompt is up, the window cut by the markers, QEMU stopped on the stop
//! marker, the workload timeout or the overall timeout — and the facts for window.json,
//! qemu.time.txt and qemu.perf.csv at the end.

use std::time::{Duration, Instant};

use crate::model::{PhaseMarkers, WindowInfo};

use super::console::{ConsoleEvent, ConsoleWatch, describe_prompts};
use super::host_perf::HostCounters;
use super::host_time::time_txt;
use super::process::{ConsoleChunk, QemuProcess};
use super::session_options::SessionOptions;
use crate::sources::clock::monotonic_ns;

/// What one poll brought.
#[derive(Debug, Default)]
pub struct SessionUpdate {
    pub console: Vec<ConsoleChunk>,
    pub markers_changed: bool,
    /// QEMU has exited.
    pub exited: bool,
}

/// The facts of a finished session.
#[derive(Clone, Debug)]
pub struct SessionReport {
    pub window: WindowInfo,
    pub time_txt: String,
    pub perf_csv: Option<String>,
    /// `qemu.toml`: the machine and command the run used.
    pub qemu_toml: String,
    pub exit_status: i32,
    pub qemu_stderr: String,
    pub warnings: Vec<String>,
}

/// A running session.
pub struct QemuSession {
    options: SessionOptions,
    process: QemuProcess,
    watch: ConsoleWatch,
    cmd_sent: bool,
    warnings: Vec<String>,
    truncated_by_timeout: bool,
    stop_requested: bool,
    counters: Option<HostCounters>,
    perf_csv: Option<String>,
}

impl QemuSession {
    /// Start QEMU.
    pub fn start(options: SessionOptions) -> anyhow::Result<QemuSession> {
        let args = options.launch.args();
        let process = QemuProcess::spawn(
            &options.launch.qemu,
            &args,
            options.launch.qmp_socket.clone(),
            options.epoch_ns,
        )?;
        let counters = match &options.host_perf_events {
            Some(events) => Some(HostCounters::attach(process.pid(), events)?),
            None => None,
        };
        let watch = ConsoleWatch::new(
            &options.shell_prompts,
            options.start_marker.as_deref(),
            options.stop_marker.as_deref(),
        );
        let mut warnings = Vec::new();
        if options.stop_marker.is_some() && options.start_marker.is_none() {
            warnings.push("start marker is not configured; boot samples are not excluded".into());
        }
        if options.workload_timeout.is_some() && options.start_marker.is_none() {
            warnings.push("--workload-timeout requires a start marker to open the window".into());
        }
        if options.start_marker.is_some() && !process.console_realtime {
            warnings.push(
                "the console reader could not run real-time (needs root or RLIMIT_RTPRIO); \
                 on a busy machine the window may open a few samples late"
                    .into(),
            );
        }
        Ok(QemuSession {
            options,
            process,
            watch,
            cmd_sent: false,
            warnings,
            truncated_by_timeout: false,
            stop_requested: false,
            counters,
            perf_csv: None,
        })
    }

    pub fn pid(&self) -> u32 {
        self.process.pid()
    }

    /// Marker times on the session clock.
    pub fn markers(&self) -> PhaseMarkers {
        PhaseMarkers {
            start_ns: self.watch.start_ns,
            stop_ns: self.watch.stop_ns,
        }
    }

    fn now_ns(&self) -> u64 {
        monotonic_ns().saturating_sub(self.options.epoch_ns)
    }

    /// Take console output, react to prompt and markers, enforce the timeouts.
    pub fn poll(&mut self) -> SessionUpdate {
        let mut update = SessionUpdate::default();
        while let Ok((t, bytes)) = self.process.console.try_recv() {
            for event in self.watch.feed(t, &bytes) {
                match event {
                    ConsoleEvent::Prompt => {
                        if !self.cmd_sent
                            && let Some(cmd) = self.options.init_cmd.clone()
                        {
                            self.watch.typed(&cmd);
                            self.process.write_console(format!("{cmd}\n").as_bytes());
                            self.cmd_sent = true;
                        }
                    }
                    ConsoleEvent::Start(_) => update.markers_changed = true,
                    ConsoleEvent::Stop(_) => {
                        update.markers_changed = true;
                        self.stop("stop marker");
                    }
                }
            }
            update.console.push((t, bytes));
        }
        if let (Some(start), None, Some(limit)) = (
            self.watch.start_ns,
            self.watch.stop_ns,
            self.options.workload_timeout,
        ) {
            let now = self.now_ns();
            if now.saturating_sub(start) >= limit.as_nanos() as u64 {
                self.watch.stop_ns = Some(now);
                self.truncated_by_timeout = true;
                self.warnings.push(format!(
                    "workload window timed out after {}s without stop marker",
                    limit.as_secs_f64()
                ));
                update.markers_changed = true;
                self.stop("workload timeout");
            }
        }
        if let Some(limit) = self.options.timeout
            && !self.stop_requested
            && self.process.started.elapsed() >= limit
        {
            self.warnings.push(format!(
                "QEMU timed out after {}s before workload completed",
                limit.as_secs_f64()
            ));
            self.stop("timeout");
        }
        self.process.escalate();
        if self.process.poll_exit() {
            if self.perf_csv.is_none() {
                self.perf_csv = self.counters.as_mut().map(HostCounters::csv);
            }
            update.exited = true;
        }
        update
    }

    /// The init command waits for the shell prompt: what it waits for and since when
    /// (`None` once typed, or with nothing to type).
    pub fn waiting_for_prompt(&self) -> Option<(String, Duration)> {
        (self.options.init_cmd.is_some() && !self.cmd_sent && self.process.exit().is_none()).then(|| {
            (
                describe_prompts(&self.options.shell_prompts),
                self.process.started.elapsed(),
            )
        })
    }

    /// Type into the guest.
    pub fn send_input(&mut self, bytes: &[u8]) {
        self.process.write_console(bytes);
    }

    /// Stop QEMU (once); `why` is kept for the report.
    pub fn stop(&mut self, _why: &str) {
        if !self.stop_requested {
            self.stop_requested = true;
            self.process.request_stop();
        }
    }

    pub fn exited(&self) -> bool {
        self.process.exit().is_some()
    }

    /// The facts, once QEMU has exited (call after `poll` reported `exited`).
    pub fn report(&mut self) -> SessionReport {
        let (status, times, wall) =
            self.process
                .exit()
                .cloned()
                .unwrap_or((-1, None, self.process.started.elapsed()));
        let mut warnings = self.warnings.clone();
        let o = &self.options;
        if o.init_cmd.is_some() && !self.cmd_sent {
            warnings.push(format!(
                "the {} never appeared; the workload command was not sent (set --shell-prefix)",
                describe_prompts(&o.shell_prompts)
            ));
        }
        let enabled = o.start_marker.is_some() || o.stop_marker.is_some() || o.workload_timeout.is_some();
        if enabled {
            if o.start_marker.is_some() && self.watch.start_ns.is_none() {
                warnings.push("start marker was not observed; folded stacks include boot samples".into());
            }
            if o.stop_marker.is_some() && self.watch.stop_ns.is_none() {
                warnings.push("stop marker was not observed; workload window extends to QEMU exit".into());
            }
        }
        let secs = |ns: Option<u64>| ns.map(|n| n as f64 / 1e9);
        let window = WindowInfo {
            enabled,
            start_marker: o.start_marker.clone(),
            stop_marker: o.stop_marker.clone(),
            start_time: secs(self.watch.start_ns),
            stop_time: secs(self.watch.stop_ns),
            workload_timeout: o.workload_timeout.map(|d| d.as_secs_f64()),
            truncated_by_timeout: self.truncated_by_timeout,
            stop_requested: self.stop_requested,
            stop_method: self.process.stop_method().map(|m| m.name().to_string()),
            warnings: warnings.clone(),
            // Console chunks and samples are stamped from one CLOCK_MONOTONIC epoch.
            method: if enabled {
                "monotonic_clock_shared_with_plugin".into()
            } else {
                "disabled".into()
            },
            boot_samples_excluded: None,
            post_window_samples_excluded: None,
        };
        SessionReport {
            window,
            time_txt: time_txt(wall, times.as_ref(), status),
            perf_csv: self.perf_csv.clone(),
            qemu_toml: super::config_toml::qemu_toml(&self.options),
            exit_status: status,
            qemu_stderr: self.process.stderr_text(),
            warnings,
        }
    }

    /// Wait (polling) until QEMU exits or `limit` passes; returns whether it exited.
    pub fn wait_exit(&mut self, limit: Duration) -> bool {
        let start = Instant::now();
        while start.elapsed() < limit {
            if self.poll().exited {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }
}
