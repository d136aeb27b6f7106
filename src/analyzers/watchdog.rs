//! `watchdog`: perf-prof's lockup predictor, as far as this kernel allows. The kernel's
//! lockup detector has, per CPU, an hrtimer (`watchdog_timer_fn`, every
//! `2 × watchdog_thresh / 5` s) that wakes the CPU's stopper thread (`migration/N`) and
//! an NMI that checks the hrtimer still fires. perf-prof watches the same things and
//! warns before the kernel would:
//!
//! * soft lockup — at a watchdog hrtimer expiry, `migration/N` has not been switched in
//!   for more than `2 × thresh / 5` seconds (the kernel's `ns >> 30` seconds);
//! * hard lockup — at a tick of the sampling event, the watchdog hrtimer has not fired
//!   since the previous tick and not for `2 × thresh × 1e9 / 5 + 0.2e9` ns.
//!
//! perf-prof's sampling event is the PMU's cycles, an NMI that fires with interrupts
//! off; with no hardware PMU (a guest, this machine) it falls back to `cpu-clock`, an
//! hrtimer stopped by the same disabled interrupts as the watchdog's, so a CPU stuck with
//! interrupts off is then not seen until it takes interrupts again. The session says so.
//!
//! A tick that interrupted the idle task proves the CPU takes interrupts: it counts as
//! the timer's sign of life, because this kind of kernel delivers no tracepoint sample
//! from an idle CPU and the watchdog's expiries there go unseen (perf-prof warns falsely
//! on such a CPU after every quiet spell).
//!
//! Each CPU's watchdog hrtimer is learnt from its first `watchdog_timer_fn` expiry (or
//! start); perf-prof learns it in a first stage and then filters on it in the kernel —
//! here `hrtimer_expire_entry`/`hrtimer_start` are filtered on the function in the
//! kernel and `hrtimer_cancel` (which has no function) is matched against the learnt
//! pointer in user space.
//!
//! With `-g` the sampling event takes its kernel callchain, as perf-prof's: a hard
//! lockup's warning carries the stack of the tick that predicted it, and those stacks
//! alone become the session's profile ([`WatchdogAnalyzer::took_stack`]).

use super::Analyzer;
use super::mem_events::StackTable;
use crate::model::analysis::{AnalysisRows, AnalysisSchema};
use crate::model::lockup_warnings::{LockupKind, LockupRows, LockupWarning};
use crate::trace::event::{EventIndex, EventLayout, FieldLayout, TraceEvent};

/// What the session knows of the kernel's watchdog.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WatchdogParams {
    /// `/proc/sys/kernel/watchdog_thresh`, seconds.
    pub thresh_s: u64,
    /// `watchdog_timer_fn`'s address (kallsyms).
    pub timer_fn: u64,
    /// The watched CPUs (`-C` ∩ `/proc/sys/kernel/watchdog_cpumask`).
    pub cpus: Vec<u32>,
}

impl WatchdogParams {
    /// perf-prof's `sample_period()`: the soft-lockup warning threshold, `>> 30` seconds.
    pub fn soft_thresh(&self) -> u64 {
        self.thresh_s * 2 / 5
    }

    /// perf-prof's hard-lockup threshold: the watchdog hrtimer's period + 0.2 s, in ns.
    pub fn hard_thresh_ns(&self) -> u64 {
        self.thresh_s * 2 * (1_000_000_000 / 5) + 1_000_000_000 / 5
    }
}

/// The kernel's `get_timestamp()`: ns → "seconds" by a shift (2^30 ≈ 10^9).
fn kernel_seconds(ns: u64) -> u64 {
    ns >> 30
}

#[derive(Clone, Default)]
struct CpuWatch {
    hrtimer: Option<u64>,
    running: bool,
    /// The stopper thread's last switch-in, kernel seconds (0 = never seen).
    thread_touch: u64,
    hrtimer_interrupts: u64,
    hrtimer_interrupts_saved: u64,
    /// The watchdog hrtimer's last expiry or start, ns (0 = never seen).
    hrtimer_touch_ns: u64,
}

struct Indexes {
    expire: EventIndex,
    start: EventIndex,
    cancel: EventIndex,
    switch: EventIndex,
    clock: EventIndex,
}

