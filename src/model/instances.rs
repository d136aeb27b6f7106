//! The per-instance split: the same selection, one trie per CPU / vCPU / thread.

use rustc_hash::FxHashMap;

use super::profile::Profile;
use super::sample::{InstanceId, Sample};
use super::selection::Selection;
use super::stack::StackId;
use super::trie::{StackTrie, TrieOrder};

/// One trie per instance that has selected samples, in instance order.
pub fn split_by_instance(profile: &Profile, selection: &Selection) -> Vec<(InstanceId, StackTrie)> {
    split_samples_by_instance(profile, selection.matcher(profile).samples(profile))
}

/// One trie per instance of `samples`, in instance order, in one pass over them.
pub fn split_samples_by_instance<'p>(
    profile: &Profile,
    samples: impl IntoIterator<Item = &'p Sample>,
) -> Vec<(InstanceId, StackTrie)> {
    let mut by_instance: FxHashMap<InstanceId, FxHashMap<StackId, u64>> = FxHashMap::default();
    for s in samples {
        *by_instance
            .entry(s.instance)
            .or_default()
            .entry(s.stack)
            .or_default() += s.weight;
    }
    let mut split: Vec<(InstanceId, StackTrie)> = by_instance
        .into_iter()
        .map(|(id, stacks)| {
            (
                id,
                StackTrie::from_stack_list(profile, stacks, TrieOrder::RootFirst),
            )
        })
        .collect();
    split.sort_by_key(|(id, _)| *id);
    split
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Instance, ProfileInfo, Sample, SampleMeta, TimeWindow};

    #[test]
    fn each_instance_gets_its_own_trie_and_they_add_up() {
        let mut p = Profile::new(ProfileInfo::default());
        let v0 = p.instance(Instance::vcpu(0));
        let v1 = p.instance(Instance::vcpu(1));
        let _idle = p.instance(Instance::vcpu(2)); // no samples: no pane
        let a = p.intern_named_stack(&["main", "a"]);
        let b = p.intern_named_stack(&["main", "b"]);
        for (i, (inst, stack, t)) in [(v0, a, 1), (v1, b, 2), (v1, a, 3), (v0, a, 50)]
            .into_iter()
            .enumerate()
        {
            p.push_sample(Sample {
                time_ns: Some(t),
                instance: inst,
                weight: 1 + i as u64,
                stack,
                meta: SampleMeta::default(),
            });
        }
        let split = split_by_instance(&p, &Selection::window(TimeWindow::new(None, Some(10))));
        assert_eq!(split.len(), 2);
        assert_eq!(split[0].0, v0);
        assert_eq!(split[0].1.total_weight(), 1, "the window applies per instance");
        assert_eq!(split[1].0, v1);
        assert_eq!(split[1].1.total_weight(), 2 + 3);
        assert_eq!(p.instance_info(v1).label, "vCPU 1");
    }
}
