//! `multi-trace`: latency (`--impl delay`) or pairing counts (`--impl pair`) between the
//! events of consecutive stages, correlated by a key, as perf-prof's multi-trace computes
//! them; `rundelay` is this analyzer configured by [`super::rundelay`].
//!
//! Stages: `-e A,B -e C -e D` = stages `[A, B]`, `[C]`, `[D]`; every traced event of stage
//! k pairs with every traced event of stage k+1 (and the last stage with the first under
//! `--cycle`). Per event: its key (`key=`, else the instance: CPU, or thread when attached
//! to threads); if it may be a second event (stage > 0 or `--cycle`, role bit 1) it looks
//! up the pending first event with the same key and, when that one is older, closes the
//! pair and removes it; if it may be a first event (not the last stage or `--cycle`, role
//! bit 0, not an unnecessary wakeup) it becomes the pending event of its key, replacing an
//! older one. So at most one first event is pending per key, as in perf-prof's backup
//! tree. `untraced` events take no part in pairs.
//!
//! One opened event may play several parts (rundelay's single `sched_switch` is the
//! second event keyed by `next_pid` and the first event keyed by `prev_pid` when the task
//! was preempted): each part is a [`StageEvent`] with the same [`EventIndex`], played in
//! the order given.

mod config;
mod detail;
mod tables;

pub use crate::model::analysis::PairNames;
pub use config::{EventFilter, Implementation, Instance, MultiTraceConfig, StageEvent, UnnecessaryWakeup};
pub use tables::{DelayRow, DelayTable, MultiTraceTable, PairCount, PairTable};

pub use detail::DetailFilter;
use detail::Timeline;
use rustc_hash::FxHashMap;

use super::key::KeySource;
use super::latency::{LatencyStats, PairPrint, SlowPair, SlowPairQueue, refill_owned};
use super::{Analyzer, AnalyzerError};
use crate::model::analysis::{
    AnalysisRows, AnalysisSchema, DelaySchema, LatencyKey, LatencyRows, PairRows, PairSchema,
};
use crate::trace::event::{EventIndex, EventLayout, FieldLayout, OwnedTraceEvent, TraceEvent};

/// How many unpaired first events are kept between two takes (all are counted).
const UNPAIRED_EVENTS_KEPT: usize = 1024;

/// Event copies kept for reuse (first events closed without being queued).
const SPARE_EVENTS_KEPT: usize = 64;

/// One part (see [`StageEvent`]) after setup.
struct Part {
    node: usize,
    stage: usize,
    key: Option<KeySource>,
    role: Option<KeySource>,
    filter: Option<EventFilter>,
}

/// A logical event: one [`StageEvent`] (an opened event may be several nodes).
struct Node {
    name: String,
    full_name: String,
}

struct Pending {
    node: usize,
    time_ns: u64,
    event: Option<OwnedTraceEvent>,
}

struct Running {
    wakeup_pid: FxHashMap<EventIndex, FieldLayout>,
    switch: EventIndex,
    next_pid: FieldLayout,
    by_cpu: FxHashMap<u32, u32>,
    /// How many CPUs each pid is current on (0 or 1, but a lost switch must not panic).
    cpus_of: FxHashMap<u32, u32>,
}

impl Running {
    fn on_switch(&mut self, event: &TraceEvent<'_>) {
        let Some(next) = self
            .next_pid
            .read_u64(event.raw)
            .and_then(|p| u32::try_from(p).ok())
        else {
            return;
        };
        if let Some(prev) = self.by_cpu.insert(event.cpu, next)
            && let Some(n) = self.cpus_of.get_mut(&prev)
        {
            *n -= 1;
            if *n == 0 {
                self.cpus_of.remove(&prev);
            }
        }
        *self.cpus_of.entry(next).or_default() += 1;
    }

    fn is_running(&self, event: &TraceEvent<'_>) -> bool {
        let Some(pid) = self
            .wakeup_pid
            .get(&event.event)
            .and_then(|f| f.read_u64(event.raw))
        else {
            return false;
        };
        // pid 0 is every CPU's idle task, never woken.
        pid != 0 && u32::try_from(pid).is_ok_and(|pid| self.cpus_of.contains_key(&pid))
    }
}

/// One closed pair for perf-prof's heatmap file (`<end time> <latency>` per line).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct HeatPoint {
    pub pair: usize,
    pub end_ns: u64,
    pub latency_ns: u64,
}

