//! Reading what a test-kernel run recorded: frames symbolized with the crate's own ELF
//! symbolizer, root-first paths, the samples of a console window, and `perfscope qemu`'s
//! artifacts (folded files, JSON).

use std::path::Path;
use std::sync::Mutex;

use perfscope::sources::qperf_file::QperfRecord;
use perfscope::symbols::{ElfImage, Symbolizer};
use serde_json::Value;

/// A kernel ELF as a symbolizer. ElfImage is Send, not Sync (addr2line's lazy caches):
/// shared behind a lock.
pub struct KernelSymbols(Mutex<ElfImage>);

impl KernelSymbols {
    pub fn open(elf: &Path) -> KernelSymbols {
        KernelSymbols(Mutex::new(
            ElfImage::open(elf).unwrap_or_else(|e| panic!("open {}: {e}", elf.display())),
        ))
    }

    /// The function (outermost of the inline chain) an address is in; return addresses are
    /// looked up at `address - 1`, the call instruction.
    pub fn function(&self, address: u64, is_return: bool) -> String {
        let lookup = if is_return { address - 1 } else { address };
        self.0
            .lock()
            .expect("symbolizer lock")
            .symbolize(lookup)
            .last()
            .map_or_else(|| format!("{address:#x}"), |f| f.name.clone())
    }

    /// Root-first folded path of a record.
    pub fn path(&self, record: &QperfRecord) -> String {
        let mut names: Vec<String> = record
            .trace
            .iter()
            .enumerate()
            .map(|(i, &a)| self.function(a, i > 0))
            .collect();
        names.reverse();
        names.join(";")
    }
}

/// The records between two CLOCK_MONOTONIC instants, for a recording whose timestamps
/// count from `epoch_ns`.
pub fn in_window(records: &[QperfRecord], epoch_ns: u64, start_ns: u64, end_ns: u64) -> Vec<&QperfRecord> {
    let (start, end) = (start_ns - epoch_ns, end_ns - epoch_ns);
    records
        .iter()
        .filter(|r| r.elapsed_ns.is_some_and(|t| t >= start && t <= end))
        .collect()
}

pub fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
        .unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

/// `(stack, weight)` lines of a folded file.
pub fn folded_lines(folded: &Path) -> Vec<(String, u64)> {
    std::fs::read_to_string(folded)
        .unwrap_or_else(|e| panic!("{}: {e}", folded.display()))
        .lines()
        .map(|line| {
            let (stack, n) = line.rsplit_once(' ').expect("folded line: stack weight");
            (stack.to_string(), n.parse().expect("folded weight"))
        })
        .collect()
}

/// Self weight per leaf function of a folded file, heaviest first.
pub fn folded_leaves(folded: &Path) -> Vec<(String, u64)> {
    let mut counts = std::collections::BTreeMap::<String, u64>::new();
    for (stack, n) in folded_lines(folded) {
        *counts
            .entry(stack.rsplit(';').next().unwrap_or_default().to_string())
            .or_default() += n;
    }
    let mut v: Vec<_> = counts.into_iter().collect();
    v.sort_by_key(|e| std::cmp::Reverse(e.1));
    v
}

/// How many samples (at 1 kHz) of a workload may fall before its start marker: the marker
/// is stamped when perfscope's console thread reads the line, a scheduler wake-up after
/// the guest wrote it, so on a loaded machine a sample or two land before it. More means
/// the window is wrong.
pub const MARKER_LATENCY_SAMPLES: u64 = 3;

/// Samples of a workload-window folded file whose stack does not pass through `function`:
/// the stop marker is stamped when perfscope has read the whole marker line, so the
/// guest's printing of that line (`BENCH_END result=… ms=…`, whose leaf-function frames
/// may lack their caller under frame-pointer unwinding) and the read latency after it fall
/// inside the window. At most [`MARKER_LATENCY_SAMPLES`] at each end; more means the window
/// is wrong.
pub fn samples_outside(workload_folded: &Path, function: &str) -> u64 {
    folded_lines(workload_folded)
        .iter()
        .filter(|(s, _)| !s.split(';').any(|f| f == function))
        .map(|(_, n)| n)
        .sum()
}

/// Samples of a boot-phase folded file whose stack passes through `function`.
pub fn samples_before_the_start_marker(boot_folded: &Path, function: &str) -> u64 {
    folded_lines(boot_folded)
        .iter()
        .filter(|(s, _)| s.split(';').any(|f| f == function))
        .map(|(_, n)| n)
        .sum()
}
