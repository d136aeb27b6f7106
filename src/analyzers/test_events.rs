//! Test helpers: event layouts as the 6.18 tracefs format files publish them, and raw
//! records written through those layouts, so analyzer tests feed real-shaped bytes.

use crate::trace::event::{EventIndex, EventLayout, FieldKind, FieldLayout, TraceEvent};

/// A layout with the four common fields, then `fields` as `(name, size, kind)` packed in
/// order from offset 8.
pub fn layout(system: &str, name: &str, id: u64, fields: &[(&str, usize, FieldKind)]) -> EventLayout {
    let mut all = vec![
        FieldLayout::new("common_type", 0, 2, FieldKind::Unsigned),
        FieldLayout::new("common_flags", 2, 1, FieldKind::Unsigned),
        FieldLayout::new("common_preempt_count", 3, 1, FieldKind::Unsigned),
        FieldLayout::new("common_pid", 4, 4, FieldKind::Signed),
    ];
    let mut offset = 8;
    for &(name, size, kind) in fields {
        all.push(FieldLayout::new(name, offset, size, kind));
        offset += size;
    }
    EventLayout {
        system: system.into(),
        name: name.into(),
        id,
        fields: all,
        print_fmt: String::new(),
    }
}

pub fn sys_enter() -> EventLayout {
    layout(
        "raw_syscalls",
        "sys_enter",
        21,
        &[
            ("id", 8, FieldKind::Signed),
            ("args", 48, FieldKind::Array { element_size: 8 }),
        ],
    )
}

pub fn sys_exit() -> EventLayout {
    layout(
        "raw_syscalls",
        "sys_exit",
        20,
        &[("id", 8, FieldKind::Signed), ("ret", 8, FieldKind::Signed)],
    )
}

/// 6.18: `__data_loc char[] comm` at 8, `pid` at 12 (perf-prof assumes `comm[16]`, pid 24).
pub fn sched_process_free() -> EventLayout {
    layout(
        "sched",
        "sched_process_free",
        300,
        &[
            ("comm", 4, FieldKind::DataLoc { is_string: true }),
            ("pid", 4, FieldKind::Signed),
            ("prio", 4, FieldKind::Signed),
        ],
    )
}

pub fn sched_wakeup(name: &str, id: u64) -> EventLayout {
    layout(
        "sched",
        name,
        id,
        &[
            ("comm", 16, FieldKind::CharArray),
            ("pid", 4, FieldKind::Signed),
            ("prio", 4, FieldKind::Signed),
            ("target_cpu", 4, FieldKind::Signed),
        ],
    )
}

pub fn sched_switch() -> EventLayout {
    layout(
        "sched",
        "sched_switch",
        316,
        &[
            ("prev_comm", 16, FieldKind::CharArray),
            ("prev_pid", 4, FieldKind::Signed),
            ("prev_prio", 4, FieldKind::Signed),
            ("prev_state", 8, FieldKind::Signed),
            ("next_comm", 16, FieldKind::CharArray),
            ("next_pid", 4, FieldKind::Signed),
            ("next_prio", 4, FieldKind::Signed),
        ],
    )
}

/// A raw record of `layout` with `common_pid` = `pid` and the named fields set (integers
/// little-endian at their size, strings into `char[]` fields).
pub fn record(layout: &EventLayout, pid: u32, values: &[(&str, Value)]) -> Vec<u8> {
    let end = layout.fields.iter().map(|f| f.offset + f.size).max().unwrap_or(0);
    let mut raw = vec![0u8; end];
    raw[0..2].copy_from_slice(&(layout.id as u16).to_le_bytes());
    raw[4..8].copy_from_slice(&pid.to_le_bytes());
    for (name, value) in values {
        let f = layout.field(name).unwrap_or_else(|| panic!("no field {name}"));
        match value {
            Value::Int(v) => {
                let bytes = v.to_le_bytes();
                raw[f.offset..f.offset + f.size].copy_from_slice(&bytes[..f.size]);
            }
            Value::Str(s) => {
                let n = s.len().min(f.size - 1);
                raw[f.offset..f.offset + n].copy_from_slice(&s.as_bytes()[..n]);
            }
        }
    }
    raw
}

