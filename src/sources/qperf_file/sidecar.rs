//! The plugin's summary sidecar (spec §1.7): `key = value` lines written beside the
//! `qperf.bin`, when the plugin's writer thread ends.
//!
//! The reference plugin practically never writes it (its channel never closes), so
//! "absent" is the normal case and is `Ok(None)`, not an error. Entries keep their order
//! so a copy reads like the original; unknown keys are kept too.

use std::io;
use std::path::{Path, PathBuf};

use crate::input::{InputKind, read_bytes};

use super::{Callchain, FormatVersion};

/// The plugin's rule, `out.with_extension("summary.txt")`: `qperf.bin` →
/// `qperf.summary.txt`, `kernel.bin` → `kernel.summary.txt`.
pub fn sidecar_path(qperf_bin: &Path) -> PathBuf {
    qperf_bin.with_extension("summary.txt")
}

/// The sidecar's `key = value` pairs, in file order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PluginSummary {
    pub entries: Vec<(String, String)>,
}

impl PluginSummary {
    /// Lines without `=` (blank lines, `[section]` headers of a copied summary) are
    /// skipped; keys and values are trimmed.
    pub fn parse(text: &str) -> Self {
        let entries = text
            .lines()
            .filter_map(|line| line.split_once('='))
            .map(|(key, value)| (key.trim().to_owned(), value.trim().to_owned()))
            .filter(|(key, _)| !key.is_empty())
            .collect();
        PluginSummary { entries }
    }

