//! A CPU sampling session (`perfscope top` / `profile`): cpu-clock (or cycles where the
//! PMU exists) at `-F` Hz on every target. Two halves, for two threads: [`SampleSession`]
//! only drains the rings into plain [`RawItem`]s (so it is back in poll(2) quickly and the
//! kernel loses as little as possible), and [`SampleResolver`] turns them into model
//! samples — root-first stacks interned into the feed's tables, kernel frames through
//! kallsyms, user frames through the process's mappings — however long a first DWARF load
//! takes. An address is named and interned once per process; a sample is then a few
//! integer lookups, never a string.

use std::time::Duration;

use anyhow::Context;

use rustc_hash::FxHashMap;

use crate::feeds::SampleLine;
use crate::feeds::interned::FeedTables;
use crate::model::threads::ThreadNames;
use crate::model::{
    Callchain, FrameKind, FrameOrigin, Instance, Line, Location, LocationId, ProfileInfo, Sample, SampleMeta,
};
use crate::sources::clock::monotonic_ns;
use crate::sources::perf_event::attr::{EventAttr, EventKind, Wakeup};
use crate::sources::perf_event::reader::{Ordered, PerfEvents, RingOptions};
use crate::sources::perf_event::record::{MappedFile, Record};
use crate::store::SymbolRecord;
use crate::symbols::host::{FileKey, HostFrame, HostSymbolizer, HostSymbolizerOptions, lookup_address};

use super::options::{HostRunOptions, SamplingOptions};
use super::targets::{SessionTargets, open_targets};
use crate::sources::perf_event::targets::{Target, online_cpus};

/// 256 KiB per ring (perf-prof's profile default is 2 pages, doubled with -g): a sample
/// with a deep kernel + user chain is ~1 KiB, so this holds a quarter second at 1 kHz —
/// room for the reader to be descheduled on a loaded machine without losing samples.
const DEFAULT_PAGES: usize = 64;

/// Counters for the status line and the closing summary.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct SampleCounters {
    pub samples: u64,
    pub lost: u64,
    /// perfscope's own samples left out (`--exclude-self`).
    pub own_samples: u64,
}

/// What the reader hands the resolver: a sample's addresses, or a side-band record the
/// symbolizer needs to keep address spaces current (in ring order with the samples).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RawItem {
    Sample(RawSample),
    Comm {
        pid: u32,
        tid: u32,
        comm: String,
        exec: bool,
    },
    Mmap {
        pid: u32,
        start: u64,
        len: u64,
        pgoff: u64,
        path: String,
        file: Option<FileKey>,
    },
    Fork {
        parent: u32,
        child: u32,
    },
    /// A new thread of an existing process (`tid` created by `parent_tid`).
    Thread {
        pid: u32,
        parent_tid: u32,
        tid: u32,
    },
    Exit {
        pid: u32,
    },
}

/// A sample as read: its call chain split into kernel and user halves, leaf first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawSample {
    pub time_ns: u64,
    pub pid: u32,
    pub tid: u32,
    pub cpu: u32,
    /// The sample's period (ns for cpu-clock; 0 when the record had none).
    pub period: u64,
    pub in_kernel: bool,
    pub ip: Option<u64>,
    pub kernel: Vec<u64>,
    pub user: Vec<u64>,
}

/// A running sampling session: the rings.
pub struct SampleSession {
    events: PerfEvents,
    targets: SessionTargets,
    options: SamplingOptions,
    own_pid: u32,
    pub counters: SampleCounters,
    /// What was opened: "cpu-clock", "cycles".
    pub event_name: String,
    /// CLOCK_MONOTONIC when the events were enabled: where the views count seconds from.
    pub started_ns: u64,
    /// `-N`: stop after this many samples.
    exit_after: Option<u64>,
    /// With sample lines: the threads already named at their first sample, and the names
    /// /proc gave when the session started.
    named: Option<(rustc_hash::FxHashSet<u32>, ThreadNames)>,
    finished: bool,
}

