//! A CPU sampling session (`perfscope top` / `profile`): cpu-clock (or cycles where the
//! PMU exists) at `-F` Hz on every target, call chains resolved on the reader thread —
//! kernel frames through kallsyms, user frames through the process's mappings — into
//! named, root-first stacks the model interns.

use std::time::Duration;

use anyhow::Context;

use crate::model::Instance;
use crate::sources::perf_event::attr::{EventAttr, EventKind, Wakeup};
use crate::sources::perf_event::reader::{PerfEvents, RingOptions};
use crate::sources::perf_event::record::{MappedFile, Record};
use crate::symbols::host::{FileKey, HostFrame, HostSymbolizer, HostSymbolizerOptions, lookup_address};

use super::options::{HostRunOptions, SamplingOptions};
use super::targets::{SessionTargets, open_targets};

/// perf-prof's default ring for profile (2 pages) doubled for call chains, then doubled
/// again: a stack sample is ~1 KiB and the reader must not fall behind at 1 kHz × CPUs.
const DEFAULT_PAGES: usize = 16;

/// One resolved sample, ready for the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostSample {
    pub time_ns: u64,
    pub instance: Instance,
    /// The sampled period (ns of CPU time for cpu-clock).
    pub weight: u64,
    /// Frame names, root first (the optional comm/pid frame, user outer → leaf, kernel
    /// outer → leaf).
    pub frames: Vec<String>,
}

/// Counters for the status line and the closing summary.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct SampleCounters {
    pub samples: u64,
    pub lost: u64,
    /// perfscope's own samples left out (`--exclude-self`).
    pub own_samples: u64,
}

/// A running sampling session.
pub struct SampleSession {
    events: PerfEvents,
    symbols: HostSymbolizer,
    targets: SessionTargets,
    options: SamplingOptions,
    own_pid: u32,
    pub counters: SampleCounters,
    /// What was opened: "cpu-clock", "cycles".
    pub event_name: String,
    finished: bool,
}

/// How a frame reads in the flamegraph: the function, or `[module]` when no symbol named it.
fn frame_name(frame: &HostFrame) -> String {
    if frame.name.as_ref() == "[unknown]" {
        format!("[{}]", frame.module.trim_matches(|c| c == '[' || c == ']'))
    } else {
        frame.name.to_string()
    }
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
        let events = PerfEvents::open(
            std::slice::from_ref(&attr),
            &targets.targets,
            RingOptions { data_pages: pages },
        )?;
        let event_name = match events.event_kind(crate::model::trace_event::EventIndex(0)) {
            Some(EventKind::HardwareCycles) => "cycles",
            Some(EventKind::TaskClock) => "task-clock",
            _ => "cpu-clock",
        }
        .to_string();
        let symbols = HostSymbolizer::new(HostSymbolizerOptions {
            kernel: !options.user_only,
            root_frame: options.root,
            ..HostSymbolizerOptions::default()
        })
        .context("cannot read the kernel's symbols")?;
        let own_pid = events.own_pid();
        let mut session = SampleSession {
            events,
            symbols,
            targets,
            options: options.clone(),
            own_pid,
            counters: SampleCounters::default(),
            event_name,
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

    /// Wait up to `timeout`, then resolve every sample that arrived into `out`. `false`
    /// once the session is over (its workload or every watched thread exited).
    pub fn pump(&mut self, timeout: Duration, out: &mut Vec<HostSample>) -> anyhow::Result<bool> {
        if self.finished {
            return Ok(false);
        }
        // Asked before the drain, so what an exited workload left in the rings is read.
        let exited = self.targets.workload_exited();
        let outcome = self.events.poll(timeout)?;
        let symbols = &mut self.symbols;
        let counters = &mut self.counters;
        let options = &self.options;
        let own_pid = self.own_pid;
        let threads = self.targets.threads;
        self.events.drain(|record| match record.record {
            Record::Sample(sample) => {
                let (Some(pid), Some(tid)) = (sample.pid, sample.tid) else {
                    return;
                };
                if options.exclude_self && pid == own_pid {
                    counters.own_samples += 1;
                    return;
                }
                counters.samples += 1;
                let mut frames = Vec::new();
                if let Some(root) = symbols.root_frame_text(pid, tid, None) {
                    frames.push(root);
                }
                // The kernel delivers leaf first; each half is reversed into root-first.
                let chain = sample.callchain;
                let mut index = 0usize;
                let mut user: Vec<String> = Vec::new();
                let mut kernel: Vec<String> = Vec::new();
                if chain.is_empty() {
                    if let Some(ip) = sample.ip {
                        if sample.in_kernel() {
                            kernel.push(frame_name(&symbols.resolve_kernel(ip)));
                        } else {
                            for f in symbols.resolve_user(pid, ip).iter() {
                                user.push(frame_name(f));
                            }
                        }
                    }
                } else {
                    for ip in chain.kernel_ips() {
                        kernel.push(frame_name(&symbols.resolve_kernel(lookup_address(ip, index))));
                        index += 1;
                    }
                    for ip in chain.user_ips() {
                        // Inline chains come innermost first, as the stack does.
                        for f in symbols.resolve_user(pid, lookup_address(ip, index)).iter() {
                            user.push(frame_name(f));
                        }
                        index += 1;
                    }
                }
                frames.extend(user.into_iter().rev());
                frames.extend(kernel.into_iter().rev());
                if frames.is_empty() {
                    frames.push("[unknown]".into());
                }
                let cpu = sample.cpu.unwrap_or(0);
                let instance = if threads {
                    let comm = symbols.comm(pid, tid).map(|c| c.to_string()).unwrap_or_default();
                    Instance::thread(tid, &comm)
                } else {
                    Instance::cpu(cpu)
                };
                out.push(HostSample {
                    time_ns: sample.time.unwrap_or(0),
                    instance,
                    weight: sample.period.unwrap_or(1).max(1),
                    frames,
                });
            }
            Record::Comm(c) => {
                symbols.on_comm(c.pid, c.tid, &String::from_utf8_lossy(c.comm), c.exec);
            }
            Record::Mmap2(m) => {
                let file = match m.file {
                    MappedFile::Inode { maj, min, ino, .. } => Some(FileKey::new(maj, min, ino)),
                    MappedFile::BuildId(_) => None,
                };
                symbols.on_mmap(
                    m.pid,
                    m.addr,
                    m.len,
                    m.pgoff,
                    &String::from_utf8_lossy(m.filename),
                    file,
                );
            }
            Record::Fork(t) if t.pid != t.ppid => symbols.on_fork(t.ppid, t.pid),
            Record::Exit(t) if t.pid == t.tid => symbols.on_exit(t.pid),
            _ => {}
        });
        self.counters.lost = self.events.lost_total();
        let over = outcome.all_hung_up || exited;
        if over {
            self.finished = true;
            let _ = self.events.disable();
        }
        Ok(!over)
    }

    pub fn stop(&mut self) {
        self.finished = true;
        let _ = self.events.disable();
    }
}
