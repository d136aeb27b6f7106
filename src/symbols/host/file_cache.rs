//! The mapped files whose symbols (or unwind tables) are loaded, dropped when idle.
//!
//! A profiler left running on a developer's machine sees every build's new binaries (new
//! inodes), each parsed once and never used again: kept forever they are the one thing
//! that grows without bound. A file no lookup has needed for `idle` is dropped (its
//! resolved addresses stay in the address cache; a later miss loads it again), and at
//! most `max_files` stay.

use std::time::{Duration, Instant};

use rustc_hash::FxHashMap;

use super::mapped_file::MappedFile;
use super::maps::FileKey;

/// How often the cache looks for idle files.
const SWEEP_EVERY: Duration = Duration::from_secs(1);

struct Entry<F> {
    /// `None`: the file could not be loaded; not retried while it is kept.
    file: Option<F>,
    last_used: Instant,
}

/// Loaded files by [`FileKey`]: a [`MappedFile`]'s symbols, or what else is read of a
/// mapped file once and shared by every process mapping it (its unwind tables).
pub struct FileCache<F = MappedFile> {
    files: FxHashMap<FileKey, Entry<F>>,
    idle: Duration,
    max_files: usize,
    last_sweep: Instant,
}

impl<F> FileCache<F> {
    pub fn new(idle: Duration, max_files: usize) -> Self {
        Self {
            files: FxHashMap::default(),
            idle,
            max_files: max_files.max(1),
            last_sweep: Instant::now(),
        }
    }

    /// The file of `key`, loaded by `load` when not kept (`loaded` tells which happened).
    /// The sweep runs first, so a file idle past the limit is loaded anew even when this
    /// is the lookup that needs it: what is kept never depends on when sweeps happen.
    pub fn get_or_load(&mut self, key: FileKey, load: impl FnOnce() -> Option<F>) -> (Option<&F>, bool) {
        let now = Instant::now();
        self.sweep(now, &key);
        let mut loaded = false;
        let entry = self.files.entry(key).or_insert_with(|| {
            loaded = true;
            Entry {
                file: load(),
                last_used: now,
            }
        });
        entry.last_used = now;
        (entry.file.as_ref(), loaded)
    }

    /// The file of `key` if it is kept (no load, no use noted).
    pub fn get(&self, key: &FileKey) -> Option<&F> {
        self.files.get(key)?.file.as_ref()
    }

    pub fn len(&self) -> usize {
        self.files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Drop the files idle too long (at most once a `SWEEP_EVERY`), then, when `key` is
    /// not kept and the cache is full, the least recently used to make room for it.
    fn sweep(&mut self, now: Instant, key: &FileKey) {
        if now.duration_since(self.last_sweep) >= SWEEP_EVERY {
            self.last_sweep = now;
            let idle = self.idle;
            let before = self.files.len();
            self.files.retain(|_, e| now.duration_since(e.last_used) < idle);
            if self.files.len() < before {
                give_back_freed_memory();
            }
        }
        if self.files.contains_key(key) || self.files.len() < self.max_files {
            return;
        }
        let mut by_age: Vec<(Instant, FileKey)> = self.files.iter().map(|(k, e)| (e.last_used, *k)).collect();
        by_age.sort_unstable_by_key(|&(t, _)| t);
        let excess = self.files.len() + 1 - self.max_files;
        for (_, old) in by_age.into_iter().take(excess) {
            self.files.remove(&old);
        }
        give_back_freed_memory();
    }
}

/// A dropped file's symbol and line tables are hundreds of small allocations, scattered
/// among ones that live on: glibc keeps such freed memory in its arenas, so the process
/// would stay at its peak (a build's big debug binaries) for good. Trimming returns it.
fn give_back_freed_memory() {
    #[cfg(target_env = "gnu")]
    // SAFETY: malloc_trim only walks and releases the allocator's own free memory.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(inode: u64) -> FileKey {
        FileKey { dev: 1, inode }
    }

    #[test]
    fn idle_files_are_dropped_and_loaded_again() {
        let mut cache: FileCache = FileCache::new(Duration::from_millis(50), 100);
        assert!(cache.get_or_load(key(1), || None).1);
        assert!(!cache.get_or_load(key(1), || panic!("kept: no load")).1);
        std::thread::sleep(SWEEP_EVERY + Duration::from_millis(60));
        // The sweep runs on the next use: key 1 idled out and loads again.
        assert!(cache.get_or_load(key(2), || None).1);
        assert_eq!(cache.len(), 1);
        assert!(cache.get_or_load(key(1), || None).1);
        // The idle file is loaded anew even when its own lookup is the one that finds it.
        std::thread::sleep(SWEEP_EVERY + Duration::from_millis(60));
        assert!(cache.get_or_load(key(1), || None).1);
    }

    #[test]
    fn at_most_max_files_stay_and_the_least_recently_used_leave() {
        let mut cache: FileCache = FileCache::new(Duration::from_secs(3600), 3);
        for i in 1..=3 {
            cache.get_or_load(key(i), || None);
            std::thread::sleep(Duration::from_millis(2));
        }
        cache.get_or_load(key(1), || None);
        cache.get_or_load(key(4), || None);
        assert_eq!(cache.len(), 3);
        // Key 2 was the least recently used.
        assert!(cache.get_or_load(key(2), || None).1);
        assert!(!cache.get_or_load(key(1), || panic!("kept")).1);
    }
}