pub struct WatchdogAnalyzer {
    params: WatchdogParams,
    events: Indexes,
    hrtimer: FieldLayout,
    function: FieldLayout,
    start_hrtimer: FieldLayout,
    start_function: FieldLayout,
    cancel_hrtimer: FieldLayout,
    cpus: Vec<CpuWatch>,
    learnt: u32,
    rows: LockupRows,
    /// Names the ticks' stacks (`-g`).
    stacks: StackTable,
    /// The last event fed was a tick that warned with its stack.
    kept_stack: bool,
}

fn find(layouts: &[EventLayout], system: &str, name: &str) -> Result<EventIndex, super::AnalyzerError> {
    layouts
        .iter()
        .position(|l| l.system == system && l.name == name)
        .map(|i| EventIndex(i as u16))
        .ok_or_else(|| super::AnalyzerError::MissingEvent {
            analyzer: "watchdog",
            event: format!("{system}:{name}"),
        })
}

fn field(
    layouts: &[EventLayout],
    index: EventIndex,
    name: &str,
) -> Result<FieldLayout, super::AnalyzerError> {
    let layout = &layouts[usize::from(index.0)];
    layout
        .field(name)
        .cloned()
        .ok_or_else(|| super::AnalyzerError::missing_field(layout, name))
}

impl WatchdogAnalyzer {
    /// `stacks` names the ticks' callchains (ticks without one carry no stack).
    pub fn new(
        layouts: &[EventLayout],
        params: WatchdogParams,
        stacks: StackTable,
    ) -> Result<Self, super::AnalyzerError> {
        let events = Indexes {
            expire: find(layouts, "timer", "hrtimer_expire_entry")?,
            start: find(layouts, "timer", "hrtimer_start")?,
            cancel: find(layouts, "timer", "hrtimer_cancel")?,
            switch: find(layouts, "sched", "sched_switch")?,
            clock: find(layouts, "software", "cpu-clock")?,
        };
        Ok(Self {
            hrtimer: field(layouts, events.expire, "hrtimer")?,
            function: field(layouts, events.expire, "function")?,
            start_hrtimer: field(layouts, events.start, "hrtimer")?,
            start_function: field(layouts, events.start, "function")?,
            cancel_hrtimer: field(layouts, events.cancel, "hrtimer")?,
            events,
            params,
            cpus: Vec::new(),
            learnt: 0,
            rows: LockupRows::default(),
            stacks,
            kept_stack: false,
        })
    }

    /// Whether the event just fed was a tick that warned with its stack: its callchain
    /// then belongs in the session's profile (the other ticks' do not).
    pub fn took_stack(&mut self) -> bool {
        std::mem::take(&mut self.kept_stack)
    }

    fn cpu(&mut self, cpu: u32) -> &mut CpuWatch {
        let cpu = cpu as usize;
        if self.cpus.len() <= cpu {
            self.cpus.resize(cpu + 1, CpuWatch::default());
        }
        &mut self.cpus[cpu]
    }

    /// The CPU's watchdog hrtimer is `hrtimer` (when `function` is watchdog_timer_fn):
    /// learn it once; whether this event is that timer's.
    fn is_watchdog_timer(
        &mut self,
        event: &TraceEvent<'_>,
        hrtimer: Option<u64>,
        function: Option<u64>,
    ) -> bool {
        let timer_fn = self.params.timer_fn;
        let watched = self.params.cpus.len() as u32;
        let (Some(hrtimer), Some(function)) = (hrtimer, function) else {
            return false;
        };
        if function != timer_fn {
            return false;
        }
        let cpu = self.cpu(event.cpu);
        match cpu.hrtimer {
            Some(known) => known == hrtimer,
            None => {
                cpu.hrtimer = Some(hrtimer);
                self.learnt += 1;
                if self.learnt == watched && self.rows.collected.is_none() {
                    self.rows.collected = Some((event.time_ns, watched));
                }
                true
            }
        }
    }

