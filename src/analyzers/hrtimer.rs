//! `hrtimer`: perf-prof's high-resolution conditional sampler. A per-CPU timer
//! (`software:cpu-clock` sampling every `--period`) cuts each CPU's time into periods;
//! the `-e` events are counted per CPU per period, and when the timer fires the condition
//! (`{expression}` over the events' names, each the period's count, and `period`, the
//! period's real length in ns) decides whether the period is kept — printed by perf-prof
//! as `pid .. tid .. [cpu] time: hrtimer: cpu-clock N ns` and one `name count` line each.
//!
//! perf-prof reads the counts atomically from a counter group led by the timer; here the
//! events are records of the session's rings counted as they are read (the group
//! members never count on this kind of kernel, notes §7.2), and a period is closed by the
//! timer's own record on that CPU, so the counts are the events between two ticks of
//! that CPU's timer — exact, lost records aside (a loss voids the periods it touches).
//!
//! With `-g` the timer samples its kernel callchain, as perf-prof's: a kept period carries
//! where the CPU was when it ended, named once per distinct stack, and the stacks of the
//! kept periods alone become the session's profile ([`HrtimerAnalyzer::took_stack`]).

use super::Analyzer;
use super::mem_events::StackTable;
use crate::model::analysis::{AnalysisRows, AnalysisSchema};
use crate::model::timer_samples::{TimerSample, TimerSamples, TimerSchema};
use crate::trace::event::{EventIndex, TraceEvent};
use crate::trace::expr::BoundExpr;

/// The configuration.
#[derive(Clone, Debug)]
pub struct HrtimerConfig {
    /// Each counted event's name (alias, else name), by event index `0..events.len()`.
    pub events: Vec<String>,
    /// The timer's event index (after the counted events).
    pub clock: EventIndex,
    /// The condition bound to `events` then `period` ([`condition_vars`]); `None` keeps
    /// no period (perf-prof's `hrtimer` without events only runs the timer).
    pub condition: Option<(String, BoundExpr)>,
    pub period_ns: u64,
}

/// The variables a condition sees, in [`BoundExpr::eval_vars`] order.
pub fn condition_vars(events: &[String]) -> Vec<&str> {
    events.iter().map(String::as_str).chain(["period"]).collect()
}

/// One CPU's running period.
#[derive(Clone, Default)]
struct CpuPeriod {
    /// When the period began (the last tick); `None` until known.
    started_ns: Option<u64>,
    counts: Vec<u64>,
}

pub struct HrtimerAnalyzer {
    config: HrtimerConfig,
    cpus: Vec<CpuPeriod>,
    /// When the events were enabled: the first period of every CPU began there.
    origin_ns: Option<u64>,
    samples: TimerSamples,
    /// The condition's variables, reused per tick.
    vars: Vec<i64>,
    /// Names the kept periods' stacks (`-g`).
    stacks: StackTable,
    /// The last event fed was a tick whose period was kept with its stack.
    kept_stack: bool,
}

impl HrtimerAnalyzer {
    /// `stacks` names the timer's callchains (events without one carry no stack).
    pub fn new(config: HrtimerConfig, stacks: StackTable) -> Self {
        Self {
            vars: vec![0; config.events.len() + 1],
            config,
            cpus: Vec::new(),
            origin_ns: None,
            samples: TimerSamples::default(),
            stacks,
            kept_stack: false,
        }
    }

    /// Whether the event just fed was a tick kept with its stack: its callchain then
    /// belongs in the session's profile (the other ticks' do not).
    pub fn took_stack(&mut self) -> bool {
        std::mem::take(&mut self.kept_stack)
    }

    /// The events were enabled at `at_ns`: every CPU's first period starts there.
    pub fn begin(&mut self, at_ns: u64) {
        self.origin_ns = Some(at_ns);
        for cpu in &mut self.cpus {
            cpu.started_ns.get_or_insert(at_ns);
        }
    }

    fn cpu(&mut self, cpu: u32) -> &mut CpuPeriod {
        let cpu = cpu as usize;
        if self.cpus.len() <= cpu {
            let fresh = CpuPeriod {
                started_ns: self.origin_ns,
                counts: vec![0; self.config.events.len()],
            };
            self.cpus.resize(cpu + 1, fresh);
        }
        &mut self.cpus[cpu]
    }

    fn tick(&mut self, event: &TraceEvent<'_>) {
        let events = self.config.events.len();
        let cpu = self.cpu(event.cpu);
        let started = cpu.started_ns.replace(event.time_ns);
        let counts = std::mem::replace(&mut cpu.counts, vec![0; events]);
        let Some(started) = started else {
            // The period began before a loss: its counts are not whole.
            return;
        };
        let period_ns = event.time_ns.saturating_sub(started);
        self.samples.periods += 1;
        let Some((_, condition)) = &self.config.condition else {
            return;
        };
        for (var, &n) in self.vars.iter_mut().zip(&counts) {
            *var = n as i64;
        }
        self.vars[events] = period_ns as i64;
        let holds = condition
            .eval_vars(&self.vars)
            .and_then(|v| v.as_int())
            .is_some_and(|v| v != 0);
        if holds {
            let stack = (!event.callchain.is_empty()).then(|| self.stacks.stack_of(event));
            // A tick in user space has no kernel frames: the "no stack" one.
            let stack = stack.filter(|s| s.id != 0);
            self.kept_stack = stack.is_some();
            self.samples.push(TimerSample {
                time_ns: event.time_ns,
                cpu: event.cpu,
                pid: event.pid,
                tid: event.tid,
                period_ns,
                counts,
                stack,
            });
        }
    }

    fn schema_of(&self) -> TimerSchema {
        TimerSchema {
            events: self.config.events.clone(),
            condition: self.config.condition.as_ref().map(|(text, _)| text.clone()),
            period_ns: self.config.period_ns,
        }
    }
}

impl Analyzer for HrtimerAnalyzer {
    type Table = TimerSamples;

    fn feed(&mut self, event: &TraceEvent<'_>) {
        self.kept_stack = false;
        if event.event == self.config.clock {
            self.tick(event);
        } else if usize::from(event.event.0) < self.config.events.len() {
            let index = usize::from(event.event.0);
            let cpu = self.cpu(event.cpu);
            cpu.counts[index] = cpu.counts[index].saturating_add(1);
        }
    }

    /// Every CPU's running period may have lost events: none of them is tested; the
    /// next tick starts a whole one.
    fn lost(&mut self, _from_ns: u64, _to_ns: u64) {
        for cpu in &mut self.cpus {
            cpu.started_ns = None;
            cpu.counts.iter_mut().for_each(|n| *n = 0);
        }
        self.origin_ns = None;
    }

    fn take_rows(&mut self) -> AnalysisRows {
        AnalysisRows::Timer(std::mem::take(&mut self.samples))
    }

    fn rows(&self) -> AnalysisRows {
        AnalysisRows::Timer(self.samples.clone())
    }

    fn schema(&self) -> AnalysisSchema {
        AnalysisSchema::Timer(self.schema_of())
    }

    fn tabulate(&self, rows: &AnalysisRows) -> TimerSamples {
        match rows {
            AnalysisRows::Timer(samples) => samples.clone(),
            _ => TimerSamples::default(),
        }
    }
}

#[cfg(test)]
mod tests;
