//! Where a host session's events go: the CPUs or threads of the command line, or a
//! workload perfscope starts (then its thread, with the workload held before exec until
//! the events are open); with `--inherit` the threads are followed into the tasks they
//! create.

use anyhow::Context;

use crate::sources::perf_event::attr::{EventAttr, EventKind, Sampling, Wakeup};
use crate::sources::perf_event::targets::{Target, inheriting, parse_id_list, resolve_targets};

use super::options::{HostRunOptions, HostTarget};
use super::workload::CorkedWorkload;

/// The resolved targets of a session.
pub struct SessionTargets {
    pub targets: Vec<Target>,
    /// Attached to threads, inheriting or not (the default key and `--perins` instance is
    /// then the thread; perf-prof's `--inherit` switches to CPUs, but the events still
    /// name their thread and a thread is what a followed workload is made of).
    pub threads: bool,
    pub workload: Option<CorkedWorkload>,
}

/// Resolve `target` (forking the workload, held, when there is one).
pub fn open_targets(target: &HostTarget) -> anyhow::Result<SessionTargets> {
    if !target.workload.is_empty() {
        let workload = CorkedWorkload::spawn(&target.workload)?;
        let mut targets = vec![Target::Thread(workload.pid())];
        if target.inherit {
            targets = inheriting(targets, target.cpus.as_deref())?;
        }
        return Ok(SessionTargets {
            targets,
            threads: true,
            workload: Some(workload),
        });
    }
    let ids = |text: &Option<String>, flag: &str| -> anyhow::Result<Vec<u32>> {
        match text {
            Some(t) => parse_id_list(t).with_context(|| format!("{flag} {t}")),
            None => Ok(Vec::new()),
        }
    };
    let pids = ids(&target.pids, "-p")?;
    let tids = ids(&target.tids, "-t")?;
    let mut targets = resolve_targets(target.cpus.as_deref(), &pids, &tids)?;
    if target.inherit {
        targets = inheriting(targets, None)?;
    }
    let threads = targets.iter().any(Target::is_task);
    Ok(SessionTargets {
        targets,
        threads,
        workload: None,
    })
}

impl SessionTargets {
    /// Let the workload run (the events are open and enabled).
    pub fn start_workload(&mut self) {
        if let Some(w) = &mut self.workload {
            w.release();
        }
    }

    /// The workload has exited (always `false` without one).
    pub fn workload_exited(&mut self) -> bool {
        self.workload.as_mut().is_some_and(|w| w.try_wait().is_some())
    }

    /// The workload's exit code, once it has exited.
    pub fn workload_status(&mut self) -> Option<i32> {
        self.workload.as_mut().and_then(|w| w.try_wait())
    }
}

/// The session's name carrier on CPU rings: a software dummy event (it never samples) on
/// every online CPU, in rings of its own, whose COMM and FORK records name the threads the
/// traced events meet.
pub(super) fn names_attr(run: &HostRunOptions) -> EventAttr {
    EventAttr::new(
        EventKind::Software {
            config: perf_event_open_sys::bindings::PERF_COUNT_SW_DUMMY,
        },
        Sampling::Period(1),
    )
    .with_sample(
        perf_event_open_sys::bindings::PERF_SAMPLE_RAW | perf_event_open_sys::bindings::PERF_SAMPLE_PERIOD,
    )
    .with_wakeup(match run.ring.watermark_percent {
        Some(w) => Wakeup::WatermarkPercent(u32::from(w)),
        None => Wakeup::default(),
    })
    .with_comm_records()
}
