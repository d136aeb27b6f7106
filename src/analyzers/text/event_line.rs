//! The raw event line of `--than` dumps (perf-prof's `tp_print_event`):
//! `<prefix><marker> <comm %16s> <tid %6u> <lat-flags> [<cpu %03d>] <sec>.<usec %06>: <sys>:<name>: <fields>`,
//! and the line of perf-prof's other printer, libtraceevent's (`tep__print_event`, used by
//! task-state, blktrace and kvm-exit): `<prefix><comm %16s> <tid %6u> <5 lat-flags> [...]`
//! with the time rounded to the microsecond.

use super::{UNKNOWN_COMM, WallClock};
use crate::analyzers::latency::{PairPrint, SlowPair};
use crate::model::stack::StackId;
use crate::model::text::escape_controls;
use crate::trace::event::{EventLayout, TraceEvent};

// `common_flags` bits (include/linux/trace_events.h, 6.x).
const IRQS_OFF: u64 = 0x01;
/// 0x02 was `TRACE_FLAG_IRQS_NOSUPPORT` (printed `X`) before 6.12; it is
/// `NEED_RESCHED_LAZY` since, which is what a 6.18 kernel sets.
const NEED_RESCHED_LAZY: u64 = 0x02;
const NEED_RESCHED: u64 = 0x04;
const HARDIRQ: u64 = 0x08;
const SOFTIRQ: u64 = 0x10;
const PREEMPT_RESCHED: u64 = 0x20;
const NMI: u64 = 0x40;
const BH_OFF: u64 = 0x80;

/// The latency flags of an event as perf-prof prints them: irqs-off, need-resched,
/// hard/soft irq, then the preempt depth (`d..3`, `dNh4`, `...1`; `....` at depth 0;
/// the low and high preempt-count nibbles in hex, each only when non-zero).
pub fn latency_flags(flags: u64, preempt_count: u64) -> String {
    let irqs_off = match (flags & IRQS_OFF != 0, flags & BH_OFF != 0) {
        (true, true) => 'D',
        (true, false) => 'd',
        (false, true) => 'b',
        (false, false) => '.',
    };
    let need_resched = match flags & (NEED_RESCHED | NEED_RESCHED_LAZY | PREEMPT_RESCHED) {
        f if f == NEED_RESCHED | NEED_RESCHED_LAZY | PREEMPT_RESCHED => 'B',
        f if f == NEED_RESCHED | PREEMPT_RESCHED => 'N',
        f if f == NEED_RESCHED | NEED_RESCHED_LAZY => 'L',
        f if f == NEED_RESCHED_LAZY | PREEMPT_RESCHED => 'b',
        NEED_RESCHED => 'n',
        NEED_RESCHED_LAZY => 'l',
        PREEMPT_RESCHED => 'p',
        _ => '.',
    };
    let (nmi, hardirq, softirq) = (flags & NMI != 0, flags & HARDIRQ != 0, flags & SOFTIRQ != 0);
    let hardsoft = match (nmi, hardirq, softirq) {
        (true, true, _) => 'Z',
        (true, false, _) => 'z',
        (false, true, true) => 'H',
        (false, true, false) => 'h',
        (false, false, true) => 's',
        (false, false, false) => '.',
    };
    let mut out = format!("{irqs_off}{need_resched}{hardsoft}");
    if preempt_count == 0 {
        out.push('.');
    } else {
        if preempt_count & 0xf != 0 {
            out.push_str(&format!("{:x}", preempt_count & 0xf));
        }
        if preempt_count & 0xf0 != 0 {
            out.push_str(&format!("{:x}", (preempt_count >> 4) & 0xf));
        }
    }
    out
}