impl SampleSession {
    pub fn open(run: &HostRunOptions, options: &SamplingOptions) -> anyhow::Result<SampleSession> {
        let targets = open_targets(&run.target)?;
        let mut attr = EventAttr::cpu_profile(options.freq_hz).with_task_records();
        if options.callchain {
            attr = attr.with_callchain();
        }
        if options.user_only {
            attr = attr.user_only();
        }
        if options.kernel_only {
            attr = attr.kernel_only();
        }
        if let Some(w) = run.ring.watermark_percent {
            attr = attr.with_wakeup(Wakeup::WatermarkPercent(u32::from(w)));
        }
        let pages = run.ring.pages.unwrap_or(DEFAULT_PAGES);
        let mut attrs = vec![attr];
        let mut ring_targets = targets.targets.clone();
        let cpu_wide = targets.targets.iter().all(|t| matches!(t, Target::Cpu(_)));
        if options.sample_lines && cpu_wide {
            // Sample lines name their threads: with -C, a task forked or exec'd on a CPU
            // outside it has its COMM and FORK records there; a carrier on every online
            // CPU brings them (as a tracing session's), else it prints `<...>` once gone.
            attrs.push(super::tracing::names_attr(run));
            for cpu in online_cpus()? {
                if !ring_targets.contains(&Target::Cpu(cpu)) {
                    ring_targets.push(Target::Cpu(cpu));
                }
            }
        }
        let events = PerfEvents::open_where(
            &attrs,
            &ring_targets,
            RingOptions { data_pages: pages },
            |event, target| event > 0 || targets.targets.contains(&target),
            |event| event > 0,
        )?;
        let event_name = match events.event_kind(crate::trace::event::EventIndex(0)) {
            Some(EventKind::HardwareCycles) => "cycles",
            Some(EventKind::TaskClock) => "task-clock",
            _ => "cpu-clock",
        }
        .to_string();
        let own_pid = events.own_pid();
        let mut session = SampleSession {
            events,
            targets,
            options: options.clone(),
            own_pid,
            counters: SampleCounters::default(),
            event_name,
            started_ns: monotonic_ns(),
            exit_after: run.exit_after,
            named: options.sample_lines.then(|| {
                // A thread that was there before the session has no FORK or COMM record;
                // if it exits before its first sample is read, only this scan named it.
                let mut names = ThreadNames::default();
                crate::symbols::host::comms::scan_proc_comms(&mut names);
                (Default::default(), names)
            }),
            finished: false,
        };
        session
            .events
            .enable()
            .context("cannot enable the sampling events")?;
        session.targets.start_workload();
        Ok(session)
    }

    pub fn on_threads(&self) -> bool {
        self.targets.threads
    }

    /// Wait up to `timeout`, then move everything the rings hold into `out`. `false` once
    /// the session is over (its workload or every watched thread exited).
    pub fn pump(&mut self, timeout: Duration, out: &mut Vec<RawItem>) -> anyhow::Result<bool> {
        if self.finished {
            return Ok(false);
        }
        // Asked before the drain, so what an exited workload left in the rings is read.
        let exited = self.targets.workload_exited();
        let outcome = self.events.poll(timeout)?;
        self.drain(false, out);
        let over = outcome.all_hung_up || exited || self.reached_limit();
        if over {
            self.finish(out);
        }
        Ok(!over)
    }

    /// `-N COUNT` samples were handed over: the session is done.
    fn reached_limit(&self) -> bool {
        self.exit_after.is_some_and(|n| self.counters.samples >= n)
    }

    /// Stop sampling and hand over everything still in the rings or held for ordering.
    pub fn finish(&mut self, out: &mut Vec<RawItem>) {
        if !self.finished {
            let _ = self.events.disable();
            self.drain(true, out);
        }
        self.stop();
    }

    /// Move what the rings hold into `out` in time order across rings (`everything`:
    /// also what the merge still holds back). One process's records land on several
    /// rings — a child followed on another CPU, a thread that migrated — and its mmap
    /// must reach the symbolizer before the samples in the code it maps.
    fn drain(&mut self, everything: bool, out: &mut Vec<RawItem>) {
        let counters = &mut self.counters;
        let exclude_self = self.options.exclude_self;
        let own_pid = self.own_pid;
        let limit = self.exit_after;
        let named = &mut self.named;
        let mut take = |item: Ordered<'_>| {
            if let Ordered::Record(record) = item {
                if let (Some((named, names)), Record::Sample(s)) = (named.as_mut(), &record.record) {
                    name_at_first_sight(named, names, s.pid, s.tid, out);
                }
                // perf-prof's -N: the samples past the COUNTth are dropped unseen (the
                // rings may hold more by the time the count is reached).
                let over_limit = limit.is_some_and(|n| counters.samples >= n);
                if over_limit && matches!(record.record, Record::Sample(_)) {
                    return;
                }
                raw_item(record.record, counters, exclude_self, own_pid, out);
            }
        };
        self.events.drain_ordered(&mut take);
        if everything {
            self.events.flush_ordered(&mut take);
        }
        self.counters.lost = self.events.lost(self.finished);
    }

    pub fn stop(&mut self) {
        self.finished = true;
        let _ = self.events.disable();
        self.counters.lost = self.events.lost(self.finished);
    }
}

