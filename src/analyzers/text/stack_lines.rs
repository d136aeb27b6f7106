//! An event's stack printed under its raw line, as perf-prof prints a callchain (the
//! `trace` events' and the `--than` offenders' stacks alike).

use crate::model::frames::FrameKind;
use crate::model::stack::StackId;
use crate::model::tables::ProfileTables;

use crate::model::text::escape_controls;

/// Callchain words at or above this are `PERF_CONTEXT_*` markers, not addresses.
const CONTEXT_MARKERS: u64 = (-4095i64) as u64;

/// An event's stack under its line, leaf first, as perf-prof prints a callchain:
/// `    <address %016x> function (module)` per frame (inlined ones too, at their caller's
/// address), the comm root left out. `callchain` is the event's raw chain: its addresses
/// are the stack's locations leaf first, one each; when they do not line up (a chain the
/// resolver could not read), the frames print without addresses.
pub fn stack_lines(tables: &ProfileTables, stack: StackId, callchain: &[u64]) -> String {
    let locations: Vec<_> = tables
        .stacks
        .locations(stack)
        .iter()
        .rev()
        .filter(|&&l| {
            let lines = &tables.locations.get(l).lines;
            !lines
                .iter()
                .all(|line| tables.frames.origin(line.frame).kind == FrameKind::Pseudo)
        })
        .collect();
    let addresses: Vec<u64> = callchain
        .iter()
        .copied()
        .filter(|&ip| ip < CONTEXT_MARKERS)
        .collect();
    let aligned = addresses.len() == locations.len();
    let mut out = String::new();
    for (i, &&location) in locations.iter().enumerate() {
        for line in tables.locations.get(location).lines.iter() {
            let origin = tables.frames.origin(line.frame);
            if origin.kind == FrameKind::Pseudo {
                continue;
            }
            out.push_str("    ");
            if aligned {
                out.push_str(&format!("{:016x} ", addresses[i]));
            }
            out.push_str(&escape_controls(tables.frames.name(line.frame)));
            if let Some(module) = &origin.module {
                out.push_str(&format!(" ({module})"));
            }
            out.push('\n');
        }
    }
    out
}
