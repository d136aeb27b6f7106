//! `rundelay`: how long a runnable task waits for a CPU — the multi-trace delay analyzer
//! configured as perf-prof's rundelay: stage 1 = `sched_wakeup` / `sched_wakeup_new`
//! keyed by `pid`, and `sched_switch` keyed by `prev_pid` when the task left the CPU still
//! runnable; stage 2 = `sched_switch` keyed by `next_pid` (the task gets a CPU).
//!
//! "Still runnable" on 4.14+ kernels (checked on 6.18): the tracepoint stores
//! `__trace_sched_switch_state()`, which is `TASK_REPORT_MAX` (0x100, printed `R+`) only
//! when the switch came from kernel preemption (`preempt_schedule*`), and the task state
//! index otherwise — 0 (`R`) for a task that is still `TASK_RUNNING`. A CPU-bound task
//! preempted by the tick is switched out on its way back to user space through plain
//! `schedule()`, not a preemption, so it shows prev_state 0. Both mean runnable: the test
//! is "no state bit below 0x100 set" (`prev_state & 0xff == 0`). perf-prof filters
//! `prev_state==TASK_REPORT_MAX` only, and so misses nearly all preemptions (on this VM,
//! with three busy loops: 302 switches `R` against 4 `R+` in one second).

use super::key::KeySource;
use super::multi_trace::{Instance, MultiTraceAnalyzer, MultiTraceConfig, StageEvent, UnnecessaryWakeup};
use super::{AnalyzerError, multi_trace::Implementation};
use crate::trace::event::{EventIndex, EventLayout, FieldLayout};

/// The bits of `prev_state` that name a sleeping/dead state (`TASK_REPORT`, 0x7f, plus
/// `TASK_REPORT_IDLE`, 0x80); `TASK_REPORT_MAX` (0x100) only flags kernel preemption.
pub const PREV_STATE_STATE_BITS: u64 = 0xff;

/// The kernel filter selecting runnable switch-outs (for a separately opened stage-1
/// `sched_switch`): both encodings of "runnable", never the idle task.
pub const RUNNABLE_SWITCH_FILTER: &str = "(prev_state==0 || prev_state==256) && prev_pid>0";

