//! A tracefs `events/SYS/NAME/format` file, as a kernel (or a hostile mount) writes it:
//! the parser must give a layout or an error naming the line. A layout it gives must then
//! work everywhere a layout goes: its `print fmt:` compiles or is refused, an event of any
//! bytes renders (the print fmt, else the fields) without panicking, the selector binds
//! against it, and the session store's JSON form reads back as the same layout.

use perfscope::sources::tracefs::{PrintFmt, bind_event, format_fields, parse_format, parse_selectors};
use perfscope::store::layout_json::{layout_from_json, layout_to_json};
use perfscope::trace::event::{EventIndex, TraceEvent};

pub const DICTIONARY: &[&[u8]] = &[
    b"name: ",
    b"ID: ",
    b"format:\n",
    b"\tfield:",
    b"offset:",
    b"size:",
    b"signed:",
    b"__data_loc char[] ",
    b"unsigned long",
    b"char comm[16]",
    b"print fmt: ",
    b"REC->",
    b"__get_str(",
    b"__print_flags(",
    b"__print_symbolic(",
    b"%s",
    b"%pS",
    b"%*ph",
    b";\t",
];

pub fn run(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let Ok(layout) = parse_format("fuzz", "event", &text) else {
        return;
    };
    let back = layout_from_json(&layout_to_json(&layout)).expect("a parsed layout's JSON reads back");
    assert_eq!(back, layout, "the store keeps a layout as it was");

    let size = layout
        .fields
        .iter()
        .map(|f| f.offset.saturating_add(f.size))
        .max()
        .unwrap_or(0)
        .min(1 << 16);
    let zeroes = vec![0u8; size];
    let ones = vec![0xffu8; size];
    for raw in [&zeroes[..], &ones[..], data] {
        let event = TraceEvent {
            time_ns: 1,
            cpu: 0,
            pid: 1,
            tid: 1,
            event: EventIndex(0),
            raw,
            callchain: &[],
            rebuilt: false,
        };
        if let Ok(print) = PrintFmt::compile(&layout) {
            let _ = print.render(&event);
        }
        let _ = format_fields(&layout, raw);
    }
    if let Some(field) = layout.fields.last()
        && let Ok(specs) = parse_selectors(&format!("fuzz:event/{0} != 0/key={0}/", field.name))
    {
        for spec in specs {
            let _ = bind_event(spec, layout.clone());
        }
    }
}
