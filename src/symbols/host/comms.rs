//! Thread names (comm) and the optional root frame of every host stack, like perf top's
//! `--sort comm,pid`: samples grouped under their command and/or process.
//!
//! Names come from COMM records as the caller forwards them; a thread never named by a
//! record (it started before the profiler) is read from `/proc/PID/task/TID/comm` once.

use std::sync::Arc;

use crate::model::threads::ThreadNames;

/// What the root frame of a host stack shows.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum RootFrame {
    /// No root frame: stacks start at their outermost function.
    #[default]
    None,
    /// The thread's command name: `bash`.
    Comm,
    /// The process id: `1234`.
    Pid,
    /// Both: `bash:1234`.
    CommPid,
}

/// Thread `tid`'s name from `/proc/PID/task/TID/comm`; `None` once it has exited.
pub fn read_proc_comm(pid: u32, tid: u32) -> Option<String> {
    crate::input::read_system_text(format!("/proc/{pid}/task/{tid}/comm"))
        .ok()
        .map(|c| c.trim_end_matches('\n').to_string())
        .filter(|c| !c.is_empty())
}

/// Every thread /proc lists now, named (at most `MAX_THREADS`): what a session knows of
/// the threads that were there before it, whose names no FORK or COMM record will carry —
/// perf-prof's comm cache starts the same way, so a thread that exits mid-run keeps its name.
pub fn scan_proc_comms(names: &mut ThreadNames) {
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return;
    };
    for proc in procs.flatten() {
        let Some(pid) = proc.file_name().to_str().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(tasks) = std::fs::read_dir(proc.path().join("task")) else {
            continue;
        };
        for task in tasks.flatten() {
            if names.len() >= crate::model::threads::MAX_THREADS {
                return;
            }
            if let Some(tid) = task.file_name().to_str().and_then(|t| t.parse::<u32>().ok())
                && let Some(comm) = read_proc_comm(pid, tid)
            {
                names.set(tid, &comm);
            }
        }
    }
}

/// tid → comm, from records and /proc (the model's one thread-name table).
#[derive(Default)]
pub struct CommTable {
    names: ThreadNames,
}

impl CommTable {
    /// A COMM record (also sent on exec, with the new program's name).
    pub fn on_comm(&mut self, tid: u32, comm: &str) {
        self.names.set(tid, comm);
    }

    /// A forgotten process: its main thread's name goes too.
    pub fn forget(&mut self, pid: u32) {
        self.names.remove(pid);
    }

    /// The name of thread `tid` of process `pid`: from records, else from /proc (then
    /// remembered), else the process's name; `None` when nothing knows it.
    pub fn comm(&mut self, pid: u32, tid: u32) -> Option<Arc<str>> {
        if let Some(c) = self.names.get(tid) {
            return Some(Arc::clone(c));
        }
        match read_proc_comm(pid, tid) {
            Some(c) => {
                self.on_comm(tid, &c);
                self.names.get(tid).cloned()
            }
            None => self.names.get(pid).cloned(),
        }
    }

    /// The root frame's text for a sample of (`pid`, `tid`); `comm` overrides the tracked
    /// name when the caller has it. `None` for [`RootFrame::None`].
    pub fn root_frame_text(
        &mut self,
        root: RootFrame,
        pid: u32,
        tid: u32,
        comm: Option<&str>,
    ) -> Option<String> {
        let name = |table: &mut Self| -> String {
            match comm {
                Some(c) => c.to_string(),
                None => table
                    .comm(pid, tid)
                    .map(|c| c.to_string())
                    .unwrap_or_else(|| ":unknown".to_string()),
            }
        };
        match root {
            RootFrame::None => None,
            RootFrame::Comm => Some(name(self)),
            RootFrame::Pid => Some(pid.to_string()),
            RootFrame::CommPid => Some(format!("{}:{pid}", name(self))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scan_names_this_thread() {
        let mut names = ThreadNames::new();
        scan_proc_comms(&mut names);
        let me = std::process::id();
        assert_eq!(names.name(me), read_proc_comm(me, me));
        assert!(names.len() > 1, "more than one thread runs");
    }

    #[test]
    fn records_then_proc_then_process_name() {
        let mut t = CommTable::default();
        t.on_comm(4_000_000_001, "worker");
        assert_eq!(t.comm(4_000_000_001, 4_000_000_001).as_deref(), Some("worker"));
        // A thread nobody named, of a process that does not exist: the process's name.
        assert_eq!(t.comm(4_000_000_001, 4_000_000_002).as_deref(), Some("worker"));
        assert_eq!(t.comm(4_000_000_003, 4_000_000_003), None);

        let me = std::process::id();
        let expected = std::fs::read_to_string(format!("/proc/{me}/comm")).unwrap();
        assert_eq!(t.comm(me, me).as_deref(), Some(expected.trim_end()));
    }

    #[test]
    fn root_frame_texts() {
        let mut t = CommTable::default();
        t.on_comm(4_000_000_001, "bash");
        let pid = 4_000_000_001;
        assert_eq!(t.root_frame_text(RootFrame::None, pid, pid, None), None);
        assert_eq!(
            t.root_frame_text(RootFrame::Comm, pid, pid, None).as_deref(),
            Some("bash")
        );
        assert_eq!(
            t.root_frame_text(RootFrame::Pid, pid, pid, None).as_deref(),
            Some("4000000001")
        );
        assert_eq!(
            t.root_frame_text(RootFrame::CommPid, pid, pid, Some("zsh"))
                .as_deref(),
            Some("zsh:4000000001")
        );
        assert_eq!(
            t.root_frame_text(RootFrame::Comm, 4_000_000_005, 4_000_000_005, None)
                .as_deref(),
            Some(":unknown")
        );
    }
}
