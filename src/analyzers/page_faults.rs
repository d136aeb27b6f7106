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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyzers::test_events::{Value, event, layout, record};
    use crate::analyzers::text::WallClock;
    use crate::trace::event::FieldKind;

    fn fault_layout(name: &str, id: u64) -> EventLayout {
        layout(
            "exceptions",
            name,
            id,
            &[
                ("address", 8, FieldKind::Unsigned),
                ("ip", 8, FieldKind::Unsigned),
                ("error_code", 8, FieldKind::Unsigned),
            ],
        )
    }

    #[test]
    fn faults_are_counted_per_thread_and_region_with_their_kind() {
        let user = fault_layout("page_fault_user", 190);
        let kernel = fault_layout("page_fault_kernel", 191);
        let mut a = PageFaultsAnalyzer::new(&[user.clone(), kernel.clone()]).unwrap();
        let fault = |layout: &EventLayout, address: i64, code: i64| {
            record(
                layout,
                7,
                &[("address", Value::Int(address)), ("error_code", Value::Int(code))],
            )
        };
        // Two write faults and a read in one 2 MiB region, a kernel fault in the next.
        for (addr, code) in [
            (0x7f00_0000_1000, 6),
            (0x7f00_0000_2000, 6),
            (0x7f00_0010_0000, 4),
        ] {
            let raw = fault(&user, addr, code);
            a.feed(&event(0, 1, 0, 42, &raw));
        }
        let raw = fault(&kernel, 0x7f00_0020_0000, 2);
        a.feed(&event(1, 2, 0, 42, &raw));
        let table = a.tabulate(&a.rows());
        assert_eq!(
            table,
            vec![
                FaultRow {
                    tid: 42,
                    region_start: 0x7f00_0000_0000,
                    user: 3,
                    kernel: 0,
                    write: 2
                },
                FaultRow {
                    tid: 42,
                    region_start: 0x7f00_0020_0000,
                    user: 0,
                    kernel: 1,
                    write: 1
                },
            ]
        );
        let wall = WallClock {
            year: 2026,
            month: 12,
            day: 2,
            hour: 15,
            minute: 0,
            second: 0,
            microsecond: 1,
        };
        let text = crate::analyzers::text::fault_table(&table, &wall, &|_| Some("toucher".into()));
        assert_eq!(
            text.lines().nth(4).unwrap(),
            "    42 toucher              0x7f0000200000          1          0          1          1"
        );
        // A layout without `address` is refused, naming the field.
        assert!(PageFaultsAnalyzer::new(&[crate::analyzers::test_events::sys_exit()]).is_err());
    }
}
