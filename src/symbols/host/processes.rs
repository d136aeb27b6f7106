//! The address spaces of the processes being profiled: pid → executable mappings, read
//! lazily from `/proc/PID/maps` and kept current from the perf records the caller forwards
//! (MMAP2, COMM with exec, FORK, EXIT).
//!
//! Threads share their process's maps, so everything is keyed by pid. A forked child
//! shares its parent's maps (one `Arc`) until either of them maps something new; only
//! then is the list copied. An exited process is kept for a grace period (the last
//! `exited_kept` exits) because its samples may still be waiting in the ring buffers.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustc_hash::FxHashMap;

use super::maps::{FileKey, Mapping, MappingTarget, ProcessMaps, parse_proc_maps};

/// A miss in a known process re-reads its `/proc/PID/maps` at most this often: records
/// may have been lost, but a process jumping to unmapped addresses must not cost a file
/// read per sample.
const REREAD_AFTER_MISS: Duration = Duration::from_secs(1);

struct Process {
    maps: Arc<ProcessMaps>,
    /// Changes whenever `maps` does (an unwinder rebuilds its modules then).
    version: u64,
    /// When `/proc/PID/maps` was last read for this process (`None`: only records so far).
    read_at: Option<Instant>,
    exited: bool,
}

/// pid → maps, with the grace list of exited processes.
pub struct ProcessTable {
    processes: FxHashMap<u32, Process>,
    exited: VecDeque<u32>,
    exited_kept: usize,
    /// `/proc/PID/maps` files read (for the status line).
    pub maps_reads: u64,
    /// The next maps version handed out.
    next_version: u64,
}

impl ProcessTable {
    pub fn new(exited_kept: usize) -> Self {
        Self {
            processes: FxHashMap::default(),
            exited: VecDeque::new(),
            exited_kept,
            maps_reads: 0,
            next_version: 1,
        }
    }

    fn new_version(&mut self) -> u64 {
        self.next_version += 1;
        self.next_version
    }

    /// A number that changes whenever the maps of `pid` change (`None`: unknown pid).
    pub fn maps_version(&self, pid: u32) -> Option<u64> {
        self.processes.get(&pid).map(|p| p.version)
    }

    /// The mapping that holds `address` in process `pid`. An unknown pid has its maps read
    /// from /proc first; a miss in a known one re-reads them (rate-limited).
    pub fn find(&mut self, pid: u32, address: u64) -> Option<&Mapping> {
        let reread = match self.processes.get(&pid) {
            None => true,
            // The clock is read on misses only: a hit is the hot path.
            Some(p) => {
                p.maps.find(address).is_none()
                    && !p.exited
                    && p.read_at.is_none_or(|at| at.elapsed() >= REREAD_AFTER_MISS)
            }
        };
        if reread {
            self.read_proc(pid, Instant::now());
        }
        self.processes.get(&pid)?.maps.find(address)
    }

    /// The maps known for `pid`, without touching /proc.
    pub fn maps(&self, pid: u32) -> Option<&ProcessMaps> {
        self.processes.get(&pid).map(|p| &*p.maps)
    }

    /// Whether two pids share one maps list (a fork nobody has written to since).
    pub fn shares_maps(&self, a: u32, b: u32) -> bool {
        match (self.processes.get(&a), self.processes.get(&b)) {
            (Some(a), Some(b)) => Arc::ptr_eq(&a.maps, &b.maps),
            _ => false,
        }
    }

    fn read_proc(&mut self, pid: u32, now: Instant) {
        self.maps_reads += 1;
        let text = crate::input::read_system_text(format!("/proc/{pid}/maps")).unwrap_or_default();
        let maps = parse_proc_maps(&text);
        let version = self.new_version();
        match self.processes.get_mut(&pid) {
            // A process that vanished keeps what the records told us.
            Some(p) if maps.is_empty() => p.read_at = Some(now),
            // Nothing new: the version stays, so nothing built on these maps is rebuilt.
            Some(p) if *p.maps == maps => p.read_at = Some(now),
            Some(p) => {
                p.maps = Arc::new(maps);
                p.read_at = Some(now);
                p.version = version;
            }
            None => {
                self.processes.insert(
                    pid,
                    Process {
                        maps: Arc::new(maps),
                        version,
                        read_at: Some(now),
                        exited: false,
                    },
                );
            }
        }
    }

