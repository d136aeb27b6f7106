//! `kvm-exit`: how long the host spends between a vCPU's VM exit and its next entry, per
//! exit reason, as perf-prof's kvm-exit: per instance (CPU, or thread when attached to
//! threads) the last `kvm:kvm_exit` is kept, and the next `kvm:kvm_entry` of the same
//! thread on that instance closes it. The reason is read from the exit's tracefs fields
//! (`exit_reason`, `isa`, `guest_rip`), never from a hard-coded struct; the row key is
//! perf-prof's `(isa << 32) | exit_reason`. Exits taken while the guest ran its kernel
//! (`guest_rip` in the kernel half) add to the row's [`LatencyStats::extra_ns`]: `%gsys`.
//! `--than` keeps the exit/entry pairs above it, HLT excluded (a halted vCPU waits by
//! design).
//!
//! [`LatencyStats::extra_ns`]: crate::model::latency_stats::LatencyStats::extra_ns

mod reasons;

use super::latency::{PairPrint, SlowPair, SlowPairQueue};
use super::{Analyzer, AnalyzerError};
use crate::model::analysis::{AnalysisRows, AnalysisSchema, KvmExitSchema, LatencyKey, LatencyRows};
use crate::model::latency_stats::LatencyStats;
use crate::model::period_counts::CountInstance;
use crate::trace::event::{EventIndex, EventLayout, FieldLayout, OwnedTraceEvent, TraceEvent};

/// The kernel's `KVM_ISA_VMX` / `KVM_ISA_SVM` (the kvm_exit `isa` field).
pub const ISA_VMX: u32 = 1;
pub const ISA_SVM: u32 = 2;
/// HLT's number under each ISA (`EXIT_REASON_HLT`, `SVM_EXIT_HLT`).
const VMX_HLT: u32 = 12;
const SVM_HLT: u32 = 0x78;
/// perf-prof's `START_OF_KERNEL`: a guest rip at or above it is in the guest's kernel.
const START_OF_KERNEL: u64 = 0xffff_0000_0000_0000;

/// perf-prof's name of an exit reason: `HLT` (VMX), `EXIT_HLT` (SVM), `UNKNOWN` for a
/// number its table lacks, `UNKNOWN-ISA` for another ISA.
pub fn exit_reason_name(isa: u32, reason: u32) -> &'static str {
    let table = match isa {
        ISA_VMX => reasons::VMX,
        ISA_SVM => reasons::SVM,
        _ => return "UNKNOWN-ISA",
    };
    table
        .binary_search_by_key(&reason, |&(n, _)| n)
        .map_or("UNKNOWN", |i| table[i].1)
}

/// The configuration.
#[derive(Clone, Debug)]
pub struct KvmExitConfig {
    /// Pair exits and entries per thread (attached to threads) instead of per CPU.
    pub threads: bool,
    pub perins: bool,
    pub than_ns: Option<u64>,
    pub slow_pair_capacity: usize,
}

/// An exit waiting for its entry.
struct PendingExit {
    time_ns: u64,
    tid: u32,
    /// Kept for `--than` only (its raw line): no copy per exit otherwise.
    event: Option<OwnedTraceEvent>,
    key: u64,
    in_guest_kernel: bool,
    hlt: bool,
}

pub struct KvmExitAnalyzer {
    config: KvmExitConfig,
    exit: EventIndex,
    entry: EventIndex,
    exit_reason: FieldLayout,
    /// Kernels before 5.7 have no `isa` field: VMX then (perf-prof's first layout).
    isa: Option<FieldLayout>,
    guest_rip: FieldLayout,
    /// By instance (CPU number, or thread id).
    pending: rustc_hash::FxHashMap<u32, PendingExit>,
    rows: LatencyRows,
    slow: SlowPairQueue,
}

fn find<'a>(layouts: &'a [EventLayout], name: &str) -> Result<(usize, &'a EventLayout), AnalyzerError> {
    layouts
        .iter()
        .enumerate()
        .find(|(_, l)| l.system == "kvm" && l.name == name)
        .ok_or_else(|| AnalyzerError::MissingEvent {
            analyzer: "kvm-exit",
            event: format!("kvm:{name}"),
        })
}

impl KvmExitAnalyzer {
    pub fn new(layouts: &[EventLayout], config: KvmExitConfig) -> Result<Self, AnalyzerError> {
        let (exit, exit_layout) = find(layouts, "kvm_exit")?;
        let (entry, _) = find(layouts, "kvm_entry")?;
        let field = |name: &str| {
            exit_layout
                .field(name)
                .cloned()
                .ok_or_else(|| AnalyzerError::missing_field(exit_layout, name))
        };
        Ok(Self {
            exit_reason: field("exit_reason")?,
            guest_rip: field("guest_rip")?,
            isa: exit_layout.field("isa").cloned(),
            exit: EventIndex(exit as u16),
            entry: EventIndex(entry as u16),
            pending: Default::default(),
            rows: LatencyRows::default(),
            slow: SlowPairQueue::new(config.slow_pair_capacity),
            config,
        })
    }

    fn instance(&self, event: &TraceEvent<'_>) -> u32 {
        if self.config.threads { event.tid } else { event.cpu }
    }

    /// The `--than` pairs since the last call, and how many did not fit the queue.
    pub fn take_slow_pairs(&mut self) -> (Vec<SlowPair>, u64) {
        self.slow.take()
    }

