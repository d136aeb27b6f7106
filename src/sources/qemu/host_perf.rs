//! Host perf counters of the QEMU process, counted with perf_event directly (no `perf`
//! binary): software events always work; hardware events are tried and reported as
//! `<not supported>` where the machine has no PMU (as in VMs). Written as
//! `qemu.perf.csv` in `perf stat -x ,` form so scripts that read the reference's file work.

use std::fs::File;
use std::io::Read;
use std::os::fd::FromRawFd;

use anyhow::bail;
use perf_event_open_sys as sys;
use sys::bindings::{self as b, perf_event_attr};

/// The reference's default event list.
pub const DEFAULT_EVENTS: &str = "task-clock,cycles,instructions,cache-references,cache-misses,context-switches,cpu-migrations,page-faults";

/// (type, config, unit) of an event name.
fn event_of(name: &str) -> Option<(u32, u64, &'static str)> {
    let sw = b::PERF_TYPE_SOFTWARE;
    let hw = b::PERF_TYPE_HARDWARE;
    Some(match name {
        "task-clock" => (sw, b::PERF_COUNT_SW_TASK_CLOCK as u64, "msec"),
        "cpu-clock" => (sw, b::PERF_COUNT_SW_CPU_CLOCK as u64, "msec"),
        "context-switches" | "cs" => (sw, b::PERF_COUNT_SW_CONTEXT_SWITCHES as u64, ""),
        "cpu-migrations" | "migrations" => (sw, b::PERF_COUNT_SW_CPU_MIGRATIONS as u64, ""),
        "page-faults" | "faults" => (sw, b::PERF_COUNT_SW_PAGE_FAULTS as u64, ""),
        "minor-faults" => (sw, b::PERF_COUNT_SW_PAGE_FAULTS_MIN as u64, ""),
        "major-faults" => (sw, b::PERF_COUNT_SW_PAGE_FAULTS_MAJ as u64, ""),
        "cycles" | "cpu-cycles" => (hw, b::PERF_COUNT_HW_CPU_CYCLES as u64, ""),
        "instructions" => (hw, b::PERF_COUNT_HW_INSTRUCTIONS as u64, ""),
        "cache-references" => (hw, b::PERF_COUNT_HW_CACHE_REFERENCES as u64, ""),
        "cache-misses" => (hw, b::PERF_COUNT_HW_CACHE_MISSES as u64, ""),
        "branches" | "branch-instructions" => (hw, b::PERF_COUNT_HW_BRANCH_INSTRUCTIONS as u64, ""),
        "branch-misses" => (hw, b::PERF_COUNT_HW_BRANCH_MISSES as u64, ""),
        _ => return None,
    })
}

struct Counter {
    name: String,
    unit: &'static str,
    is_clock: bool,
    /// `None` when the kernel refused the event (with why).
    file: Result<File, String>,
}

/// Counters attached to one process and the threads it creates from now on.
pub struct HostCounters {
    counters: Vec<Counter>,
}

impl HostCounters {
    /// Attach `events` (comma-separated perf names) to `pid`. Unknown names are an error;
    /// events the machine cannot count are kept as "not supported".
    pub fn attach(pid: u32, events: &str) -> anyhow::Result<HostCounters> {
        let mut counters = Vec::new();
        for name in events.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let Some((type_, config, unit)) = event_of(name) else {
                bail!(
                    "--host-perf-events: unknown event {name:?} (known: task-clock, cpu-clock, cycles, instructions, cache-references, cache-misses, branches, branch-misses, context-switches, cpu-migrations, page-faults, minor-faults, major-faults)"
                );
            };
            // SAFETY: zeroed perf_event_attr is the documented starting point.
            let mut attr: perf_event_attr = unsafe { std::mem::zeroed() };
            attr.type_ = type_;
            attr.size = std::mem::size_of::<perf_event_attr>() as u32;
            attr.config = config;
            attr.read_format = (b::PERF_FORMAT_TOTAL_TIME_ENABLED | b::PERF_FORMAT_TOTAL_TIME_RUNNING) as u64;
            attr.set_inherit(1);
            attr.set_exclude_hv(1);
            // SAFETY: attr is valid for the call; the fd is owned by the File below.
            let fd = unsafe {
                sys::perf_event_open(&mut attr, pid as i32, -1, -1, b::PERF_FLAG_FD_CLOEXEC as u64)
            };
            let file = if fd < 0 {
                Err(std::io::Error::last_os_error().to_string())
            } else {
                // SAFETY: a fresh fd we own.
                Ok(unsafe { File::from_raw_fd(fd) })
            };
            counters.push(Counter {
                name: name.to_string(),
                unit,
                is_clock: unit == "msec",
                file,
            });
        }
        Ok(HostCounters { counters })
    }

    /// Values now, as `perf stat -x ,` CSV lines.
    pub fn csv(&mut self) -> String {
        let mut out =
            String::from("# perfscope: perf_event counters of the QEMU process (host side, not guest PMU)\n");
        for c in &mut self.counters {
            let line = match &mut c.file {
                Ok(f) => {
                    let mut buf = [0u8; 24];
                    match f.read_exact(&mut buf) {
                        Ok(()) => {
                            let v = |i: usize| {
                                u64::from_ne_bytes(buf[i * 8..i * 8 + 8].try_into().unwrap_or([0; 8]))
                            };
                            let (value, enabled, running) = (v(0), v(1), v(2));
                            let pct = if enabled > 0 {
                                running as f64 / enabled as f64 * 100.0
                            } else {
                                0.0
                            };
                            let shown = if c.is_clock {
                                format!("{:.2}", value as f64 / 1e6)
                            } else {
                                value.to_string()
                            };
                            format!("{shown},{},{},{running},{pct:.2},,", c.unit, c.name)
                        }
                        Err(e) => format!("<not counted>,{},{},0,0.00,,# {e}", c.unit, c.name),
                    }
                }
                Err(why) => format!("<not supported>,{},{},0,0.00,,# {why}", c.unit, c.name),
            };
            out.push_str(&line);
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_a_busy_child_and_rejects_unknown_events() {
        let mut child = std::process::Command::new("sh")
            .args(["-c", "read x; i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"])
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut counters = HostCounters::attach(child.id(), "task-clock,context-switches,cycles").unwrap();
        drop(child.stdin.take());
        child.wait().unwrap();
        let csv = counters.csv();
        let task = csv.lines().find(|l| l.contains(",task-clock,")).unwrap();
        let ms: f64 = task.split(',').next().unwrap().parse().unwrap();
        assert!(ms > 1.0, "the busy loop took CPU time: {csv}");
        assert!(csv.lines().any(|l| l.contains(",cycles,")), "{csv}");
        let err = HostCounters::attach(1, "bogus-event").err().unwrap();
        assert!(err.to_string().contains("unknown event"));
    }
}