pub struct MultiTraceAnalyzer {
    implementation: Implementation,
    instance: Instance,
    perins: bool,
    cycle: bool,
    last_stage: usize,
    than_ns: Option<u64>,
    lower_ns: Option<u64>,
    key_header: String,
    key_width: usize,
    comm_column: bool,
    /// Parts by `EventIndex.0`.
    parts: Vec<Vec<Part>>,
    nodes: Vec<Node>,
    pairs: Vec<(usize, usize)>,
    pair_of: FxHashMap<(usize, usize), usize>,
    /// First nodes in stage order (the pair table lists them).
    first_nodes: Vec<usize>,
    running: Option<Running>,
    keep_events: bool,
    pending: FxHashMap<u64, Pending>,
    /// The rows since the last take.
    delay: FxHashMap<LatencyKey, LatencyStats>,
    paired: Vec<u64>,
    unpaired: Vec<u64>,
    slow: SlowPairQueue,
    /// `--heatmap`: the pairs closed since the last take, when asked for.
    heat: Option<Vec<HeatPoint>>,
    /// `--detail`: the events a pending pair may list.
    timeline: Option<Timeline>,
    unpaired_list: Vec<OwnedTraceEvent>,
    spare_events: Vec<OwnedTraceEvent>,
    /// No part has `key=`: the key of every event is its instance.
    keys_are_instances: bool,
}

impl MultiTraceAnalyzer {
    /// `layouts[i]` is the layout of `EventIndex(i)`.
    pub fn new(layouts: &[EventLayout], config: MultiTraceConfig) -> Result<Self, AnalyzerError> {
        if config.stages.len() < 2 {
            return Err(AnalyzerError::Config(
                "multi-trace needs at least two stages: give `-e` twice (`-e A -e B`)".into(),
            ));
        }
        let last_stage = config.stages.len() - 1;
        let mut parts: Vec<Vec<Part>> = (0..layouts.len()).map(|_| Vec::new()).collect();
        let mut nodes = Vec::new();
        let mut traced_by_stage: Vec<Vec<usize>> = vec![Vec::new(); config.stages.len()];
        for (stage, events) in config.stages.into_iter().enumerate() {
            for part in events {
                let layout = layouts.get(usize::from(part.event.0)).ok_or_else(|| {
                    AnalyzerError::Config(format!(
                        "stage {} names event #{} but only {} events are open",
                        stage + 1,
                        part.event.0,
                        layouts.len()
                    ))
                })?;
                let node = nodes.len();
                nodes.push(Node {
                    name: part.alias.clone().unwrap_or_else(|| layout.name.clone()),
                    full_name: layout.full_name(),
                });
                if part.untraced {
                    continue;
                }
                traced_by_stage[stage].push(node);
                parts[usize::from(part.event.0)].push(Part {
                    node,
                    stage,
                    key: part.key,
                    role: part.role,
                    filter: part.filter,
                });
            }
        }
        let mut pairs = Vec::new();
        let mut pair_of = FxHashMap::default();
        let mut links: Vec<(usize, usize)> = (0..last_stage).map(|k| (k, k + 1)).collect();
        if config.cycle {
            links.push((last_stage, 0));
        }
        for (from, to) in links {
            for &a in &traced_by_stage[from] {
                for &b in &traced_by_stage[to] {
                    pair_of.entry((a, b)).or_insert_with(|| {
                        pairs.push((a, b));
                        pairs.len() - 1
                    });
                }
            }
        }
        let mut first_nodes: Vec<usize> = Vec::new();
        for &(a, _) in &pairs {
            if !first_nodes.contains(&a) {
                first_nodes.push(a);
            }
        }
        let key_width = config.key_header.as_ref().map_or(3, |h| h.len().max(6));
        let key_header = config.key_header.unwrap_or_else(|| {
            match config.instance {
                Instance::Cpu => "CPU",
                Instance::Thread => "THREAD",
            }
            .to_string()
        });
        let running = config.unnecessary_wakeup.map(|u| Running {
            wakeup_pid: u.wakeups.into_iter().collect(),
            switch: u.switch,
            next_pid: u.next_pid,
            by_cpu: FxHashMap::default(),
            cpus_of: FxHashMap::default(),
        });
        let implementation = config.implementation;
        let keys_are_instances = parts.iter().flatten().all(|p| p.key.is_none());
        // perf-prof names the tasks of a thread-instance key (its `comm` option).
        let comm_column = config.comm_column || (keys_are_instances && config.instance == Instance::Thread);
        Ok(Self {
            implementation,
            instance: config.instance,
            perins: config.perins,
            cycle: config.cycle,
            last_stage,
            than_ns: config.than_ns,
            lower_ns: config.lower_ns,
            heat: config.heatmap.then(Vec::new),
            timeline: config.detail.map(Timeline::new),
            key_width: key_width.max(key_header.len()),
            key_header,
            comm_column,
            keys_are_instances,
            parts,
            paired: vec![0; pairs.len()],
            unpaired: vec![0; nodes.len()],
            nodes,
            pairs,
            pair_of,
            first_nodes,
            running,
            keep_events: config.than_ns.is_some()
                || config.lower_ns.is_some()
                || config.detail.is_some()
                || implementation == Implementation::Pair,
            pending: FxHashMap::default(),
            delay: FxHashMap::default(),
            slow: SlowPairQueue::new(config.slow_pair_capacity),
            unpaired_list: Vec::new(),
            spare_events: Vec::new(),
        })
    }

