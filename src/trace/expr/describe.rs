//! The bound tree as text, for `perfscope expr` (a developer's check of what an
//! expression compiled into): fields as their place in the record (`u32@24` = 4 bytes at
//! offset 24, zero-extended; `s32@24` sign-extended), every operator parenthesised, and
//! the unsigned forms C's conversions picked marked with `u` (`<u`, `/u`, `>>u`).

use super::tree::{Arg, Bound, IntNode, IntOp, Meta, StrNode};

pub(super) fn bound(root: &Bound) -> String {
    match root {
        Bound::Int(node) => int(node),
        Bound::Str(node) => string(node),
    }
}

fn op(op: IntOp) -> &'static str {
    match op {
        IntOp::Mul => "*",
        IntOp::Div => "/",
        IntOp::DivU => "/u",
        IntOp::Rem => "%",
        IntOp::RemU => "%u",
        IntOp::Add => "+",
        IntOp::Sub => "-",
        IntOp::Shl => "<<",
        IntOp::Shr => ">>",
        IntOp::ShrU => ">>u",
        IntOp::Lt => "<",
        IntOp::LtU => "<u",
        IntOp::Le => "<=",
        IntOp::LeU => "<=u",
        IntOp::Gt => ">",
        IntOp::GtU => ">u",
        IntOp::Ge => ">=",
        IntOp::GeU => ">=u",
        IntOp::Eq => "==",
        IntOp::Ne => "!=",
        IntOp::BitAnd => "&",
        IntOp::BitXor => "^",
        IntOp::BitOr => "|",
    }
}

fn scalar(signed: bool, size: usize) -> String {
    format!("{}{}", if signed { 's' } else { 'u' }, size * 8)
}

fn int(node: &IntNode) -> String {
    match node {
        IntNode::Const(v) => v.to_string(),
        IntNode::Field { offset, size, signed } => format!("{}@{offset}", scalar(*signed, *size)),
        IntNode::Element {
            field,
            element_size,
            signed,
            index,
        } => format!(
            "{}@{}[{}]",
            scalar(*signed, *element_size),
            field.name,
            int(index)
        ),
        IntNode::Meta(meta) => match meta {
            Meta::Cpu => "_cpu",
            Meta::Pid => "_pid",
            Meta::Tid => "_tid",
            Meta::Time => "_time",
        }
        .to_string(),
        IntNode::Var(i) => format!("${i}"),
        IntNode::Cast {
            size,
            signed,
            boolean,
            inner,
        } => {
            let to = if *boolean {
                "bool".to_string()
            } else {
                scalar(*signed, *size)
            };
            format!("({to}){}", int(inner))
        }
        IntNode::Neg(x) => format!("-{}", int(x)),
        IntNode::Not(x) => format!("!{}", int(x)),
        IntNode::BitNot(x) => format!("~{}", int(x)),
        IntNode::Binary(o, a, b) => format!("({} {} {})", int(a), op(*o), int(b)),
        IntNode::And(a, b) => format!("({} && {})", int(a), int(b)),
        IntNode::Or(a, b) => format!("({} || {})", int(a), int(b)),
        IntNode::Cond(c, a, b) => format!("({} ? {} : {})", int(c), int(a), int(b)),
        IntNode::StrEq { lhs, rhs, equal } => {
            format!(
                "({} {} {})",
                string(lhs),
                if *equal { "==" } else { "!=" },
                string(rhs)
            )
        }
        IntNode::Glob { text, pattern } => format!("({} ~ {})", string(text), string(pattern)),
        IntNode::Strncmp(a, b, n) => format!("strncmp({}, {}, {})", string(a), string(b), int(n)),
        IntNode::Ntohl(x) => format!("ntohl({})", int(x)),
        IntNode::Ntohs(x) => format!("ntohs({})", int(x)),
        IntNode::DynamicArrayLen(field) => format!("__get_dynamic_array_len({})", field.name),
    }
}

fn string(node: &StrNode) -> String {
    match node {
        StrNode::Const(s) => format!("{s:?}"),
        StrNode::Field(field) => format!("str@{}({})", field.offset, field.name),
        StrNode::Cond(c, a, b) => format!("({} ? {} : {})", int(c), string(a), string(b)),
        StrNode::Printf(_, args) => {
            let args: Vec<String> = args
                .iter()
                .map(|a| match a {
                    Arg::Int(n) => int(n),
                    Arg::Str(s) => string(s),
                    Arg::Bytes(f) => format!("bytes@{}({})", f.offset, f.name),
                })
                .collect();
            format!("printf(<format>, {})", args.join(", "))
        }
        StrNode::Ksymbol(x) => format!("ksymbol({})", int(x)),
        StrNode::Symbolic { value, table } => {
            format!("__print_symbolic({}, {} names)", int(value), table.len())
        }
        StrNode::Flags { value, table, .. } => {
            format!("__print_flags({}, {} names)", int(value), table.len())
        }
        StrNode::Hex { source, len, .. } => format!("__print_hex({}, {})", source.name, int(len)),
        StrNode::IntArray { source, count, .. } => {
            format!("__print_array({}, {})", source.name, int(count))
        }
    }
}
