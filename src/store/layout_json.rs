//! [`EventLayout`] as JSON (`event_types.layout_json`), so a replay or an SQL query decodes
//! events with the layout the kernel published at record time — no tracefs needed later.
//!
//! Written by hand rather than derived: the layout types are the lead's shared contract
//! and stay free of serde.

use serde_json::{Value, json};

use crate::trace::event::{EventLayout, FieldKind, FieldLayout};

pub fn layout_to_json(layout: &EventLayout) -> String {
    let fields: Vec<Value> = layout
        .fields
        .iter()
        .map(|f| {
            let (kind, element_size, is_string) = match f.kind {
                FieldKind::Unsigned => ("unsigned", None, None),
                FieldKind::Signed => ("signed", None, None),
                FieldKind::CharArray => ("char_array", None, None),
                FieldKind::DataLoc { is_string } => ("data_loc", None, Some(is_string)),
                FieldKind::RelLoc { is_string } => ("rel_loc", None, Some(is_string)),
                FieldKind::Array { element_size } => ("array", Some(element_size), None),
            };
            let mut v = json!({
                "name": f.name,
                "declaration": f.declaration,
                "offset": f.offset,
                "size": f.size,
                "kind": kind,
            });
            if let Some(e) = element_size {
                v["element_size"] = json!(e);
            }
            if let Some(s) = is_string {
                v["is_string"] = json!(s);
            }
            v
        })
        .collect();
    json!({
        "system": layout.system,
        "name": layout.name,
        "id": layout.id,
        "print_fmt": layout.print_fmt,
        "fields": fields,
    })
    .to_string()
}

pub fn layout_from_json(text: &str) -> Result<EventLayout, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let str_of = |v: &Value, key: &str| -> Result<String, String> {
        v.get(key)
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| format!("missing text `{key}`"))
    };
    let usize_of = |v: &Value, key: &str| -> Result<usize, String> {
        v.get(key)
            .and_then(Value::as_u64)
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| format!("missing number `{key}`"))
    };
    let mut fields = Vec::new();
    for f in v
        .get("fields")
        .and_then(Value::as_array)
        .ok_or("missing `fields`")?
    {
        let is_string = || f.get("is_string").and_then(Value::as_bool).unwrap_or(false);
        let kind = match str_of(f, "kind")?.as_str() {
            "unsigned" => FieldKind::Unsigned,
            "signed" => FieldKind::Signed,
            "char_array" => FieldKind::CharArray,
            "data_loc" => FieldKind::DataLoc {
                is_string: is_string(),
            },
            "rel_loc" => FieldKind::RelLoc {
                is_string: is_string(),
            },
            "array" => FieldKind::Array {
                element_size: usize_of(f, "element_size")?,
            },
            other => return Err(format!("unknown field kind `{other}`")),
        };
        fields.push(FieldLayout {
            name: str_of(f, "name")?,
            declaration: str_of(f, "declaration")?,
            offset: usize_of(f, "offset")?,
            size: usize_of(f, "size")?,
            kind,
        });
    }
    Ok(EventLayout {
        system: str_of(&v, "system")?,
        name: str_of(&v, "name")?,
        id: v.get("id").and_then(Value::as_u64).ok_or("missing number `id`")?,
        fields,
        print_fmt: str_of(&v, "print_fmt")?,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A sched_switch layout as kernel 6.x publishes it.
    pub fn sched_switch() -> EventLayout {
        let f = |name: &str, declaration: &str, offset, size, kind| FieldLayout {
            name: name.into(),
            declaration: declaration.into(),
            offset,
            size,
            kind,
        };
        EventLayout {
            system: "sched".into(),
            name: "sched_switch".into(),
            id: 316,
            fields: vec![
                f(
                    "common_type",
                    "unsigned short common_type",
                    0,
                    2,
                    FieldKind::Unsigned,
                ),
                f(
                    "common_flags",
                    "unsigned char common_flags",
                    2,
                    1,
                    FieldKind::Unsigned,
                ),
                f(
                    "common_preempt_count",
                    "unsigned char common_preempt_count",
                    3,
                    1,
                    FieldKind::Unsigned,
                ),
                f("common_pid", "int common_pid", 4, 4, FieldKind::Signed),
                f("prev_comm", "char prev_comm[16]", 8, 16, FieldKind::CharArray),
                f("prev_pid", "pid_t prev_pid", 24, 4, FieldKind::Signed),
                f("prev_prio", "int prev_prio", 28, 4, FieldKind::Signed),
                f("prev_state", "long prev_state", 32, 8, FieldKind::Signed),
                f("next_comm", "char next_comm[16]", 40, 16, FieldKind::CharArray),
                f("next_pid", "pid_t next_pid", 56, 4, FieldKind::Signed),
                f("next_prio", "int next_prio", 60, 4, FieldKind::Signed),
            ],
            print_fmt: "\"prev_comm=%s prev_pid=%d\", REC->prev_comm, REC->prev_pid".into(),
        }
    }

    #[test]
    fn layouts_round_trip_through_json() {
        let mut layout = sched_switch();
        layout.fields.push(FieldLayout {
            name: "args".into(),
            declaration: "unsigned long args[6]".into(),
            offset: 64,
            size: 48,
            kind: FieldKind::Array { element_size: 8 },
        });
        layout.fields.push(FieldLayout {
            name: "name".into(),
            declaration: "__data_loc char[] name".into(),
            offset: 112,
            size: 4,
            kind: FieldKind::DataLoc { is_string: true },
        });
        layout.fields.push(FieldLayout {
            name: "rel".into(),
            declaration: "__rel_loc u8[] rel".into(),
            offset: 116,
            size: 4,
            kind: FieldKind::RelLoc { is_string: false },
        });
        assert_eq!(layout_from_json(&layout_to_json(&layout)), Ok(layout));
        assert!(layout_from_json("{\"system\":1}").is_err());
        assert!(layout_from_json("not json").is_err());
    }
}
