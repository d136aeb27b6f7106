//! The tasks an analyzer keeps when it takes its events from every CPU: task-state and
//! oncpu with `-p`/`-t`, `--filter COMM` or a workload. A task's switch-in and wakeups are
//! recorded in another task's context (the one switched out, the waker), so per-thread
//! events would see half of each interval; these analyzers watch every CPU and keep the
//! chosen tasks — those listed, those whose name matches, and (following a workload)
//! the children a chosen task forks, from `sched:sched_process_fork`.

use rustc_hash::FxHashSet;

use super::AnalyzerError;
use crate::trace::event::{EventIndex, EventLayout, FieldLayout, TraceEvent};
use crate::trace::expr::glob_match;

/// The tasks `-p`/`-t` and `--filter` choose: a task is in when its id is listed or its
/// name matches one of the globs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TaskFilter {
    pub tids: FxHashSet<u32>,
    pub comm_globs: Vec<String>,
    /// A chosen task's children are chosen too (`sched_process_fork`).
    pub follow_forks: bool,
}

impl TaskFilter {
    pub fn chooses(&self, tid: u32, comm: Option<&str>) -> bool {
        self.tids.contains(&tid) || comm.is_some_and(|c| self.comm_globs.iter().any(|g| glob_match(g, c)))
    }

    /// A fork: a chosen parent's child is chosen too, when following forks.
    pub fn forked(&mut self, fork: &ForkEvent, event: &TraceEvent<'_>) {
        let read = |field: &FieldLayout| field.read_i64(event.raw).and_then(|p| u32::try_from(p).ok());
        if let (true, Some(parent), Some(child)) =
            (self.follow_forks, read(&fork.parent_pid), read(&fork.child_pid))
            && self.tids.contains(&parent)
        {
            self.tids.insert(child);
        }
    }
}

/// `sched_process_fork` and its pid fields.
pub struct ForkEvent {
    pub event: EventIndex,
    parent_pid: FieldLayout,
    child_pid: FieldLayout,
}

impl ForkEvent {
    /// The fork event among the opened ones (`layouts[i]` is `EventIndex(i)`), if any.
    pub fn find(layouts: &[EventLayout]) -> Result<Option<Self>, AnalyzerError> {
        let Some((i, layout)) = layouts
            .iter()
            .enumerate()
            .find(|(_, l)| l.system == "sched" && l.name == "sched_process_fork")
        else {
            return Ok(None);
        };
        let field = |name: &str| {
            layout
                .field(name)
                .cloned()
                .ok_or_else(|| AnalyzerError::missing_field(layout, name))
        };
        Ok(Some(ForkEvent {
            event: EventIndex(i as u16),
            parent_pid: field("parent_pid")?,
            child_pid: field("child_pid")?,
        }))
    }
}