    fn expired(&mut self, event: &TraceEvent<'_>) {
        let hrtimer = self.hrtimer.read_u64(event.raw);
        let function = self.function.read_u64(event.raw);
        if !self.is_watchdog_timer(event, hrtimer, function) {
            return;
        }
        self.rows.watchdog_ticks += 1;
        let thresh = self.params.soft_thresh();
        let now = kernel_seconds(event.time_ns);
        let cpu = self.cpu(event.cpu);
        cpu.running = true;
        cpu.hrtimer_interrupts += 1;
        cpu.hrtimer_touch_ns = event.time_ns;
        if cpu.thread_touch != 0 && now.saturating_sub(cpu.thread_touch) > thresh {
            let touch = cpu.thread_touch;
            self.rows.push(LockupWarning {
                time_ns: event.time_ns,
                cpu: event.cpu,
                kind: LockupKind::Soft,
                now,
                touch,
                thresh,
                stack: None,
            });
        }
    }

    fn ticked(&mut self, event: &TraceEvent<'_>) {
        let thresh = self.params.hard_thresh_ns();
        let cpu = self.cpu(event.cpu);
        if event.tid == 0 {
            // The tick caught the CPU idling, interrupts on: no lockup. Its watchdog
            // expiries may be missing (this kind of kernel delivers no tracepoint sample
            // from an idle CPU), so idling counts as the timer's sign of life — else the
            // first busy tick after a quiet spell would read as a stalled timer.
            cpu.hrtimer_touch_ns = event.time_ns;
            cpu.hrtimer_interrupts_saved = cpu.hrtimer_interrupts;
            return;
        }
        let stalled = cpu.running
            && cpu.hrtimer_touch_ns != 0
            && cpu.hrtimer_interrupts == cpu.hrtimer_interrupts_saved
            && event.time_ns.saturating_sub(cpu.hrtimer_touch_ns) > thresh;
        cpu.hrtimer_interrupts_saved = cpu.hrtimer_interrupts;
        if stalled {
            let touch = cpu.hrtimer_touch_ns;
            let stack = (!event.callchain.is_empty())
                .then(|| self.stacks.stack_of(event))
                .filter(|s| s.id != 0);
            self.kept_stack = stack.is_some();
            self.rows.push(LockupWarning {
                time_ns: event.time_ns,
                cpu: event.cpu,
                kind: LockupKind::Hard,
                now: event.time_ns,
                touch,
                thresh,
                stack,
            });
        }
    }
}

impl Analyzer for WatchdogAnalyzer {
    type Table = LockupRows;

    fn feed(&mut self, event: &TraceEvent<'_>) {
        self.kept_stack = false;
        let e = event.event;
        if e == self.events.expire {
            self.expired(event);
        } else if e == self.events.start {
            let hrtimer = self.start_hrtimer.read_u64(event.raw);
            let function = self.start_function.read_u64(event.raw);
            if self.is_watchdog_timer(event, hrtimer, function) {
                let cpu = self.cpu(event.cpu);
                cpu.running = true;
                cpu.hrtimer_touch_ns = event.time_ns;
            }
        } else if e == self.events.cancel {
            let hrtimer = self.cancel_hrtimer.read_u64(event.raw);
            let cpu = self.cpu(event.cpu);
            if hrtimer.is_some() && cpu.hrtimer == hrtimer {
                cpu.running = false;
            }
        } else if e == self.events.switch {
            // The session's filter keeps the switches to `migration/N` only.
            self.cpu(event.cpu).thread_touch = kernel_seconds(event.time_ns);
        } else if e == self.events.clock {
            self.ticked(event);
        }
    }

    /// A lost expiry would read as a stalled timer: start every CPU's watch over.
    fn lost(&mut self, _from_ns: u64, _to_ns: u64) {
        for cpu in &mut self.cpus {
            cpu.running = false;
            cpu.thread_touch = 0;
            cpu.hrtimer_touch_ns = 0;
        }
    }

    fn take_rows(&mut self) -> AnalysisRows {
        AnalysisRows::Lockups(std::mem::take(&mut self.rows))
    }

    fn rows(&self) -> AnalysisRows {
        AnalysisRows::Lockups(self.rows.clone())
    }

    fn schema(&self) -> AnalysisSchema {
        AnalysisSchema::Lockups
    }

    fn tabulate(&self, rows: &AnalysisRows) -> LockupRows {
        match rows {
            AnalysisRows::Lockups(rows) => rows.clone(),
            _ => LockupRows::default(),
        }
    }
}

#[cfg(test)]
mod tests;