/// Most threads a session names from /proc before it starts over.
const MAX_NAMED: usize = 1 << 16;

/// A sample line names its thread: one that ran before the session (no COMM record
/// names it) is named from /proc at its first sample, here on the reader thread while it
/// likely still runs — the resolver may come to it after it has exited.
fn name_at_first_sight(
    named: &mut rustc_hash::FxHashSet<u32>,
    at_start: &ThreadNames,
    pid: Option<u32>,
    tid: Option<u32>,
    out: &mut Vec<RawItem>,
) {
    let (Some(pid), Some(tid)) = (pid, tid) else {
        return;
    };
    if named.len() >= MAX_NAMED {
        named.clear();
    }
    if !named.insert(tid) {
        return;
    }
    let comm = crate::symbols::host::comms::read_proc_comm(pid, tid).or_else(|| at_start.name(tid));
    if let Some(comm) = comm {
        out.push(RawItem::Comm {
            pid,
            tid,
            comm,
            exec: false,
        });
    }
}

/// One record as the resolver wants it (`None` for what it does not need).
pub(super) fn raw_item(
    record: Record<'_>,
    counters: &mut SampleCounters,
    exclude_self: bool,
    own_pid: u32,
    out: &mut Vec<RawItem>,
) {
    match record {
        Record::Sample(sample) => {
            let (Some(pid), Some(tid)) = (sample.pid, sample.tid) else {
                return;
            };
            if exclude_self && pid == own_pid {
                counters.own_samples += 1;
                return;
            }
            counters.samples += 1;
            out.push(RawItem::Sample(RawSample {
                time_ns: sample.time.unwrap_or(0),
                pid,
                tid,
                cpu: sample.cpu.unwrap_or(0),
                period: sample.period.unwrap_or(0),
                in_kernel: sample.in_kernel(),
                ip: sample.ip,
                kernel: sample.callchain.kernel_ips().collect(),
                user: sample.callchain.user_ips().collect(),
            }));
        }
        Record::Comm(c) => out.push(RawItem::Comm {
            pid: c.pid,
            tid: c.tid,
            comm: String::from_utf8_lossy(c.comm).into_owned(),
            exec: c.exec,
        }),
        Record::Mmap2(m) => out.push(RawItem::Mmap {
            pid: m.pid,
            start: m.addr,
            len: m.len,
            pgoff: m.pgoff,
            path: String::from_utf8_lossy(m.filename).into_owned(),
            file: match m.file {
                MappedFile::Inode { maj, min, ino, .. } => Some(FileKey::new(maj, min, ino)),
                MappedFile::BuildId(_) => None,
            },
        }),
        Record::Fork(t) if t.pid != t.ppid => out.push(RawItem::Fork {
            parent: t.ppid,
            child: t.pid,
        }),
        Record::Fork(t) if t.tid != t.ptid => out.push(RawItem::Thread {
            pid: t.pid,
            parent_tid: t.ptid,
            tid: t.tid,
        }),
        Record::Exit(t) if t.pid == t.tid => out.push(RawItem::Exit { pid: t.pid }),
        _ => {}
    }
}

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
            tables: FeedTables::new(info),
            locations: FxHashMap::default(),
            cached: 0,
            roots: FxHashMap::default(),
            learnt: record_symbols.then(Default::default),
            new_symbols: Vec::new(),
            scratch: Vec::new(),
            lines: options.sample_lines.then(Vec::new),
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

    /// Resolve `items` in order (side-band records update the address spaces first).
    pub fn resolve(&mut self, items: Vec<RawItem>, out: &mut Vec<Sample>) {
        for item in items {
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
                callchain: Callchain::FramePointer,
            },
        }
    }
}
