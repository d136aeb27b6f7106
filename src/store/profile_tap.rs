//! Record a growing [`Profile`]'s new samples as a source adds them: the profile's
//! stacks and instances are mapped to session ids once, so a sample costs one channel
//! send. This is the hook a live source calls after each batch.

use crate::model::{Profile, Sample};

use super::recorder::{InstanceRef, Recorder, StackRef};

/// Where recording of one profile has got to.
#[derive(Default)]
pub struct ProfileTap {
    next_sample: usize,
    stacks: Vec<Option<StackRef>>,
    instances: Vec<Option<InstanceRef>>,
    info_written: bool,
    frequency_written: Option<u64>,
}

impl ProfileTap {
    pub fn new() -> Self {
        Self::default()
    }

    /// Samples recorded so far.
    pub fn recorded(&self) -> usize {
        self.next_sample
    }

    /// Record the samples added to `profile` since the last call.
    pub fn record_new(&mut self, recorder: &mut Recorder, profile: &Profile) {
        if !self.info_written {
            self.info_written = true;
            let info = &profile.info;
            recorder.meta("profile.source", &info.source);
            if let Some(arch) = &info.arch {
                recorder.meta("arch", arch);
            }
            if let Some(binary) = &info.binary {
                recorder.meta("profile.binary", binary);
            }
        }
        // The frequency may be learnt late (the plugin's summary at exit).
        if profile.info.frequency_hz != self.frequency_written
            && let Some(hz) = profile.info.frequency_hz
        {
            recorder.meta("profile.frequency_hz", &hz.to_string());
            self.frequency_written = Some(hz);
        }
        let new = &profile.samples()[self.next_sample.min(profile.samples().len())..];
        for sample in new {
            self.record(recorder, profile, sample);
        }
        self.next_sample = profile.samples().len();
    }

    fn record(&mut self, recorder: &mut Recorder, profile: &Profile, sample: &Sample) {
        let s = sample.stack.index();
        if self.stacks.len() <= s {
            self.stacks.resize(s + 1, None);
        }
        let stack = match self.stacks[s] {
            Some(r) => r,
            None => {
                let frames: Vec<_> = profile
                    .stack_frames(sample.stack)
                    .map(|f| recorder.frame(profile.frames.name(f), None, profile.frames.file(f)))
                    .collect();
                let r = recorder.stack(&frames);
                self.stacks[s] = Some(r);
                r
            }
        };
        let i = sample.instance.index();
        if self.instances.len() <= i {
            self.instances.resize(i + 1, None);
        }
        let instance = match self.instances[i] {
            Some(r) => r,
            None => {
                let r = recorder.instance(profile.instance_info(sample.instance));
                self.instances[i] = Some(r);
                r
            }
        };
        recorder.sample(sample.time_ns, instance, sample.weight, stack, &sample.meta);
    }
}
