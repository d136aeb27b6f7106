//! The stacks of the `--than` offenders (multi-trace, rundelay, syscalls with a `stack`
//! event): each offending pair's event callchains are named and interned as samples —
//! so the Flamegraph, the live modes and windows aggregate them like any stack — and
//! each pair learns its stacks' ids, so its raw lines print the stacks under the events
//! as perf-prof does. Memory stays with distinct stacks: a pair keeps two ids, the slice
//! store counts stacks, nothing keeps every callchain.

use crate::analyzers::latency::SlowPair;
use crate::model::Sample;
use crate::sources::perf_event::callchain::Callchain;
use crate::trace::event::OwnedTraceEvent;

use super::raw::{RawItem, RawSample};
use super::sample_resolver::SampleResolver;

/// An offender's event as a sample of its callchain; `None` without one.
fn raw_sample(event: &OwnedTraceEvent) -> Option<RawSample> {
    // The owned chain is the kernel's words (markers included), little-endian in memory.
    let bytes: Vec<u8> = event.callchain.iter().flat_map(|w| w.to_le_bytes()).collect();
    let chain = Callchain::from_bytes(&bytes);
    let kernel: Vec<u64> = chain.kernel_ips().collect();
    let user: Vec<u64> = chain.user_ips().collect();
    if kernel.is_empty() && user.is_empty() {
        return None;
    }
    Some(RawSample {
        time_ns: event.time_ns,
        pid: event.pid,
        tid: event.tid,
        cpu: event.cpu,
        in_kernel: !kernel.is_empty(),
        ip: kernel.first().or(user.first()).copied(),
        // A tracepoint record has no period.
        period: 0,
        kernel,
        user,
    })
}

/// Resolve the callchains of `pairs`' first and second events: sets each pair's
/// `stacks` and appends one sample per stack to `samples` (in the pairs' order).
pub fn resolve_offender_stacks(
    resolver: &mut SampleResolver,
    pairs: &mut [SlowPair],
    samples: &mut Vec<Sample>,
) {
    for pair in pairs {
        for (slot, event) in [&pair.first, &pair.second].into_iter().enumerate() {
            let Some(raw) = raw_sample(event) else {
                continue;
            };
            let before = samples.len();
            resolver.resolve(vec![RawItem::Sample(raw)], samples);
            pair.stacks[slot] = samples.get(before).map(|s| s.stack);
        }
    }
}
