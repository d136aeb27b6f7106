//! `page-faults`: where threads fault. perf-prof samples the software event page-faults
//! with `PERF_SAMPLE_ADDR`; here the x86 tracepoints `exceptions:page_fault_user` and
//! `exceptions:page_fault_kernel` carry the same facts (`address`, `ip`, `error_code`)
//! through the tracepoint session (filters, `stack`, recording and replay as any event).
//! Faults are counted per thread and 2 MiB region of the faulting address.

use super::{Analyzer, AnalyzerError};
use crate::model::analysis::{AnalysisRows, AnalysisSchema};
use crate::model::fault_counts::{FaultCounts, FaultKey, REGION_SHIFT};
use crate::trace::event::{EventLayout, FieldLayout, TraceEvent};

/// The x86 page-fault error code's write bit.
const WRITE_FAULT: u64 = 1 << 1;

/// How one opened event is read.
struct FaultEvent {
    address: FieldLayout,
    error_code: Option<FieldLayout>,
    kernel: bool,
}

pub struct PageFaultsAnalyzer {
    events: Vec<FaultEvent>,
    counts: FaultCounts,
}

impl PageFaultsAnalyzer {
    /// Over events with an `address` field (`error_code` optional); an event named
    /// `*kernel*` counts as a kernel-mode fault.
    pub fn new(layouts: &[EventLayout]) -> Result<Self, AnalyzerError> {
        let events = layouts
            .iter()
            .map(|layout| {
                let address = layout
                    .field("address")
                    .cloned()
                    .ok_or_else(|| AnalyzerError::missing_field(layout, "address"))?;
                Ok(FaultEvent {
                    address,
                    error_code: layout.field("error_code").cloned(),
                    kernel: layout.name.contains("kernel"),
                })
            })
            .collect::<Result<_, AnalyzerError>>()?;
        Ok(Self {
            events,
            counts: FaultCounts::default(),
        })
    }
}

/// One printed row: a thread's faults in one region.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FaultRow {
    pub tid: u32,
    /// The region's first address.
    pub region_start: u64,
    pub user: u64,
    pub kernel: u64,
    pub write: u64,
}

impl FaultRow {
    pub fn total(&self) -> u64 {
        self.user + self.kernel
    }
}

/// Rows by faults, most first (then thread, then address).
pub fn fault_table(counts: &FaultCounts) -> Vec<FaultRow> {
    let mut rows: Vec<FaultRow> = counts
        .cells
        .iter()
        .map(|(key, c)| FaultRow {
            tid: key.tid,
            region_start: key.region << REGION_SHIFT,
            user: c.user,
            kernel: c.kernel,
            write: c.write,
        })
        .collect();
    rows.sort_by(|a, b| {
        b.total()
            .cmp(&a.total())
            .then(a.tid.cmp(&b.tid))
            .then(a.region_start.cmp(&b.region_start))
    });
    rows
}

impl Analyzer for PageFaultsAnalyzer {
    type Table = Vec<FaultRow>;

    fn feed(&mut self, event: &TraceEvent<'_>) {
        let Some(how) = self.events.get(usize::from(event.event.0)) else {
            return;
        };
        let Some(address) = how.address.read_u64(event.raw) else {
            return;
        };
        let write = how
            .error_code
            .as_ref()
            .and_then(|f| f.read_u64(event.raw))
            .is_some_and(|code| code & WRITE_FAULT != 0);
        let cells = self
            .counts
            .cells
            .entry(FaultKey {
                tid: event.tid,
                region: address >> REGION_SHIFT,
            })
            .or_default();
        if how.kernel {
            cells.kernel += 1;
        } else {
            cells.user += 1;
        }
        if write {
            cells.write += 1;
        }
    }

    fn lost(&mut self, _from_ns: u64, _to_ns: u64) {}

    fn take_rows(&mut self) -> AnalysisRows {
        AnalysisRows::Faults(std::mem::take(&mut self.counts))
    }

    fn rows(&self) -> AnalysisRows {
        AnalysisRows::Faults(self.counts.clone())
    }

    fn schema(&self) -> AnalysisSchema {
        AnalysisSchema::Faults
    }

    fn tabulate(&self, rows: &AnalysisRows) -> Vec<FaultRow> {
        match rows {
            AnalysisRows::Faults(counts) => fault_table(counts),
            _ => Vec::new(),
        }
    }
}
