//! The timeline: sample weight (or, for an analyzer session, events) per time slice over
//! the whole run, with the phase markers, so a view can draw activity and let the user pick
//! a window on it.

use super::window::{PhaseMarkers, TimeWindow};

/// What a timeline counts.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Counted {
    /// Stack samples: a window picked on it selects them.
    #[default]
    Samples,
    /// Tracepoint events fed to an analyzer: the rate only (its tables cover the run).
    Events,
}

impl Counted {
    pub fn noun(self) -> &'static str {
        match self {
            Counted::Samples => "samples",
            Counted::Events => "events",
        }
    }
}

/// Weight per fixed time slice, from the first sample to the last.
#[derive(Clone, Debug, PartialEq)]
pub struct Timeline {
    pub start_ns: u64,
    /// Exclusive end: the last sample time plus one.
    pub end_ns: u64,
    pub slice_ns: u64,
    pub weights: Vec<u64>,
    /// Records the source lost, per bin (the same bins as `weights`).
    pub lost: Vec<u64>,
    pub markers: PhaseMarkers,
    pub counted: Counted,
}

impl Timeline {
    /// An empty timeline over `[start_ns, end_ns)` in at most `bins` equal bins.
    pub fn spanning(start_ns: u64, end_ns: u64, bins: usize, markers: PhaseMarkers) -> Timeline {
        let end_ns = end_ns.max(start_ns.saturating_add(1));
        let bins = bins.max(1) as u64;
        let slice_ns = (end_ns - start_ns).div_ceil(bins).max(1);
        let count = (end_ns - start_ns).div_ceil(slice_ns) as usize;
        Timeline {
            start_ns,
            end_ns,
            slice_ns,
            weights: vec![0; count],
            lost: vec![0; count],
            markers,
            counted: Counted::Samples,
        }
    }

    /// An empty timeline that grows with [`add`](Self::add): slices start 1 µs wide and
    /// double (neighbours merged) whenever the run outgrows `max_slices` of them, so a
    /// live session costs each sample once and the timeline stays `max_slices` long.
    pub fn growing(start_ns: u64, max_slices: usize, counted: Counted) -> Timeline {
        Timeline {
            start_ns,
            end_ns: start_ns.saturating_add(1),
            slice_ns: 1_000,
            weights: Vec::with_capacity(max_slices.max(2)),
            lost: Vec::new(),
            markers: PhaseMarkers::default(),
            counted,
        }
    }

    /// Add `weight` (and `lost` records) at `time_ns` to a growing timeline (`max_slices`
    /// as given to [`growing`](Self::growing)). Times before the start count in the first
    /// slice.
    pub fn add(&mut self, time_ns: u64, weight: u64, lost: u64, max_slices: usize) {
        let max_slices = max_slices.max(2) as u64;
        let t = time_ns.max(self.start_ns);
        // Once the slices' span no longer fits a u64 it covers every time there is: a
        // saturated span would never be outgrown and the loop would not end.
        while self
            .slice_ns
            .checked_mul(max_slices)
            .is_some_and(|span| t - self.start_ns >= span)
        {
            self.weights = self.weights.chunks(2).map(|p| p.iter().sum()).collect();
            self.lost = self.lost.chunks(2).map(|p| p.iter().sum()).collect();
            self.slice_ns = self.slice_ns.saturating_mul(2);
        }
        let index = ((t - self.start_ns) / self.slice_ns) as usize;
        if self.weights.len() <= index {
            self.weights.resize(index + 1, 0);
        }
        self.weights[index] = self.weights[index].saturating_add(weight);
        if lost > 0 {
            if self.lost.len() <= index {
                self.lost.resize(index + 1, 0);
            }
            self.lost[index] = self.lost[index].saturating_add(lost);
        }
        self.end_ns = self.end_ns.max(t.saturating_add(1));
    }

    /// Count `weight` (and `lost` records) in the bin of `time_ns` (clamped to the span).
    pub fn add_at(&mut self, time_ns: u64, weight: u64, lost: u64) {
        if self.weights.is_empty() {
            return;
        }
        let t = time_ns.clamp(self.start_ns, self.end_ns - 1);
        let i = (((t - self.start_ns) / self.slice_ns) as usize).min(self.weights.len() - 1);
        self.weights[i] = self.weights[i].saturating_add(weight);
        if lost > 0 {
            self.lost[i] = self.lost[i].saturating_add(lost);
        }
    }

