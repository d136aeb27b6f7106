//! perf-prof's `hrtimer` as model data: the periods of a CPU's sampling timer whose event
//! counts met the user's condition, each with when it ended, who was running, how long it
//! really lasted and how many events of each `-e` event it held — and how many periods
//! were tested at all.
//!
//! Rows of two spans merge by putting the samples side by side (kept in time order), so
//! the engine keeps them per time slice like any other rows. The list is bounded
//! ([`MAX_SAMPLES`]): beyond it samples are counted, not kept, and the table says so.

use super::memory_stacks::StackRef;
use super::scale::scale;

/// Samples kept per span of rows; a condition that holds for every period of a long run
/// would otherwise grow without bound.
pub const MAX_SAMPLES: usize = 100_000;

/// One timer period that met the condition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimerSample {
    /// When the timer fired (the period's end), event clock.
    pub time_ns: u64,
    pub cpu: u32,
    /// The task the timer interrupted.
    pub pid: u32,
    pub tid: u32,
    /// How long the period really lasted (perf-prof's `cpu-clock N ns`).
    pub period_ns: u64,
    /// Events of each `-e` event in the period, by event index.
    pub counts: Vec<u64>,
    /// Where the CPU was in the kernel when the timer fired (`-g`; `None` without `-g`
    /// or when it fired in user space, whose frames perf-prof's hrtimer leaves out).
    pub stack: Option<StackRef>,
}

/// The samples of some span, in time order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TimerSamples {
    pub matched: Vec<TimerSample>,
    /// Periods tested (matched or not).
    pub periods: u64,
    /// Samples that met the condition but were not kept ([`MAX_SAMPLES`]).
    pub dropped: u64,
}

impl TimerSamples {
    /// Keep `sample` (or count it as dropped when the list is full).
    pub fn push(&mut self, sample: TimerSample) {
        if self.matched.len() >= MAX_SAMPLES {
            self.dropped = self.dropped.saturating_add(1);
        } else {
            self.matched.push(sample);
        }
    }

    /// Add `other`'s samples. A sample is one event, not a count: decay (`factor` < 1)
    /// scales the number of periods tested, never drops or splits a sample.
    pub fn merge_scaled(&mut self, other: &TimerSamples, factor: f64) {
        let room = MAX_SAMPLES.saturating_sub(self.matched.len());
        let taken = other.matched.len().min(room);
        self.matched.extend_from_slice(&other.matched[..taken]);
        // Slices arrive in time order, but a merge of windows may not: keep the order.
        self.matched.sort_by_key(|s| (s.time_ns, s.cpu));
        self.dropped = self
            .dropped
            .saturating_add(other.dropped)
            .saturating_add((other.matched.len() - taken) as u64);
        self.periods = self.periods.saturating_add(scale(other.periods, factor));
    }

    /// A stack is shared by the samples that name it: counted with the analyzer's stack
    /// table, not here.
    pub fn heap_bytes(&self) -> usize {
        self.matched
            .iter()
            .map(|s| std::mem::size_of::<TimerSample>() + s.counts.capacity() * 8)
            .sum()
    }
}

/// What timer samples mean.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimerSchema {
    /// Each `-e` event's name in the condition (its alias, else its name), by index.
    pub events: Vec<String>,
    /// The condition as typed (`sched_switch==0`); `None` = every period is kept.
    pub condition: Option<String>,
    /// The timer's period (`--period`, or 1 s / `-F`).
    pub period_ns: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(time_ns: u64, cpu: u32) -> TimerSample {
        TimerSample {
            time_ns,
            cpu,
            pid: 1,
            tid: 1,
            period_ns: 10,
            counts: vec![time_ns],
            stack: None,
        }
    }

    #[test]
    fn samples_merge_in_time_order_and_decay_scales_only_the_periods() {
        let mut a = TimerSamples {
            matched: vec![sample(10, 0), sample(30, 0)],
            periods: 4,
            dropped: 0,
        };
        let b = TimerSamples {
            matched: vec![sample(20, 1)],
            periods: 6,
            dropped: 2,
        };
        a.merge_scaled(&b, 0.5);
        let times: Vec<u64> = a.matched.iter().map(|s| s.time_ns).collect();
        assert_eq!(times, [10, 20, 30]);
        assert_eq!((a.periods, a.dropped), (7, 2));
    }

    #[test]
    fn a_full_list_counts_what_it_cannot_keep() {
        let mut a = TimerSamples::default();
        for t in 0..MAX_SAMPLES as u64 + 3 {
            a.push(sample(t, 0));
        }
        assert_eq!((a.matched.len(), a.dropped), (MAX_SAMPLES, 3));
        let mut b = TimerSamples::default();
        b.push(sample(0, 0));
        a.merge_scaled(&b, 1.0);
        assert_eq!((a.matched.len(), a.dropped), (MAX_SAMPLES, 4));
    }
}