    /// An MMAP2 record. For a pid never seen the record is dropped: its first lookup reads
    /// /proc, which lists this mapping too.
    pub fn on_mmap(&mut self, pid: u32, start: u64, len: u64, pgoff: u64, path: &str, key: Option<FileKey>) {
        let version = self.new_version();
        let Some(process) = self.processes.get_mut(&pid) else {
            return;
        };
        process.version = version;
        let key = key.or_else(|| FileKey::of_path(path));
        Arc::make_mut(&mut process.maps).insert(Mapping {
            start,
            end: start.saturating_add(len),
            pgoff,
            target: MappingTarget::from_path(path, key),
        });
    }

    /// A COMM record with the exec flag: the old image is gone; the new one's mappings
    /// follow as MMAP2 records.
    pub fn on_exec(&mut self, pid: u32) {
        let version = self.new_version();
        self.processes.insert(
            pid,
            Process {
                maps: Arc::new(ProcessMaps::default()),
                version,
                read_at: None,
                exited: false,
            },
        );
    }

    /// A FORK record of a new process (not a new thread: `parent == child` is ignored).
    pub fn on_fork(&mut self, parent: u32, child: u32) {
        if parent == child {
            return;
        }
        let version = self.new_version();
        match self.processes.get(&parent) {
            Some(p) => {
                let maps = Arc::clone(&p.maps);
                self.processes.insert(
                    child,
                    Process {
                        maps,
                        version,
                        read_at: None,
                        exited: false,
                    },
                );
            }
            // Unknown parent: the child's first lookup reads /proc.
            None => {
                self.processes.remove(&child);
            }
        }
    }

    /// An EXIT record of a process. Returns the pids forgotten now that their grace is over.
    pub fn on_exit(&mut self, pid: u32) -> Vec<u32> {
        if let Some(p) = self.processes.get_mut(&pid) {
            p.exited = true;
            self.exited.push_back(pid);
        }
        let mut forgotten = Vec::new();
        while self.exited.len() > self.exited_kept {
            let Some(old) = self.exited.pop_front() else { break };
            // The pid may have been reused by a new process since.
            if self.processes.get(&old).is_some_and(|p| p.exited) {
                self.processes.remove(&old);
                forgotten.push(old);
            }
        }
        forgotten
    }