/// libtraceevent's latency flags (`data_latency_format`): irqs-off (`d`), need-resched
/// (`N`, lazy `L`), hard/soft irq (`H`, `h`, `s`), then the preempt count's low and high
/// nibbles, each `.` at zero — always five characters (`d..3.`).
pub fn tep_latency_flags(flags: u64, preempt_count: u64) -> String {
    let (hardirq, softirq) = (flags & HARDIRQ != 0, flags & SOFTIRQ != 0);
    let nibble = |n: u64| match n & 0xf {
        0 => ".".to_string(),
        n => format!("{n:x}"),
    };
    format!(
        "{}{}{}{}{}",
        if flags & IRQS_OFF != 0 { 'd' } else { '.' },
        match (flags & NEED_RESCHED != 0, flags & NEED_RESCHED_LAZY != 0) {
            (true, _) => 'N',
            (false, true) => 'L',
            _ => '.',
        },
        match (hardirq, softirq) {
            (true, true) => 'H',
            (true, false) => 'h',
            (false, true) => 's',
            _ => '.',
        },
        nibble(preempt_count),
        nibble(preempt_count >> 4),
    )
}

/// One raw event line (with its `\n`). `wall` is the event's time on the wall clock,
/// `marker` is `' '` for host events (`'G'` for guest ones), `comm_of` names the event's
/// thread, `fields_text` renders the fields (the print-fmt text).
pub fn event_line(
    wall: &WallClock,
    marker: char,
    event: &TraceEvent<'_>,
    layout: &EventLayout,
    comm_of: &dyn Fn(u32) -> Option<String>,
    fields_text: &dyn Fn(&TraceEvent<'_>, &EventLayout) -> String,
) -> String {
    prefixed_event_line(&wall.prefix(), marker, event, layout, comm_of, fields_text)
}

/// An event line after `prefix` instead of the time stamp (a `--detail` gutter, padded to
/// the stamp's 27 columns so the events line up).
pub fn prefixed_event_line(
    prefix: &str,
    marker: char,
    event: &TraceEvent<'_>,
    layout: &EventLayout,
    comm_of: &dyn Fn(u32) -> Option<String>,
    fields_text: &dyn Fn(&TraceEvent<'_>, &EventLayout) -> String,
) -> String {
    let (comm, flags, preempt_count) = common_fields(event, layout, comm_of);
    format!(
        "{prefix:<27}{marker} {comm:>16} {:>6} {} [{:03}] {}.{:06}: {}:{}: {}{}\n",
        event.tid,
        latency_flags(flags, preempt_count),
        event.cpu,
        event.time_ns / 1_000_000_000,
        event.time_ns % 1_000_000_000 / 1_000,
        layout.system,
        layout.name,
        escape_controls(&fields_text(event, layout)),
        rebuilt_mark(event)
    )
}

/// What follows an event perfscope rebuilt (a `sched_switch` the kernel did not deliver,
/// made from its switch records): every listing of events says which ones it made.
pub const REBUILT_MARK: &str = "  [rebuilt by perfscope]";

fn rebuilt_mark(event: &TraceEvent<'_>) -> &'static str {
    if event.rebuilt { REBUILT_MARK } else { "" }
}

/// What both printers read of an event: its thread's name (as text: the name is whatever
/// the traced program put there), `common_flags` and `common_preempt_count`.
fn common_fields(
    event: &TraceEvent<'_>,
    layout: &EventLayout,
    comm_of: &dyn Fn(u32) -> Option<String>,
) -> (String, u64, u64) {
    let read = |name: &str| {
        layout
            .field(name)
            .and_then(|f| f.read_u64(event.raw))
            .unwrap_or(0)
    };
    let comm = escape_controls(&comm_of(event.tid).unwrap_or_else(|| UNKNOWN_COMM.into())).into_owned();
    (comm, read("common_flags"), read("common_preempt_count"))
}

/// An event line as libtraceevent prints it after `prefix` (see the module's doc).
pub fn tep_event_line(
    prefix: &str,
    event: &TraceEvent<'_>,
    layout: &EventLayout,
    comm_of: &dyn Fn(u32) -> Option<String>,
    fields_text: &dyn Fn(&TraceEvent<'_>, &EventLayout) -> String,
) -> String {
    let (comm, flags, preempt_count) = common_fields(event, layout, comm_of);
    let micros = event.time_ns.saturating_add(500) / 1_000;
    format!(
        "{prefix}{comm:>16} {:>6} {} [{:03}] {}.{:06}: {}:{}: {}{}\n",
        event.tid,
        tep_latency_flags(flags, preempt_count),
        event.cpu,
        micros / 1_000_000,
        micros % 1_000_000,
        layout.system,
        layout.name,
        escape_controls(&fields_text(event, layout)),
        rebuilt_mark(event)
    )
}

/// How a pair's event stacks print under their lines (`stack` attribute): the stack's
/// lines for an interned stack and the event's raw callchain; `None` prints no stacks.
pub type StackText<'a> = Option<&'a dyn Fn(StackId, &[u64]) -> String>;

/// The `--than` dump of slow pairs: for each, the first and the second event's raw line
/// (perf-prof prints them before the interval's table), each followed by its stack when
/// the event has one. `wall_of` turns an event's perf timestamp into wall-clock time;
/// events whose layout is unknown are skipped.
pub fn slow_pair_lines(
    pairs: &[SlowPair],
    layouts: &[EventLayout],
    wall_of: &dyn Fn(u64) -> WallClock,
    comm_of: &dyn Fn(u32) -> Option<String>,
    fields_text: &dyn Fn(&TraceEvent<'_>, &EventLayout) -> String,
    stack_text: StackText<'_>,
) -> String {
    let mut out = String::new();
    for pair in pairs {
        let line = |prefix: &str, owned: &crate::trace::event::OwnedTraceEvent| {
            let event = owned.as_event();
            let layout = layouts.get(usize::from(event.event.0))?;
            Some(match pair.print {
                PairPrint::TraceLines | PairPrint::Event => {
                    prefixed_event_line(prefix, ' ', &event, layout, comm_of, fields_text)
                }
                PairPrint::TepLines | PairPrint::TaskState { .. } => {
                    tep_event_line(prefix, &event, layout, comm_of, fields_text)
                }
            })
        };
        let stack =
            |slot: usize, owned: &crate::trace::event::OwnedTraceEvent| match (stack_text, pair.stacks[slot])
            {
                (Some(text), Some(id)) => text(id, &owned.callchain),
                _ => String::new(),
            };
        if let PairPrint::TaskState { pid, run_delay } = pair.print {
            // perf-prof stamps it when it prints, just after the pair's second event.
            out.push_str(&format!(
                "{} task-state: {pid} {} {} {} ms\n",
                wall_of(pair.second.time_ns).prefix(),
                escape_controls(&comm_of(pid).unwrap_or_else(|| UNKNOWN_COMM.into())),
                if run_delay { "RUNDELAY" } else { "WAIT" },
                pair.latency_ns / 1_000_000
            ));
        }
        if pair.print == PairPrint::Event {
            // One event over the threshold: its line and its stack.
            out.extend(line(&wall_of(pair.second.time_ns).prefix(), &pair.second));
            out.push_str(&stack(1, &pair.second));
            continue;
        }
        out.extend(line(&wall_of(pair.first.time_ns).prefix(), &pair.first));
        out.push_str(&stack(0, &pair.first));
        // `--detail`: the events between, in a gutter as perf-prof's — the first one
        // says how long the pair took.
        for (i, owned) in pair.detail.iter().enumerate() {
            let gutter = if i == 0 {
                format!("|+ {:.3} us", pair.latency_ns as f64 / 1000.0)
            } else {
                "|".to_string()
            };
            out.extend(line(&gutter, owned));
        }
        out.extend(line(&wall_of(pair.second.time_ns).prefix(), &pair.second));
        out.push_str(&stack(1, &pair.second));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyzers::latency::PairPrint;
    use crate::trace::event::{EventIndex, OwnedTraceEvent};

    fn switch(time_ns: u64, rebuilt: bool) -> OwnedTraceEvent {
        OwnedTraceEvent {
            time_ns,
            cpu: 1,
            pid: 7,
            tid: 7,
            event: EventIndex(0),
            raw: vec![0; 8],
            callchain: vec![],
            rebuilt,
        }
    }

    /// Every listing of events — trace lines, both printers, `--than` pairs and their
    /// `--detail` events — says which events perfscope rebuilt, and only those.
    #[test]
    fn rebuilt_events_are_marked_wherever_events_are_listed() {
        let layout = EventLayout {
            system: "sched".into(),
            name: "sched_switch".into(),
            id: 1,
            fields: vec![],
            print_fmt: String::new(),
        };
        let wall = WallClock {
            year: 2026,
            month: 12,
            day: 7,
            hour: 18,
            minute: 0,
            second: 0,
            microsecond: 0,
        };
        let comm = |_: u32| Some("dd".to_string());
        let fields = |_: &TraceEvent<'_>, _: &EventLayout| "prev_comm=dd".to_string();
        for rebuilt in [false, true] {
            let owned = switch(5_000, rebuilt);
            let line = event_line(&wall, ' ', &owned.as_event(), &layout, &comm, &fields);
            let tep = tep_event_line("", &owned.as_event(), &layout, &comm, &fields);
            for text in [&line, &tep] {
                assert_eq!(text.ends_with(&format!("{REBUILT_MARK}\n")), rebuilt, "{text}");
                assert!(text.contains("prev_comm=dd"), "{text}");
            }
        }
        let mut pair = SlowPair::new(
            switch(1_000, false),
            &switch(9_000, true).as_event(),
            8_000,
            PairPrint::TraceLines,
        );
        pair.detail = vec![switch(4_000, true), switch(5_000, false)];
        let text = slow_pair_lines(&[pair], &[layout], &|_| wall, &comm, &fields, None);
        let marked: Vec<bool> = text.lines().map(|l| l.ends_with(REBUILT_MARK)).collect();
        assert_eq!(marked, [false, true, false, true], "{text}");
    }

    #[test]
    fn flags_read_as_ftrace_prints_them() {
        assert_eq!(latency_flags(0, 1), "...1");
        assert_eq!(latency_flags(IRQS_OFF, 3), "d..3");
        assert_eq!(
            latency_flags(IRQS_OFF | NEED_RESCHED | PREEMPT_RESCHED, 3),
            "dN.3"
        );
        assert_eq!(
            latency_flags(IRQS_OFF | NEED_RESCHED | PREEMPT_RESCHED | HARDIRQ, 4),
            "dNh4"
        );
        assert_eq!(
            latency_flags(IRQS_OFF | NEED_RESCHED | PREEMPT_RESCHED | SOFTIRQ, 5),
            "dNs5"
        );
        assert_eq!(latency_flags(0, 0), "....");
        // libtraceevent's five: both nibbles, `.` at zero; no NMI or BH-off letters.
        assert_eq!(tep_latency_flags(IRQS_OFF, 3), "d..3.");
        assert_eq!(tep_latency_flags(0, 0), ".....");
        assert_eq!(tep_latency_flags(NEED_RESCHED | HARDIRQ | SOFTIRQ, 0x21), ".NH12");
        assert_eq!(
            tep_latency_flags(NEED_RESCHED_LAZY | SOFTIRQ | NMI | BH_OFF, 0x10),
            ".Ls.1"
        );
        assert_eq!(latency_flags(IRQS_OFF | BH_OFF | NMI | HARDIRQ, 0x21), "D.Z12");
        assert_eq!(latency_flags(NEED_RESCHED_LAZY, 0x10), ".l.1");
        assert_eq!(latency_flags(NEED_RESCHED | NEED_RESCHED_LAZY, 0), ".L..");
        assert_eq!(latency_flags(NMI | HARDIRQ | SOFTIRQ, 0), "..Z.");
        assert_eq!(latency_flags(HARDIRQ | SOFTIRQ, 0), "..H.");
        assert_eq!(
            latency_flags(NEED_RESCHED | NEED_RESCHED_LAZY | PREEMPT_RESCHED, 2),
            ".B.2"
        );
    }
}