    fn exited(&mut self, event: &TraceEvent<'_>) {
        let Some(reason) = self.exit_reason.read_u64(event.raw) else {
            return;
        };
        let reason = reason as u32;
        let isa = match &self.isa {
            Some(f) => f.read_u64(event.raw).map_or(ISA_VMX, |v| v as u32),
            None => ISA_VMX,
        };
        let rip = self.guest_rip.read_u64(event.raw).unwrap_or(0);
        let hlt = match isa {
            ISA_SVM => SVM_HLT,
            _ => VMX_HLT,
        };
        let instance = self.instance(event);
        self.pending.insert(
            instance,
            PendingExit {
                time_ns: event.time_ns,
                tid: event.tid,
                event: self
                    .config
                    .than_ns
                    .is_some()
                    .then(|| OwnedTraceEvent::from_event(event)),
                key: (u64::from(isa) << 32) | u64::from(reason),
                in_guest_kernel: rip >= START_OF_KERNEL,
                hlt: reason == hlt,
            },
        );
    }

    fn entered(&mut self, event: &TraceEvent<'_>) {
        let instance = self.instance(event);
        let Some(exit) = self.pending.get(&instance) else {
            return;
        };
        // perf-prof: the entry of another thread (or an older one) does not close it, and
        // the exit stays for its own thread's entry.
        if exit.tid != event.tid || event.time_ns <= exit.time_ns {
            return;
        }
        let Some(exit) = self.pending.remove(&instance) else {
            return;
        };
        let delta = event.time_ns - exit.time_ns;
        let key = LatencyKey {
            instance: if self.config.perins {
                u64::from(instance)
            } else {
                0
            },
            series: exit.key,
        };
        let stats: &mut LatencyStats = self.rows.rows.entry(key).or_default();
        stats.record(delta, self.config.than_ns);
        if exit.in_guest_kernel {
            stats.extra_ns = stats.extra_ns.saturating_add(delta);
        }
        if let Some(than) = self.config.than_ns
            && delta > than
            && !exit.hlt
            && let Some(first) = exit.event
        {
            self.slow
                .push(SlowPair::new(first, event, delta, PairPrint::TepLines));
        }
    }

    fn schema_of(&self) -> KvmExitSchema {
        KvmExitSchema {
            instance: self.config.perins.then_some(if self.config.threads {
                CountInstance::Thread
            } else {
                CountInstance::Cpu
            }),
            than_ns: self.config.than_ns,
        }
    }
}

/// One row of the table.
#[derive(Clone, Debug, PartialEq)]
pub struct KvmExitRow {
    pub instance: Option<u64>,
    pub isa: u32,
    pub reason: u32,
    pub stats: LatencyStats,
}

impl KvmExitRow {
    pub fn name(&self) -> &'static str {
        exit_reason_name(self.isa, self.reason)
    }

    /// `%gsys`: the share of the total spent on exits from the guest's kernel.
    pub fn gsys_percent(&self) -> f64 {
        let total = self.stats.total_ns();
        if total == 0 {
            return 0.0;
        }
        self.stats.extra_ns as f64 * 100.0 / total as f64
    }
}

/// The table in perf-prof's order: total time, largest first.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct KvmExitTable {
    pub instance: Option<CountInstance>,
    pub rows: Vec<KvmExitRow>,
}

pub fn kvm_exit_table(schema: &KvmExitSchema, rows: &LatencyRows) -> KvmExitTable {
    let mut out: Vec<KvmExitRow> = rows
        .rows
        .iter()
        .filter(|(_, s)| s.calls() > 0)
        .map(|(key, stats)| KvmExitRow {
            instance: schema.instance.map(|_| key.instance),
            isa: (key.series >> 32) as u32,
            reason: key.series as u32,
            stats: stats.clone(),
        })
        .collect();
    out.sort_by(|a, b| {
        b.stats
            .total_ns()
            .cmp(&a.stats.total_ns())
            .then(a.instance.cmp(&b.instance))
            .then((a.isa, a.reason).cmp(&(b.isa, b.reason)))
    });
    KvmExitTable {
        instance: schema.instance,
        rows: out,
    }
}

impl Analyzer for KvmExitAnalyzer {
    type Table = KvmExitTable;

    fn feed(&mut self, event: &TraceEvent<'_>) {
        if event.event == self.exit {
            self.exited(event);
        } else if event.event == self.entry {
            self.entered(event);
        }
    }

    /// A lost record may be the entry of a pending exit: pairing it with a later entry
    /// would count the lost time as the exit's.
    fn lost(&mut self, _from_ns: u64, _to_ns: u64) {
        self.pending.clear();
    }

    fn take_rows(&mut self) -> AnalysisRows {
        AnalysisRows::Latency(std::mem::take(&mut self.rows))
    }

    fn rows(&self) -> AnalysisRows {
        AnalysisRows::Latency(self.rows.clone())
    }

    fn schema(&self) -> AnalysisSchema {
        AnalysisSchema::KvmExit(self.schema_of())
    }

    fn tabulate(&self, rows: &AnalysisRows) -> KvmExitTable {
        match rows {
            AnalysisRows::Latency(rows) => kvm_exit_table(&self.schema_of(), rows),
            _ => KvmExitTable::default(),
        }
    }
}

#[cfg(test)]
mod tests;
