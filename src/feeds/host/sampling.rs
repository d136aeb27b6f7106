//! A CPU sampling session (`perfscope top` / `profile`): cpu-clock (or cycles where the
//! PMU exists) at `-F` Hz on every target. Two halves, for two threads: [`SampleSession`]
//! only drains the rings into plain [`RawItem`]s (so it is back in poll(2) quickly and the
//! kernel loses as little as possible; with `--call-graph dwarf` it unwinds each stack
//! copy as it reads it, see [`super::dwarf_stacks`]), and [`SampleResolver`]
//! (`sample_resolver.rs`) turns them into model samples.

use std::time::Duration;

use anyhow::Context;

use crate::model::threads::ThreadNames;
use crate::sources::clock::monotonic_ns;
use crate::sources::perf_event::attr::{EventAttr, EventKind, Wakeup};
use crate::sources::perf_event::reader::{Ordered, PerfEvents, RingOptions};
use crate::sources::perf_event::record::Record;

use super::dwarf_stacks::DwarfStacks;
use super::options::{HostRunOptions, SamplingOptions};
use super::raw::{RawItem, raw_item_unwound};
use super::sample_counters::SampleCounters;
use super::targets::{SessionTargets, names_attr, open_targets};
use crate::sources::perf_event::targets::{Target, online_cpus};

/// 256 KiB per ring (perf-prof's profile default is 2 pages, doubled with -g): a sample
/// with a deep kernel + user chain is ~1 KiB, so this holds a quarter second at 1 kHz —
/// room for the reader to be descheduled on a loaded machine without losing samples.
const DEFAULT_PAGES: usize = 64;

/// The most a ring grows to hold stack copies unasked (4 MiB; `-m` sets any size).
const MAX_DWARF_PAGES: usize = 1024;

/// Ring pages for `--call-graph dwarf`: the same quarter second as [`DEFAULT_PAGES`], of
/// samples now each a stack copy plus registers, header and kernel chain (~512 bytes) —
/// 1024 pages (4 MiB) at 997 Hz with 8 KiB copies, where 64 would hold 30 samples.
pub fn dwarf_ring_pages(freq_hz: u64, stack_bytes: u32) -> usize {
    let per_sample = u64::from(stack_bytes) + 512;
    let bytes = freq_hz.saturating_mul(per_sample) / 4;
    let pages = usize::try_from(bytes.div_ceil(crate::sources::perf_event::ring::page_size() as u64))
        .unwrap_or(usize::MAX);
    pages.next_power_of_two().clamp(DEFAULT_PAGES, MAX_DWARF_PAGES)
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
    /// `--call-graph dwarf`: the unwinder of the samples' stack copies.
    dwarf: Option<DwarfStacks>,
    finished: bool,
}

impl SampleSession {
    pub fn open(run: &HostRunOptions, options: &SamplingOptions) -> anyhow::Result<SampleSession> {
        let targets = open_targets(&run.target)?;
        let mut attr = EventAttr::cpu_profile(options.freq_hz).with_task_records();
        let stack_bytes = options.call_graph.stack_bytes().filter(|_| options.callchain);
        if options.callchain {
            attr = attr.with_callchain();
        }
        if let Some(bytes) = stack_bytes {
            if crate::sources::perf_event::user_stack::UNWIND_REGS_MASK == 0 {
                anyhow::bail!(
                    "--call-graph dwarf unwinds x86_64 and aarch64 stacks only: use --call-graph fp on {}",
                    std::env::consts::ARCH
                );
            }
            attr = attr.with_user_stack(bytes);
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
        let pages = match (run.ring.pages, stack_bytes) {
            (Some(pages), _) => pages,
            (None, Some(bytes)) => dwarf_ring_pages(options.freq_hz, bytes),
            (None, None) => DEFAULT_PAGES,
        };
        let mut attrs = vec![attr];
        let mut ring_targets = targets.targets.clone();
        let cpu_wide = targets.targets.iter().all(|t| matches!(t, Target::Cpu(_)));
        if options.sample_lines && cpu_wide {
            // Sample lines name their threads: with -C, a task forked or exec'd on a CPU
            // outside it has its COMM and FORK records there; a carrier on every online
            // CPU brings them (as a tracing session's), else it prints `<...>` once gone.
            attrs.push(names_attr(run));
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
            dwarf: stack_bytes.map(|_| DwarfStacks::new()),
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
        let mut dwarf = self.dwarf.as_mut();
        let mut take = |item: Ordered<'_>| {
            if let Ordered::Lost(range) = item
                && limit.is_none_or(|n| counters.samples < n)
            {
                counters.lost_before_limit += range.count;
            }
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
                raw_item_unwound(
                    record.record,
                    counters,
                    exclude_self,
                    own_pid,
                    dwarf.as_deref_mut(),
                    out,
                );
            }
        };
        self.events.drain_ordered(&mut take);
        if everything {
            self.events.flush_ordered(&mut take);
        }
        self.counters.lost = self.lost_within_run();
        self.counters.source = self.events.source_counts();
    }

    pub fn stop(&mut self) {
        self.finished = true;
        let _ = self.events.disable();
        self.counters.lost = self.lost_within_run();
    }

    /// Records the rings lost within the run. With `-N` the run is its first N samples:
    /// once they are handed over, what the rings lose after them is outside it; the LOST
    /// records read before, in time order, are its loss.
    fn lost_within_run(&mut self) -> u64 {
        if self.reached_limit() {
            self.counters.lost.max(self.counters.lost_before_limit)
        } else {
            self.events.lost(self.finished)
        }
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