    /// `Ok(None)` when the file does not exist. Invalid UTF-8 is replaced, not refused: a
    /// damaged sidecar should still show what it can. Read within the plugin summary's caps
    /// (far above the dozen short lines the plugin writes): a wrong path is an error, not a
    /// file held whole.
    pub fn read(path: &Path) -> io::Result<Option<Self>> {
        match read_bytes(path, InputKind::PluginSummary) {
            Ok(bytes) => Ok(Some(Self::parse(&String::from_utf8_lossy(&bytes)))),
            Err(e) if e.io_kind() == Some(io::ErrorKind::NotFound) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// The same `key = value` format the plugin writes.
    pub fn to_text(&self) -> String {
        self.entries
            .iter()
            .map(|(key, value)| format!("{key} = {value}\n"))
            .collect()
    }

    /// The last value for `key`, as a later line overrides an earlier one where the report
    /// post-processor merges summaries.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.entries
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Replace the value of `key` in place, or append it.
    pub fn set(&mut self, key: &str, value: impl Into<String>) {
        let value = value.into();
        match self.entries.iter_mut().rev().find(|(k, _)| k == key) {
            Some(entry) => entry.1 = value,
            None => self.entries.push((key.to_owned(), value)),
        }
    }

    fn number<T: std::str::FromStr>(&self, key: &str) -> Option<T> {
        self.get(key)?.parse().ok()
    }

    /// Records the plugin enqueued (not necessarily all written).
    pub fn samples(&self) -> Option<u64> {
        self.number("samples")
    }

    /// Records discarded because the queue was full.
    pub fn dropped_samples(&self) -> Option<u64> {
        self.number("dropped_samples")
    }

    pub fn sample_failures(&self) -> Option<u64> {
        self.number("sample_failures")
    }

    pub fn format_version(&self) -> Option<FormatVersion> {
        FormatVersion::from_u8(self.number("qperf_format_version")?)
    }

    pub fn frequency_hz(&self) -> Option<u32> {
        self.number("frequency_hz")
    }

    pub fn max_stack_depth(&self) -> Option<u32> {
        self.number("max_stack_depth")
    }

    /// QEMU's target name, e.g. `riscv64`.
    pub fn arch(&self) -> Option<&str> {
        self.get("arch")
    }

    /// `leaf` or `fp`; any other text is `None` (read it with [`Self::get`]).
    pub fn callchain_method(&self) -> Option<Callchain> {
        match self.get("callchain_method")? {
            "leaf" => Some(Callchain::Leaf),
            "fp" => Some(Callchain::Fp),
            "dwarf" => Some(Callchain::Dwarf),
            _ => None,
        }
    }

    /// Read by the report post-processor, but no plugin version writes them.
    pub fn executed_instructions(&self) -> Option<u64> {
        self.number("executed_instructions")
    }

    pub fn executed_blocks(&self) -> Option<u64> {
        self.number("executed_blocks")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLUGIN_TEXT: &str = "qperf_format_version = 3
record_timestamp = elapsed_ns
record_fields = elapsed_ns,pc,sp,fp,cpu,callchain,trace
callchain_method = fp
callchain_enabled = true
samples = 12345
dropped_samples = 7
sample_failures = 0
max_stack_depth = 128
frequency_hz = 99
arch = riscv64
output = /tmp/run/qperf.bin
";

    #[test]
    fn sidecar_path_replaces_the_extension_like_the_plugin() {
        assert_eq!(
            sidecar_path(Path::new("out/qperf.bin")),
            Path::new("out/qperf.summary.txt")
        );
        assert_eq!(
            sidecar_path(Path::new("kernel.bin")),
            Path::new("kernel.summary.txt")
        );
        assert_eq!(sidecar_path(Path::new("qperf")), Path::new("qperf.summary.txt"));
        assert_eq!(sidecar_path(Path::new("a.b.bin")), Path::new("a.b.summary.txt"));
    }

    #[test]
    fn plugin_text_parses_into_typed_values_in_order() {
        let summary = PluginSummary::parse(PLUGIN_TEXT);
        assert_eq!(summary.entries.len(), 12);
        assert_eq!(summary.entries[0], ("qperf_format_version".into(), "3".into()));
        assert_eq!(summary.format_version(), Some(FormatVersion::V3));
        assert_eq!(summary.samples(), Some(12345));
        assert_eq!(summary.dropped_samples(), Some(7));
        assert_eq!(summary.sample_failures(), Some(0));
        assert_eq!(summary.frequency_hz(), Some(99));
        assert_eq!(summary.max_stack_depth(), Some(128));
        assert_eq!(summary.arch(), Some("riscv64"));
        assert_eq!(summary.callchain_method(), Some(Callchain::Fp));
        assert_eq!(
            summary.get("record_fields"),
            Some("elapsed_ns,pc,sp,fp,cpu,callchain,trace")
        );
        assert_eq!(summary.executed_instructions(), None);
        assert_eq!(summary.executed_blocks(), None);
    }

    #[test]
    fn to_text_writes_back_the_plugin_format() {
        assert_eq!(PluginSummary::parse(PLUGIN_TEXT).to_text(), PLUGIN_TEXT);
    }

    #[test]
    fn unparsable_values_and_stray_lines_are_none_not_errors() {
        let text = "[plugin_summary]\n\ndropped_samples = unknown\nfrequency_hz = -3\n\
                    qperf_format_version = 9\ncallchain_method = logical\nexecuted_blocks = 42\n = x\n";
        let summary = PluginSummary::parse(text);
        assert_eq!(summary.entries.len(), 5);
        assert_eq!(summary.dropped_samples(), None);
        assert_eq!(summary.frequency_hz(), None);
        assert_eq!(summary.format_version(), None);
        assert_eq!(summary.callchain_method(), None);
        assert_eq!(summary.get("callchain_method"), Some("logical"));
        assert_eq!(summary.executed_blocks(), Some(42));
    }

    #[test]
    fn later_keys_override_and_set_replaces_in_place() {
        let mut summary = PluginSummary::parse("samples = 1\narch = riscv64\nsamples = 2\n");
        assert_eq!(summary.samples(), Some(2));
        summary.set("arch", "loongarch64");
        summary.set("executed_instructions", "1000");
        assert_eq!(
            summary.to_text(),
            "samples = 1\narch = loongarch64\nsamples = 2\nexecuted_instructions = 1000\n"
        );
        assert_eq!(summary.executed_instructions(), Some(1000));
    }

    #[test]
    fn read_returns_none_when_absent_and_tolerates_bad_utf8() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = sidecar_path(&dir.path().join("qperf.bin"));
        assert_eq!(PluginSummary::read(&path).expect("absent is fine"), None);
        std::fs::write(&path, b"arch = risc\xffv\nsamples = 5\n").expect("write");
        let summary = PluginSummary::read(&path).expect("read").expect("present");
        assert_eq!(summary.arch(), Some("risc\u{fffd}v"));
        assert_eq!(summary.samples(), Some(5));
    }
}
