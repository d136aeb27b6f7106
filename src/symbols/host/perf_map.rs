//! JIT symbol maps: `/tmp/perf-PID.map`, the file JIT compilers (V8 with `--perf-prof`,
//! the JVM with perf-map-agent, LuaJIT, .NET, …) write so perf can name code in anonymous
//! memory. One line per function: `START SIZE name`, hex numbers, the name may contain
//! spaces. Later lines win over earlier ones at the same address (code re-compiled into
//! the same place).
//!
//! The file grows while the program runs, so it is re-read when its size or mtime changed,
//! checked at most once a second per process. It is read line by line within the perf map
//! caps ([`crate::input`]: 64 KiB lines, 256 MiB), its text never held; a map past them
//! keeps the functions read before.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use rustc_hash::FxHashMap;

use super::HostFrame;
use crate::input::{BoundedLines, InputFile, InputKind};
use crate::symbols::symtab::{Symbol, SymbolTable};

const RECHECK_AFTER: Duration = Duration::from_secs(1);

struct PerfMap {
    table: SymbolTable,
    module: Arc<str>,
    /// (length, mtime) of the file as read.
    version: Option<(u64, SystemTime)>,
    checked_at: Instant,
    frames: FxHashMap<u64, Option<Arc<[HostFrame]>>>,
}

/// pid → its JIT map, read on the first anonymous-memory address of the pid.
#[derive(Default)]
pub struct PerfMaps {
    by_pid: FxHashMap<u32, PerfMap>,
}

impl PerfMaps {
    /// The JIT function at `address` of process `pid`, if its perf map names one.
    pub fn lookup(&mut self, pid: u32, address: u64) -> Option<Arc<[HostFrame]>> {
        let path = format!("/tmp/perf-{pid}.map");
        let map = self.by_pid.entry(pid).or_insert_with(|| PerfMap {
            table: SymbolTable::default(),
            module: format!("perf-{pid}.map").into(),
            version: None,
            checked_at: Instant::now() - RECHECK_AFTER,
            frames: FxHashMap::default(),
        });
        if map.checked_at.elapsed() >= RECHECK_AFTER {
            map.checked_at = Instant::now();
            let version = std::fs::metadata(&path)
                .ok()
                .and_then(|m| Some((m.len(), m.modified().ok()?)));
            if version != map.version {
                map.version = version;
                map.table = read_map(Path::new(&path));
                map.frames.clear();
            }
        }
        if let Some(frames) = map.frames.get(&address) {
            return frames.clone();
        }
        let frames = map.table.lookup(address).map(|hit| {
            Arc::from([HostFrame {
                name: hit.name.into(),
                module: Arc::clone(&map.module),
                offset: Some(hit.offset),
                file: None,
                line: 0,
            }])
        });
        map.frames.insert(address, frames.clone());
        frames
    }

    /// Forget a process's map (the process is gone).
    pub fn forget(&mut self, pid: u32) {
        self.by_pid.remove(&pid);
    }
}

/// The map at `path`; an unreadable one names nothing, and one past its caps what came
/// before (the JIT may be writing it).
fn read_map(path: &Path) -> SymbolTable {
    let mut last_at = FxHashMap::default();
    if let Ok(file) = InputFile::open(path) {
        let mut lines = BoundedLines::new(file, path, InputKind::PerfMap);
        while let Ok(Some(line)) = lines.next_line() {
            add_line(&mut last_at, &String::from_utf8_lossy(line));
        }
    }
    SymbolTable::new(last_at.into_values().collect(), |_| None)
}

#[cfg(test)]
fn parse(text: &str) -> SymbolTable {
    let mut last_at = FxHashMap::default();
    for line in text.lines() {
        add_line(&mut last_at, line);
    }
    SymbolTable::new(last_at.into_values().collect(), |_| None)
}

/// One `START SIZE name` line; a later one at the same address replaces the earlier.
fn add_line(last_at: &mut FxHashMap<u64, Symbol>, line: &str) {
    let mut parts = line.splitn(3, ' ');
    let (Some(start), Some(size), Some(name)) = (parts.next(), parts.next(), parts.next()) else {
        return;
    };
    let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).ok();
    let (Some(address), Some(size)) = (hex(start), hex(size)) else {
        return;
    };
    last_at.insert(
        address,
        Symbol {
            address,
            size,
            name: name.trim_end().to_string(),
            is_text: true,
            is_global: true,
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn later_lines_win_and_names_keep_their_spaces() {
        let t = parse(
            "7f0000001000 40 LazyCompile:~old a.js:1\n\
             0x7f0000001000 0x20 LazyCompile:*fib a.js:3\n\
             7f0000002000 10 Stub:CEntry\n\
             garbage\n",
        );
        let hit = t.lookup(0x7f000000100c).unwrap();
        assert_eq!((hit.name, hit.offset), ("LazyCompile:*fib a.js:3", 0xc));
        assert_eq!(t.lookup(0x7f0000001030), None, "the old, longer entry is gone");
        assert_eq!(t.lookup(0x7f000000200f).unwrap().name, "Stub:CEntry");
    }

    #[test]
    fn a_map_is_read_from_its_file_and_one_past_its_caps_keeps_what_came_before() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("perf-1.map");
        let mut text = String::from("7f0000001000 40 first\n");
        text.push_str(&"x".repeat(70_000));
        text.push_str("\n7f0000002000 10 after\n");
        std::fs::write(&path, text).unwrap();
        let t = read_map(&path);
        assert_eq!(t.lookup(0x7f0000001004).unwrap().name, "first");
        assert_eq!(
            t.lookup(0x7f0000002004),
            None,
            "read no further than the long line"
        );
        assert!(read_map(Path::new("/dev/zero")).is_empty());
    }
}
