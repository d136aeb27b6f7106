//! An event's stack printed under its raw line, as perf-prof prints a callchain (the
//! `trace` events' and the `--than` offenders' stacks alike).

use std::fmt::Write;

use crate::model::frames::FrameKind;
use crate::model::location::LocationId;
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
    let mut out = String::new();
    push_stack_lines(&mut out, tables, stack, callchain);
    out
}

/// [`stack_lines`] appended to `out`: a profile prints one per sample, thousands a
/// second, so nothing is built on the way.
pub fn push_stack_lines(out: &mut String, tables: &ProfileTables, stack: StackId, callchain: &[u64]) {
    visit_stack_frames(tables, stack, callchain, &mut |frame| {
        out.push_str("    ");
        if let Some(address) = frame.address {
            let _ = write!(out, "{address:016x} ");
        }
        out.push_str(&escape_controls(frame.function));
        if let Some(module) = frame.module {
            let _ = write!(out, " ({module})");
        }
        out.push('\n');
    });
}

/// One frame of an event's stack as [`stack_lines`] prints it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct StackFrame<'a> {
    /// The callchain address the frame's location came from; `None` for every frame when
    /// the chain does not line up with the stack's locations.
    pub address: Option<u64>,
    pub function: &'a str,
    pub module: Option<&'a str>,
}

/// The frames [`stack_lines`] prints, leaf first, handed to `visit` one by one: one walk
/// for the text and for files that keep the frames as data (offenders.json), so both
/// name the same frames at the same addresses.
pub fn visit_stack_frames(
    tables: &ProfileTables,
    stack: StackId,
    callchain: &[u64],
    visit: &mut dyn FnMut(StackFrame<'_>),
) {
    let printed = |location: &&LocationId| {
        !tables
            .locations
            .get(**location)
            .lines
            .iter()
            .all(|line| tables.frames.origin(line.frame).kind == FrameKind::Pseudo)
    };
    let locations = tables.stacks.locations(stack);
    let addresses = || callchain.iter().copied().filter(|&ip| ip < CONTEXT_MARKERS);
    let aligned = addresses().count() == locations.iter().filter(printed).count();
    let mut addresses = addresses();
    for location in locations.iter().rev().filter(printed) {
        let address = addresses.next().filter(|_| aligned);
        for line in tables.locations.get(*location).lines.iter() {
            let origin = tables.frames.origin(line.frame);
            if origin.kind == FrameKind::Pseudo {
                continue;
            }
            visit(StackFrame {
                address,
                function: tables.frames.name(line.frame),
                module: origin.module.as_deref(),
            });
        }
    }
}
