//! perf-prof's `profile --than PERCENT`: a sample prints only when its instance (a CPU, or
//! a thread when sampling threads) has been busy at least PERCENT of the time so far in
//! its current one-second window. At `-F HZ`, a fully busy instance gives HZ samples a
//! second, so the window's sample count stands for its busy time: the samples print from
//! the ⌈HZ × PERCENT / 100⌉th of the window on. A window starts at an instance's first
//! sample and ends one second later (the sample that opens the next window does not
//! print), as perf-prof counts it.

use rustc_hash::FxHashMap;

use crate::model::sample::InstanceId;

const WINDOW_NS: u64 = 1_000_000_000;

/// Each instance's current window.
#[derive(Debug)]
pub struct BusyFilter {
    /// Samples a window needs before the next one prints.
    needed: u64,
    windows: FxHashMap<InstanceId, Window>,
}

#[derive(Copy, Clone, Debug)]
struct Window {
    start_ns: u64,
    samples: u64,
}

impl BusyFilter {
    /// `percent` of the time at `freq_hz` samples a second.
    pub fn new(freq_hz: u64, percent: u64) -> Self {
        Self {
            needed: (freq_hz.saturating_mul(percent)).div_ceil(100),
            windows: FxHashMap::default(),
        }
    }

    /// Count a sample of `instance` at `time_ns`; whether it prints.
    pub fn admit(&mut self, instance: InstanceId, time_ns: u64) -> bool {
        let window = self.windows.entry(instance).or_insert(Window {
            start_ns: 0,
            samples: 0,
        });
        window.samples += 1;
        if time_ns.saturating_sub(window.start_ns) >= WINDOW_NS {
            *window = Window {
                start_ns: time_ns,
                samples: 1,
            };
            return false;
        }
        window.samples >= self.needed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    /// Samples of one instance every `step_ns` from `from_ns` for `count` samples; how
    /// many print.
    fn printed(filter: &mut BusyFilter, instance: u32, from_ns: u64, step_ns: u64, count: u64) -> u64 {
        (0..count)
            .filter(|i| filter.admit(InstanceId(instance), from_ns + i * step_ns))
            .count() as u64
    }

    #[test]
    fn a_busy_instance_prints_past_the_threshold_and_an_idle_one_never() {
        // 100 Hz, 30 %: the 30th sample of a window and later print.
        let mut filter = BusyFilter::new(100, 30);
        let start = 5_000 * MS;
        // Busy: 100 samples a second for two seconds. The first sample opens the window
        // (not printed), samples 30..=100 of it print (71); the 101st opens the next
        // window, which prints as many.
        assert_eq!(printed(&mut filter, 0, start, 10 * MS, 200), 71 + 71);
        // 20 % busy (20 samples a second): never 30 in a window.
        assert_eq!(printed(&mut filter, 1, start, 50 * MS, 40), 0);
    }

    #[test]
    fn the_threshold_rounds_up_and_windows_are_per_instance() {
        // 997 Hz × 30 % = 299.1 → 300.
        let mut filter = BusyFilter::new(997, 30);
        assert_eq!(filter.needed, 300);
        let start = 10_000 * MS;
        for i in 0..299 {
            assert!(!filter.admit(InstanceId(2), start + i * MS), "sample {i}");
        }
        assert!(filter.admit(InstanceId(2), start + 299 * MS));
        // Another instance starts its own window.
        assert!(!filter.admit(InstanceId(3), start + 300 * MS));
        // One second after instance 2's window opened, a new one starts.
        assert!(!filter.admit(InstanceId(2), start + WINDOW_NS));
        assert!(!filter.admit(InstanceId(2), start + WINDOW_NS + MS));
    }
}
