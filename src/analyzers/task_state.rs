//! `task-state`: how long tasks spend in each scheduler state — running (R), sleeping
//! (S), in uninterruptible sleep (D), stopped (T), traced (t), idle (I) — and waiting for
//! a CPU once woken or preempted (RD, run delay), from `sched_switch`, `sched_wakeup` and
//! `sched_wakeup_new`, as perf-prof's task-state computes it.
//!
//! One state per task: a switch-out closes its R interval and opens the state the kernel
//! reports in `prev_state` (a runnable switch-out opens a run delay); a wakeup closes a
//! sleep and opens a run delay (a second wakeup does not move its start); a switch-in
//! closes the run delay. A task's first event only starts its clock, so no interval is
//! ever counted from before the session. Lost records discard every task's state.
//!
//! `--than T`: a sleep or run delay longer than T is an offender — the event that
//! started it and the one that ended it, as perf-prof prints them (it prints a
//! `task-state: PID COMM WAIT|RUNDELAY N ms` line above them too). The starting event is
//! copied per task only when `--than` is given.
//!
//! `-p`/`-t`/`--filter COMM` (perf-prof's mode 1): only the chosen tasks are tracked.
//! The events still come from every CPU — a task's switch-in and wakeup are recorded in
//! another task's context — and each side of a switch is kept only for a chosen task.
//!
//! `-S`/`-D` (perf-prof's mode 2) report only the sleep states asked for; perf-prof gets
//! there by a kernel filter on `prev_state`, which also drops most R and RD intervals —
//! here they are tracked and left out of the rows, the same table without the stray RD
//! rows the filter lets through.

use rustc_hash::FxHashMap;

use super::chosen_tasks::{ForkEvent, TaskFilter};
use super::latency::{LatencyStats, PairPrint, SlowPair, SlowPairQueue, refill_owned};
use super::{Analyzer, AnalyzerError};
use crate::model::analysis::{AnalysisRows, AnalysisSchema, LatencyKey, LatencyRows, TaskStateSchema};
use crate::trace::event::{EventIndex, EventLayout, FieldLayout, OwnedTraceEvent, TraceEvent};

/// A task state, in perf-prof's print order; the index is [`LatencyKey::series`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TaskState {
    Running,
    Sleeping,
    DiskSleep,
    Stopped,
    Traced,
    Idle,
    RunDelay,
}

impl TaskState {
    pub const ALL: [TaskState; 7] = [
        TaskState::Running,
        TaskState::Sleeping,
        TaskState::DiskSleep,
        TaskState::Stopped,
        TaskState::Traced,
        TaskState::Idle,
        TaskState::RunDelay,
    ];

    /// The `St` column: `R S D T t I RD`.
    pub fn label(self) -> &'static str {
        match self {
            TaskState::Running => "R",
            TaskState::Sleeping => "S",
            TaskState::DiskSleep => "D",
            TaskState::Stopped => "T",
            TaskState::Traced => "t",
            TaskState::Idle => "I",
            TaskState::RunDelay => "RD",
        }
    }

    pub fn series(self) -> u64 {
        self as u64
    }

    pub fn of_series(series: u64) -> Option<TaskState> {
        Self::ALL.get(usize::try_from(series).ok()?).copied()
    }
}

/// What a switch-out's `prev_state` says the task does next.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum SwitchedOut {
    /// Still runnable (`R`, or `R+` = 0x100 for a kernel preemption): a run delay starts.
    Runnable,
    Asleep(TaskState),
    /// Dead or zombie (`X`, `Z`): the task is gone.
    Exited,
}

