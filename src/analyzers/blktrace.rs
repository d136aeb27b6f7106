//! `blktrace`: how long block requests spend between the stages of their life — allocated
//! (`block_getrq`), queued (`block_rq_insert`), sent to the driver (`block_rq_issue`),
//! done (`block_rq_complete`) — as perf-prof's blktrace computes it.
//!
//! A request is tracked by its device and sector range from its first event on. Each later
//! event whose range overlaps a tracked one moves that request to the event's stage and
//! adds the time since its previous stage to the event's stage row, whatever that stage
//! was: a request the scheduler never queued (no I/O scheduler: `block_rq_insert` never
//! fires) counts getrq → issue in the `insert => issue` row, as perf-prof does. The
//! completion ends the track. Flush requests (sector −1) are not tracked. A getrq over a
//! range still tracked (a request that merged away and never completed) restarts the track;
//! its time goes to no row, as in perf-prof, but `--than` reports it.
//!
//! `--than T`: a stage longer than T is an offender — the request's previous event and this
//! one, the two raw lines the other analyzers print (perf-prof prints only the later one,
//! labelled `GREATER_THAN`). The previous event is copied per request only with `--than`.
//!
//! Lost records drop every track (which of them lost an event is unknowable), as perf-prof.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use super::latency::{LatencyStats, PairPrint, SlowPair, SlowPairQueue, refill_owned};
use super::{Analyzer, AnalyzerError};
use crate::model::analysis::{AnalysisRows, AnalysisSchema, BlktraceSchema, LatencyKey, LatencyRows};
use crate::trace::event::{EventIndex, EventLayout, FieldLayout, OwnedTraceEvent, TraceEvent};

/// The four events, in the order a request meets them (a stage is its index here).
pub const STAGES: [&str; 4] = [
    "block_getrq",
    "block_rq_insert",
    "block_rq_issue",
    "block_rq_complete",
];
const COMPLETE: usize = 3;

/// perf-prof's flush requests carry sector `(sector_t)-1`.
const FLUSH_SECTOR: u64 = u64::MAX;

/// Requests that merge away never complete and stay tracked until a getrq reuses their
/// range; past this many tracks they are all dropped (as after a loss), so memory stays
/// bounded on a disk that merges a lot.
const MAX_TRACKS: usize = 1 << 16;

/// The selectors of the four events, each with `filter` (the device's kernel filter).
pub fn selectors(filter: &str) -> Vec<String> {
    vec![
        STAGES
            .iter()
            .map(|name| format!("block:{name}/{filter}/"))
            .collect::<Vec<_>>()
            .join(","),
    ]
}

struct StageEvent {
    index: EventIndex,
    dev: FieldLayout,
    sector: FieldLayout,
    nr_sector: FieldLayout,
}

struct Track {
    nr_sector: u64,
    time_ns: u64,
    /// The event that moved the request to its current stage, kept only with `--than`.
    event: Option<OwnedTraceEvent>,
}

pub struct BlktraceAnalyzer {
    than_ns: Option<u64>,
    stages: Vec<StageEvent>,
    /// Tracked requests by (device, first sector); their ranges do not overlap.
    tracks: BTreeMap<(u64, u64), Track>,
    interval: FxHashMap<LatencyKey, LatencyStats>,
    slow: SlowPairQueue,
}

/// One row: the time requests took from `start` to `end`.
#[derive(Clone, Debug, PartialEq)]
pub struct BlktraceRow {
    pub start: &'static str,
    pub end: &'static str,
    pub stats: LatencyStats,
}

/// The blktrace table: always the three stage rows, in the order a request meets them.
#[derive(Clone, Debug, PartialEq)]
pub struct BlktraceTable {
    pub than_ns: Option<u64>,
    pub rows: Vec<BlktraceRow>,
}

impl BlktraceAnalyzer {
    /// `layouts[i]` is the layout of `EventIndex(i)`; all four block events are needed.
    pub fn new(
        layouts: &[EventLayout],
        than_ns: Option<u64>,
        slow_pair_capacity: usize,
    ) -> Result<Self, AnalyzerError> {
        let mut stages = Vec::new();
        for name in STAGES {
            let (index, layout) = layouts
                .iter()
                .enumerate()
                .find(|(_, l)| l.system == "block" && l.name == name)
                .ok_or_else(|| AnalyzerError::MissingEvent {
                    analyzer: "blktrace",
                    event: format!("block:{name}"),
                })?;
            let field = |f: &str| {
                layout
                    .field(f)
                    .cloned()
                    .ok_or_else(|| AnalyzerError::missing_field(layout, f))
            };
            stages.push(StageEvent {
                index: EventIndex(index as u16),
                dev: field("dev")?,
                sector: field("sector")?,
                nr_sector: field("nr_sector")?,
            });
        }
        Ok(Self {
            than_ns,
            stages,
            tracks: BTreeMap::new(),
            interval: FxHashMap::default(),
            slow: SlowPairQueue::new(slow_pair_capacity),
        })
    }

