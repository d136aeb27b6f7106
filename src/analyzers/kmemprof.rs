//! perf-prof's `kmemprof` (multi-trace `--impl kmemprof`): an alloc event and the free
//! event of the same address make a pair; per (alloc event, free event), the bytes and
//! objects of the pairs by allocation stack and by free stack. Allocations still pending
//! at the end are counted under their alloc event alone ("but not freed").
//!
//! A pair is counted in the slice of its free (perf-prof counts it when it closes), so
//! `-i` prints each interval's closed pairs.

use rustc_hash::FxHashMap;

use super::mem_events::{MemEvent, MemRole, StackTable};
use super::{Analyzer, AnalyzerError};
use crate::model::analysis::{AnalysisRows, AnalysisSchema};
use crate::model::memory_stacks::{AllocPair, MemCell, MemSchema, ProfRows, StackRef};
use crate::trace::event::TraceEvent;

/// An allocation waiting for its free.
struct Pending {
    event: u16,
    stack: StackRef,
    bytes: i64,
}

pub struct KmemprofAnalyzer {
    events: Vec<MemEvent>,
    stacks: StackTable,
    pending: FxHashMap<u64, Pending>,
    rows: ProfRows,
}

impl KmemprofAnalyzer {
    pub fn new(events: Vec<MemEvent>, stacks: StackTable) -> Result<Self, AnalyzerError> {
        if let Some(unsized_alloc) = events
            .iter()
            .find(|e| e.role == MemRole::Alloc && e.size.is_none())
        {
            // perf-prof: "%s:%s//size=?/ size attribute is not set".
            return Err(AnalyzerError::Config(format!(
                "kmemprof: {}//size=?/ size attribute is not set: add size=EXPR (e.g. size=bytes_alloc)",
                unsized_alloc.name
            )));
        }
        let has = |role| events.iter().any(|e| e.role == role);
        if !has(MemRole::Alloc) || !has(MemRole::Free) {
            return Err(AnalyzerError::Config(
                "kmemprof needs two stages: -e ALLOC (with size=EXPR) -e FREE".into(),
            ));
        }
        Ok(Self {
            events,
            stacks,
            pending: FxHashMap::default(),
            rows: ProfRows::default(),
        })
    }

    /// The end of the run: the allocations never freed go to their "not freed" block.
    pub fn finish(&mut self) {
        for (_, p) in self.pending.drain() {
            let block = self
                .rows
                .blocks
                .entry(AllocPair {
                    alloc: p.event,
                    free: None,
                })
                .or_default();
            let cell = MemCell {
                bytes: p.bytes,
                objects: 1,
            };
            block.allocated.add(cell);
            if p.stack.id != 0 {
                block.alloc.entry(p.stack).or_default().add(cell);
            }
        }
    }
}

impl Analyzer for KmemprofAnalyzer {
    type Table = ProfRows;

    fn feed(&mut self, event: &TraceEvent<'_>) {
        let index = event.event.0;
        let Some(part) = self.events.get(usize::from(index)) else {
            return;
        };
        let Some(ptr) = part.ptr_of(event) else {
            return;
        };
        match part.role {
            MemRole::Alloc => {
                let pending = Pending {
                    event: index,
                    stack: self.stacks.stack_of(event),
                    bytes: part.size_of(event),
                };
                self.pending.insert(ptr, pending);
            }
            MemRole::Free => {
                let Some(p) = self.pending.remove(&ptr) else {
                    return;
                };
                let block = self
                    .rows
                    .blocks
                    .entry(AllocPair {
                        alloc: p.event,
                        free: Some(index),
                    })
                    .or_default();
                let cell = MemCell {
                    bytes: p.bytes,
                    objects: 1,
                };
                block.allocated.add(cell);
                block.freed.add(cell);
                if p.stack.id != 0 {
                    block.alloc.entry(p.stack).or_default().add(cell);
                }
                let free_stack = self.stacks.stack_of(event);
                if free_stack.id != 0 {
                    block.free.entry(free_stack).or_default().add(cell);
                }
            }
        }
    }

    /// The frees of pending allocations may be among the lost records: forget them.
    fn lost(&mut self, _from_ns: u64, _to_ns: u64) {
        self.pending.clear();
    }

    fn take_rows(&mut self) -> AnalysisRows {
        AnalysisRows::MemProf(std::mem::take(&mut self.rows))
    }

    fn rows(&self) -> AnalysisRows {
        AnalysisRows::MemProf(self.rows.clone())
    }

    fn schema(&self) -> AnalysisSchema {
        AnalysisSchema::MemProf(MemSchema {
            events: self.events.iter().map(|e| e.name.clone()).collect(),
            is_alloc: self.events.iter().map(|e| e.role == MemRole::Alloc).collect(),
            sized: true,
            than_ns: None,
        })
    }

    fn tabulate(&self, rows: &AnalysisRows) -> ProfRows {
        match rows {
            AnalysisRows::MemProf(p) => p.clone(),
            _ => ProfRows::default(),
        }
    }
}

#[cfg(test)]
#[path = "kmemprof/tests.rs"]
mod tests;