/// Is a `sched_switch` with this `prev_state` a switch-out of a runnable task?
pub fn switched_out_runnable(prev_state: u64) -> bool {
    prev_state & PREV_STATE_STATE_BITS == 0
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RundelayOptions {
    pub perins: bool,
    pub than_ns: Option<u64>,
    /// `--lower`: list the pairs closer than this too.
    pub lower_ns: Option<u64>,
    /// `--heatmap`: hand each pair's latency over for the heatmap file.
    pub heatmap: bool,
    /// `--detail`: the events between each listed pair's two.
    pub detail: Option<crate::analyzers::multi_trace::DetailFilter>,
    pub slow_pair_capacity: usize,
    /// Skip wakeups of tasks already running (needs the stage-2 `sched_switch` to be
    /// unfiltered; turn off when it carries a pid/comm filter).
    pub skip_unnecessary_wakeups: bool,
}

impl Default for RundelayOptions {
    fn default() -> Self {
        Self {
            perins: false,
            than_ns: None,
            lower_ns: None,
            heatmap: false,
            detail: None,
            slow_pair_capacity: 1024,
            skip_unnecessary_wakeups: true,
        }
    }
}

fn field(layout: &EventLayout, name: &str) -> Result<FieldLayout, AnalyzerError> {
    layout
        .field(name)
        .cloned()
        .ok_or_else(|| AnalyzerError::missing_field(layout, name))
}

/// The multi-trace configuration of rundelay over the opened events (`layouts[i]` is
/// `EventIndex(i)`): `sched:sched_wakeup`, optionally `sched:sched_wakeup_new`, and
/// `sched:sched_switch` once (it then plays both stages) or twice (the first opened one
/// is stage 1, the second stage 2).
pub fn rundelay_config(
    layouts: &[EventLayout],
    options: &RundelayOptions,
) -> Result<MultiTraceConfig, AnalyzerError> {
    let indexes = |name: &str| -> Vec<EventIndex> {
        layouts
            .iter()
            .enumerate()
            .filter(|(_, l)| l.system == "sched" && l.name == name)
            .map(|(i, _)| EventIndex(i as u16))
            .collect()
    };
    let missing = |event: &str| AnalyzerError::MissingEvent {
        analyzer: "rundelay",
        event: event.to_string(),
    };
    let layout_of = |index: EventIndex| &layouts[usize::from(index.0)];
    let wakeups: Vec<EventIndex> = indexes("sched_wakeup")
        .into_iter()
        .chain(indexes("sched_wakeup_new"))
        .collect();
    if wakeups.is_empty() {
        return Err(missing("sched:sched_wakeup"));
    }
    let switches = indexes("sched_switch");
    let (switch_out, switch_in) = match switches.as_slice() {
        [one] => (*one, *one),
        [out, into, ..] => (*out, *into),
        [] => return Err(missing("sched:sched_switch")),
    };

    let mut stage1 = Vec::new();
    let mut wakeup_pids = Vec::new();
    for &wakeup in &wakeups {
        let pid = field(layout_of(wakeup), "pid")?;
        wakeup_pids.push((wakeup, pid.clone()));
        stage1.push(StageEvent::new(wakeup).key(KeySource::Field(pid)));
    }
    let out_layout = layout_of(switch_out);
    let prev_pid = field(out_layout, "prev_pid")?;
    let prev_state = field(out_layout, "prev_state")?;
    let filter_pid = prev_pid.clone();
    stage1.push(
        StageEvent::new(switch_out)
            .key(KeySource::Field(prev_pid))
            .filter(Box::new(move |event| {
                prev_state.read_u64(event.raw).is_some_and(switched_out_runnable)
                    && filter_pid.read_i64(event.raw).is_some_and(|pid| pid > 0)
            })),
    );
    let next_pid = field(layout_of(switch_in), "next_pid")?;
    let stage2 = vec![StageEvent::new(switch_in).key(KeySource::Field(next_pid.clone()))];

    let mut config = MultiTraceConfig::new(vec![stage1, stage2]);
    config.implementation = Implementation::Delay;
    config.instance = Instance::Thread;
    config.perins = options.perins;
    config.than_ns = options.than_ns;
    config.lower_ns = options.lower_ns;
    config.heatmap = options.heatmap;
    config.detail = options.detail;
    config.slow_pair_capacity = options.slow_pair_capacity;
    config.key_header = Some("THREAD".into());
    config.comm_column = true;
    if options.skip_unnecessary_wakeups {
        config.unnecessary_wakeup = Some(UnnecessaryWakeup {
            wakeups: wakeup_pids,
            switch: switch_in,
            next_pid,
        });
    }
    Ok(config)
}

/// The rundelay analyzer over the opened events.
pub fn rundelay(
    layouts: &[EventLayout],
    options: &RundelayOptions,
) -> Result<MultiTraceAnalyzer, AnalyzerError> {
    MultiTraceAnalyzer::new(layouts, rundelay_config(layouts, options)?)
}

/// A kernel filter selecting `field` among `ids` as perf-prof writes it: sorted, runs of
/// consecutive ids collapsed into ranges (`pid==5 || (pid>=7&&pid<=9)`).
pub fn pid_filter(field: &str, ids: &[u32]) -> String {
    let mut ids = ids.to_vec();
    ids.sort_unstable();
    ids.dedup();
    let mut terms = Vec::new();
    let mut i = 0;
    while i < ids.len() {
        let start = ids[i];
        let mut end = start;
        while i + 1 < ids.len() && ids[i + 1] == end + 1 {
            i += 1;
            end = ids[i];
        }
        terms.push(if start == end {
            format!("{field}=={start}")
        } else {
            format!("({field}>={start}&&{field}<={end})")
        });
        i += 1;
    }
    terms.join(" || ")
}

/// A kernel filter selecting tasks by name: `comm == "x" || comm ~ "y*"` (a glob
/// character switches `==` to `~`).
pub fn comm_filter(field: &str, comms: &[&str]) -> String {
    comms
        .iter()
        .map(|comm| {
            let op = if comm.contains(['*', '?', '[']) { "~" } else { "==" };
            format!("{field} {op} \"{comm}\"")
        })
        .collect::<Vec<_>>()
        .join(" || ")
}

#[cfg(test)]
mod tests;
