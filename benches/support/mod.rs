//! Profiles for the TUI benchmarks, built straight into the model (no decoding): a
//! deterministic generator of many distinct stacks over a few thousand function names.
#![allow(dead_code)] // each bench uses a part

use perfscope::model::sample_list::SampleList;
use perfscope::model::{Instance, ProfileInfo, ProfileTables, Sample, SampleMeta, StackId};

/// Function names shaped like a kernel's (`module::function_N`).
pub fn function_names(count: usize) -> Vec<String> {
    const MODULES: [&str; 8] = [
        "sched",
        "mm",
        "fs",
        "net",
        "block",
        "irq",
        "time",
        "drivers::virtio",
    ];
    (0..count)
        .map(|i| format!("kernel::{}::function_{i}", MODULES[i % MODULES.len()]))
        .collect()
}

/// A xorshift stream: deterministic, fast, good enough to spread stacks.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed | 1)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Intern a random stack of depth 8–16 whose first levels come from a few roots (so
/// the flamegraph has wide frames on top and a long tail below, like a real profile).
pub fn random_stack(profile: &mut ProfileTables, names: &[String], rng: &mut Rng) -> StackId {
    let depth = 8 + (rng.next() % 9) as usize;
    let frames: Vec<&str> = (0..depth)
        .map(|level| {
            // Level 0 has 4 choices, level 1 has 32, deeper levels all names.
            let choices = match level {
                0 => 4,
                1 => 32,
                2 => 256,
                _ => names.len(),
            };
            names[(rng.next() % choices as u64) as usize].as_str()
        })
        .collect();
    profile.intern_named_stack(&frames)
}

/// A profile of `samples` samples, almost all on distinct stacks, 1 ms apart on 4 CPUs.
pub fn distinct_profile(samples: usize) -> SampleList {
    let names = function_names(4096);
    let mut profile = SampleList::new(ProfileInfo {
        source: "bench".into(),
        ..ProfileInfo::default()
    });
    let cpus: Vec<_> = (0..4).map(|c| profile.instance(Instance::cpu(c))).collect();
    let mut rng = Rng::new(0x2545_f491_4f6c_dd1d);
    for i in 0..samples {
        let stack = random_stack(&mut profile.tables, &names, &mut rng);
        push(&mut profile, stack, i as u64, cpus[i % cpus.len()]);
    }
    profile
}

/// Append one sample of weight 1 at `index` ms.
pub fn push(profile: &mut SampleList, stack: StackId, index: u64, instance: perfscope::model::InstanceId) {
    profile.push_sample(Sample {
        time_ns: Some(index * 1_000_000),
        instance,
        weight: 1,
        stack,
        meta: SampleMeta::default(),
    });
}
