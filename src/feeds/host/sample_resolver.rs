//! [`SampleResolver`]: the second half of a sampling session (see [`super::sampling`]),
//! on its own thread — raw samples become model samples: root-first stacks interned into
//! the feed's tables, kernel frames through kallsyms, user frames through the process's
//! mappings, however long a first DWARF load takes. An address is named and interned once
//! per process; a sample is then a few integer lookups, never a string.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context;

use rustc_hash::FxHashMap;

use crate::feeds::SampleLine;
use crate::feeds::interned::FeedTables;
use crate::model::{
    Callchain, FrameKind, FrameOrigin, Instance, Line, Location, LocationId, ProfileInfo, Sample, SampleMeta,
};
use crate::store::SymbolRecord;
use crate::symbols::host::{HostFrame, HostSymbolizer, HostSymbolizerOptions, lookup_address};

use super::options::{CallGraph, SamplingOptions};
use super::raw::{RawItem, RawSample};

/// Above this many addresses the "already learnt" set starts over (a long session records
/// a hot address again rather than growing without bound).
const MAX_LEARNT: usize = 1 << 20;

/// Above this many cached addresses (all processes) the location cache starts over.
const MAX_CACHED_LOCATIONS: usize = 1 << 20;

/// Names the addresses of raw samples and interns them.
pub struct SampleResolver {
    symbols: HostSymbolizer,
    /// Samples are per thread (the instance is the thread), else per CPU.
    threads: bool,
    /// How the samples' chains were found (`SampleMeta::callchain`).
    method: Callchain,
    pub tables: FeedTables,
    /// (pid, 0 for the kernel) → address → its interned location, so a hot address is
    /// named and interned once per process.
    locations: FxHashMap<u32, FxHashMap<(u64, bool), LocationId>>,
    cached: usize,
    /// (pid, tid) → the root frame's location (`--root comm|pid`).
    roots: FxHashMap<(u32, u32), LocationId>,
    /// `Some` when the session is recorded: (module, address) pairs already reported.
    learnt: Option<rustc_hash::FxHashSet<(u32, u64)>>,
    /// New symbol rows since the last [`SampleResolver::take_learnt`].
    new_symbols: Vec<SymbolRecord>,
    scratch: Vec<LocationId>,
    /// `Some` when each sample's line is wanted (perf-prof's `profile` text): the lines
    /// since the last [`SampleResolver::take_lines`].
    lines: Option<Vec<SampleLine>>,
    /// Raised when nobody waits for the samples any more: the rest of a batch is skipped
    /// (naming a sample may load a file's symbols, which takes long).
    abandon: Option<Arc<AtomicBool>>,
}

/// How a frame reads in the flamegraph: the function, or `[module]` when no symbol named it.
fn frame_name(frame: &HostFrame) -> std::borrow::Cow<'_, str> {
    if frame.name.as_ref() == "[unknown]" {
        format!("[{}]", frame.module.trim_matches(|c| c == '[' || c == ']')).into()
    } else {
        frame.name.as_ref().into()
    }
}

impl SampleResolver {
    /// `record_symbols`: collect every newly named address for the session file.
    pub fn new(
        options: &SamplingOptions,
        threads: bool,
        record_symbols: bool,
        info: ProfileInfo,
    ) -> anyhow::Result<SampleResolver> {
        let symbols = HostSymbolizer::new(HostSymbolizerOptions {
            kernel: !options.user_only,
            root_frame: options.root,
            inline_frames: options.inline_frames,
            ..HostSymbolizerOptions::default()
        })
        .context("cannot read the kernel's symbols")?;
        Ok(SampleResolver {
            symbols,
            threads,
            method: match options.call_graph {
                CallGraph::Dwarf { .. } if options.callchain => Callchain::Dwarf,
                _ => Callchain::FramePointer,
            },
            tables: FeedTables::new(info),
            locations: FxHashMap::default(),
            cached: 0,
            roots: FxHashMap::default(),
            learnt: record_symbols.then(Default::default),
            new_symbols: Vec::new(),
            scratch: Vec::new(),
            lines: options.sample_lines.then(Vec::new),
            abandon: None,
        })
    }

