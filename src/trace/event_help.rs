//! `perfscope trace -e EVENT help`: an event's fields as its tracefs format defines them
//! (name, C type, offset, size) and ready command lines using them, so a filter, a key or
//! a `top-by=` can be written without opening the format file. Pure text from a layout.

use crate::trace::event::{EventLayout, FieldLayout};

/// The C type of a field: its declaration without the name (`char prev_comm[16]` →
/// `char[16]`, `__data_loc char[] name` → `__data_loc char[]`).
pub fn field_type(field: &FieldLayout) -> String {
    let declaration = field.declaration.trim();
    match declaration.rfind(field.name.as_str()) {
        Some(at) => {
            let (before, after) = (&declaration[..at], &declaration[at + field.name.len()..]);
            format!("{}{}", before.trim_end(), after.trim())
        }
        None => declaration.to_string(),
    }
}

/// The help text of `layout`, as `profiler` (`trace`, `top`, …) would use it; the
/// command lines name the event `selector` (its `sys:name`, or the probe as written: a
/// probe's tracefs name lives only as long as the session that defined it).
pub fn event_help(layout: &EventLayout, profiler: &str, selector: &str) -> String {
    let full = layout.full_name();
    let type_width = layout
        .fields
        .iter()
        .map(|f| field_type(f).len())
        .max()
        .unwrap_or(0)
        .max("TYPE".len());
    let name_width = layout
        .fields
        .iter()
        .map(|f| f.name.len())
        .max()
        .unwrap_or(0)
        .max("FIELD".len());
    let mut out = format!("{full} (id {})\n", layout.id);
    out.push_str(&format!(
        "  {:<name_width$}  {:<type_width$}  {:>6}  {:>4}\n",
        "FIELD", "TYPE", "OFFSET", "SIZE"
    ));
    for field in &layout.fields {
        out.push_str(&format!(
            "  {:<name_width$}  {:<type_width$}  {:>6}  {:>4}\n",
            field.name,
            field_type(field),
            field.offset,
            field.size
        ));
    }
    out.push_str(&format!("print fmt: {}\n", layout.print_fmt));
    out.push_str(&format!("\n{}\n", example(layout, profiler, selector)));
    out
}

/// A ready command line: a filter on the event's own fields (integers compared with a
/// number, strings with a glob) and the `stack` attribute.
fn example(layout: &EventLayout, profiler: &str, selector: &str) -> String {
    let own: Vec<&FieldLayout> = layout
        .fields
        .iter()
        .filter(|f| !f.name.starts_with("common_"))
        .collect();
    let terms: Vec<String> = own
        .iter()
        .take(2)
        .map(|f| {
            if f.is_string() {
                format!("{}~\"*\"", f.name)
            } else {
                format!("{}>=0", f.name)
            }
        })
        .collect();
    let filter = terms.join("&&");
    let mut text = format!("perfscope {profiler} -e '{selector}/{filter}/stack/'");
    if let Some(number) = own.iter().find(|f| !f.is_string()) {
        text.push_str(&format!(
            "\nperfscope top -e '{selector}//key=_pid/top-by={}/'",
            number.name
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::event::FieldKind;

    fn field(name: &str, declaration: &str, offset: usize, size: usize, kind: FieldKind) -> FieldLayout {
        FieldLayout {
            name: name.into(),
            declaration: declaration.into(),
            offset,
            size,
            kind,
        }
    }

    #[test]
    fn types_are_declarations_without_the_name() {
        let comm = field("prev_comm", "char prev_comm[16]", 8, 16, FieldKind::CharArray);
        assert_eq!(field_type(&comm), "char[16]");
        let pid = field("prev_pid", "pid_t prev_pid", 24, 4, FieldKind::Signed);
        assert_eq!(field_type(&pid), "pid_t");
        let loc = field(
            "filename",
            "__data_loc char[] filename",
            8,
            4,
            FieldKind::DataLoc { is_string: true },
        );
        assert_eq!(field_type(&loc), "__data_loc char[]");
    }

    #[test]
    fn help_lists_every_field_and_an_example_on_them() {
        let layout = EventLayout {
            system: "sched".into(),
            name: "sched_switch".into(),
            id: 316,
            fields: vec![
                field(
                    "common_type",
                    "unsigned short common_type",
                    0,
                    2,
                    FieldKind::Unsigned,
                ),
                field("prev_comm", "char prev_comm[16]", 8, 16, FieldKind::CharArray),
                field("prev_pid", "pid_t prev_pid", 24, 4, FieldKind::Signed),
            ],
            print_fmt: "\"prev_comm=%s\", REC->prev_comm".into(),
        };
        let text = event_help(&layout, "trace", &layout.full_name());
        assert!(text.starts_with("sched:sched_switch (id 316)\n"), "{text}");
        assert!(
            text.contains("  prev_comm    char[16]             8    16\n"),
            "{text}"
        );
        assert!(
            text.contains("  prev_pid     pid_t               24     4\n"),
            "{text}"
        );
        assert!(
            text.contains("perfscope trace -e 'sched:sched_switch/prev_comm~\"*\"&&prev_pid>=0/stack/'"),
            "{text}"
        );
        assert!(text.contains("top-by=prev_pid/"), "{text}");
    }
}
