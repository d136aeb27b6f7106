//! The per-instance split: the same selection, one trie per CPU / vCPU / thread.

use super::profile::Profile;
use super::sample::InstanceId;
use super::selection::Selection;
use super::trie::StackTrie;

/// One trie per instance that has selected samples, in instance order.
pub fn split_by_instance(profile: &Profile, selection: &Selection) -> Vec<(InstanceId, StackTrie)> {
    (0..profile.instances().len() as u32)
        .map(InstanceId)
        .filter_map(|id| {
            let sel = selection.clone().with_instance(Some(id));
            let trie = StackTrie::from_selection(profile, &sel.matcher(profile));
            (!trie.is_empty()).then_some((id, trie))
        })
        .collect()
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
