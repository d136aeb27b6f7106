//! `oncpu`: who ran where — per CPU, how long each task ran on it, from `sched_switch`
//! alone, as perf-prof's oncpu in CPU mode: a task's run on a CPU is the time between the
//! switch that put it there and the switch that took it off. The idle task (pid 0) is
//! not a task of the table.
//!
//! The window's edges count too, unlike perf-prof's (which credits only runs that both
//! start and end inside it, so a task spinning through a quiet CPU shows half its time):
//! the first switch on a CPU ends a run that began no later than the session did, and
//! at the end each CPU's running task is credited up to the latest event.
//!
//! Rows are [`LatencyRows`] keyed by (CPU, thread): each run is one value of the
//! distribution, so the total is the run time, the calls are perf-prof's `--detail`
//! switch count and the max its longest run — all of which merge across time slices.

use super::chosen_tasks::{ForkEvent, TaskFilter};
use super::{Analyzer, AnalyzerError};
use crate::model::analysis::{AnalysisRows, AnalysisSchema, LatencyKey, LatencyRows, OnCpuSchema};
use crate::model::latency_stats::LatencyStats;
use crate::trace::event::{EventIndex, EventLayout, FieldLayout, TraceEvent};

pub struct OnCpuAnalyzer {
    schema: OnCpuSchema,
    switch: EventIndex,
    prev_pid: FieldLayout,
    /// The last switch seen on each CPU (by CPU number): where the running task started,
    /// and which task that is.
    last_switch_ns: Vec<Option<u64>>,
    running: Vec<Option<u32>>,
    next_pid: FieldLayout,
    /// When the events were on: a CPU's first switch ends a run that began by then.
    /// `None` before [`OnCpuAnalyzer::begin`] and after a loss.
    origin_ns: Option<u64>,
    rows: LatencyRows,
    /// Thread mode (`-p`/`-t`, a workload): only these tasks' runs count.
    only: Option<TaskFilter>,
    fork: Option<ForkEvent>,
}

impl OnCpuAnalyzer {
    /// The analyzer over the opened events (`layouts[i]` is `EventIndex(i)`): the first
    /// `sched:sched_switch` among them.
    pub fn new(layouts: &[EventLayout], schema: OnCpuSchema) -> Result<Self, AnalyzerError> {
        let (index, layout) = layouts
            .iter()
            .enumerate()
            .find(|(_, l)| l.system == "sched" && l.name == "sched_switch")
            .ok_or_else(|| AnalyzerError::MissingEvent {
                analyzer: "oncpu",
                event: "sched:sched_switch".into(),
            })?;
        let prev_pid = layout
            .field("prev_pid")
            .cloned()
            .ok_or_else(|| AnalyzerError::missing_field(layout, "prev_pid"))?;
        let next_pid = layout
            .field("next_pid")
            .cloned()
            .ok_or_else(|| AnalyzerError::missing_field(layout, "next_pid"))?;
        Ok(Self {
            schema,
            switch: EventIndex(index as u16),
            prev_pid,
            last_switch_ns: Vec::new(),
            running: Vec::new(),
            next_pid,
            origin_ns: None,
            rows: LatencyRows::default(),
            only: None,
            fork: ForkEvent::find(layouts)?,
        })
    }

    /// Thread mode: count only the runs of the tasks `only` chooses.
    pub fn keeping(mut self, only: TaskFilter) -> Self {
        self.only = Some(only);
        self
    }

    /// The events were enabled at `at_ns`: every CPU was running its task by then.
    pub fn begin(&mut self, at_ns: u64) {
        self.origin_ns = Some(at_ns);
    }

    /// The end, at `end_ns` — read before the events were disabled, so every switch
    /// before it was seen: each CPU's running task ran until then. (Not until the latest
    /// event: the events of one CPU may be disabled milliseconds after another's, and a
    /// task that left the first CPU unseen and ran on the second would be credited on
    /// both.)
    pub fn finish(&mut self, end_ns: u64) {
        for cpu in 0..self.last_switch_ns.len() {
            if let (Some(started), Some(tid)) = (self.last_switch_ns[cpu], self.running[cpu])
                && started < end_ns
            {
                self.credit(cpu, tid, started, end_ns);
                self.last_switch_ns[cpu] = Some(end_ns);
            }
        }
    }

    fn credit(&mut self, cpu: usize, tid: u32, from_ns: u64, to_ns: u64) {
        if tid == 0 || self.only.as_ref().is_some_and(|only| !only.chooses(tid, None)) {
            return;
        }
        let key = LatencyKey {
            instance: cpu as u64,
            series: u64::from(tid),
        };
        self.rows
            .rows
            .entry(key)
            .or_default()
            .record(to_ns.saturating_sub(from_ns), None);
    }
}

/// One task's (or, with `--only-comm`, one command's) time on one CPU.
#[derive(Clone, Debug, PartialEq)]
pub struct OnCpuTask {
    /// `None` with `--only-comm`: the threads of one name added up.
    pub tid: Option<u32>,
    pub comm: String,
    pub stats: LatencyStats,
}

/// One CPU: its tasks, longest run time first.
#[derive(Clone, Debug, PartialEq)]
pub struct OnCpuRow {
    pub cpu: u32,
    pub total_ns: u64,
    /// Runs that ended on this CPU (perf-prof's `sws`, switches).
    pub switches: u64,
    pub tasks: Vec<OnCpuTask>,
}

