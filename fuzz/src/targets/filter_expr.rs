//! The filter/expression language (`filter`, `key=`, `top-by=`, `printkey=`): an
//! expression, then a NUL, then the bytes of a record. The expression parses or is refused,
//! binds against a real `sched_switch` layout or is refused, and evaluates over any record
//! (short, long, garbage) to a value or `None`: never a panic.

use perfscope::sources::tracefs::parse_format;
use perfscope::trace::event::{EventIndex, EventLayout, TraceEvent};
use perfscope::trace::expr::{Expr, Filter};

pub const DICTIONARY: &[&[u8]] = &[
    b"prev_comm",
    b"next_pid",
    b"prev_state",
    b"common_pid",
    b"_cpu",
    b"_time",
    b"key",
    b"==",
    b"!=",
    b"~",
    b"&&",
    b"||",
    b"<<",
    b">>",
    b"?",
    b":",
    b"(",
    b")",
    b"[",
    b"]",
    b"\"",
    b"'",
    b"*",
    b"printf(",
    b"ksymbol(",
    b"strncmp(",
    b"%s",
    b"%d",
    b"%*c",
    b"\0",
];

/// A real kernel's sched_switch layout (the seed file of the format target).
fn layout() -> EventLayout {
    static LAYOUT: std::sync::OnceLock<EventLayout> = std::sync::OnceLock::new();
    LAYOUT
        .get_or_init(|| {
            parse_format(
                "sched",
                "sched_switch",
                include_str!("../../seeds/tracefs_format/sched_switch.format"),
            )
            .expect("the sched_switch seed parses")
        })
        .clone()
}

pub fn run(data: &[u8]) {
    let split = data.iter().position(|&b| b == 0).unwrap_or(data.len());
    let text = String::from_utf8_lossy(&data[..split]);
    let raw = data.get(split + 1..).unwrap_or(&[]);
    let layout = layout();
    let event = TraceEvent {
        time_ns: 42,
        cpu: 1,
        pid: 7,
        tid: 8,
        event: EventIndex(0),
        raw,
        callchain: &[0xffff_ffff_8100_0000],
        rebuilt: false,
    };

    if let Ok(filter) = Filter::compile(&text, &layout) {
        let _ = filter.matches(&event);
    }
    let Ok(expr) = Expr::parse(&text) else {
        return;
    };
    if let Ok(bound) = expr.bind(&layout) {
        let value = bound.eval(&event).map(|v| v.to_string());
        let int = bound.eval_int(&event);
        if let (Some(value), Some(int)) = (value, int) {
            assert_eq!(value, int.to_string(), "eval and eval_int agree");
        }
    }
    if let Ok(bound) = expr.bind_vars(&["key"]) {
        let key = raw
            .iter()
            .fold(0i64, |k, &b| k.wrapping_mul(31).wrapping_add(i64::from(b)));
        let _ = bound.eval_vars(&[key]).map(|v| v.to_string());
    }
}
