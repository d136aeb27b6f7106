//! The executable mappings of one process: what `/proc/PID/maps` lists and what MMAP2
//! records add, as a sorted list of non-overlapping address ranges.
//!
//! A new mapping over an old range replaces that part of it (as `mmap(MAP_FIXED)` does in
//! the kernel), so a stream of MMAP2 records keeps the list exact without unmap records,
//! which perf does not send.

use std::sync::Arc;

/// Which file a mapping shows: device and inode, as `/proc/PID/maps`, `stat` and MMAP2
/// report them. Symbols are cached per `FileKey`, so a file replaced on disk (new inode)
/// never reuses the old file's symbols.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileKey {
    /// `makedev(major, minor)`.
    pub dev: u64,
    pub inode: u64,
}

impl FileKey {
    pub fn new(major: u32, minor: u32, inode: u64) -> Self {
        Self {
            dev: libc::makedev(major, minor),
            inode,
        }
    }

    /// The key of what `path` names now.
    pub fn of_path(path: &str) -> Option<Self> {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(path).ok()?;
        Some(Self {
            dev: meta.dev(),
            inode: meta.ino(),
        })
    }
}

/// What is mapped at a range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MappingTarget {
    /// A file on disk (`key` is `None` when it could not be identified).
    File { path: Arc<str>, key: Option<FileKey> },
    /// A file unlinked since it was mapped (`… (deleted)` in maps).
    Deleted { path: Arc<str>, key: Option<FileKey> },
    /// `[vdso]`, `[vsyscall]`, `[heap]`, `[stack]`, `[anon]` (anonymous or JIT code), …:
    /// frames name the mapping.
    Special(Arc<str>),
}

impl MappingTarget {
    /// Classify a path as maps and MMAP2 records print it.
    pub fn from_path(path: &str, key: Option<FileKey>) -> Self {
        if path.is_empty() || path == "//anon" || path.starts_with("/memfd:") || path.starts_with("/dev/zero")
        {
            return Self::Special("[anon]".into());
        }
        if path.starts_with('[') {
            return Self::Special(path.into());
        }
        if let Some(stripped) = path.strip_suffix(" (deleted)") {
            return Self::Deleted {
                path: stripped.into(),
                key,
            };
        }
        if !path.starts_with('/') {
            // `anon_inode:…`, `socket:…` and other pseudo files.
            return Self::Special(format!("[{path}]").into());
        }
        Self::File {
            path: path.into(),
            key,
        }
    }

    /// The module name frames of this mapping carry: the file's base name or the bracketed
    /// special name.
    pub fn module(&self) -> &str {
        match self {
            Self::File { path, .. } | Self::Deleted { path, .. } => path.rsplit('/').next().unwrap_or(path),
            Self::Special(name) => name,
        }
    }
}

/// One executable mapping: `[start, end)` shows `target` from file offset `pgoff`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mapping {
    pub start: u64,
    pub end: u64,
    pub pgoff: u64,
    pub target: MappingTarget,
}

impl Mapping {
    /// The file offset `address` reads (meaningful for file mappings).
    pub fn file_offset(&self, address: u64) -> u64 {
        address - self.start + self.pgoff
    }
}

/// The executable mappings of a process, sorted by start, never overlapping.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProcessMaps {
    mappings: Vec<Mapping>,
}

impl ProcessMaps {
    pub fn mappings(&self) -> &[Mapping] {
        &self.mappings
    }

    pub fn len(&self) -> usize {
        self.mappings.len()
    }

    pub fn is_empty(&self) -> bool {
        self.mappings.is_empty()
    }

    pub fn find(&self, address: u64) -> Option<&Mapping> {
        let i = self.mappings.partition_point(|m| m.start <= address);
        let m = self.mappings.get(i.checked_sub(1)?)?;
        (address < m.end).then_some(m)
    }

    /// Add a mapping; whatever it overlaps is cut away first.
    pub fn insert(&mut self, mapping: Mapping) {
        if mapping.end <= mapping.start {
            return;
        }
        let (start, end) = (mapping.start, mapping.end);
        let mut kept = Vec::with_capacity(self.mappings.len() + 2);
        for old in self.mappings.drain(..) {
            if old.end <= start || old.start >= end {
                kept.push(old);
                continue;
            }
            if old.start < start {
                kept.push(Mapping {
                    end: start,
                    ..old.clone()
                });
            }
            if old.end > end {
                kept.push(Mapping {
                    start: end,
                    pgoff: old.pgoff + (end - old.start),
                    ..old
                });
            }
        }
        let at = kept.partition_point(|m| m.start < start);
        kept.insert(at, mapping);
        self.mappings = kept;
    }
}

/// Parse `/proc/PID/maps` text, keeping the executable mappings. Lines that do not parse
/// are skipped: a process may change its maps while the file is read.
pub fn parse_proc_maps(text: &str) -> ProcessMaps {
    let mut maps = ProcessMaps::default();
    for line in text.lines() {
        if let Some(mapping) = parse_maps_line(line) {
            maps.insert(mapping);
        }
    }
    maps
}

