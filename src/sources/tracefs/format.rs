//! The `events/SYS/NAME/format` file → [`EventLayout`]: every `field:` line (common fields
//! included), the `ID:` and the `print fmt:` text. Nothing about a layout is assumed; a
//! line the parser does not understand is an error naming the line, not a guess.

use crate::trace::event::{EventLayout, FieldKind, FieldLayout};
use crate::trace::expr::ctype;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{system}:{name} format, line {line}: {message} (`{text}`)")]
pub struct FormatError {
    pub system: String,
    pub name: String,
    pub line: usize,
    pub message: String,
    pub text: String,
}

/// Parse a format file of event `system:name`. The name in the file wins if present.
pub fn parse_format(system: &str, name: &str, text: &str) -> Result<EventLayout, FormatError> {
    let mut layout = EventLayout {
        system: system.to_string(),
        name: name.to_string(),
        id: 0,
        fields: Vec::new(),
        print_fmt: String::new(),
    };
    let mut saw_id = false;
    let mut lines = text.lines().enumerate();
    while let Some((index, line)) = lines.next() {
        let error = |message: &str| FormatError {
            system: system.to_string(),
            name: name.to_string(),
            line: index + 1,
            message: message.to_string(),
            text: line.trim().to_string(),
        };
        let trimmed = line.trim();
        if let Some(rest) = trimmed.strip_prefix("name:") {
            layout.name = rest.trim().to_string();
        } else if let Some(rest) = trimmed.strip_prefix("ID:") {
            layout.id = rest.trim().parse().map_err(|_| error("the ID is not a number"))?;
            saw_id = true;
        } else if let Some(rest) = trimmed.strip_prefix("print fmt:") {
            // The last entry; some kernels' formats put real newlines inside its string
            // (ext4_fc_stats), so it runs to the end of the file.
            let mut print_fmt = rest.trim_start().to_string();
            for (_, more) in lines.by_ref() {
                print_fmt.push('\n');
                print_fmt.push_str(more);
            }
            layout.print_fmt = print_fmt.trim_end().to_string();
        } else if trimmed.starts_with("field:") {
            layout.fields.push(parse_field(trimmed).map_err(error)?);
        }
    }
    if !saw_id {
        return Err(FormatError {
            system: system.to_string(),
            name: name.to_string(),
            line: 0,
            message: "no `ID:` line; is this a tracefs format file?".into(),
            text: String::new(),
        });
    }
    Ok(layout)
}

/// `field:unsigned long args[6]; offset:16; size:48; signed:0;` (tab-separated)
fn parse_field(line: &str) -> Result<FieldLayout, &'static str> {
    let mut declaration = None;
    let (mut offset, mut size, mut signed) = (None, None, None);
    for part in line.split(';').map(str::trim).filter(|p| !p.is_empty()) {
        let Some((key, value)) = part.split_once(':') else {
            return Err("a part without ':'");
        };
        let value = value.trim();
        match key.trim() {
            "field" => declaration = Some(value),
            "offset" => offset = Some(value.parse().map_err(|_| "offset is not a number")?),
            "size" => size = Some(value.parse().map_err(|_| "size is not a number")?),
            "signed" => signed = Some(value == "1"),
            // Newer kernels may add keys; they do not change how the bytes are read.
            _ => {}
        }
    }
    let declaration = declaration.ok_or("no declaration")?;
    let offset: usize = offset.ok_or("no offset")?;
    let size: usize = size.ok_or("no size")?;
    let (name, array_len) = split_name(declaration).ok_or("no field name")?;
    let plain_char = ctype::element_type(declaration) == "char";
    let kind = if let Some(rest) = declaration.strip_prefix("__data_loc") {
        FieldKind::DataLoc {
            is_string: rest.trim_start().starts_with("char[]"),
        }
    } else if let Some(rest) = declaration.strip_prefix("__rel_loc") {
        FieldKind::RelLoc {
            is_string: rest.trim_start().starts_with("char[]"),
        }
    } else if let Some(len) = array_len {
        if plain_char {
            FieldKind::CharArray
        } else {
            let element_size = match len {
                Some(n) if n > 0 => size / n,
                // `unsigned long args[]` (size 0): the element type says it.
                _ => ctype::scalar_size(ctype::element_type(declaration)).unwrap_or(1),
            };
            FieldKind::Array { element_size }
        }
    } else if signed.unwrap_or(false) {
        FieldKind::Signed
    } else {
        FieldKind::Unsigned
    };
    if matches!(kind, FieldKind::Signed | FieldKind::Unsigned) && !matches!(size, 1 | 2 | 4 | 8) {
        // A by-value struct or an odd size: keep it readable as bytes.
        return Ok(FieldLayout {
            name: name.to_string(),
            declaration: declaration.to_string(),
            offset,
            size,
            kind: FieldKind::Array { element_size: 1 },
        });
    }
    Ok(FieldLayout {
        name: name.to_string(),
        declaration: declaration.to_string(),
        offset,
        size,
        kind,
    })
}

