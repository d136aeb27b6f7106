//! `fix_candidates`: the reference report's rule-based bottleneck hints. A rule fires (once)
//! when a top function's name contains one of its triggers (case-sensitive) and its share
//! is at least `--min-percent`, as in the reference's post-processor. The rule ids are the
//! reference's; the triggers, places and advice are perfscope's own wording (the
//! reference's text is not part of what its reports promise).

use serde_json::{Value, json};

use super::tables::FunctionRow;

struct Rule {
    id: &'static str,
    triggers: &'static [&'static str],
    files: &'static [&'static str],
    strategy: &'static str,
}

const RULES: &[Rule] = &[
    Rule {
        id: "virtio_vsock_locking",
        triggers: &["vsock", "Vsock", "VirtIOSocket"],
        files: &[
            "virtio-drivers: src/device/socket/",
            "the kernel's vsock device glue",
        ],
        strategy: "Take the vsock connection lock once per batch of packets, not per packet; \
                   poll the used ring outside it.",
    },
    Rule {
        id: "virtio_net_shared_state",
        triggers: &["virtio_net", "VirtIONet", "VirtioNet"],
        files: &["virtio-drivers: src/device/net/", "the kernel's net driver glue"],
        strategy: "Split the device state shared by the receive and transmit paths (one lock \
                   or queue per direction) and recycle buffers without the shared lock.",
    },
    Rule {
        id: "virtio_block_sync_queue",
        triggers: &["virtio_blk", "VirtIOBlk", "read_blocks", "write_blocks"],
        files: &[
            "virtio-drivers: src/device/blk.rs",
            "the kernel's block driver glue",
        ],
        strategy: "Queue several requests before notifying the device and complete them from \
                   the interrupt, instead of one synchronous request at a time.",
    },
    Rule {
        id: "lock_contention",
        triggers: &["spin", "Spin", "Mutex", "mutex", "lock"],
        files: &["the lock's users in the hottest stacks (see stack.folded)"],
        strategy: "Shorten the critical sections of the hottest lock or split the data it \
                   guards; check for spinning while the holder is descheduled.",
    },
    Rule {
        id: "copy_overhead",
        triggers: &["memcpy", "memmove", "copy_nonoverlapping", "copy_from_slice"],
        files: &["the copy's callers in the hottest stacks (see stack.folded)"],
        strategy: "Avoid the copy (borrow or map the buffer), or copy larger blocks less often.",
    },
];

/// The rules that fire on `functions` (the report's top functions) at `min_percent`.
pub fn fix_candidates(functions: &[FunctionRow], min_percent: f64) -> Value {
    let fired: Vec<Value> = RULES
        .iter()
        .filter_map(|rule| {
            let hit = functions.iter().find(|f| {
                f.occurrence_percent >= min_percent && rule.triggers.iter().any(|t| f.name.contains(t))
            })?;
            Some(json!({
                "id": rule.id,
                "trigger": hit.name,
                "samples": hit.occurrences,
                "percent": (hit.occurrence_percent * 1e4).round() / 1e4,
                "files": rule.files,
                "strategy": rule.strategy,
            }))
        })
        .collect();
    Value::Array(fired)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, percent: f64) -> FunctionRow {
        FunctionRow {
            name: name.into(),
            self_weight: 0,
            self_percent: 0.0,
            total_weight: 0,
            total_percent: 0.0,
            occurrences: (percent * 10.0) as u64,
            occurrence_percent: percent,
        }
    }

    #[test]
    fn a_rule_fires_once_on_its_first_function_over_the_threshold() {
        let rows = [
            row("kspin::SpinNoIrq::lock", 0.2),
            row("core::intrinsics::copy_nonoverlapping", 12.5),
            row("memcpy", 9.0),
            row("axsync::Mutex::lock", 3.0),
        ];
        let fired = fix_candidates(&rows, 0.3);
        let ids: Vec<&str> = fired
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["lock_contention", "copy_overhead"]);
        assert_eq!(
            fired[0]["trigger"], "axsync::Mutex::lock",
            "the spinlock is under 0.3 %"
        );
        assert_eq!(fired[1]["samples"], 125);
        assert_eq!(fix_candidates(&rows, 50.0), json!([]));
    }
}
