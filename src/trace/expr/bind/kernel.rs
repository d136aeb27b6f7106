//! Binding of what only a tracepoint's `print fmt:` says: `REC->field`, the C constants
//! the kernel left unresolved, and the kernel's print helpers (`__get_str`,
//! `__print_symbolic`, `__print_flags`, `__print_hex`, `__print_array`, ...), read as
//! libtraceevent reads them so lines come out as perf-prof prints them.

use super::super::ExprError;
use super::super::ast::{Node, NodeKind};
use super::super::eval::{self, Input};
use super::super::tree::{IntNode, StrNode};
use super::{Scope, Typed};
use crate::trace::event::{FieldKind, FieldLayout};

/// The helpers [`helper`] knows, for error messages.
pub(in crate::trace::expr) const HELPERS: [&str; 14] = [
    "__get_str",
    "__get_rel_str",
    "__get_dynamic_array",
    "__get_rel_dynamic_array",
    "__get_dynamic_array_len",
    "__get_rel_dynamic_array_len",
    "__print_symbolic",
    "__print_symbolic_u64",
    "__print_flags",
    "__print_flags_u64",
    "__print_hex",
    "__print_hex_str",
    "__print_array",
    "sizeof",
];

/// Enum names some format files keep unresolved, with the values libtraceevent gives them
/// (its `eval_flag` table): softirq vectors and hrtimer restart modes.
const KNOWN_CONSTANTS: [(&str, i64); 12] = [
    ("HI_SOFTIRQ", 0),
    ("TIMER_SOFTIRQ", 1),
    ("NET_TX_SOFTIRQ", 2),
    ("NET_RX_SOFTIRQ", 3),
    ("BLOCK_SOFTIRQ", 4),
    ("IRQ_POLL_SOFTIRQ", 5),
    ("TASKLET_SOFTIRQ", 6),
    ("SCHED_SOFTIRQ", 7),
    ("HRTIMER_SOFTIRQ", 8),
    ("RCU_SOFTIRQ", 9),
    ("HRTIMER_NORESTART", 0),
    ("HRTIMER_RESTART", 1),
];

fn known_constant(name: &str) -> Option<i64> {
    KNOWN_CONSTANTS
        .iter()
        .find(|(known, _)| *known == name)
        .map(|&(_, value)| value)
}

/// A bare name in a print fmt: a C constant. Only the few libtraceevent knows have a value;
/// any other is an enum whose value the format file does not give.
pub(super) fn constant(scope: &Scope<'_>, name: &str, pos: usize) -> Result<Typed, ExprError> {
    match known_constant(name) {
        Some(value) => Ok(Typed::Int(IntNode::Const(value), false)),
        None => Err(scope.error(
            format!("'{name}' is a C constant whose value the format file does not give"),
            pos,
        )),
    }
}

/// `REC->name`: the field `name` of the record.
pub(super) fn record_field<'s>(
    scope: &'s Scope<'_>,
    base: &Node,
    name: &str,
) -> Result<&'s FieldLayout, ExprError> {
    match &base.kind {
        NodeKind::Ident(record) if record == "REC" => scope.field(name, base.pos),
        _ => Err(scope.error("only REC->field names a field", base.pos)),
    }
}

/// The field a helper macro names: `__get_str(comm)` or `__get_str(REC->comm)`.
fn macro_field<'s>(scope: &'s Scope<'_>, node: &Node) -> Result<&'s FieldLayout, ExprError> {
    match &node.kind {
        NodeKind::Ident(name) => scope.field(name, node.pos),
        NodeKind::Member(base, name) => record_field(scope, base, name),
        _ => Err(scope.error("expected a field name", node.pos)),
    }
}

fn dynamic_field<'s>(scope: &'s Scope<'_>, node: &Node) -> Result<&'s FieldLayout, ExprError> {
    let field = macro_field(scope, node)?;
    match field.kind {
        FieldKind::DataLoc { .. } | FieldKind::RelLoc { .. } => Ok(field),
        _ => Err(scope.error(
            format!("'{}' is not a __data_loc or __rel_loc field", field.name),
            node.pos,
        )),
    }
}

/// The buffer of `__print_hex`/`__print_array` (and `%pU`-style conversions):
/// `__get_dynamic_array(f)` or a fixed array field `REC->f`, through any pointer cast.
pub(super) fn byte_source(scope: &Scope<'_>, node: &Node) -> Result<FieldLayout, ExprError> {
    match &node.kind {
        NodeKind::Cast(_, inner) => byte_source(scope, inner),
        NodeKind::Call(name, args)
            if matches!(name.as_str(), "__get_dynamic_array" | "__get_rel_dynamic_array")
                && args.len() == 1 =>
        {
            Ok(dynamic_field(scope, &args[0])?.clone())
        }
        NodeKind::Member(base, name) => {
            let field = record_field(scope, base, name)?;
            match field.kind {
                FieldKind::Array { .. } | FieldKind::CharArray => Ok(field.clone()),
                _ => Err(scope.error(format!("'{name}' is not an array"), node.pos)),
            }
        }
        _ => Err(scope.error(
            "expected __get_dynamic_array(field) or an array field REC->field",
            node.pos,
        )),
    }
}

