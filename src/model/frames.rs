//! Interned frames: one [`FrameId`] per distinct function name.
//!
//! A frame is the unit a flamegraph merges on, so identity is the (styled) display name.
//! The source file is kept for exports that carry it (pprof functions); where the frame
//! runs (kernel, user, a pseudo frame) and its module (DSO) when the source knows them —
//! the hotspot table's `[k]`/`[.]` mark and Shared Object column, as perf top has.

use rustc_hash::FxHashMap;

use super::hash::fnv1a;

/// Index of an interned frame name in a [`FrameTable`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FrameId(pub u32);

impl FrameId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Where a frame's code runs, when the source knows it.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum FrameKind {
    /// Folded input, guest ELF frames: nothing said.
    #[default]
    Unknown,
    Kernel,
    User,
    /// Not code: the command-name / pid root a host sample is grouped under.
    Pseudo,
}

impl FrameKind {
    /// perf top's mark: `[k]` kernel, `[.]` user; blank otherwise.
    pub fn mark(self) -> &'static str {
        match self {
            FrameKind::Kernel => "[k]",
            FrameKind::User => "[.]",
            FrameKind::Unknown | FrameKind::Pseudo => "",
        }
    }

    /// The name kept in a session file (`frames.kind`).
    pub fn name(self) -> Option<&'static str> {
        match self {
            FrameKind::Unknown => None,
            FrameKind::Kernel => Some("kernel"),
            FrameKind::User => Some("user"),
            FrameKind::Pseudo => Some("pseudo"),
        }
    }

    pub fn from_name(name: &str) -> FrameKind {
        match name {
            "kernel" => FrameKind::Kernel,
            "user" => FrameKind::User,
            "pseudo" => FrameKind::Pseudo,
            _ => FrameKind::Unknown,
        }
    }
}

/// Where a frame comes from: its kind and module (`[kernel.kallsyms]`, `libc.so.6`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct FrameOrigin {
    pub kind: FrameKind,
    pub module: Option<Box<str>>,
}

impl FrameOrigin {
    pub fn new(kind: FrameKind, module: Option<&str>) -> Self {
        Self {
            kind,
            module: module.map(Into::into),
        }
    }
}

#[derive(Debug, Clone)]
struct Frame {
    name: Box<str>,
    file: Option<Box<str>>,
    origin: FrameOrigin,
    name_hash: u64,
}

/// The frame interner.
#[derive(Debug, Default, Clone)]
pub struct FrameTable {
    frames: Vec<Frame>,
    index: FxHashMap<Box<str>, FrameId>,
    /// Frames whose file was learnt after they were interned, in that order (a replica
    /// of the table is told of them).
    late_files: Vec<FrameId>,
}

impl FrameTable {
    pub fn new() -> Self {
        Self::default()
    }

    /// Intern `name`; the first file seen for a name is the one kept.
    pub fn intern(&mut self, name: &str, file: Option<&str>) -> FrameId {
        self.intern_from(name, file, FrameOrigin::default())
    }

    /// Intern `name` with where it comes from; the first origin seen for a name is kept
    /// (a frame is its name: a kernel and a user function of one name are one frame).
    pub fn intern_from(&mut self, name: &str, file: Option<&str>, origin: FrameOrigin) -> FrameId {
        if let Some(&id) = self.index.get(name) {
            if let Some(file) = file {
                let frame = &mut self.frames[id.index()];
                if frame.file.is_none() {
                    frame.file = Some(file.into());
                    self.late_files.push(id);
                }
            }
            return id;
        }
        let id = FrameId(u32::try_from(self.frames.len()).expect("more than 2^32 frames"));
        self.frames.push(Frame {
            name: name.into(),
            file: file.map(Into::into),
            origin,
            name_hash: fnv1a(name.as_bytes()),
        });
        self.index.insert(name.into(), id);
        id
    }

    pub fn get(&self, name: &str) -> Option<FrameId> {
        self.index.get(name).copied()
    }

    pub fn name(&self, id: FrameId) -> &str {
        &self.frames[id.index()].name
    }

    pub fn file(&self, id: FrameId) -> Option<&str> {
        self.frames[id.index()].file.as_deref()
    }

    pub fn origin(&self, id: FrameId) -> &FrameOrigin {
        &self.frames[id.index()].origin
    }

    pub fn kind(&self, id: FrameId) -> FrameKind {
        self.frames[id.index()].origin.kind
    }

    pub fn module(&self, id: FrameId) -> Option<&str> {
        self.frames[id.index()].origin.module.as_deref()
    }

    /// Stable FNV-1a hash of the name (colours, path hashes).
    pub fn name_hash(&self, id: FrameId) -> u64 {
        self.frames[id.index()].name_hash
    }

    pub fn len(&self) -> usize {
        self.frames.len()
    }

    /// Frames whose file was learnt after they were interned.
    pub fn late_files(&self) -> &[FrameId] {
        &self.late_files
    }

    /// Bytes on the heap, roughly: the names (twice: table and index) and the index.
    pub fn heap_bytes(&self) -> usize {
        self.frames
            .iter()
            .map(|f| {
                2 * f.name.len()
                    + f.file.as_ref().map_or(0, |s| s.len())
                    + f.origin.module.as_ref().map_or(0, |s| s.len())
            })
            .sum::<usize>()
            + self.frames.capacity() * std::mem::size_of::<Frame>()
            + self.index.capacity() * (std::mem::size_of::<(Box<str>, FrameId)>() + 1)
            + self.late_files.capacity() * 4
    }

    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// For every frame id, its position in name order (for sorting paths by name without
    /// comparing strings).
    pub fn name_ranks(&self) -> Vec<u32> {
        let mut order: Vec<u32> = (0..self.frames.len() as u32).collect();
        order.sort_by(|&a, &b| self.frames[a as usize].name.cmp(&self.frames[b as usize].name));
        let mut rank = vec![0u32; order.len()];
        for (r, &id) in order.iter().enumerate() {
            rank[id as usize] = r as u32;
        }
        rank
    }

    pub fn ids(&self) -> impl Iterator<Item = FrameId> + '_ {
        (0..self.frames.len() as u32).map(FrameId)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interning_is_idempotent_and_keeps_first_file() {
        let mut t = FrameTable::new();
        let a = t.intern("mix_leaf", None);
        let b = t.intern("hash_block", Some("kernel.c"));
        let a2 = t.intern("mix_leaf", Some("kernel.c"));
        let b2 = t.intern("hash_block", Some("other.c"));
        assert_eq!(a, a2);
        assert_eq!(b, b2);
        assert_eq!(t.len(), 2);
        assert_eq!(t.name(a), "mix_leaf");
        assert_eq!(t.file(a), Some("kernel.c"));
        assert_eq!(t.file(b), Some("kernel.c"));
        assert_eq!(t.get("nope"), None);
    }
}
