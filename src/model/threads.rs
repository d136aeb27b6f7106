//! Thread names: tid → command name, as records and /proc told them. One table type for
//! every place that names threads (the sampling feed's root frames, the analyzers' comm
//! columns, the per-thread instances), bounded so a machine that runs millions of
//! short-lived threads cannot grow it without end.

use std::sync::Arc;

use rustc_hash::FxHashMap;

/// Above this many threads the table starts over.
pub const MAX_THREADS: usize = 1 << 16;

/// The name a thread goes by when nothing named it (perf-prof's `<...>`).
pub const UNKNOWN_THREAD: &str = "<...>";

/// The kernel keeps a task's name in `TASK_COMM_LEN` = 16 bytes with the NUL: 15 bytes.
pub const COMM_BYTES: usize = 15;

/// `name` cut to the kernel's comm length (on a character boundary), as perf-prof prints it.
pub fn comm_cut(name: &str) -> &str {
    if name.len() <= COMM_BYTES {
        return name;
    }
    let mut end = COMM_BYTES;
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    &name[..end]
}

/// tid → name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ThreadNames {
    by_tid: FxHashMap<u32, Arc<str>>,
}

impl ThreadNames {
    pub fn new() -> Self {
        Self::default()
    }

    /// `tid` is called `name` from now on (a COMM record, an exec, /proc).
    pub fn set(&mut self, tid: u32, name: &str) {
        let name = comm_cut(name);
        if self.by_tid.len() >= MAX_THREADS && !self.by_tid.contains_key(&tid) {
            self.by_tid.clear();
        }
        if self.by_tid.get(&tid).is_some_and(|n| &**n == name) {
            return;
        }
        self.by_tid.insert(tid, name.into());
    }

    /// Forget `tid` (its process was forgotten).
    pub fn remove(&mut self, tid: u32) {
        self.by_tid.remove(&tid);
    }

    pub fn get(&self, tid: u32) -> Option<&Arc<str>> {
        self.by_tid.get(&tid)
    }

    /// The name, owned (`None` when nothing named the thread).
    pub fn name(&self, tid: u32) -> Option<String> {
        if tid == 0 && !self.by_tid.contains_key(&0) {
            // Every CPU's idle task.
            return Some("swapper".into());
        }
        self.by_tid.get(&tid).map(|n| n.to_string())
    }

    pub fn contains(&self, tid: u32) -> bool {
        self.by_tid.contains_key(&tid)
    }

    pub fn len(&self) -> usize {
        self.by_tid.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_tid.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_kept_renamed_and_bounded() {
        let mut t = ThreadNames::new();
        assert_eq!(t.name(0).as_deref(), Some("swapper"));
        assert_eq!(t.name(42), None);
        t.set(42, "bash");
        t.set(42, "ls");
        assert_eq!(t.name(42).as_deref(), Some("ls"));
        for tid in 0..MAX_THREADS as u32 {
            t.set(1000 + tid, "x");
        }
        assert!(t.len() <= MAX_THREADS);
    }

    #[test]
    fn names_are_cut_to_the_kernels_comm_length() {
        let mut t = ThreadNames::new();
        t.set(7, "qemu-system-riscv64");
        assert_eq!(t.name(7).as_deref(), Some("qemu-system-ris"));
        assert_eq!(comm_cut("exactly15bytes!"), "exactly15bytes!");
        // Never inside a character.
        assert_eq!(comm_cut("ééééééééé"), "ééééééé");
    }
}