/// `55d0c4a00000-55d0c4a21000 r-xp 00002000 fd:01 1234567    /usr/bin/cat`
fn parse_maps_line(line: &str) -> Option<Mapping> {
    let mut fields = line.splitn(6, ' ');
    let range = fields.next()?;
    let perms = fields.next()?;
    let offset = fields.next()?;
    let dev = fields.next()?;
    let inode = fields.next()?;
    let path = fields.next().unwrap_or("").trim_start();
    if perms.as_bytes().get(2) != Some(&b'x') {
        return None;
    }
    let (start, end) = range.split_once('-')?;
    let start = u64::from_str_radix(start, 16).ok()?;
    let end = u64::from_str_radix(end, 16).ok()?;
    let pgoff = u64::from_str_radix(offset, 16).ok()?;
    let (major, minor) = dev.split_once(':')?;
    let major = u32::from_str_radix(major, 16).ok()?;
    let minor = u32::from_str_radix(minor, 16).ok()?;
    let inode: u64 = inode.parse().ok()?;
    let key = (inode != 0).then(|| FileKey::new(major, minor, inode));
    Some(Mapping {
        start,
        end,
        pgoff,
        target: MappingTarget::from_path(path, key),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(start: u64, end: u64, pgoff: u64, path: &str) -> Mapping {
        Mapping {
            start,
            end,
            pgoff,
            target: MappingTarget::from_path(path, None),
        }
    }

    #[test]
    fn parses_executable_lines_only() {
        let text = "\
5581a0000000-5581a0002000 r--p 00000000 fd:01 393220                     /usr/bin/cat
5581a0002000-5581a0007000 r-xp 00002000 fd:01 393220                     /usr/bin/cat
7f1e2c028000-7f1e2c1bd000 r-xp 00028000 103:02 2621445                   /usr/lib/x86_64-linux-gnu/libc.so.6
7f1e2c400000-7f1e2c401000 rwxp 00000000 00:00 0 
7f1e2c500000-7f1e2c501000 r-xp 00000000 00:05 77                         /tmp/jit (deleted)
7ffd1e5f0000-7ffd1e5f2000 r-xp 00000000 00:00 0                          [vdso]
ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]
not a line
";
        let maps = parse_proc_maps(text);
        assert_eq!(maps.len(), 6);
        let cat = maps.find(0x5581a0002010).unwrap();
        assert_eq!(cat.pgoff, 0x2000);
        assert_eq!(
            cat.target,
            MappingTarget::File {
                path: "/usr/bin/cat".into(),
                key: Some(FileKey::new(0xfd, 1, 393220))
            }
        );
        assert_eq!(cat.file_offset(0x5581a0002010), 0x2010);
        assert_eq!(maps.find(0x5581a0001000), None, "r--p is not code");
        let libc = maps.find(0x7f1e2c030000).unwrap();
        assert_eq!(libc.target.module(), "libc.so.6");
        assert_eq!(
            libc.target,
            MappingTarget::File {
                path: "/usr/lib/x86_64-linux-gnu/libc.so.6".into(),
                key: Some(FileKey::new(0x103, 2, 2621445))
            }
        );
        assert_eq!(maps.find(0x7f1e2c400010).unwrap().target.module(), "[anon]");
        assert!(matches!(
            maps.find(0x7f1e2c500000).unwrap().target,
            MappingTarget::Deleted { .. }
        ));
        assert_eq!(maps.find(0x7ffd1e5f0100).unwrap().target.module(), "[vdso]");
        assert_eq!(
            maps.find(0xffffffffff600000).unwrap().target.module(),
            "[vsyscall]"
        );
    }

    #[test]
    fn a_new_mapping_cuts_the_ones_it_overlaps() {
        let mut maps = ProcessMaps::default();
        maps.insert(file(0x1000, 0x5000, 0, "/a"));
        maps.insert(file(0x8000, 0x9000, 0, "/c"));
        maps.insert(file(0x2000, 0x3000, 0x40, "/b"));
        let modules: Vec<(u64, u64, u64, &str)> = maps
            .mappings()
            .iter()
            .map(|m| (m.start, m.end, m.pgoff, m.target.module()))
            .collect();
        assert_eq!(
            modules,
            [
                (0x1000, 0x2000, 0, "a"),
                (0x2000, 0x3000, 0x40, "b"),
                (0x3000, 0x5000, 0x2000, "a"),
                (0x8000, 0x9000, 0, "c"),
            ]
        );
        maps.insert(file(0x0, 0x8800, 0, "/d"));
        assert_eq!(maps.len(), 2);
        assert_eq!(maps.find(0x4000).unwrap().target.module(), "d");
        let c = maps.find(0x8800).unwrap();
        assert_eq!((c.start, c.pgoff, c.target.module()), (0x8800, 0x800, "c"));
        assert_eq!(maps.find(0x9000), None);
    }
}