/// The field name of a declaration and, for `name[N]` / `name[]`, the array length
/// (`Some(None)` for `[]`).
fn split_name(declaration: &str) -> Option<(&str, Option<Option<usize>>)> {
    let last = declaration.split_whitespace().last()?;
    let last = last.trim_start_matches('*');
    match last.split_once('[') {
        Some((name, len)) => {
            let len = len.trim_end_matches(']').trim();
            Some((name, Some(len.parse().ok())))
        }
        None => Some((last, None)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(path: &str) -> EventLayout {
        let text = std::fs::read_to_string(format!(
            "{}/tests/fixtures/tracefs/events/{path}/format",
            env!("CARGO_MANIFEST_DIR")
        ))
        .expect("fixture exists");
        let (system, name) = path.split_once('/').expect("sys/name");
        parse_format(system, name, &text).expect("fixture parses")
    }

    fn kinds(layout: &EventLayout) -> Vec<(&str, usize, usize, FieldKind)> {
        layout
            .fields
            .iter()
            .map(|f| (f.name.as_str(), f.offset, f.size, f.kind))
            .collect()
    }

    const COMMON: [(&str, usize, usize, FieldKind); 4] = [
        ("common_type", 0, 2, FieldKind::Unsigned),
        ("common_flags", 2, 1, FieldKind::Unsigned),
        ("common_preempt_count", 3, 1, FieldKind::Unsigned),
        ("common_pid", 4, 4, FieldKind::Signed),
    ];

    #[test]
    fn sched_stat_runtime_on_6_18_has_a_data_loc_comm_and_no_vruntime() {
        let layout = fixture("sched/sched_stat_runtime");
        assert_eq!(
            (layout.system.as_str(), layout.name.as_str(), layout.id),
            ("sched", "sched_stat_runtime", 363)
        );
        let mut expected = COMMON.to_vec();
        expected.extend([
            ("comm", 8, 4, FieldKind::DataLoc { is_string: true }),
            ("pid", 12, 4, FieldKind::Signed),
            ("runtime", 16, 8, FieldKind::Unsigned),
        ]);
        assert_eq!(kinds(&layout), expected);
        assert_eq!(layout.fields[4].declaration, "__data_loc char[] comm");
        assert!(
            layout
                .print_fmt
                .starts_with("\"comm=%s pid=%d runtime=%Lu [ns]\"")
        );
    }

    #[test]
    fn sched_switch_char_arrays_and_signed_long() {
        let layout = fixture("sched/sched_switch");
        assert_eq!(layout.id, 372);
        assert_eq!(
            kinds(&layout)[4..],
            [
                ("prev_comm", 8, 16, FieldKind::CharArray),
                ("prev_pid", 24, 4, FieldKind::Signed),
                ("prev_prio", 28, 4, FieldKind::Signed),
                ("prev_state", 32, 8, FieldKind::Signed),
                ("next_comm", 40, 16, FieldKind::CharArray),
                ("next_pid", 56, 4, FieldKind::Signed),
                ("next_prio", 60, 4, FieldKind::Signed),
            ]
        );
    }

    #[test]
    fn sys_enter_args_is_an_array_of_longs() {
        let layout = fixture("raw_syscalls/sys_enter");
        assert_eq!(
            kinds(&layout)[4..],
            [
                ("id", 8, 8, FieldKind::Signed),
                ("args", 16, 48, FieldKind::Array { element_size: 8 }),
            ]
        );
        let exit = fixture("raw_syscalls/sys_exit");
        assert_eq!(
            kinds(&exit)[4..],
            [("id", 8, 8, FieldKind::Signed), ("ret", 16, 8, FieldKind::Signed)]
        );
    }

    #[test]
    fn other_real_formats() {
        let free = fixture("sched/sched_process_free");
        assert_eq!(
            free.field("pid").map(|f| f.offset),
            Some(12),
            "6.18 moved pid to 12"
        );
        let softirq = fixture("irq/softirq_entry");
        assert_eq!(kinds(&softirq)[4..], [("vec", 8, 4, FieldKind::Unsigned)]);
        let block = fixture("block/block_rq_complete");
        assert_eq!(block.field("rwbs").map(|f| f.kind), Some(FieldKind::CharArray));
        assert_eq!(
            block.field("cmd").map(|f| (f.offset, f.kind)),
            Some((44, FieldKind::DataLoc { is_string: true }))
        );
        assert_eq!(block.field("sector").map(|f| (f.offset, f.size)), Some((16, 8)));
        let kvm = fixture("kvm/kvm_exit");
        assert_eq!(
            kvm.field("guest_rip").map(|f| (f.offset, f.kind)),
            Some((16, FieldKind::Unsigned))
        );
        assert_eq!(kvm.fields.len(), 13);
        let dma = fixture("dma/dma_map_sg");
        assert_eq!(
            dma.field("truncated").map(|f| (f.size, f.kind)),
            Some((1, FieldKind::Unsigned))
        );
        assert_eq!(
            dma.field("phys_addrs").map(|f| f.kind),
            Some(FieldKind::DataLoc { is_string: false })
        );
        let print = fixture("ftrace/print");
        assert_eq!(
            print.field("buf").map(|f| (f.offset, f.size, f.kind)),
            Some((16, 0, FieldKind::CharArray))
        );
        let wakeup = fixture("sched/sched_wakeup");
        let wakeup_new = fixture("sched/sched_wakeup_new");
        assert_eq!(kinds(&wakeup)[4..], kinds(&wakeup_new)[4..]);
        assert_ne!(wakeup.id, wakeup_new.id);
    }

    #[test]
    fn rel_loc_pointers_and_bad_lines() {
        let text = "name: x\nID: 7\nformat:\n\tfield:__rel_loc char[] name;\toffset:8;\tsize:4;\tsigned:0;\n\tfield:void * ptr;\toffset:16;\tsize:8;\tsigned:0;\n\tfield:const char *s;\toffset:24;\tsize:8;\tsigned:0;\n\nprint fmt: \"%s\", __get_rel_str(name)\n";
        let layout = parse_format("t", "x", text).expect("parses");
        assert_eq!(
            kinds(&layout),
            [
                ("name", 8, 4, FieldKind::RelLoc { is_string: true }),
                ("ptr", 16, 8, FieldKind::Unsigned),
                ("s", 24, 8, FieldKind::Unsigned),
            ]
        );
        let multi_line = parse_format(
            "ext4",
            "ext4_fc_stats",
            "ID: 9\nformat:\n\nprint fmt: \"reasons:\n%s:%d\", \"a\",\n 1\n\n",
        )
        .expect("parses");
        assert_eq!(
            multi_line.print_fmt, "\"reasons:\n%s:%d\", \"a\",\n 1",
            "a print fmt with newlines runs to the end of the file"
        );
        let bad =
            parse_format("t", "x", "ID: 1\n\tfield:int a;\toffset:x;\tsize:4;\tsigned:1;\n").unwrap_err();
        assert_eq!((bad.line, bad.message.as_str()), (2, "offset is not a number"));
        assert!(parse_format("t", "x", "garbage").is_err());
    }
}