    /// The `--than` offenders since the last call, and how many did not fit.
    pub fn take_slow_pairs(&mut self) -> (Vec<SlowPair>, u64) {
        self.slow.take()
    }

    /// Requests being tracked.
    pub fn tracked(&self) -> usize {
        self.tracks.len()
    }

    /// The tracked request whose range overlaps `[sector, sector + nr)` on `dev` — perf-prof's
    /// comparator, so an empty range matches a request it lies strictly inside.
    fn overlapping(&self, dev: u64, sector: u64, nr: u64) -> Option<(u64, u64)> {
        let end = sector.saturating_add(nr);
        // Ranges do not overlap: the last one starting before `end` reaches furthest.
        let (&key, track) = self.tracks.range((dev, 0)..(dev, end)).next_back()?;
        (key.1.saturating_add(track.nr_sector) > sector).then_some(key)
    }

    fn offender(&mut self, track: &Track, event: &TraceEvent<'_>, latency_ns: u64) {
        if !self.slow.has_room() {
            self.slow.note_dropped();
            return;
        }
        if let Some(first) = &track.event {
            self.slow.push(SlowPair::new(
                first.clone(),
                event,
                latency_ns,
                PairPrint::TepLines,
            ));
        }
    }

    fn schema_of(&self) -> BlktraceSchema {
        BlktraceSchema {
            than_ns: self.than_ns,
        }
    }
}

/// The table of `rows`: the three stage rows, empty ones included (perf-prof prints them).
pub fn blktrace_table(schema: &BlktraceSchema, rows: &LatencyRows) -> BlktraceTable {
    BlktraceTable {
        than_ns: schema.than_ns,
        rows: (1..STAGES.len())
            .map(|stage| BlktraceRow {
                start: STAGES[stage - 1],
                end: STAGES[stage],
                stats: rows
                    .rows
                    .get(&LatencyKey {
                        instance: 0,
                        series: stage as u64,
                    })
                    .cloned()
                    .unwrap_or_default(),
            })
            .collect(),
    }
}

impl Analyzer for BlktraceAnalyzer {
    type Table = BlktraceTable;

    fn feed(&mut self, event: &TraceEvent<'_>) {
        let Some(stage) = self.stages.iter().position(|s| s.index == event.event) else {
            return;
        };
        let fields = &self.stages[stage];
        let (Some(dev), Some(sector), Some(nr)) = (
            fields.dev.read_u64(event.raw),
            fields.sector.read_u64(event.raw),
            fields.nr_sector.read_u64(event.raw),
        ) else {
            return;
        };
        if sector == FLUSH_SECTOR {
            return;
        }
        let keep_event = self.than_ns.is_some();
        let Some(key) = self.overlapping(dev, sector, nr) else {
            if stage != COMPLETE {
                if self.tracks.len() >= MAX_TRACKS {
                    self.tracks.clear();
                }
                self.tracks.insert(
                    (dev, sector),
                    Track {
                        nr_sector: nr,
                        time_ns: event.time_ns,
                        event: keep_event.then(|| OwnedTraceEvent::from_event(event)),
                    },
                );
            }
            return;
        };
        let Some(mut track) = self.tracks.remove(&key) else {
            return;
        };
        let latency = event.time_ns.saturating_sub(track.time_ns);
        if stage > 0 {
            self.interval
                .entry(LatencyKey {
                    instance: 0,
                    series: stage as u64,
                })
                .or_default()
                .record(latency, self.than_ns);
        }
        if self.than_ns.is_some_and(|than| latency > than) {
            self.offender(&track, event, latency);
        }
        if stage != COMPLETE {
            track.nr_sector = nr;
            track.time_ns = event.time_ns;
            if keep_event {
                match &mut track.event {
                    // Reuse the request's buffer: one allocation per request, not per stage.
                    Some(owned) => refill_owned(owned, event),
                    None => track.event = Some(OwnedTraceEvent::from_event(event)),
                }
            }
            self.tracks.insert((dev, sector), track);
        }
    }

    fn lost(&mut self, _from_ns: u64, _to_ns: u64) {
        self.tracks.clear();
    }

    fn take_rows(&mut self) -> AnalysisRows {
        AnalysisRows::Latency(LatencyRows {
            rows: std::mem::take(&mut self.interval),
        })
    }

    fn rows(&self) -> AnalysisRows {
        AnalysisRows::Latency(LatencyRows {
            rows: self.interval.clone(),
        })
    }

    fn schema(&self) -> AnalysisSchema {
        AnalysisSchema::Blktrace(self.schema_of())
    }

    fn tabulate(&self, rows: &AnalysisRows) -> BlktraceTable {
        match rows {
            AnalysisRows::Latency(rows) => blktrace_table(&self.schema_of(), rows),
            _ => blktrace_table(&self.schema_of(), &LatencyRows::default()),
        }
    }
}

#[cfg(test)]
mod tests;
