//! A profile: the interned tables plus the samples that point into them.

use super::frames::{FrameId, FrameTable};
use super::location::{Line, Location, LocationId, LocationTable};
use super::sample::{Instance, InstanceId, Sample};
use super::stack::{StackId, StackTable};

/// What the profile is of and how it was sampled; carried into exports.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProfileInfo {
    /// Human description of the source, e.g. the input path.
    pub source: String,
    /// Guest or host architecture (`riscv64`, `x86_64`), when known.
    pub arch: Option<String>,
    /// The binary the addresses were symbolized against (kernel ELF), when there is one.
    pub binary: Option<String>,
    /// Sampling frequency, when the source fixes one (gives pprof its cpu-nanoseconds).
    pub frequency_hz: Option<u64>,
}

/// Frames, locations, stacks, instances and samples.
#[derive(Debug, Default, Clone)]
pub struct Profile {
    pub info: ProfileInfo,
    pub frames: FrameTable,
    pub locations: LocationTable,
    pub stacks: StackTable,
    instances: Vec<Instance>,
    samples: Vec<Sample>,
}

impl Profile {
    pub fn new(info: ProfileInfo) -> Self {
        Self {
            info,
            ..Self::default()
        }
    }

    /// Intern an instance and return its id.
    pub fn instance(&mut self, instance: Instance) -> InstanceId {
        if let Some(i) = self.instances.iter().position(|x| *x == instance) {
            return InstanceId(i as u32);
        }
        self.instances.push(instance);
        InstanceId(self.instances.len() as u32 - 1)
    }

    pub fn instances(&self) -> &[Instance] {
        &self.instances
    }

    pub fn instance_info(&self, id: InstanceId) -> &Instance {
        &self.instances[id.index()]
    }

    pub fn push_sample(&mut self, sample: Sample) {
        self.samples.push(sample);
    }

    pub fn samples(&self) -> &[Sample] {
        &self.samples
    }

    /// A copy with only the samples `keep(index, sample)` accepts (the tables are kept
    /// whole, so ids stay valid): exports of a live view use it.
    pub fn with_samples(&self, mut keep: impl FnMut(usize, &Sample) -> bool) -> Profile {
        Profile {
            info: self.info.clone(),
            frames: self.frames.clone(),
            locations: self.locations.clone(),
            stacks: self.stacks.clone(),
            instances: self.instances.clone(),
            samples: self
                .samples
                .iter()
                .enumerate()
                .filter(|(i, s)| keep(*i, s))
                .map(|(_, s)| *s)
                .collect(),
        }
    }

    /// Frames of a stack, root first.
    pub fn stack_frames(&self, stack: StackId) -> impl Iterator<Item = FrameId> + '_ {
        self.stacks.frames(stack, &self.locations)
    }

    /// Intern a stack given as frame names, root first, without addresses (folded input,
    /// tests). Each name becomes its own address-less location.
    pub fn intern_named_stack<S: AsRef<str>>(&mut self, root_first: &[S]) -> StackId {
        let locations: Vec<LocationId> = root_first
            .iter()
            .map(|name| {
                let frame = self.frames.intern(name.as_ref(), None);
                self.locations.intern(Location {
                    address: 0,
                    lines: Box::new([Line { frame, line: 0 }]),
                })
            })
            .collect();
        self.stacks.intern(&locations)
    }

    /// Earliest and latest sample time, when any sample has one.
    pub fn time_range_ns(&self) -> Option<(u64, u64)> {
        let mut times = self.samples.iter().filter_map(|s| s.time_ns);
        let first = times.next()?;
        Some(times.fold((first, first), |(lo, hi), t| (lo.min(t), hi.max(t))))
    }

    /// Whether every sample has a timestamp (a window can be applied).
    pub fn has_timestamps(&self) -> bool {
        !self.samples.is_empty() && self.samples.iter().all(|s| s.time_ns.is_some())
    }

    /// Sum of all sample weights.
    pub fn total_weight(&self) -> u64 {
        self.samples.iter().map(|s| s.weight).sum()
    }
}

#[cfg(test)]
pub(crate) mod test_support {
    use super::*;
    use crate::model::sample::SampleMeta;

    /// A profile from `(root-first frames, weight, time_ns)` triples on one instance.
    pub fn profile_from(stacks: &[(&[&str], u64, Option<u64>)]) -> Profile {
        let mut p = Profile::new(ProfileInfo::default());
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
        assert!(p.has_timestamps());
    }

    #[test]
    fn inline_chains_expand_outermost_first() {
        let mut p = Profile::new(ProfileInfo::default());
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