    /// The samples' lines since the last call (empty unless asked for).
    pub fn take_lines(&mut self) -> Vec<SampleLine> {
        self.lines.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// The symbol rows learnt since the last call.
    pub fn take_learnt(&mut self) -> Vec<SymbolRecord> {
        std::mem::take(&mut self.new_symbols)
    }

    /// Note `frame` as the name of `address` in the process `pid` (0 for the kernel).
    fn learn(&mut self, pid: u32, address: u64, frame: &HostFrame) {
        let Some(learnt) = &mut self.learnt else {
            return;
        };
        if learnt.len() >= MAX_LEARNT {
            learnt.clear();
        }
        if learnt.insert((pid, address)) {
            self.new_symbols.push(SymbolRecord {
                module: frame.module.to_string(),
                address,
                name: frame.name.to_string(),
                offset: frame.offset.unwrap_or(0),
            });
        }
    }

    /// A process's addresses may mean something else from now on (an exec, an exit).
    fn forget(&mut self, pid: u32) {
        if let Some(map) = self.locations.remove(&pid) {
            self.cached -= map.len();
        }
        self.roots.retain(|(p, _), _| *p != pid);
    }

    /// Skip what is left to resolve once `flag` is raised.
    pub fn abandon_on(&mut self, flag: Arc<AtomicBool>) {
        self.abandon = Some(flag);
    }

    /// Resolve `items` in order (side-band records update the address spaces first).
    pub fn resolve(&mut self, items: Vec<RawItem>, out: &mut Vec<Sample>) {
        for item in items {
            if self.abandon.as_ref().is_some_and(|a| a.load(Ordering::Relaxed)) {
                return;
            }
            match item {
                RawItem::Sample(sample) => {
                    let resolved = self.resolve_sample(&sample);
                    if self.lines.is_some() {
                        let line = self.sample_line(&sample, &resolved);
                        self.lines.get_or_insert_default().push(line);
                    }
                    out.push(resolved);
                }
                RawItem::Comm { pid, tid, comm, exec } => {
                    self.symbols.on_comm(pid, tid, &comm, exec);
                    self.roots.retain(|(_, t), _| *t != tid);
                    if exec {
                        self.forget(pid);
                    }
                }
                RawItem::Mmap {
                    pid,
                    start,
                    len,
                    pgoff,
                    path,
                    file,
                } => self.symbols.on_mmap(pid, start, len, pgoff, &path, file),
                RawItem::Fork { parent, child } => {
                    self.symbols.on_fork(parent, child);
                    // A child goes by its parent's name until it execs (a COMM record then
                    // renames it): one that never execs and is gone by its first sample
                    // is still named.
                    self.name_after(parent, parent, child, child);
                }
                RawItem::Thread { pid, parent_tid, tid } => self.name_after(pid, parent_tid, pid, tid),
                RawItem::Exit { pid } => {
                    self.symbols.on_exit(pid);
                    self.forget(pid);
                }
            }
        }
    }

    /// The interned location of one callchain entry of `pid` (0: the kernel).
    fn location(&mut self, pid: u32, ip: u64, index: usize, in_kernel: bool) -> LocationId {
        let key = (ip, index == 0);
        let space = if in_kernel { 0 } else { pid };
        if let Some(&loc) = self.locations.get(&space).and_then(|m| m.get(&key)) {
            return loc;
        }
        if self.cached >= MAX_CACHED_LOCATIONS {
            self.locations.clear();
            self.cached = 0;
        }
        let address = lookup_address(ip, index);
        let tables = &mut self.tables.tables;
        // Host locations carry names only (address 0): the same function at two addresses
        // is one location, and pprof gets no mapping that would lump every module together.
        let loc = if in_kernel {
            let frame = self.symbols.resolve_kernel(address);
            let origin = FrameOrigin::new(FrameKind::Kernel, Some(&frame.module));
            let id = tables.frames.intern_from(&frame_name(&frame), None, origin);
            let loc = tables.locations.intern(Location {
                address: 0,
                lines: Box::new([Line { frame: id, line: 0 }]),
            });
            self.learn(0, ip, &frame);
            loc
        } else {
            // Inline chains come innermost first, as a location keeps them.
            let resolved = self.symbols.resolve_user(pid, address);
            let lines: Vec<Line> = resolved
                .iter()
                .map(|f| Line {
                    frame: tables.frames.intern_from(
                        &frame_name(f),
                        None,
                        FrameOrigin::new(FrameKind::User, Some(&f.module)),
                    ),
                    line: 0,
                })
                .collect();
            let loc = tables.locations.intern(Location {
                address: 0,
                lines: lines.into(),
            });
            if let Some(outer) = resolved.last() {
                self.learn(pid, ip, outer);
            }
            loc
        };
        self.locations.entry(space).or_default().insert(key, loc);
        self.cached += 1;
        loc
    }

    fn root_location(&mut self, pid: u32, tid: u32) -> Option<LocationId> {
        if let Some(&loc) = self.roots.get(&(pid, tid)) {
            return Some(loc);
        }
        let text = self.symbols.root_frame_text(pid, tid, None)?;
        let tables = &mut self.tables.tables;
        let frame = tables
            .frames
            .intern_from(&text, None, FrameOrigin::new(FrameKind::Pseudo, None));
        let loc = tables.locations.intern(Location {
            address: 0,
            lines: Box::new([Line { frame, line: 0 }]),
        });
        if self.roots.len() >= MAX_CACHED_LOCATIONS {
            self.roots.clear();
        }
        self.roots.insert((pid, tid), loc);
        Some(loc)
    }

    /// A new task (`pid`, `tid`) takes the name of the one that created it.
    fn name_after(&mut self, parent_pid: u32, parent_tid: u32, pid: u32, tid: u32) {
        if let Some(name) = self.symbols.comm(parent_pid, parent_tid) {
            self.symbols.on_comm(pid, tid, &name, false);
        }
    }

    /// What perf-prof's profile prints of `sample` (resolved as `resolved`).
    fn sample_line(&mut self, sample: &RawSample, resolved: &Sample) -> SampleLine {
        let callchain = if sample.kernel.is_empty() && sample.user.is_empty() {
            sample.ip.into_iter().collect()
        } else {
            sample.kernel.iter().chain(&sample.user).copied().collect()
        };
        SampleLine {
            time_ns: sample.time_ns,
            pid: sample.pid,
            tid: sample.tid,
            cpu: sample.cpu,
            period: sample.period,
            comm: self
                .symbols
                .comm(sample.pid, sample.tid)
                .map(|c| c.to_string())
                .unwrap_or_default(),
            instance: resolved.instance,
            stack: resolved.stack,
            callchain,
        }
    }

    fn resolve_sample(&mut self, sample: &RawSample) -> Sample {
        let (pid, tid) = (sample.pid, sample.tid);
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        // The kernel delivers leaf first: kernel entries, then user ones. Root first is
        // [root] + user (outer → leaf) + kernel (outer → leaf).
        let only_ip = sample.kernel.is_empty() && sample.user.is_empty();
        if only_ip {
            if let Some(ip) = sample.ip {
                scratch.push(self.location(pid, ip, 0, sample.in_kernel));
            }
        } else {
            for (index, &ip) in sample.kernel.iter().enumerate() {
                scratch.push(self.location(pid, ip, index, true));
            }
            let kernel_len = sample.kernel.len();
            for (i, &ip) in sample.user.iter().enumerate() {
                scratch.push(self.location(pid, ip, kernel_len + i, false));
            }
            // kernel (leaf first) + user (leaf first) → user reversed, then kernel reversed.
            let (kernel, user) = scratch.split_at_mut(kernel_len);
            kernel.reverse();
            user.reverse();
            scratch.rotate_left(kernel_len);
        }
        if let Some(root) = self.root_location(pid, tid) {
            scratch.insert(0, root);
        }
        let tables = &mut self.tables.tables;
        if scratch.is_empty() {
            let frame = tables.frames.intern("[unknown]", None);
            scratch.push(tables.locations.intern(Location {
                address: 0,
                lines: Box::new([Line { frame, line: 0 }]),
            }));
        }
        let depth: usize = scratch.iter().map(|&l| tables.locations.get(l).lines.len()).sum();
        let stack = tables.stacks.intern(&scratch);
        self.scratch = scratch;
        let instance = if self.threads {
            let comm = self
                .symbols
                .comm(pid, tid)
                .map(|c| c.to_string())
                .unwrap_or_default();
            Instance::thread(tid, &comm)
        } else {
            Instance::cpu(sample.cpu)
        };
        let instance = self.tables.tables.instance(instance);
        Sample {
            time_ns: Some(sample.time_ns),
            instance,
            // One per sample, as perf top counts: percentages are shares of samples.
            weight: 1,
            stack,
            meta: SampleMeta {
                raw_depth: depth.min(usize::from(u16::MAX)) as u16,
                flags: SampleMeta::HAS_PC | SampleMeta::HAS_CPU,
                callchain: self.method,
            },
        }
    }
}
