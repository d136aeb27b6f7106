//! Where a host session's events go: the CPUs or threads of the command line, or a
//! workload perfscope starts (then its thread, with the workload held before exec until
//! the events are open).

use anyhow::Context;

use crate::sources::perf_event::targets::{Target, parse_id_list, resolve_targets};

use super::options::HostTarget;
use super::workload::CorkedWorkload;

/// The resolved targets of a session.
pub struct SessionTargets {
    pub targets: Vec<Target>,
    /// Attached to threads (the default key and `--perins` instance is then the thread).
    pub threads: bool,
    pub workload: Option<CorkedWorkload>,
}

/// Resolve `target` (forking the workload, held, when there is one).
pub fn open_targets(target: &HostTarget) -> anyhow::Result<SessionTargets> {
    if !target.workload.is_empty() {
        let workload = CorkedWorkload::spawn(&target.workload)?;
        return Ok(SessionTargets {
            targets: vec![Target::Thread(workload.pid())],
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
    let targets = resolve_targets(target.cpus.as_deref(), &pids, &tids)?;
    let threads = targets.iter().any(|t| matches!(t, Target::Thread(_)));
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
