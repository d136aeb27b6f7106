//! The sidecar summary (`<out>` with extension `summary.txt`, notes/qperf-format.md §1.7):
//! the reference's keys in the reference's order, then perfscope's additions. Written once
//! from the atexit callback, after the writer has drained the queue.

use std::path::{Path, PathBuf};

use crate::args::PluginArgs;

/// Everything the summary reports.
pub struct Summary<'a> {
    pub args: &'a PluginArgs,
    pub arch: &'a str,
    pub samples: u64,
    pub dropped_samples: u64,
    pub sample_failures: u64,
    pub executed_instructions: u64,
    pub executed_blocks: u64,
    pub skipped_samples: u64,
    /// Ticks that found their vCPU halted (recorded as idle samples, included in `samples`).
    pub idle_samples: u64,
    pub epoch_ns: u64,
    pub stream_errors: u64,
    pub written_records: u64,
    /// `callchain=dwarf`: how many unwinds ended for each reason (`unwind_stop_<reason>`).
    pub unwind_stops: Option<[(&'static str, u64); 5]>,
}

/// The reference's rule: `qperf.bin` → `qperf.summary.txt`.
pub fn sidecar_path(out: &Path) -> PathBuf {
    out.with_extension("summary.txt")
}

impl Summary<'_> {
    /// `disabled` (not a number) when `counters=0`, so no reader mistakes it for zero work.
    fn counter(&self, value: u64) -> String {
        if self.args.counters {
            value.to_string()
        } else {
            "disabled".into()
        }
    }

    pub fn to_text(&self) -> String {
        let unwinds = self.args.callchain.unwinds();
        let stream = self
            .args
            .stream
            .as_ref()
            .map_or_else(|| "none".to_owned(), |p| p.display().to_string());
        let lines: [(&str, String); 21] = [
            ("qperf_format_version", "3".into()),
            ("record_timestamp", "elapsed_ns".into()),
            ("record_fields", "elapsed_ns,pc,sp,fp,cpu,callchain,trace".into()),
            ("callchain_method", self.args.callchain.name().into()),
            ("callchain_enabled", unwinds.to_string()),
            ("samples", self.samples.to_string()),
            ("dropped_samples", self.dropped_samples.to_string()),
            ("sample_failures", self.sample_failures.to_string()),
            ("max_stack_depth", self.args.max_depth.to_string()),
            ("frequency_hz", self.args.freq_hz.to_string()),
            ("arch", self.arch.into()),
            ("output", self.args.out.display().to_string()),
            ("executed_instructions", self.counter(self.executed_instructions)),
            ("executed_blocks", self.counter(self.executed_blocks)),
            ("skipped_samples", self.skipped_samples.to_string()),
            ("epoch_ns", self.epoch_ns.to_string()),
            ("stream", stream),
            ("stream_errors", self.stream_errors.to_string()),
            ("sampling_mode", self.args.mode.name().into()),
            ("written_records", self.written_records.to_string()),
            ("idle_samples", self.idle_samples.to_string()),
        ];
        let stops = self.unwind_stops.iter().flatten();
        lines
            .iter()
            .map(|(key, value)| format!("{key} = {value}\n"))
            .chain(stops.map(|(reason, n)| format!("unwind_stop_{reason} = {n}\n")))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_in_reference_order_then_ours() {
        let (args, _) = PluginArgs::parse(&["out=/tmp/run/qperf.bin", "callchain=fp"]).unwrap();
        let text = Summary {
            args: &args,
            arch: "riscv64",
            samples: 10,
            dropped_samples: 1,
            sample_failures: 0,
            executed_instructions: 1000,
            executed_blocks: 100,
            skipped_samples: 3,
            idle_samples: 4,
            epoch_ns: 42,
            stream_errors: 0,
            written_records: 10,
            unwind_stops: None,
        }
        .to_text();
        let keys: Vec<&str> = text.lines().filter_map(|l| l.split(" = ").next()).collect();
        assert_eq!(
            &keys[..12],
            &[
                "qperf_format_version",
                "record_timestamp",
                "record_fields",
                "callchain_method",
                "callchain_enabled",
                "samples",
                "dropped_samples",
                "sample_failures",
                "max_stack_depth",
                "frequency_hz",
                "arch",
                "output"
            ]
        );
        assert!(text.contains("callchain_method = fp\ncallchain_enabled = true\n"));
        assert!(text.contains("stream = none\n"));
        assert!(text.contains("skipped_samples = 3\n"));
        assert!(text.contains("idle_samples = 4\n"));
        assert_eq!(
            sidecar_path(&args.out),
            PathBuf::from("/tmp/run/qperf.summary.txt")
        );
        assert!(
            !text.contains("unwind_stop"),
            "only dwarf unwinds count their stops"
        );
    }

    #[test]
    fn dwarf_unwinds_count_why_they_stopped() {
        let (args, _) = PluginArgs::parse(&["callchain=dwarf", "cfi=/k.elf"]).unwrap();
        let text = Summary {
            args: &args,
            arch: "riscv64",
            samples: 10,
            dropped_samples: 0,
            sample_failures: 0,
            executed_instructions: 0,
            executed_blocks: 0,
            skipped_samples: 0,
            idle_samples: 0,
            epoch_ns: 42,
            stream_errors: 0,
            written_records: 10,
            unwind_stops: Some([
                ("end", 7),
                ("cfi_missing", 1),
                ("bad_read", 0),
                ("depth_limit", 2),
                ("left_kernel_text", 0),
            ]),
        }
        .to_text();
        assert!(
            text.contains("callchain_method = dwarf\ncallchain_enabled = true\n"),
            "{text}"
        );
        assert!(
            text.ends_with("written_records = 10\nidle_samples = 0\nunwind_stop_end = 7\nunwind_stop_cfi_missing = 1\nunwind_stop_bad_read = 0\nunwind_stop_depth_limit = 2\nunwind_stop_left_kernel_text = 0\n"),
            "{text}"
        );
    }
}
