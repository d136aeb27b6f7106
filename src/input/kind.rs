//! What an input is, and the caps that bound reading it.
//!
//! The caps are far above any real input of the kind (so none is refused) and low enough
//! that an endless input (`/dev/zero`, `yes`, a huge file without a newline) ends within
//! seconds with an error naming the cap. Binary inputs are bounded by their own readers:
//! a qperf.bin record by `MAX_RECORD_WIRE_BYTES`, an ELF is mapped, not read, and a
//! session is read in place by SQLite.

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;

/// The kinds of text perfscope reads, each with its caps.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum InputKind {
    /// Folded stacks (`report --folded`, `open`, `diff`): streamed line by line.
    Folded,
    /// A guest console log (`--console`): streamed to the console pane, which keeps the
    /// newest lines.
    ConsoleLog,
    /// A kallsyms file (`--kallsyms`, `/proc/kallsyms`): streamed, its symbols kept.
    Kallsyms,
    /// A JIT's `/tmp/perf-PID.map`: streamed, its symbols kept.
    PerfMap,
    /// The plugin's `*.summary.txt` beside a qperf.bin.
    PluginSummary,
    /// A TOML configuration: a keymap, a theme, the `qemu.toml` beside a recording.
    Config,
    /// A `/proc`, `/sys` or tracefs file.
    System,
    /// An answer from QEMU's QMP socket.
    Qmp,
    /// A child process's stderr (QEMU's messages), kept for the report.
    ChildOutput,
}

/// How much of an input is read.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The most bytes read; `None` for an input streamed through in bounded memory.
    pub max_bytes: Option<u64>,
    /// The longest line, without its `\n`.
    pub max_line_bytes: usize,
}

impl InputKind {
    /// Every kind, for the README's table and its test.
    pub const ALL: [InputKind; 9] = [
        InputKind::Folded,
        InputKind::ConsoleLog,
        InputKind::Kallsyms,
        InputKind::PerfMap,
        InputKind::PluginSummary,
        InputKind::Config,
        InputKind::System,
        InputKind::Qmp,
        InputKind::ChildOutput,
    ];

    /// The name an error gives the input: "line 3 of x is longer than … of a {what}".
    pub fn what(self) -> &'static str {
        match self {
            InputKind::Folded => "folded file",
            InputKind::ConsoleLog => "console log",
            InputKind::Kallsyms => "kallsyms file",
            InputKind::PerfMap => "perf map",
            InputKind::PluginSummary => "plugin summary",
            InputKind::Config => "TOML file",
            InputKind::System => "/proc, /sys or tracefs file",
            InputKind::Qmp => "QMP answer",
            InputKind::ChildOutput => "child's output",
        }
    }

    pub const fn limits(self) -> Limits {
        // Why each figure: a folded line of 10,000 frames of 1,600 characters fits; a
        // console pane keeps 131,072 lines (~10 MB), so 256 MiB of log is 25 times what it
        // can show; /proc/kallsyms is ~5 MiB with every module of a distribution kernel
        // and a kallsyms line at most ~600 bytes (512-byte names); a JIT map of a long-lived
        // process reaches tens of MiB; the summary and TOML files are a few KiB; the
        // largest /proc file read is a process's maps (~65,530 mappings of ~150 bytes by
        // default), the longest tracefs line a `print fmt` of a few KiB.
        let (max_bytes, max_line_bytes) = match self {
            InputKind::Folded => (None, 16 * MIB),
            InputKind::ConsoleLog => (Some(256 * MIB), MIB),
            InputKind::Kallsyms => (Some(64 * MIB), 4 * KIB),
            InputKind::PerfMap => (Some(256 * MIB), 64 * KIB),
            InputKind::PluginSummary | InputKind::Config => (Some(MIB), 64 * KIB),
            InputKind::System => (Some(64 * MIB), MIB),
            InputKind::Qmp => (Some(MIB), MIB),
            InputKind::ChildOutput => (Some(MIB), MIB),
        };
        Limits {
            max_bytes,
            max_line_bytes: max_line_bytes as usize,
        }
    }

    /// What to do about an input past its size cap.
    pub(super) fn too_large_advice(self) -> &'static str {
        match self {
            InputKind::ConsoleLog => {
                "the console pane keeps only the newest 131,072 lines: give the log's tail \
                 (`tail -c 100M LOG > tail.log`)"
            }
            InputKind::Kallsyms => "is it a kallsyms file? (/proc/kallsyms is a few MiB)",
            _ => "is it the right file?",
        }
    }
}

/// `16777216` → `16 MiB`; a size that is not a whole number of KiB stays in bytes.
pub fn size_text(bytes: u64) -> String {
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else if bytes >= KIB && bytes.is_multiple_of(KIB) {
        format!("{} KiB", bytes / KIB)
    } else {
        format!("{bytes} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_said_in_their_unit() {
        assert_eq!(size_text(16 * MIB), "16 MiB");
        assert_eq!(size_text(4 * KIB), "4 KiB");
        assert_eq!(size_text(4097), "4097 bytes");
    }

    #[test]
    fn every_kind_caps_its_lines_and_only_folded_files_stream_without_a_size_cap() {
        for kind in InputKind::ALL {
            let limits = kind.limits();
            assert!(limits.max_line_bytes >= 4096, "{kind:?}");
            assert_eq!(limits.max_bytes.is_none(), kind == InputKind::Folded, "{kind:?}");
            if let Some(max) = limits.max_bytes {
                assert!(max >= limits.max_line_bytes as u64, "{kind:?}");
            }
        }
    }
}
