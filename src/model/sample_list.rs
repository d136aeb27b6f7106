//! A plain list of samples with the tables they point into: a [`SampleSource`] with every
//! sample kept, exact to the nanosecond. For tests, benchmarks and small inputs built in
//! memory; a session's data lives in the engine's time slices instead.

use std::ops::{Deref, DerefMut};

use super::counts::SampleKey;
use super::sample::Sample;
use super::selection::{Counted, SampleSource};
use super::tables::{ProfileInfo, ProfileTables};
use super::window::TimeWindow;

/// Samples in arrival order, and their tables.
#[derive(Clone, Debug, Default)]
pub struct SampleList {
    pub tables: ProfileTables,
    samples: Vec<Sample>,
}

impl SampleList {
    pub fn new(info: ProfileInfo) -> Self {
        Self {
            tables: ProfileTables::new(info),
            samples: Vec::new(),
        }
    }

    pub fn push_sample(&mut self, sample: Sample) {
        self.samples.push(sample);
    }

    pub fn samples(&self) -> &[Sample] {
        &self.samples
    }

    /// Sum of all sample weights.
    pub fn total_weight(&self) -> u64 {
        self.samples.iter().map(|s| s.weight).sum()
    }
}

impl Deref for SampleList {
    type Target = ProfileTables;

    fn deref(&self) -> &ProfileTables {
        &self.tables
    }
}

impl DerefMut for SampleList {
    fn deref_mut(&mut self) -> &mut ProfileTables {
        &mut self.tables
    }
}

impl SampleSource for SampleList {
    fn tables(&self) -> &ProfileTables {
        &self.tables
    }

    fn visit_counts(&self, window: &TimeWindow, visit: &mut dyn FnMut(Counted)) {
        for sample in &self.samples {
            visit(Counted {
                key: SampleKey::of(sample),
                weight: sample.weight,
                position: window.position(sample.time_ns),
                timed: sample.time_ns.is_some(),
            });
        }
    }

    fn time_range_ns(&self) -> Option<(u64, u64)> {
        let mut times = self.samples.iter().filter_map(|s| s.time_ns);
        let first = times.next()?;
        Some(times.fold((first, first), |(lo, hi), t| (lo.min(t), hi.max(t))))
    }
}

#[cfg(test)]
pub(crate) mod test_support {
    use super::*;
    use crate::model::sample::{Instance, SampleMeta};

    /// Untimed samples from `(root-first frames, weight, meta)` triples on one instance.
    pub fn profile_with_meta(stacks: &[(&[&str], u64, SampleMeta)]) -> SampleList {
        let mut p = SampleList::new(ProfileInfo::default());
        let instance = p.instance(Instance::unknown());
        for (frames, weight, meta) in stacks {
            let stack = p.intern_named_stack(frames);
            p.push_sample(Sample {
                time_ns: None,
                instance,
                weight: *weight,
                stack,
                meta: *meta,
            });
        }
        p
    }

    /// Samples from `(root-first frames, weight, time_ns)` triples on one instance.
    pub fn profile_from(stacks: &[(&[&str], u64, Option<u64>)]) -> SampleList {
        let mut p = SampleList::new(ProfileInfo::default());
        let instance = p.instance(Instance::unknown());
        for (frames, weight, time_ns) in stacks {
            let stack = p.intern_named_stack(frames);
            p.push_sample(Sample {
                time_ns: *time_ns,
                instance,
                weight: *weight,
                stack,
                meta: SampleMeta {
                    raw_depth: frames.len() as u16,
                    ..SampleMeta::default()
                },
            });
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::profile_from;
    use super::*;
    use crate::model::{FrameId, Line, Location, SampleSource};

    #[test]
    fn named_stacks_share_frames_and_stacks() {
        let p = profile_from(&[
            (&["main", "work", "leaf"], 3, Some(5)),
            (&["main", "work", "leaf"], 2, Some(1)),
            (&["main", "idle"], 1, Some(9)),
        ]);
        assert_eq!(p.frames.len(), 4);
        assert_eq!(p.stacks.len(), 2);
        assert_eq!(p.samples()[0].stack, p.samples()[1].stack);
        let names: Vec<&str> = p
            .stack_frames(p.samples()[0].stack)
            .map(|f| p.frames.name(f))
            .collect();
        assert_eq!(names, ["main", "work", "leaf"]);
        assert_eq!(p.time_range_ns(), Some((1, 9)));
        assert_eq!(p.total_weight(), 6);
    }

    #[test]
    fn inline_chains_expand_outermost_first() {
        let mut p = SampleList::new(ProfileInfo::default());
        let outer = p.frames.intern("hash_block", None);
        let inner = p.frames.intern("mix_round", None);
        let loc = p.locations.intern(Location {
            address: 0x1000,
            lines: Box::new([
                Line {
                    frame: inner,
                    line: 10,
                },
                Line {
                    frame: outer,
                    line: 20,
                },
            ]),
        });
        let stack = p.stacks.intern(&[loc]);
        let frames: Vec<FrameId> = p.stack_frames(stack).collect();
        assert_eq!(frames, [outer, inner]);
    }
}