    /// `--heatmap`: the pairs closed since the last call, and the names of every pair
    /// (start, end), by pair index.
    pub fn take_heat(&mut self) -> Vec<HeatPoint> {
        self.heat.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// Each pair's (start, end) event names, by pair index.
    pub fn pair_names(&self) -> Vec<(String, String)> {
        self.pairs
            .iter()
            .map(|&(a, b)| (self.nodes[a].name.clone(), self.nodes[b].name.clone()))
            .collect()
    }

    /// `--than` or `--lower` is given: over- (under-) threshold pairs are kept.
    pub fn lists_offenders(&self) -> bool {
        self.than_ns.is_some() || self.lower_ns.is_some()
    }

    /// The `--than` pairs queued since the last call, and how many were dropped.
    pub fn take_slow_pairs(&mut self) -> (Vec<SlowPair>, u64) {
        self.slow.take()
    }

    /// `--impl pair`: the first events that found no second one since the last call
    /// (perf-prof prints them as raw event lines).
    pub fn take_unpaired_events(&mut self) -> Vec<OwnedTraceEvent> {
        std::mem::take(&mut self.unpaired_list)
    }

    /// First events waiting for their second one.
    pub fn pending_len(&self) -> usize {
        self.pending.len()
    }

    /// Records of one instance (`cpu` when attached to CPUs, else the thread) were lost.
    /// When every key is the instance, only that instance's pending event can be
    /// corrupted (perf-prof's per-instance reclaim); with `key=` any key may be, and all
    /// pending events go, as [`Analyzer::lost`] does.
    pub fn lost_instance(&mut self, instance: u64, from_ns: u64, to_ns: u64) {
        if !self.keys_are_instances {
            self.lost(from_ns, to_ns);
            return;
        }
        if let Some(p) = self.pending.remove(&instance) {
            self.note_unpaired(p);
        }
    }

    /// The run is over: pending first events are unpaired (`--impl pair` counts them).
    pub fn finish(&mut self) {
        self.flush_pending();
    }

    fn flush_pending(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        if self.implementation == Implementation::Pair {
            for (_, p) in pending {
                self.note_unpaired(p);
            }
        }
    }

    /// A copy of `event` in a recycled buffer when one is spare.
    fn owned(&mut self, event: &TraceEvent<'_>) -> OwnedTraceEvent {
        match self.spare_events.pop() {
            Some(mut owned) => {
                refill_owned(&mut owned, event);
                owned
            }
            None => OwnedTraceEvent::from_event(event),
        }
    }

    fn recycle(&mut self, event: Option<OwnedTraceEvent>) {
        if let Some(event) = event
            && self.spare_events.len() < SPARE_EVENTS_KEPT
        {
            self.spare_events.push(event);
        }
    }

    fn note_unpaired(&mut self, pending: Pending) {
        if self.implementation != Implementation::Pair {
            self.recycle(pending.event);
            return;
        }
        self.unpaired[pending.node] += 1;
        if let Some(event) = pending.event {
            // Bounded like the slow pairs: a flood of unpaired events is counted, not kept.
            if self.unpaired_list.len() < UNPAIRED_EVENTS_KEPT {
                self.unpaired_list.push(event);
            }
        }
    }

    fn play(&mut self, part_index: usize, event: &TraceEvent<'_>, unnecessary: bool) {
        let part = &self.parts[usize::from(event.event.0)][part_index];
        if part.filter.as_ref().is_some_and(|f| !f(event)) {
            return;
        }
        let key = match &part.key {
            Some(source) => source.read(event),
            None => Some(match self.instance {
                Instance::Cpu => u64::from(event.cpu),
                Instance::Thread => u64::from(event.tid),
            }),
        };
        let Some(key) = key else { return };
        let role = part.role.as_ref().map_or(Some(3), |r| r.read(event)).unwrap_or(0);
        let (node, stage) = (part.node, part.stage);
        let find_prev = (stage != 0 || self.cycle) && role & 2 != 0;
        let backup = (stage != self.last_stage || self.cycle) && role & 1 != 0 && !unnecessary;

        // perf-prof pairs with whatever is pending under the key and removes it; events
        // come in time order, so it is older (a tie closes nothing in `delay`).
        if find_prev && let Some(prev) = self.pending.remove(&key) {
            match self.pair_of.get(&(prev.node, node)) {
                Some(&pair) => self.close(pair, key, prev, event),
                None => self.recycle(prev.event),
            }
        }
        if backup {
            let copy = self.keep_events.then(|| self.owned(event));
            let pending = Pending {
                node,
                time_ns: event.time_ns,
                event: copy,
            };
            // A newer first event replaces the older silently (perf-prof's EEXIST path:
            // not even `--impl pair` counts the older one as unpaired).
            if let Some(replaced) = self.pending.insert(key, pending) {
                self.recycle(replaced.event);
            }
        }
    }

    fn close(&mut self, pair: usize, key: u64, first: Pending, second: &TraceEvent<'_>) {
        match self.implementation {
            Implementation::Pair => {
                self.paired[pair] += 1;
                self.recycle(first.event);
            }
            Implementation::Delay if second.time_ns <= first.time_ns => self.recycle(first.event),
            Implementation::Delay => {
                let latency = second.time_ns - first.time_ns;
                if let Some(heat) = &mut self.heat {
                    heat.push(HeatPoint {
                        pair,
                        end_ns: second.time_ns,
                        latency_ns: latency,
                    });
                }
                let instance = if self.perins { key } else { 0 };
                self.delay
                    .entry(LatencyKey {
                        instance,
                        series: pair as u64,
                    })
                    .or_default()
                    .record(latency, self.than_ns);
                let listed = self.than_ns.is_some_and(|than| latency > than)
                    || self.lower_ns.is_some_and(|lower| latency < lower);
                if listed {
                    match first.event {
                        Some(event) if self.slow.has_room() => {
                            let detail = self
                                .timeline
                                .as_ref()
                                .map(|t| t.between(&event, second))
                                .unwrap_or_default();
                            self.slow.push(SlowPair {
                                detail,
                                ..SlowPair::new(event, second, latency, PairPrint::TraceLines)
                            })
                        }
                        event => {
                            self.slow.note_dropped();
                            self.recycle(event);
                        }
                    }
                } else {
                    self.recycle(first.event);
                }
            }
        }
    }

    fn delay_schema(&self) -> DelaySchema {
        DelaySchema {
            pairs: self
                .pairs
                .iter()
                .map(|&(a, b)| PairNames {
                    start: self.nodes[a].name.clone(),
                    end: self.nodes[b].name.clone(),
                })
                .collect(),
            key_header: self.perins.then(|| self.key_header.clone()),
            key_width: self.key_width,
            comm_column: self.comm_column,
            than_ns: self.than_ns,
        }
    }

    fn pair_schema(&self) -> PairSchema {
        PairSchema {
            nodes: self.nodes.iter().map(|n| n.full_name.clone()).collect(),
            pairs: self.pairs.clone(),
            first_nodes: self.first_nodes.clone(),
        }
    }
}

/// The delay table of `rows`: by instance (with `--perins`), then total time, largest
/// first, then pair.
pub fn delay_table(schema: &DelaySchema, rows: &LatencyRows) -> DelayTable {
    let perins = schema.key_header.is_some();
    let mut table: Vec<DelayRow> = rows
        .rows
        .iter()
        .map(|(key, stats)| DelayRow {
            instance: perins.then_some(key.instance),
            pair: usize::try_from(key.series).unwrap_or(usize::MAX),
            stats: stats.clone(),
        })
        .collect();
    table.sort_by(|a, b| {
        a.instance
            .cmp(&b.instance)
            .then(b.stats.total_ns().cmp(&a.stats.total_ns()))
            .then(a.pair.cmp(&b.pair))
    });
    DelayTable {
        pairs: schema.pairs.clone(),
        key_header: schema.key_header.clone(),
        key_width: schema.key_width,
        comm_column: schema.comm_column,
        than_ns: schema.than_ns,
        rows: table,
    }
}

/// The pair lines of `rows`: per first event its unpaired line, then its pairs.
pub fn pair_table(schema: &PairSchema, rows: &PairRows) -> PairTable {
    let count = |v: &[u64], i: usize| v.get(i).copied().unwrap_or(0);
    let mut table = Vec::new();
    for &first in &schema.first_nodes {
        table.push(PairCount {
            first: schema.nodes[first].clone(),
            second: None,
            count: count(&rows.unpaired, first),
        });
        for (pair, &(a, b)) in schema.pairs.iter().enumerate() {
            if a == first {
                table.push(PairCount {
                    first: schema.nodes[a].clone(),
                    second: Some(schema.nodes[b].clone()),
                    count: count(&rows.paired, pair),
                });
            }
        }
    }
    PairTable { rows: table }
}

/// A multi-trace table of `rows` as `schema` says (delay or pairs).
pub fn multi_trace_table(schema: &AnalysisSchema, rows: &AnalysisRows) -> Option<MultiTraceTable> {
    match (schema, rows) {
        (AnalysisSchema::Delay(s), AnalysisRows::Latency(r)) => {
            Some(MultiTraceTable::Delay(delay_table(s, r)))
        }
        (AnalysisSchema::Pairs(s), AnalysisRows::Pairs(r)) => Some(MultiTraceTable::Pair(pair_table(s, r))),
        _ => None,
    }
}

impl Analyzer for MultiTraceAnalyzer {
    type Table = MultiTraceTable;

