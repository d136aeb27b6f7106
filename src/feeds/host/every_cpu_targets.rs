//! Where `task-state` and `oncpu` take their events for a workload (`task-state -- CMD`):
//! on every CPU, not on the workload's threads. A task's switch-out is recorded in its own
//! context, but its switch-in and its wakeups are recorded in the context of another
//! task (the one switched out, the waker), so per-thread events would see only half of
//! each state. The analyzer keeps the workload's tasks instead: the workload's pid, and
//! every task a kept task forks (from `sched:sched_process_fork`), as perf-prof's
//! task-state does with `-p` and `--ptrace`.

use crate::analyzers::options::{AnalyzerKind, TraceOptions};
use crate::sources::perf_event::targets::{Target, online_cpus};

use super::options::HostTarget;
use super::targets::SessionTargets;

/// The event that names a watched task's children.
pub const FORK_EVENT: &str = "sched:sched_process_fork";

/// Does this session watch a workload's tasks from every CPU?
fn applies(trace: &TraceOptions, target: &HostTarget) -> bool {
    matches!(trace.analyzer, AnalyzerKind::TaskState | AnalyzerKind::OnCpu) && !target.workload.is_empty()
}

/// The selectors with the fork event added when the session follows a workload.
pub fn events(trace: &TraceOptions, target: &HostTarget, mut texts: Vec<String>) -> Vec<String> {
    if applies(trace, target) {
        texts.push(FORK_EVENT.into());
    }
    texts
}

/// Turn the workload's thread targets into every CPU (or the `-C` CPUs), and the
/// analysis into one of the workload's tasks.
pub fn on_every_cpu(
    trace: &TraceOptions,
    target: &HostTarget,
    targets: &mut SessionTargets,
) -> anyhow::Result<TraceOptions> {
    let mut trace = trace.clone();
    let Some(workload) = targets.workload.as_ref().filter(|_| applies(&trace, target)) else {
        return Ok(trace);
    };
    trace.only_tids.push(workload.pid());
    trace.follow_forks = true;
    let cpus = match target.cpus.as_deref() {
        Some(list) => crate::sources::perf_event::targets::parse_id_list(list)?,
        None => online_cpus()?,
    };
    targets.targets = cpus.into_iter().map(Target::Cpu).collect();
    // The rows' instances stay threads (the events name theirs).
    targets.threads = true;
    Ok(trace)
}
