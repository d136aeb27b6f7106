//! Facts about an input, independent of any selection: what was read ([`InputInfo`]),
//! what the source counted while reading it ([`SourceFacts`], [`KernelFilterFacts`]) and
//! how the run was cut into boot / workload / post, and why ([`WindowInfo`]). Sources and
//! ingest fill them in; exports write them (`report.json`, `resolve.stats.json`,
//! `window.json`, whose keys follow the reference's `PerfWindowReport`) and the live state
//! carries them.

use serde_json::{Value, json};

/// What was read, for the report.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct InputInfo {
    /// `qperf`, `folded`.
    pub kind: String,
    pub path: String,
    /// `v3`, …
    pub format: Option<String>,
    pub records: u64,
    pub bytes_read: u64,
    /// A sentence: "clean end of file", "truncated last record at byte 1234: 12 bytes lost".
    pub end: String,
    /// The read ended at a clean end of input.
    pub clean: bool,
    pub bytes_lost: u64,
}

/// Facts about the whole input, independent of the selection.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SourceFacts {
    /// qperf record format (1, 2, 3); `None` for other inputs.
    pub format_version: Option<u8>,
    /// Records read, including those the kernel filter dropped.
    pub raw_records: u64,
    /// Sum of raw trace lengths over all records.
    pub total_frames: u64,
    pub first_sample_ns: Option<u64>,
    pub last_sample_ns: Option<u64>,
    pub kernel_filter: Option<KernelFilterFacts>,
    pub aliased_frames: u64,
    pub unknown_frames: u64,
    /// Trace entries outside the kernel image, by region.
    pub outside_kernel: OutsideKernel,
    /// The kernel image's physical alias, when it has one.
    pub kernel_alias: Option<KernelAliasFacts>,
    /// The symbols do not match the samples (another ELF, another architecture): why.
    /// The reports then say `result: incomplete`.
    pub symbols_mismatch: Option<String>,
}

/// Samples whose leaf lies outside the kernel image, by region, and the return addresses
/// not used because they lie outside it.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct OutsideKernel {
    pub firmware_frames: u64,
    pub user_frames: u64,
    /// Of the user frames, those a `--user-elf` program's symbols named.
    pub user_frames_named: u64,
    /// Neither kernel, firmware nor user (named `0x…` under `[unknown]`).
    pub unknown_frames: u64,
    /// Return addresses after such a leaf, and a kernel stack's from its first one
    /// outside the kernel on.
    pub return_addresses_dropped: u64,
}

/// The physical range the kernel image runs at before the MMU is on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelAliasFacts {
    pub phys_start: u64,
    pub phys_end: u64,
    /// Added to an alias address to get its linked one.
    pub offset: u64,
    /// "program headers" or "boot protocol".
    pub source: &'static str,
}

/// What `--kernel-filter` did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelFilterFacts {
    pub text_start: u64,
    pub text_end: u64,
    pub samples_dropped: u64,
    pub frames_dropped: u64,
}

/// The marker window of a run, on the sample clock (seconds).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WindowInfo {
    /// A window was asked for (markers, a workload timeout, or explicit seconds).
    pub enabled: bool,
    pub start_marker: Option<String>,
    pub stop_marker: Option<String>,
    pub start_time: Option<f64>,
    pub stop_time: Option<f64>,
    pub workload_timeout: Option<f64>,
    pub truncated_by_timeout: bool,
    pub stop_requested: bool,
    /// `qmp_quit`, `sigterm`, `sigkill`, …
    pub stop_method: Option<String>,
    pub warnings: Vec<String>,
    /// How the window was applied to samples.
    pub method: String,
    /// Samples before the start (filled from the resolve statistics).
    pub boot_samples_excluded: Option<u64>,
    pub post_window_samples_excluded: Option<u64>,
}

impl WindowInfo {
    /// A window from `--start-sec` / `--stop-sec`.
    pub fn from_seconds(start: Option<f64>, stop: Option<f64>) -> Self {
        let enabled = start.is_some() || stop.is_some();
        Self {
            enabled,
            start_time: start,
            stop_time: stop,
            method: if enabled {
                "elapsed_ns_window".into()
            } else {
                "disabled".into()
            },
            ..Self::default()
        }
    }

    pub fn duration_sec(&self) -> Option<f64> {
        match (self.start_time, self.stop_time) {
            (Some(a), Some(b)) if b >= a => Some(b - a),
            _ => None,
        }
    }

    pub fn to_json(&self) -> Value {
        json!({
            "enabled": self.enabled,
            "start_marker": self.start_marker,
            "stop_marker": self.stop_marker,
            "start_time": self.start_time,
            "stop_time": self.stop_time,
            "duration_sec": self.duration_sec(),
            "workload_timeout": self.workload_timeout,
            "truncated_by_timeout": self.truncated_by_timeout,
            "boot_samples_excluded": self.boot_samples_excluded,
            "post_window_samples_excluded": self.post_window_samples_excluded,
            "stop_requested": self.stop_requested,
            "stop_method": self.stop_method,
            "warnings": self.warnings,
            "method": self.method,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_make_an_enabled_window() {
        let w = WindowInfo::from_seconds(Some(1.0), Some(3.5));
        let j = w.to_json();
        assert_eq!(j["enabled"], json!(true));
        assert_eq!(j["duration_sec"], json!(2.5));
        assert_eq!(j["method"], json!("elapsed_ns_window"));
        assert_eq!(
            WindowInfo::from_seconds(None, None).to_json()["method"],
            json!("disabled")
        );
    }
}