    fn feed(&mut self, event: &TraceEvent<'_>) {
        let index = usize::from(event.event.0);
        let mut unnecessary = false;
        if let Some(running) = &mut self.running {
            if event.event == running.switch {
                running.on_switch(event);
            } else {
                unnecessary = running.is_running(event);
            }
        }
        let parts = self.parts.get(index).map_or(0, Vec::len);
        for part in 0..parts {
            self.play(part, event, unnecessary);
        }
        if let Some(timeline) = &mut self.timeline {
            timeline.push(event, !self.pending.is_empty());
            if timeline.trim_due()
                && let Some(oldest) = self.pending.values().map(|p| p.time_ns).min()
            {
                timeline.trim(oldest);
            }
        }
    }

    fn lost(&mut self, _from_ns: u64, _to_ns: u64) {
        // The hole's CPU is not known here: every pending first event may have lost its
        // second one (perf-prof drops all backups unless keys are per instance).
        self.flush_pending();
        if let Some(timeline) = &mut self.timeline {
            timeline.clear();
        }
        if let Some(running) = &mut self.running {
            running.by_cpu.clear();
            running.cpus_of.clear();
        }
    }

    fn take_rows(&mut self) -> AnalysisRows {
        match self.implementation {
            Implementation::Delay => AnalysisRows::Latency(LatencyRows {
                rows: std::mem::take(&mut self.delay),
            }),
            Implementation::Pair => {
                let zero_paired = vec![0; self.paired.len()];
                let zero_unpaired = vec![0; self.unpaired.len()];
                AnalysisRows::Pairs(PairRows {
                    paired: std::mem::replace(&mut self.paired, zero_paired),
                    unpaired: std::mem::replace(&mut self.unpaired, zero_unpaired),
                })
            }
        }
    }

    fn rows(&self) -> AnalysisRows {
        match self.implementation {
            Implementation::Delay => AnalysisRows::Latency(LatencyRows {
                rows: self.delay.clone(),
            }),
            Implementation::Pair => AnalysisRows::Pairs(PairRows {
                paired: self.paired.clone(),
                unpaired: self.unpaired.clone(),
            }),
        }
    }

    fn schema(&self) -> AnalysisSchema {
        match self.implementation {
            Implementation::Delay => AnalysisSchema::Delay(self.delay_schema()),
            Implementation::Pair => AnalysisSchema::Pairs(self.pair_schema()),
        }
    }

    fn tabulate(&self, rows: &AnalysisRows) -> MultiTraceTable {
        multi_trace_table(&self.schema(), rows).unwrap_or_else(|| match self.implementation {
            Implementation::Delay => {
                MultiTraceTable::Delay(delay_table(&self.delay_schema(), &LatencyRows::default()))
            }
            Implementation::Pair => {
                MultiTraceTable::Pair(pair_table(&self.pair_schema(), &PairRows::default()))
            }
        })
    }
}

#[cfg(test)]
mod tests;