pub enum Value {
    Int(i64),
    Str(&'static str),
}

/// A borrowed event over `raw`.
pub fn event(index: u16, time_ns: u64, cpu: u32, tid: u32, raw: &[u8]) -> TraceEvent<'_> {
    TraceEvent {
        time_ns,
        cpu,
        pid: tid,
        tid,
        event: EventIndex(index),
        raw,
        callchain: &[],
        rebuilt: false,
    }
}

/// 6.18's `kvm:kvm_exit` (x86): `exit_reason` at 8, `guest_rip` at 16, `isa` at 24.
pub fn kvm_exit() -> EventLayout {
    layout(
        "kvm",
        "kvm_exit",
        103,
        &[
            ("exit_reason", 4, FieldKind::Unsigned),
            ("__pad", 4, FieldKind::Unsigned),
            ("guest_rip", 8, FieldKind::Unsigned),
            ("isa", 4, FieldKind::Unsigned),
        ],
    )
}

pub fn kvm_entry() -> EventLayout {
    layout("kvm", "kvm_entry", 115, &[("vcpu_id", 4, FieldKind::Unsigned)])
}

/// `timer:hrtimer_expire_entry` (`hrtimer`, `now`, `function`) and `hrtimer_start`.
pub fn hrtimer_expire_entry() -> EventLayout {
    layout(
        "timer",
        "hrtimer_expire_entry",
        90,
        &[
            ("hrtimer", 8, FieldKind::Unsigned),
            ("now", 8, FieldKind::Signed),
            ("function", 8, FieldKind::Unsigned),
        ],
    )
}

pub fn hrtimer_start() -> EventLayout {
    layout(
        "timer",
        "hrtimer_start",
        91,
        &[
            ("hrtimer", 8, FieldKind::Unsigned),
            ("function", 8, FieldKind::Unsigned),
        ],
    )
}

pub fn hrtimer_cancel() -> EventLayout {
    layout(
        "timer",
        "hrtimer_cancel",
        92,
        &[("hrtimer", 8, FieldKind::Unsigned)],
    )
}

/// A block request event as 6.18 lays it out: `dev` at 8, `sector` at 16 (8-aligned),
/// `nr_sector` at 24, then the event's own fields (`bytes`/`error`, `ioprio`, `rwbs`, …).
pub fn block(name: &str, id: u64) -> EventLayout {
    let mut layout = layout("block", name, id, &[]);
    let mut push = |name: &str, offset: usize, size: usize, kind: FieldKind| {
        layout.fields.push(FieldLayout::new(name, offset, size, kind));
    };
    push("dev", 8, 4, FieldKind::Unsigned);
    push("sector", 16, 8, FieldKind::Unsigned);
    push("nr_sector", 24, 4, FieldKind::Unsigned);
    match name {
        "block_getrq" => {
            push("rwbs", 28, 10, FieldKind::CharArray);
            push("comm", 38, 16, FieldKind::CharArray);
        }
        "block_rq_complete" => {
            push("error", 28, 4, FieldKind::Signed);
            push("ioprio", 32, 2, FieldKind::Unsigned);
            push("rwbs", 34, 10, FieldKind::CharArray);
        }
        _ => {
            push("bytes", 28, 4, FieldKind::Unsigned);
            push("ioprio", 32, 2, FieldKind::Unsigned);
            push("rwbs", 34, 10, FieldKind::CharArray);
            push("comm", 44, 16, FieldKind::CharArray);
        }
    }
    layout
}

/// `kmem:kmalloc` as 6.18 lays it out: `call_site`, `ptr`, `bytes_req`, `bytes_alloc`,
/// `gfp_flags`, `node`.
pub fn kmalloc() -> EventLayout {
    layout(
        "kmem",
        "kmalloc",
        400,
        &[
            ("call_site", 8, FieldKind::Unsigned),
            ("ptr", 8, FieldKind::Unsigned),
            ("bytes_req", 8, FieldKind::Unsigned),
            ("bytes_alloc", 8, FieldKind::Unsigned),
            ("gfp_flags", 8, FieldKind::Unsigned),
            ("node", 4, FieldKind::Signed),
        ],
    )
}

/// `kmem:kfree`: `call_site`, `ptr`.
pub fn kfree() -> EventLayout {
    layout(
        "kmem",
        "kfree",
        401,
        &[
            ("call_site", 8, FieldKind::Unsigned),
            ("ptr", 8, FieldKind::Unsigned),
        ],
    )
}