    pub fn duration_ns(&self) -> u64 {
        self.end_ns - self.start_ns
    }

    /// Weights re-binned into `columns` equal columns of time (for a view of that width).
    /// Each slice goes to the column its start time falls in, so the sum is preserved.
    pub fn columns(&self, columns: usize) -> Vec<u64> {
        self.rebin(&self.weights, columns)
    }

    /// Lost records re-binned as [`columns`](Self::columns) re-bins the weights.
    pub fn lost_columns(&self, columns: usize) -> Vec<u64> {
        self.rebin(&self.lost, columns)
    }

    fn rebin(&self, values: &[u64], columns: usize) -> Vec<u64> {
        let columns = columns.max(1);
        let mut out = vec![0u64; columns];
        for (i, &w) in values.iter().enumerate() {
            let t = self
                .start_ns
                .saturating_add((i as u64).saturating_mul(self.slice_ns));
            let c = self.column_of(t, columns);
            out[c] = out[c].saturating_add(w);
        }
        out
    }

    /// The time at the left edge of `column` of `columns`.
    pub fn time_at_column(&self, column: usize, columns: usize) -> u64 {
        let columns = columns.max(1) as u128;
        self.start_ns + (self.duration_ns() as u128 * column.min(columns as usize) as u128 / columns) as u64
    }

    /// The column of `columns` that `time_ns` falls in (clamped to the ends).
    pub fn column_of(&self, time_ns: u64, columns: usize) -> usize {
        let columns = columns.max(1);
        let t = time_ns.clamp(self.start_ns, self.end_ns - 1) - self.start_ns;
        ((t as u128 * columns as u128) / self.duration_ns() as u128) as usize
    }

    /// Total weight inside a window.
    pub fn weight_in(&self, window: &TimeWindow) -> u64 {
        self.weights
            .iter()
            .enumerate()
            .filter(|(i, _)| window.contains(Some(self.start_ns + *i as u64 * self.slice_ns)))
            .map(|(_, w)| w)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_growing_timeline_doubles_its_slices_and_keeps_every_sample() {
        let mut t = Timeline::growing(1_000_000, 4, Counted::Samples);
        t.add(1_000_000, 1, 0, 4);
        t.add(1_003_999, 2, 0, 4);
        assert_eq!((t.slice_ns, t.weights.clone()), (1_000, vec![1, 0, 0, 2]));
        // 4 µs in: the run outgrows 4 slices of 1 µs → 2 µs slices, then 4 µs.
        t.add(1_004_000, 4, 5, 4);
        assert_eq!((t.slice_ns, t.weights.clone()), (2_000, vec![1, 2, 4]));
        t.add(1_012_000, 8, 0, 4);
        assert_eq!((t.slice_ns, t.weights.clone()), (4_000, vec![3, 4, 0, 8]));
        assert_eq!(t.lost, [0, 5], "lost records merge with their slices");
        t.add(0, 16, 0, 4);
        assert_eq!(t.weights[0], 19, "early samples land in the first slice");
        assert_eq!(t.end_ns, 1_012_001);
        assert_eq!(t.weights.iter().sum::<u64>(), 31);
    }

    #[test]
    fn bins_preserve_weight_and_map_columns_back_to_time() {
        let mut t = Timeline::spanning(1_000, 3_000, 4, PhaseMarkers::default());
        for (time, weight) in [(1_000, 1), (1_500, 2), (2_999, 4)] {
            t.add_at(time, weight, 0);
        }
        t.add_at(2_999, 0, 3);
        assert_eq!(t.start_ns, 1_000);
        assert_eq!(t.end_ns, 3_000);
        assert_eq!(t.slice_ns, 500);
        assert_eq!(t.weights, [1, 2, 0, 4]);
        assert_eq!(t.lost, [0, 0, 0, 3]);
        assert_eq!(t.columns(2), [3, 4]);
        assert_eq!(t.columns(1), [7]);
        assert_eq!(t.time_at_column(1, 2), 2_000);
        assert_eq!(t.column_of(2_000, 2), 1);
        assert_eq!(t.column_of(0, 2), 0);
        assert_eq!(t.column_of(u64::MAX, 2), 1);
        assert_eq!(t.weight_in(&TimeWindow::new(Some(1_500), Some(2_500))), 2);
        t.add_at(0, 16, 0);
        t.add_at(u64::MAX, 32, 0);
        assert_eq!(
            (t.weights[0], t.weights[3]),
            (17, 36),
            "times outside count at the ends"
        );
    }
}