/// `prev_state` as the tracepoint stores it on 4.14+ kernels: one `TASK_REPORT` bit (or
/// 0 for running), `TASK_REPORT_IDLE` 0x80, `TASK_REPORT_MAX` 0x100 for preemption.
fn switched_out(prev_state: u64) -> SwitchedOut {
    match prev_state & 0xff {
        0 => SwitchedOut::Runnable,
        s if s & 0x01 != 0 => SwitchedOut::Asleep(TaskState::Sleeping),
        s if s & 0x02 != 0 => SwitchedOut::Asleep(TaskState::DiskSleep),
        s if s & 0x04 != 0 => SwitchedOut::Asleep(TaskState::Stopped),
        s if s & 0x08 != 0 => SwitchedOut::Asleep(TaskState::Traced),
        s if s & 0x30 != 0 => SwitchedOut::Exited,
        // Parked kthreads (0x40) sleep until unparked: perf-prof has no column for them
        // and counts them with the idle ones.
        _ => SwitchedOut::Asleep(TaskState::Idle),
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskStateOptions {
    /// Rows per (thread, state) instead of per state.
    pub perins: bool,
    pub than_ns: Option<u64>,
    /// `-S`: report interruptible sleeps (only sleep states when this or `-D` is on).
    pub sleeping: bool,
    /// `-D`: report uninterruptible sleeps.
    pub disk_sleep: bool,
    /// How many `--than` offenders are kept between two prints.
    pub slow_pair_capacity: usize,
    /// `Some`: only these tasks (`-p`/`-t`, `--filter`).
    pub only: Option<TaskFilter>,
}

/// Where a task is and since when.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Tracked {
    state: TaskState,
    since_ns: u64,
}

struct Switch {
    event: EventIndex,
    prev_pid: FieldLayout,
    prev_state: FieldLayout,
    next_pid: FieldLayout,
    prev_comm: Option<FieldLayout>,
    next_comm: Option<FieldLayout>,
}

/// A wakeup event and its `pid` and `comm` fields.
struct Wakeup {
    event: EventIndex,
    pid: FieldLayout,
    comm: Option<FieldLayout>,
}

pub struct TaskStateAnalyzer {
    options: TaskStateOptions,
    switches: Vec<Switch>,
    wakeups: Vec<Wakeup>,
    fork: Option<ForkEvent>,
    tasks: FxHashMap<u32, Tracked>,
    /// With `--than`: the event that put each task in its current state.
    started_by: FxHashMap<u32, OwnedTraceEvent>,
    slow: SlowPairQueue,
    rows: LatencyRows,
}

fn field(layout: &EventLayout, name: &str) -> Result<FieldLayout, AnalyzerError> {
    layout
        .field(name)
        .cloned()
        .ok_or_else(|| AnalyzerError::missing_field(layout, name))
}

impl TaskStateAnalyzer {
    /// The analyzer over the opened events (`layouts[i]` is `EventIndex(i)`): every
    /// `sched:sched_switch` and `sched:sched_wakeup*` among them.
    pub fn new(layouts: &[EventLayout], options: TaskStateOptions) -> Result<Self, AnalyzerError> {
        let mut switches = Vec::new();
        let mut wakeups = Vec::new();
        for (i, layout) in layouts.iter().enumerate() {
            let index = EventIndex(i as u16);
            match (layout.system.as_str(), layout.name.as_str()) {
                ("sched", "sched_switch") => switches.push(Switch {
                    event: index,
                    prev_pid: field(layout, "prev_pid")?,
                    prev_state: field(layout, "prev_state")?,
                    next_pid: field(layout, "next_pid")?,
                    prev_comm: layout.field("prev_comm").cloned(),
                    next_comm: layout.field("next_comm").cloned(),
                }),
                ("sched", "sched_wakeup" | "sched_wakeup_new") => wakeups.push(Wakeup {
                    event: index,
                    pid: field(layout, "pid")?,
                    comm: layout.field("comm").cloned(),
                }),
                _ => {}
            }
        }
        let missing = |event: &str| AnalyzerError::MissingEvent {
            analyzer: "task-state",
            event: event.into(),
        };
        if switches.is_empty() {
            return Err(missing("sched:sched_switch"));
        }
        if wakeups.is_empty() {
            return Err(missing("sched:sched_wakeup"));
        }
        Ok(Self {
            switches,
            wakeups,
            fork: ForkEvent::find(layouts)?,
            tasks: FxHashMap::default(),
            started_by: FxHashMap::default(),
            slow: SlowPairQueue::new(options.slow_pair_capacity),
            options,
            rows: LatencyRows::default(),
        })
    }

    /// Is the task `tid` named `comm` (read from `raw` only when a name filter needs it)
    /// one of the table's?
    fn chosen(&self, tid: u32, comm: Option<&FieldLayout>, raw: &[u8]) -> bool {
        match &self.options.only {
            None => true,
            Some(only) => {
                only.tids.contains(&tid)
                    || (!only.comm_globs.is_empty()
                        && only.chooses(tid, comm.and_then(|f| f.read_str(raw)).as_deref()))
            }
        }
    }

    /// Is `state` a row of the table (`-S`/`-D` keep only their sleeps)?
    fn reported(&self, state: TaskState) -> bool {
        if !self.options.sleeping && !self.options.disk_sleep {
            return true;
        }
        (self.options.sleeping && state == TaskState::Sleeping)
            || (self.options.disk_sleep && state == TaskState::DiskSleep)
    }

    fn account(&mut self, pid: u32, state: TaskState, from_ns: u64, to_ns: u64) {
        if !self.reported(state) {
            return;
        }
        let key = LatencyKey {
            instance: if self.options.perins { u64::from(pid) } else { 0 },
            series: state.series(),
        };
        let stats: &mut LatencyStats = self.rows.rows.entry(key).or_default();
        stats.record(to_ns.saturating_sub(from_ns), self.options.than_ns);
    }

    /// `pid` enters `state` by `event`, closing the interval it was in when `closes` says so.
    fn enter(
        &mut self,
        pid: u32,
        state: TaskState,
        event: &TraceEvent<'_>,
        closes: impl Fn(TaskState) -> bool,
    ) {
        let now = event.time_ns;
        if let Some(old) = self.tasks.insert(pid, Tracked { state, since_ns: now })
            && closes(old.state)
        {
            self.account(pid, old.state, old.since_ns, now);
            self.note_offender(pid, old, event);
        }
        if self.options.than_ns.is_some() {
            let owned = self
                .started_by
                .entry(pid)
                .or_insert_with(|| OwnedTraceEvent::from_event(event));
            refill_owned(owned, event);
        }
    }

    /// A sleep or run delay over `--than`: its starting event and `ended_by`.
    fn note_offender(&mut self, pid: u32, closed: Tracked, ended_by: &TraceEvent<'_>) {
        let Some(than) = self.options.than_ns else {
            return;
        };
        let latency_ns = ended_by.time_ns.saturating_sub(closed.since_ns);
        if closed.state == TaskState::Running || latency_ns <= than || !self.reported(closed.state) {
            return;
        }
        let Some(first) = self.started_by.get(&pid) else {
            return;
        };
        if !self.slow.has_room() {
            self.slow.note_dropped();
            return;
        }
        let print = PairPrint::TaskState {
            pid,
            run_delay: closed.state == TaskState::RunDelay,
        };
        self.slow
            .push(SlowPair::new(first.clone(), ended_by, latency_ns, print));
    }

    /// The `--than` offenders since the last call, and how many did not fit.
    pub fn take_slow_pairs(&mut self) -> (Vec<SlowPair>, u64) {
        self.slow.take()
    }

    fn forget(&mut self, pid: u32) -> Option<Tracked> {
        self.started_by.remove(&pid);
        self.tasks.remove(&pid)
    }

    fn switch(&mut self, at: usize, event: &TraceEvent<'_>) {
        let switch = &self.switches[at];
        let raw = event.raw;
        let (Some(prev_pid), Some(prev_state), Some(next_pid)) = (
            switch.prev_pid.read_i64(raw),
            switch.prev_state.read_u64(raw),
            switch.next_pid.read_i64(raw),
        ) else {
            return;
        };
        let (prev_comm, next_comm) = (switch.prev_comm.clone(), switch.next_comm.clone());
        // pid 0 is each CPU's idle task: never a task of the table.
        if let Ok(prev) = u32::try_from(prev_pid)
            && prev != 0
            && self.chosen(prev, prev_comm.as_ref(), raw)
        {
            let running = |s: TaskState| s == TaskState::Running;
            match switched_out(prev_state) {
                SwitchedOut::Runnable => self.enter(prev, TaskState::RunDelay, event, running),
                SwitchedOut::Asleep(state) => self.enter(prev, state, event, running),
                SwitchedOut::Exited => {
                    if let Some(old) = self.forget(prev)
                        && running(old.state)
                    {
                        self.account(prev, old.state, old.since_ns, event.time_ns);
                    }
                }
            }
        }
        if let Ok(next) = u32::try_from(next_pid)
            && next != 0
            && self.chosen(next, next_comm.as_ref(), raw)
        {
            // A task switched in while it seemed asleep was woken by a wakeup this
            // session did not see (the kernel delivers none while a CPU idles, and a
            // timer wakes most sleepers there): its sleep ended by now at the latest.
            self.enter(next, TaskState::Running, event, |s| s != TaskState::Running);
        }
    }

    fn wakeup(&mut self, pid: u32, event: &TraceEvent<'_>) {
        match self.tasks.get(&pid).map(|t| t.state) {
            // Already runnable (the run delay keeps its start) or running.
            Some(TaskState::RunDelay | TaskState::Running) => {}
            // A sleep ends; a task seen first here only starts its clock.
            Some(_) | None => self.enter(pid, TaskState::RunDelay, event, |_| true),
        }
    }

    fn schema_of(&self) -> TaskStateSchema {
        TaskStateSchema {
            perins: self.options.perins,
            than_ns: self.options.than_ns,
        }
    }
}

/// One row of the table: the thread (with `--perins`), the state, its distribution.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskStateRow {
    pub thread: Option<u32>,
    pub state: TaskState,
    pub stats: LatencyStats,
}