    pub fn len(&self) -> usize {
        self.processes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.processes.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pids far above any pid_max, so /proc has nothing for them.
    const PARENT: u32 = 4_000_000_001;
    const CHILD: u32 = 4_000_000_002;
    const OTHER: u32 = 4_000_000_003;

    fn module_at(t: &mut ProcessTable, pid: u32, address: u64) -> Option<String> {
        t.find(pid, address).map(|m| m.target.module().to_string())
    }

    #[test]
    fn records_drive_the_maps_of_fork_exec_and_exit() {
        let mut t = ProcessTable::new(1);
        t.on_exec(PARENT);
        t.on_mmap(PARENT, 0x1000, 0x1000, 0, "/bin/parent", None);
        t.on_mmap(PARENT, 0x7000, 0x2000, 0x3000, "/lib/libc.so.6", None);
        assert_eq!(module_at(&mut t, PARENT, 0x1800).as_deref(), Some("parent"));
        assert_eq!(t.find(PARENT, 0x7100).unwrap().file_offset(0x7100), 0x3100);

        // The child shares the parent's list until one of them maps something.
        t.on_fork(PARENT, CHILD);
        assert!(t.shares_maps(PARENT, CHILD));
        assert_eq!(module_at(&mut t, CHILD, 0x7100).as_deref(), Some("libc.so.6"));
        t.on_fork(CHILD, CHILD); // a thread: nothing changes
        assert!(t.shares_maps(PARENT, CHILD));

        // exec in the child drops the inherited image; the parent keeps it.
        t.on_exec(CHILD);
        assert!(!t.shares_maps(PARENT, CHILD));
        assert_eq!(t.maps(CHILD).unwrap().len(), 0);
        t.on_mmap(CHILD, 0x1000, 0x4000, 0, "/bin/child", None);
        assert_eq!(module_at(&mut t, CHILD, 0x1800).as_deref(), Some("child"));
        assert_eq!(module_at(&mut t, PARENT, 0x1800).as_deref(), Some("parent"));
        assert_eq!(module_at(&mut t, CHILD, 0x7100), None);

        // A later mmap in the parent copies its list, and the child does not see it.
        t.on_fork(PARENT, OTHER);
        t.on_mmap(PARENT, 0x9000, 0x1000, 0, "/lib/libm.so.6", None);
        assert!(!t.shares_maps(PARENT, OTHER));
        assert_eq!(module_at(&mut t, PARENT, 0x9100).as_deref(), Some("libm.so.6"));
        assert_eq!(module_at(&mut t, OTHER, 0x9100), None);
        assert_eq!(module_at(&mut t, OTHER, 0x1100).as_deref(), Some("parent"));

        // Exited processes stay resolvable for the grace (here: the last one exit).
        assert!(t.on_exit(CHILD).is_empty());
        assert_eq!(module_at(&mut t, CHILD, 0x1800).as_deref(), Some("child"));
        assert_eq!(t.on_exit(OTHER), vec![CHILD]);
        assert!(t.maps(CHILD).is_none());
        assert_eq!(module_at(&mut t, OTHER, 0x1100).as_deref(), Some("parent"));
    }

    #[test]
    fn the_maps_version_changes_with_the_maps_only() {
        let mut t = ProcessTable::new(4);
        assert_eq!(t.maps_version(PARENT), None);
        t.on_exec(PARENT);
        let first = t.maps_version(PARENT).unwrap();
        t.on_mmap(PARENT, 0x1000, 0x1000, 0, "/bin/parent", None);
        let mapped = t.maps_version(PARENT).unwrap();
        assert_ne!(first, mapped);
        t.find(PARENT, 0x1800);
        assert_eq!(t.maps_version(PARENT), Some(mapped), "a hit changes nothing");
        t.on_fork(PARENT, CHILD);
        assert_ne!(t.maps_version(CHILD), Some(mapped), "a child is built anew");
        t.on_exec(PARENT);
        assert_ne!(t.maps_version(PARENT), Some(mapped));
        // This process's maps read twice from /proc: the same maps, the same version.
        let me = std::process::id();
        let here = the_maps_version_changes_with_the_maps_only as *const () as usize as u64;
        t.find(me, here);
        let read = t.maps_version(me).unwrap();
        t.read_proc(me, Instant::now());
        assert_eq!(t.maps_version(me), Some(read));
    }

    #[test]
    fn a_reused_pid_is_not_forgotten_by_the_old_exit() {
        let mut t = ProcessTable::new(0);
        t.on_exec(PARENT);
        t.on_fork(PARENT, CHILD);
        t.on_exit(CHILD);
        assert!(t.maps(CHILD).is_none());
        let mut t = ProcessTable::new(1);
        t.on_exec(PARENT);
        t.on_mmap(PARENT, 0x1000, 0x1000, 0, "/bin/parent", None);
        t.on_fork(PARENT, CHILD);
        t.on_exit(CHILD);
        t.on_fork(PARENT, CHILD); // pid reused
        t.on_exit(OTHER);
        t.on_exec(OTHER);
        t.on_exit(OTHER);
        assert_eq!(module_at(&mut t, CHILD, 0x1000).as_deref(), Some("parent"));
    }

    #[test]
    fn unknown_pids_are_read_from_proc() {
        let mut t = ProcessTable::new(4);
        let me = std::process::id();
        let here = unknown_pids_are_read_from_proc as *const () as usize as u64;
        let m = t.find(me, here).expect("this test's own code is mapped");
        assert!(matches!(m.target, MappingTarget::File { key: Some(_), .. }));
        assert_eq!(t.maps_reads, 1);
        t.find(me, here);
        assert_eq!(t.maps_reads, 1, "a hit does not re-read");
        // mmap records of an unknown pid wait for its /proc read.
        t.on_mmap(PARENT, 0x1000, 0x1000, 0, "/bin/x", None);
        assert!(t.maps(PARENT).is_none());
    }
}