/// Thread mode's row: one chosen thread and its time on each CPU it ran on.
#[derive(Clone, Debug, PartialEq)]
pub struct OnCpuThread {
    pub tid: u32,
    pub comm: String,
    pub total_ns: u64,
    /// (CPU, run time), by CPU.
    pub cpus: Vec<(u32, u64)>,
}

/// The oncpu table in perf-prof's order: by CPU, then run time, longest first.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct OnCpuTable {
    pub only_comm: bool,
    pub detail: bool,
    pub rows: Vec<OnCpuRow>,
    /// Thread mode (`-p`/`-t`): the same runs by thread, by thread id.
    pub threads: Option<Vec<OnCpuThread>>,
}

/// The table of `rows`, the threads named by `name_of` (perf-prof's `<...>` when unknown).
pub fn oncpu_table(
    schema: &OnCpuSchema,
    rows: &LatencyRows,
    name_of: &dyn Fn(u32) -> Option<String>,
) -> OnCpuTable {
    // Thread mode has a row per thread: names are not added up there.
    let only_comm = schema.only_comm && !schema.threads;
    let mut by_cpu: std::collections::BTreeMap<u32, Vec<OnCpuTask>> = Default::default();
    for (key, stats) in &rows.rows {
        let (Ok(cpu), Ok(tid)) = (u32::try_from(key.instance), u32::try_from(key.series)) else {
            continue;
        };
        if stats.calls() == 0 {
            continue;
        }
        let comm = name_of(tid).unwrap_or_else(|| crate::model::threads::UNKNOWN_THREAD.into());
        // The kernel's TASK_COMM_LEN (16) less the NUL, as perf-prof prints it.
        let comm: String = comm.chars().take(15).collect();
        let tasks = by_cpu.entry(cpu).or_default();
        match tasks.iter_mut().find(|t| only_comm && t.comm == comm) {
            Some(same_name) => same_name.stats.merge(stats),
            None => tasks.push(OnCpuTask {
                tid: (!only_comm).then_some(tid),
                comm,
                stats: stats.clone(),
            }),
        }
    }
    let threads = schema.threads.then(|| {
        let mut by_thread: std::collections::BTreeMap<u32, OnCpuThread> = Default::default();
        for (cpu, tasks) in &by_cpu {
            for task in tasks {
                let Some(tid) = task.tid else { continue };
                let thread = by_thread.entry(tid).or_insert_with(|| OnCpuThread {
                    tid,
                    comm: task.comm.clone(),
                    total_ns: 0,
                    cpus: Vec::new(),
                });
                thread.total_ns = thread.total_ns.saturating_add(task.stats.total_ns());
                thread.cpus.push((*cpu, task.stats.total_ns()));
            }
        }
        by_thread.into_values().collect()
    });
    OnCpuTable {
        only_comm,
        detail: schema.detail,
        threads,
        rows: by_cpu
            .into_iter()
            .map(|(cpu, mut tasks)| {
                tasks.sort_by(|a, b| {
                    b.stats
                        .total_ns()
                        .cmp(&a.stats.total_ns())
                        .then(a.tid.cmp(&b.tid))
                        .then(a.comm.cmp(&b.comm))
                });
                OnCpuRow {
                    cpu,
                    total_ns: tasks
                        .iter()
                        .map(|t| t.stats.total_ns())
                        .fold(0, u64::saturating_add),
                    switches: tasks.iter().map(|t| t.stats.calls()).sum(),
                    tasks,
                }
            })
            .collect(),
    }
}

impl Analyzer for OnCpuAnalyzer {
    type Table = OnCpuTable;

    fn feed(&mut self, event: &TraceEvent<'_>) {
        if let (Some(fork), Some(only)) = (&self.fork, self.only.as_mut())
            && fork.event == event.event
        {
            only.forked(fork, event);
        }
        if event.event != self.switch {
            return;
        }
        let cpu = event.cpu as usize;
        if self.last_switch_ns.len() <= cpu {
            // A CPU not seen yet has run one task since the session began.
            self.last_switch_ns.resize(cpu + 1, self.origin_ns);
            self.running.resize(cpu + 1, None);
        }
        let started = self.last_switch_ns[cpu].replace(event.time_ns);
        let read_tid = |field: &FieldLayout| field.read_i64(event.raw).and_then(|p| u32::try_from(p).ok());
        let prev = read_tid(&self.prev_pid);
        self.running[cpu] = read_tid(&self.next_pid);
        if let (Some(started), Some(prev)) = (started, prev) {
            self.credit(cpu, prev, started, event.time_ns);
        }
    }

    /// A lost record may hide switches: every CPU's running task starts over.
    fn lost(&mut self, _from_ns: u64, _to_ns: u64) {
        self.last_switch_ns.iter_mut().for_each(|s| *s = None);
        self.running.iter_mut().for_each(|s| *s = None);
        self.origin_ns = None;
    }

    fn take_rows(&mut self) -> AnalysisRows {
        AnalysisRows::Latency(std::mem::take(&mut self.rows))
    }

    fn rows(&self) -> AnalysisRows {
        AnalysisRows::Latency(self.rows.clone())
    }

    fn schema(&self) -> AnalysisSchema {
        AnalysisSchema::OnCpu(self.schema.clone())
    }

    fn tabulate(&self, rows: &AnalysisRows) -> OnCpuTable {
        match rows {
            // Tests look at threads by id: no names here.
            AnalysisRows::Latency(rows) => oncpu_table(&self.schema, rows, &|_| None),
            _ => OnCpuTable::default(),
        }
    }
}

#[cfg(test)]
mod tests;
