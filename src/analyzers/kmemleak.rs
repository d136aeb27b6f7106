//! perf-prof's `kmemleak`: alloc events (`ptr=`, `size=`, `stack`) and free events
//! (`ptr=`) paired by address; the allocations never freed are the leaks, reported by
//! allocation stack with their bytes and objects.
//!
//! Rows are [`LeakRows`]: an allocation adds its bytes to its stack's cell in the slice it
//! happened in, and the free that matches it subtracts them in the slice of the free. So
//! the slices of a whole run add up to what is still live at its end, and a window's
//! rows are the net growth of each stack in that window.

use rustc_hash::FxHashMap;

use super::mem_events::{MemEvent, MemRole, StackTable};
use super::{Analyzer, AnalyzerError};
use crate::model::analysis::{AnalysisRows, AnalysisSchema};
use crate::model::memory_stacks::{LeakRows, MemCell, MemSchema, StackRef};
use crate::trace::event::TraceEvent;

/// A live allocation.
struct Live {
    stack: StackRef,
    bytes: i64,
    time_ns: u64,
}

pub struct KmemleakAnalyzer {
    /// By event index.
    events: Vec<MemEvent>,
    stacks: StackTable,
    live: FxHashMap<u64, Live>,
    rows: LeakRows,
    than_ns: Option<u64>,
}

impl KmemleakAnalyzer {
    pub fn new(
        events: Vec<MemEvent>,
        stacks: StackTable,
        than_ns: Option<u64>,
    ) -> Result<Self, AnalyzerError> {
        let has = |role| events.iter().any(|e| e.role == role);
        if !has(MemRole::Alloc) || !has(MemRole::Free) {
            return Err(AnalyzerError::Config(
                "kmemleak needs alloc and free events: --alloc 'kmem:kmalloc//ptr=ptr/size=bytes_alloc/stack/' \
                 --free 'kmem:kfree//ptr=ptr/' (or -e ALLOC -e FREE)"
                    .into(),
            ));
        }
        Ok(Self {
            events,
            stacks,
            live: FxHashMap::default(),
            rows: LeakRows::default(),
            than_ns,
        })
    }

    /// The end of the run at `now_ns` (event clock): with `--than`, allocations younger
    /// than the threshold are not leaks (yet), as perf-prof's report leaves them out.
    pub fn finish(&mut self, now_ns: u64) {
        let Some(than) = self.than_ns else {
            return;
        };
        for live in self.live.values() {
            if now_ns.saturating_sub(live.time_ns) <= than {
                self.rows
                    .stacks
                    .entry(live.stack.clone())
                    .or_default()
                    .add(MemCell {
                        bytes: -live.bytes,
                        objects: -1,
                    });
            }
        }
        self.rows.stacks.retain(|_, c| *c != MemCell::default());
    }

    /// Allocations tracked now.
    pub fn live_count(&self) -> usize {
        self.live.len()
    }
}

impl Analyzer for KmemleakAnalyzer {
    type Table = LeakRows;

    fn feed(&mut self, event: &TraceEvent<'_>) {
        let Some(part) = self.events.get(usize::from(event.event.0)) else {
            return;
        };
        let Some(ptr) = part.ptr_of(event) else {
            return;
        };
        match part.role {
            MemRole::Alloc => {
                let live = Live {
                    stack: self.stacks.stack_of(event),
                    bytes: part.size_of(event),
                    time_ns: event.time_ns,
                };
                self.rows
                    .stacks
                    .entry(live.stack.clone())
                    .or_default()
                    .add(MemCell {
                        bytes: live.bytes,
                        objects: 1,
                    });
                // Two allocations of one address imply a free between them that was
                // seen out of order (same timestamp): the older one is gone, as perf-prof.
                if let Some(old) = self.live.insert(ptr, live) {
                    self.rows.stacks.entry(old.stack).or_default().add(MemCell {
                        bytes: -old.bytes,
                        objects: -1,
                    });
                }
                self.rows.allocs += 1;
            }
            MemRole::Free => {
                if let Some(old) = self.live.remove(&ptr) {
                    self.rows.stacks.entry(old.stack).or_default().add(MemCell {
                        bytes: -old.bytes,
                        objects: -1,
                    });
                }
                self.rows.frees += 1;
            }
        }
    }

    /// Frees may be among the lost records, so no later free can be trusted to match an
    /// allocation tracked so far. perf-prof reports those allocations as leaks at once
    /// ("Report memory leaks in advance due to lost") and starts over: here they stay in
    /// the rows (so the report lists them) and are no longer tracked.
    fn lost(&mut self, _from_ns: u64, _to_ns: u64) {
        self.live.clear();
    }

    fn take_rows(&mut self) -> AnalysisRows {
        let mut rows = std::mem::take(&mut self.rows);
        rows.stacks.retain(|_, c| *c != MemCell::default());
        AnalysisRows::Leaks(rows)
    }

    fn rows(&self) -> AnalysisRows {
        AnalysisRows::Leaks(self.rows.clone())
    }

    fn schema(&self) -> AnalysisSchema {
        AnalysisSchema::Leaks(MemSchema {
            events: self.events.iter().map(|e| e.name.clone()).collect(),
            is_alloc: self.events.iter().map(|e| e.role == MemRole::Alloc).collect(),
            sized: self
                .events
                .iter()
                .filter(|e| e.role == MemRole::Alloc)
                .all(|e| e.size.is_some()),
            than_ns: self.than_ns,
        })
    }

    fn tabulate(&self, rows: &AnalysisRows) -> LeakRows {
        match rows {
            AnalysisRows::Leaks(l) => l.clone(),
            _ => LeakRows::default(),
        }
    }
}

#[cfg(test)]
#[path = "kmemleak/tests.rs"]
mod tests;
