//! Folded stacks → model samples: one sample per line, weighted by its count.

use crate::model::{Instance, Profile, Sample, SampleMeta};
use crate::sources::folded::FoldedParse;

/// Add every line of a parsed folded file to `profile`.
pub fn add_folded(profile: &mut Profile, parsed: &FoldedParse) {
    let instance = profile.instance(Instance::unknown());
    for line in &parsed.lines {
        if line.count == 0 {
            continue;
        }
        let stack = profile.intern_named_stack(&line.frames);
        profile.push_sample(Sample {
            time_ns: None,
            instance,
            weight: line.count,
            stack,
            meta: SampleMeta {
                raw_depth: u16::try_from(line.frames.len()).unwrap_or(u16::MAX),
                ..SampleMeta::default()
            },
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ProfileInfo;
    use crate::sources::folded::parse;

    #[test]
    fn lines_become_weighted_samples() {
        let parsed = parse("main;a 3\nmain;b 0\nmain;a 2\n");
        let mut p = Profile::new(ProfileInfo::default());
        add_folded(&mut p, &parsed);
        assert_eq!(p.samples().len(), 2, "zero counts add nothing");
        assert_eq!(p.total_weight(), 5);
        assert_eq!(p.stacks.len(), 1);
    }
}
