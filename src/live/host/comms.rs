//! Thread names for tables and raw event lines: read from /proc once per thread and kept,
//! so a thread that has exited since keeps the name it was seen with.

use std::cell::RefCell;

use rustc_hash::FxHashMap;

use crate::symbols::host::comms::read_proc_comm;

/// Above this many threads the cache starts over: it must stay bounded on a machine that
/// runs millions of short-lived threads.
const MAX_THREADS: usize = 1 << 16;

#[derive(Default)]
pub struct CommCache {
    // A cell so a `Fn(tid) -> name` lookup can fill it while a table is printed.
    names: RefCell<FxHashMap<u32, Option<String>>>,
}

impl CommCache {
    /// The name of `tid`; `None` when the thread was gone before it was first asked for.
    pub fn name(&self, tid: u32) -> Option<String> {
        let mut names = self.names.borrow_mut();
        if let Some(known) = names.get(&tid) {
            return known.clone();
        }
        if names.len() >= MAX_THREADS {
            names.clear();
        }
        let name = if tid == 0 {
            Some("swapper".to_string())
        } else {
            read_proc_comm(tid, tid)
        };
        names.insert(tid, name.clone());
        name
    }

    /// A name learnt from a record (COMM, sched_switch's prev_comm): it wins over /proc.
    pub fn learn(&self, tid: u32, name: &str) {
        let mut names = self.names.borrow_mut();
        if names.len() >= MAX_THREADS {
            names.clear();
        }
        names.insert(tid, Some(name.to_string()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_from_proc_and_records() {
        let cache = CommCache::default();
        let me = std::process::id();
        let expected = std::fs::read_to_string(format!("/proc/{me}/comm")).unwrap();
        assert_eq!(cache.name(me).as_deref(), Some(expected.trim_end()));
        cache.learn(me, "renamed");
        assert_eq!(cache.name(me).as_deref(), Some("renamed"));
        assert_eq!(cache.name(u32::MAX - 1), None, "no such thread");
        assert_eq!(cache.name(0).as_deref(), Some("swapper"));
    }
}