/// The task-state table in perf-prof's order: by thread, then state in `R S D T t I RD`.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskStateTable {
    pub perins: bool,
    pub than_ns: Option<u64>,
    pub rows: Vec<TaskStateRow>,
}

pub fn task_state_table(schema: &TaskStateSchema, rows: &LatencyRows) -> TaskStateTable {
    let mut keyed: Vec<(&LatencyKey, &LatencyStats)> =
        rows.rows.iter().filter(|(_, s)| s.calls() > 0).collect();
    keyed.sort_by_key(|(k, _)| **k);
    TaskStateTable {
        perins: schema.perins,
        than_ns: schema.than_ns,
        rows: keyed
            .into_iter()
            .filter_map(|(key, stats)| {
                Some(TaskStateRow {
                    thread: schema.perins.then(|| u32::try_from(key.instance).ok()).flatten(),
                    state: TaskState::of_series(key.series)?,
                    stats: stats.clone(),
                })
            })
            .collect(),
    }
}

impl Analyzer for TaskStateAnalyzer {
    type Table = TaskStateTable;

    fn feed(&mut self, event: &TraceEvent<'_>) {
        if let Some(at) = self.switches.iter().position(|s| s.event == event.event) {
            self.switch(at, event);
            return;
        }
        if let Some(fork) = self.fork.as_ref().filter(|f| f.event == event.event) {
            if let Some(only) = self.options.only.as_mut() {
                only.forked(fork, event);
            }
            return;
        }
        let Some(wakeup) = self.wakeups.iter().find(|w| w.event == event.event) else {
            return;
        };
        let comm = wakeup.comm.clone();
        let pid = wakeup.pid.read_i64(event.raw);
        if let Some(pid) = pid.and_then(|p| u32::try_from(p).ok())
            && pid != 0
            && self.chosen(pid, comm.as_ref(), event.raw)
        {
            self.wakeup(pid, event);
        }
    }

    /// A lost record may hide any transition: every task starts over, as in perf-prof.
    fn lost(&mut self, _from_ns: u64, _to_ns: u64) {
        self.tasks.clear();
        self.started_by.clear();
    }

    fn take_rows(&mut self) -> AnalysisRows {
        AnalysisRows::Latency(std::mem::take(&mut self.rows))
    }

    fn rows(&self) -> AnalysisRows {
        AnalysisRows::Latency(self.rows.clone())
    }

    fn schema(&self) -> AnalysisSchema {
        AnalysisSchema::TaskState(self.schema_of())
    }

    fn tabulate(&self, rows: &AnalysisRows) -> TaskStateTable {
        match rows {
            AnalysisRows::Latency(rows) => task_state_table(&self.schema_of(), rows),
            _ => task_state_table(&self.schema_of(), &LatencyRows::default()),
        }
    }
}

#[cfg(test)]
mod tests;