/// A value known when the format is read (a table entry's value, a delimiter).
fn constant_value(scope: &Scope<'_>, node: &Node) -> Result<i64, ExprError> {
    let (value, _) = scope.int(node)?;
    let input = Input {
        event: None,
        vars: &[],
        symbolizer: None,
    };
    eval::int(&value, &input).ok_or_else(|| scope.error("expected a constant here", node.pos))
}

/// The `{ value, "name" }` entries of a symbol or flag table. An entry whose value uses
/// an enum name the format does not resolve never matches, as in libtraceevent: the value
/// then prints in hex instead of under a guessed name. Empty `{ }` and `{ -1, NULL }`
/// entries end some tables; they name nothing.
fn table(scope: &Scope<'_>, entries: &[Node]) -> Result<Vec<(u64, String)>, ExprError> {
    let mut table = Vec::with_capacity(entries.len());
    for entry in entries {
        let NodeKind::List(items) = &entry.kind else {
            return Err(scope.error("expected a { value, \"name\" } entry", entry.pos));
        };
        let (value, name) = match items.as_slice() {
            [] => continue,
            [value, name] => (value, name),
            _ => return Err(scope.error("a table entry is { value, \"name\" }", entry.pos)),
        };
        let name = match &name.kind {
            NodeKind::Str(name) => name,
            _ if is_null(name) => continue,
            _ => return Err(scope.error("a table entry's name is a string", name.pos)),
        };
        if mentions_unknown_constant(value) {
            continue;
        }
        table.push((constant_value(scope, value)? as u64, name.clone()));
    }
    Ok(table)
}

/// C's `NULL` as print fmts spell it: `((void *)0)` (or a bare `0`).
pub(super) fn is_null(node: &Node) -> bool {
    match &node.kind {
        NodeKind::Int(0) => true,
        NodeKind::Cast(type_name, inner) => type_name.ends_with('*') && is_null(inner),
        _ => false,
    }
}

/// Whether `node` uses a bare name libtraceevent does not know the value of.
fn mentions_unknown_constant(node: &Node) -> bool {
    match &node.kind {
        NodeKind::Ident(name) => known_constant(name).is_none(),
        NodeKind::Int(_) | NodeKind::Str(_) | NodeKind::BareWord(_) => false,
        NodeKind::Unary(_, a) | NodeKind::Cast(_, a) | NodeKind::Member(a, _) => mentions_unknown_constant(a),
        NodeKind::Index(a, b) | NodeKind::Binary(_, a, b) => {
            mentions_unknown_constant(a) || mentions_unknown_constant(b)
        }
        NodeKind::Ternary(a, b, c) => [a, b, c].iter().any(|n| mentions_unknown_constant(n)),
        NodeKind::Call(_, items) | NodeKind::List(items) => items.iter().any(mentions_unknown_constant),
    }
}

/// A print fmt helper call, `None` when `name` is not one.
pub(super) fn helper(
    scope: &Scope<'_>,
    name: &str,
    args: &[Node],
    pos: usize,
) -> Result<Option<Typed>, ExprError> {
    let arity = |n: usize| {
        if args.len() == n {
            Ok(())
        } else {
            Err(scope.error(format!("{name}() takes {n} argument(s), got {}", args.len()), pos))
        }
    };
    let at_least = |n: usize| {
        if args.len() >= n {
            Ok(())
        } else {
            Err(scope.error(
                format!("{name}() takes at least {n} argument(s), got {}", args.len()),
                pos,
            ))
        }
    };
    Ok(Some(match name {
        "__get_str" | "__get_rel_str" => {
            arity(1)?;
            let field = macro_field(scope, &args[0])?;
            if !field.is_string() {
                return Err(scope.error(format!("'{}' is not a string field", field.name), args[0].pos));
            }
            Typed::Str(StrNode::Field(field.clone()))
        }
        "__get_dynamic_array_len" | "__get_rel_dynamic_array_len" => {
            arity(1)?;
            Typed::Int(
                IntNode::DynamicArrayLen(dynamic_field(scope, &args[0])?.clone()),
                false,
            )
        }
        "__get_dynamic_array" | "__get_rel_dynamic_array" => {
            return Err(scope.error(
                format!("{name}() is only read as the buffer of __print_array() or __print_hex()"),
                pos,
            ));
        }
        "__print_symbolic" | "__print_symbolic_u64" => {
            at_least(1)?;
            Typed::Str(StrNode::Symbolic {
                value: Box::new(scope.int(&args[0])?.0),
                table: table(scope, &args[1..])?,
            })
        }
        "__print_flags" | "__print_flags_u64" => {
            at_least(2)?;
            let NodeKind::Str(delimiter) = &args[1].kind else {
                return Err(scope.error("__print_flags()'s delimiter is a string", args[1].pos));
            };
            Typed::Str(StrNode::Flags {
                value: Box::new(scope.int(&args[0])?.0),
                delimiter: delimiter.clone(),
                table: table(scope, &args[2..])?,
            })
        }
        "__print_hex" | "__print_hex_str" => {
            arity(2)?;
            Typed::Str(StrNode::Hex {
                source: byte_source(scope, &args[0])?,
                len: Box::new(scope.int(&args[1])?.0),
                separated: name == "__print_hex",
            })
        }
        "__print_array" => {
            arity(3)?;
            Typed::Str(StrNode::IntArray {
                source: byte_source(scope, &args[0])?,
                count: Box::new(scope.int(&args[1])?.0),
                element_size: Box::new(scope.int(&args[2])?.0),
            })
        }
        _ => return Ok(None),
    }))
}
