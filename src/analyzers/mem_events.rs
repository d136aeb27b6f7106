//! What kmemleak and kmemprof share: which events allocate and which free, how each reads
//! the allocation's address (`ptr=`) and size (`size=`), and the stacks of the events,
//! named once each through a [`StackNamer`] the session gives (kallsyms, the user-space
//! symbolizer) while the process that allocated is still there to be read.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::model::memory_stacks::{FrameText, NamedStack, StackRef};
use crate::trace::event::TraceEvent;
use crate::trace::expr::BoundExpr;

/// Names a raw callchain (leaf first, `PERF_CONTEXT_*` markers included) of process `pid`.
pub type StackNamer = Box<dyn FnMut(u32, &[u64]) -> Vec<FrameText> + Send>;

/// Callchain words at or above this are `PERF_CONTEXT_*` markers, not addresses.
pub const CONTEXT_MARKERS: u64 = (-4095i64) as u64;
/// `PERF_CONTEXT_USER`: the frames after it are user-space ones.
pub const CONTEXT_USER: u64 = (-512i64) as u64;

/// An event's part in the analysis.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum MemRole {
    Alloc,
    Free,
}

/// One opened event: its role, its name, and its expressions (bound to its layout).
pub struct MemEvent {
    pub role: MemRole,
    pub name: String,
    pub ptr: BoundExpr,
    /// Alloc events: the bytes allocated.
    pub size: Option<BoundExpr>,
}

impl MemEvent {
    /// The address the event allocates or frees (`ptr=` as an unsigned word).
    pub fn ptr_of(&self, event: &TraceEvent<'_>) -> Option<u64> {
        self.ptr.eval_int(event).map(|v| v as u64)
    }

    /// The bytes an alloc event allocates; 0 without `size=` (or a negative size).
    pub fn size_of(&self, event: &TraceEvent<'_>) -> i64 {
        self.size
            .as_ref()
            .and_then(|s| s.eval_int(event))
            .map_or(0, |v| v.max(0))
    }
}

/// A stack met before: its process (0 for kernel-only chains), its chain, its name.
type KnownStack = (u32, Box<[u64]>, StackRef);

/// Stacks met so far, by (process when the chain has user frames, chain): each named once.
/// Keyed by the chain's hash, so looking one up copies nothing.
pub struct StackTable {
    namer: Option<StackNamer>,
    known: FxHashMap<u64, Vec<KnownStack>>,
    count: u32,
    none: StackRef,
}

impl StackTable {
    /// `namer: None` keeps the raw addresses as the frames' text (the unit tests).
    pub fn new(namer: Option<StackNamer>) -> Self {
        Self {
            namer,
            known: FxHashMap::default(),
            count: 0,
            none: Arc::new(NamedStack {
                id: 0,
                frames: Vec::new(),
            }),
        }
    }

    /// The stack of `event` (the "no stack" one when it carries no callchain).
    pub fn stack_of(&mut self, event: &TraceEvent<'_>) -> StackRef {
        let chain = event.callchain;
        if chain.iter().all(|&w| w >= CONTEXT_MARKERS) {
            return self.none.clone();
        }
        // A kernel stack is the same whichever process ran it; a user one is not.
        let pid = if chain.contains(&CONTEXT_USER) {
            event.pid
        } else {
            0
        };
        let hash = {
            let mut hasher = rustc_hash::FxHasher::default();
            (pid, chain).hash(&mut hasher);
            hasher.finish()
        };
        if let Some((_, _, stack)) = self
            .known
            .get(&hash)
            .and_then(|same| same.iter().find(|(p, c, _)| *p == pid && **c == *chain))
        {
            return stack.clone();
        }
        let frames = match &mut self.namer {
            Some(namer) => namer(event.pid, chain),
            None => chain
                .iter()
                .filter(|&&w| w < CONTEXT_MARKERS)
                .map(|&address| FrameText {
                    address,
                    text: format!("{address:#x}"),
                })
                .collect(),
        };
        self.count += 1;
        let stack = Arc::new(NamedStack {
            id: self.count,
            frames,
        });
        self.known
            .entry(hash)
            .or_default()
            .push((pid, chain.into(), stack.clone()));
        stack
    }
}
