//! Facts about an input, independent of any selection: what was read ([`InputInfo`]),
//! what the source counted while reading it ([`SourceFacts`], [`KernelFilterFacts`]) and
//! how the run was cut into boot / workload / post, and why ([`WindowInfo`]). Sources and
//! ingest fill them in; exports write them (`report.json`, `resolve.stats.json`,
//! `window.json`, whose keys follow the reference's `PerfWindowReport`) and the live state
//! carries them.

use serde_json::{Value, json};

/// What a session profiles, for the reports: a guest kernel's notes (the qperf plugin,
/// the reference harness, firmware and physical aliases) mean nothing for a host session,
/// and a folded profile has neither.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Target {
    /// A guest kernel in QEMU (a live run, a qperf.bin, or a recording of either).
    Guest,
    /// This Linux host through perf_event (sampling or tracepoints).
    Host,
    /// A profile that says neither (a folded file).
    #[default]
    Profile,
}

impl Target {
    /// From the kind a session started as (`qemu`, `host`, `host-trace`, `file`, or a
    /// replay's recorded one) and the kind of input it read (`qperf`, `folded`, …).
    pub fn of(source_kind: &str, input_kind: &str) -> Target {
        match (source_kind, input_kind) {
            ("qemu", _) | (_, "qperf") => Target::Guest,
            ("host" | "host-trace", _) | (_, "perf_event") => Target::Host,
            _ => Target::Profile,
        }
    }
}

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
    /// How the plugin's DWARF unwinds ended (`--callchain dwarf`), over the whole run.
    pub unwind_stops: Option<UnwindStops>,
    /// Which call stacks a QEMU session collected, who chose them and why.
    pub callchain: Option<CallchainFacts>,
}

/// How a QEMU session's call stacks were chosen: `--callchain`, or by default from what
/// the kernel supports (its frame pointers, else its call-frame information, else none).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CallchainFacts {
    /// `fp`, `dwarf`, `leaf`.
    pub method: String,
    /// `default` or `--callchain`.
    pub chosen_by: String,
    /// "kernel.elf keeps no frame pointers (0 of 15 …) and has .debug_frame".
    pub reason: String,
}

impl CallchainFacts {
    pub fn by_default(&self) -> bool {
        self.chosen_by == "default"
    }

    pub fn to_json(&self) -> Value {
        json!({ "method": self.method, "chosen_by": self.chosen_by, "reason": self.reason })
    }

    pub fn from_json(value: &Value) -> Option<CallchainFacts> {
        let text = |key: &str| Some(value.get(key)?.as_str()?.to_string());
        Some(CallchainFacts {
            method: text("method")?,
            chosen_by: text("chosen_by")?,
            reason: text("reason")?,
        })
    }

    /// The status line's part: `callchain dwarf (default)`.
    pub fn status_text(&self) -> String {
        format!("callchain {} ({})", self.method, self.chosen_by)
    }
}

/// Why the plugin's DWARF CFI unwinds ended (its summary's `unwind_stop_*` counts; whole
/// run, not per window: the plugin counts them as it samples).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct UnwindStops {
    /// At the outermost frame (a zero return address or frame pointer): whole stacks.
    pub end: u64,
    /// At an address without call-frame information (assembly).
    pub cfi_missing: u64,
    /// A guest read failed or a rule could not be evaluated.
    pub bad_read: u64,
    /// At `--max-depth`.
    pub depth_limit: u64,
    /// At a return address outside the kernel text.
    pub left_kernel_text: u64,
}

impl UnwindStops {
    const KEYS: [&'static str; 5] = [
        "end",
        "cfi_missing",
        "bad_read",
        "depth_limit",
        "left_kernel_text",
    ];

    fn counts(&self) -> [u64; 5] {
        [
            self.end,
            self.cfi_missing,
            self.bad_read,
            self.depth_limit,
            self.left_kernel_text,
        ]
    }

    /// From a plugin summary's `unwind_stop_<reason> = n` lines; `None` without them (a
    /// leaf or frame-pointer run, or an older plugin).
    pub fn from_summary(entries: &[(String, String)]) -> Option<UnwindStops> {
        let count = |reason: &str| -> Option<u64> {
            let key = format!("unwind_stop_{reason}");
            entries.iter().find(|(k, _)| *k == key)?.1.trim().parse().ok()
        };
        Some(UnwindStops {
            end: count("end")?,
            cfi_missing: count("cfi_missing")?,
            bad_read: count("bad_read")?,
            depth_limit: count("depth_limit")?,
            left_kernel_text: count("left_kernel_text")?,
        })
    }

    pub fn total(&self) -> u64 {
        self.counts().iter().sum()
    }

    pub fn to_json(&self) -> Value {
        let mut m = serde_json::Map::new();
        for (key, n) in Self::KEYS.iter().zip(self.counts()) {
            m.insert((*key).into(), json!(n));
        }
        Value::Object(m)
    }

    /// `unwinds: 97% whole · 2% no CFI · 1% depth limit`: the non-zero reasons, in order.
    pub fn describe(&self) -> String {
        let total = self.total().max(1) as f64;
        let labels = ["whole", "no CFI", "bad read", "depth limit", "left kernel"];
        let parts: Vec<String> = labels
            .iter()
            .zip(self.counts())
            .filter(|(_, n)| *n > 0)
            .map(|(label, n)| format!("{:.0}% {label}", 100.0 * n as f64 / total))
            .collect();
        format!(
            "unwinds: {}",
            if parts.is_empty() {
                "none".into()
            } else {
                parts.join(" · ")
            }
        )
    }
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

    #[test]
    fn unwind_stops_come_from_the_plugin_summary() {
        let entries: Vec<(String, String)> = [
            ("callchain_method", "dwarf"),
            ("unwind_stop_end", "97"),
            ("unwind_stop_cfi_missing", "2"),
            ("unwind_stop_bad_read", "0"),
            ("unwind_stop_depth_limit", "1"),
            ("unwind_stop_left_kernel_text", "0"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let stops = UnwindStops::from_summary(&entries).unwrap();
        assert_eq!(stops.total(), 100);
        assert_eq!(
            stops.describe(),
            "unwinds: 97% whole · 2% no CFI · 1% depth limit"
        );
        assert_eq!(stops.to_json()["cfi_missing"], json!(2));
        assert_eq!(
            UnwindStops::from_summary(&entries[..1]),
            None,
            "a frame-pointer run has none"
        );
    }
}
