//! Evaluation of bound trees ([`super::tree`]) over one event. Integer nodes never allocate; strings borrow
//! from the record or the expression where they can. Any failure (short record, division
//! by zero, index out of range) is `None`, never a panic.

use std::borrow::Cow;
use std::fmt::Write;

use super::Symbolizer;
use super::pointer;
use super::printf::{self, Piece, SymbolStyle};
use super::tree::{Arg, IntNode, IntOp, Meta, StrNode};
use crate::trace::event::{FieldKind, FieldLayout, TraceEvent};

/// What an evaluation reads: the event (absent for printkey-style expressions), the
/// caller's variables and the address symbolizer.
pub(super) struct Input<'a, 'v> {
    pub(super) event: Option<TraceEvent<'a>>,
    pub(super) vars: &'v [i64],
    pub(super) symbolizer: Option<&'v Symbolizer>,
}

impl<'a> Input<'a, '_> {
    fn raw(&self) -> Option<&'a [u8]> {
        self.event.map(|e| e.raw)
    }
}

pub(super) fn int(node: &IntNode, input: &Input<'_, '_>) -> Option<i64> {
    Some(match node {
        IntNode::Const(v) => *v,
        IntNode::Field { offset, size, signed } => {
            let raw = input.raw()?;
            scalar(raw.get(*offset..offset.checked_add(*size)?)?, *signed)?
        }
        IntNode::Element {
            field,
            element_size,
            signed,
            index,
        } => {
            let index = usize::try_from(int(index, input)?).ok()?;
            element(field, input.raw()?, *element_size, *signed, index)?
        }
        IntNode::Meta(meta) => {
            let event = input.event?;
            match meta {
                Meta::Cpu => i64::from(event.cpu),
                Meta::Pid => i64::from(event.pid),
                Meta::Tid => i64::from(event.tid),
                Meta::Time => event.time_ns as i64,
            }
        }
        IntNode::Var(slot) => *input.vars.get(*slot)?,
        IntNode::Cast {
            size,
            signed,
            boolean,
            inner,
        } => {
            let value = int(inner, input)?;
            if *boolean {
                i64::from(value != 0)
            } else if *size >= 8 {
                value
            } else {
                let shift = 64 - 8 * *size as u32;
                if *signed {
                    (value << shift) >> shift
                } else {
                    ((value as u64) << shift >> shift) as i64
                }
            }
        }
        IntNode::Neg(a) => int(a, input)?.wrapping_neg(),
        IntNode::Not(a) => i64::from(int(a, input)? == 0),
        IntNode::BitNot(a) => !int(a, input)?,
        IntNode::Binary(op, a, b) => binary(*op, int(a, input)?, int(b, input)?)?,
        IntNode::And(a, b) => i64::from(int(a, input)? != 0 && int(b, input)? != 0),
        IntNode::Or(a, b) => i64::from(int(a, input)? != 0 || int(b, input)? != 0),
        IntNode::Cond(c, a, b) => {
            if int(c, input)? != 0 {
                int(a, input)?
            } else {
                int(b, input)?
            }
        }
        IntNode::StrEq { lhs, rhs, equal } => {
            i64::from((string(lhs, input)? == string(rhs, input)?) == *equal)
        }
        IntNode::Glob { text, pattern } => i64::from(super::glob::glob_match(
            &string(pattern, input)?,
            &string(text, input)?,
        )),
        IntNode::Strncmp(a, b, n) => {
            let n = usize::try_from(int(n, input)?).unwrap_or(0);
            let (a, b) = (string(a, input)?, string(b, input)?);
            let (a, b) = (&a.as_bytes()[..a.len().min(n)], &b.as_bytes()[..b.len().min(n)]);
            match a.cmp(b) {
                std::cmp::Ordering::Less => -1,
                std::cmp::Ordering::Equal => 0,
                std::cmp::Ordering::Greater => 1,
            }
        }
        IntNode::Ntohl(a) => i64::from((int(a, input)? as u32).swap_bytes()),
        IntNode::Ntohs(a) => i64::from((int(a, input)? as u16).swap_bytes()),
        IntNode::DynamicArrayLen(field) => {
            let raw = input.raw()?;
            let word = raw.get(field.offset..field.offset.checked_add(4)?)?;
            i64::from(u32::from_le_bytes(word.try_into().ok()?) >> 16)
        }
    })
}

fn binary(op: IntOp, a: i64, b: i64) -> Option<i64> {
    let (ua, ub) = (a as u64, b as u64);
    Some(match op {
        IntOp::Mul => a.wrapping_mul(b),
        IntOp::Div if b == 0 => return None,
        IntOp::Div => a.wrapping_div(b),
        IntOp::DivU => ua.checked_div(ub)? as i64,
        IntOp::Rem if b == 0 => return None,
        IntOp::Rem => a.wrapping_rem(b),
        IntOp::RemU => ua.checked_rem(ub)? as i64,
        IntOp::Add => a.wrapping_add(b),
        IntOp::Sub => a.wrapping_sub(b),
        IntOp::Shl => a.wrapping_shl(b as u32),
        IntOp::Shr => a.wrapping_shr(b as u32),
        IntOp::ShrU => ua.wrapping_shr(b as u32) as i64,
        IntOp::Lt => i64::from(a < b),
        IntOp::LtU => i64::from(ua < ub),
        IntOp::Le => i64::from(a <= b),
        IntOp::LeU => i64::from(ua <= ub),
        IntOp::Gt => i64::from(a > b),
        IntOp::GtU => i64::from(ua > ub),
        IntOp::Ge => i64::from(a >= b),
        IntOp::GeU => i64::from(ua >= ub),
        IntOp::Eq => i64::from(a == b),
        IntOp::Ne => i64::from(a != b),
        IntOp::BitAnd => a & b,
        IntOp::BitXor => a ^ b,
        IntOp::BitOr => a | b,
    })
}

/// The bytes an indexable field spans: fixed arrays in place (a size-0 flexible array runs
/// to the end of the record), `__data_loc`/`__rel_loc` arrays at their payload.
pub(super) fn array_bytes<'r>(field: &FieldLayout, raw: &'r [u8]) -> Option<&'r [u8]> {
    match field.kind {
        FieldKind::DataLoc { .. } | FieldKind::RelLoc { .. } => field.payload(raw),
        _ if field.size == 0 => raw.get(field.offset..),
        _ => raw.get(field.offset..field.offset.checked_add(field.size)?),
    }
}

fn element(field: &FieldLayout, raw: &[u8], element_size: usize, signed: bool, index: usize) -> Option<i64> {
    let bytes = array_bytes(field, raw)?;
    let start = index.checked_mul(element_size)?;
    scalar(bytes.get(start..start.checked_add(element_size)?)?, signed)
}

/// A little-endian integer of 1, 2, 4 or 8 bytes.
#[inline]
fn scalar(b: &[u8], signed: bool) -> Option<i64> {
    Some(match (b.len(), signed) {
        (1, false) => i64::from(b[0]),
        (1, true) => i64::from(b[0] as i8),
        (2, false) => i64::from(u16::from_le_bytes(b.try_into().ok()?)),
        (2, true) => i64::from(i16::from_le_bytes(b.try_into().ok()?)),
        (4, false) => i64::from(u32::from_le_bytes(b.try_into().ok()?)),
        (4, true) => i64::from(i32::from_le_bytes(b.try_into().ok()?)),
        (8, _) => i64::from_le_bytes(b.try_into().ok()?),
        _ => return None,
    })
}

pub(super) fn string<'a>(node: &'a StrNode, input: &Input<'a, '_>) -> Option<Cow<'a, str>> {
    match node {
        StrNode::Const(text) => Some(Cow::Borrowed(text)),
        StrNode::Field(field) => field.read_str(input.raw()?),
        StrNode::Cond(c, a, b) => {
            if int(c, input)? != 0 {
                string(a, input)
            } else {
                string(b, input)
            }
        }
        StrNode::Ksymbol(addr) => {
            let addr = int(addr, input)? as u64;
            let name = input.symbolizer.and_then(|lookup| lookup(addr));
            Some(Cow::Owned(name.unwrap_or_else(|| format!("{addr:#x}"))))
        }
        StrNode::Printf(pieces, args) => printf_text(pieces, args, input).map(Cow::Owned),
        StrNode::Symbolic { value, table } => {
            let value = int(value, input)? as u64;
            Some(match table.iter().find(|(v, _)| *v == value) {
                Some((_, name)) => Cow::Borrowed(name.as_str()),
                None => Cow::Owned(format!("0x{value:x}")),
            })
        }
        StrNode::Flags {
            value,
            delimiter,
            table,
        } => Some(Cow::Owned(flags(int(value, input)? as u64, delimiter, table))),
        StrNode::Hex {
            source,
            len,
            separated,
        } => {
            let len = usize::try_from(int(len, input)?).ok()?;
            let bytes = array_bytes(source, input.raw()?)?.get(..len)?;
            let mut out = String::with_capacity(len * 3);
            for (i, byte) in bytes.iter().enumerate() {
                if i > 0 && *separated {
                    out.push(' ');
                }
                let _ = write!(out, "{byte:02x}");
            }
            Some(Cow::Owned(out))
        }
        StrNode::IntArray {
            source,
            count,
            element_size,
        } => {
            let count = usize::try_from(int(count, input)?).ok()?;
            let element_size = usize::try_from(int(element_size, input)?).ok()?;
            if !matches!(element_size, 1 | 2 | 4 | 8) {
                return None;
            }
            let bytes = array_bytes(source, input.raw()?)?.get(..count.checked_mul(element_size)?)?;
            let mut out = String::from("{");
            for (i, chunk) in bytes.chunks_exact(element_size).enumerate() {
                if i > 0 {
                    out.push(',');
                }
                let _ = write!(out, "0x{:x}", scalar(chunk, false)? as u64);
            }
            out.push('}');
            Some(Cow::Owned(out))
        }
    }
}

/// `printf(fmt, ...)`: each conversion takes its `*` width and precision, then its value.
fn printf_text<'a>(pieces: &'a [Piece], args: &'a [Arg], input: &Input<'a, '_>) -> Option<String> {
    let mut out = String::new();
    let mut args = args.iter();
    let star = |args: &mut std::slice::Iter<'a, Arg>| match args.next()? {
        Arg::Int(n) => int(n, input),
        Arg::Str(_) | Arg::Bytes(_) => None,
    };
    for piece in pieces {
        let spec = match piece {
            Piece::Literal(text) => {
                out.push_str(text);
                continue;
            }
            Piece::Conversion(spec) => spec,
        };
        let (mut width, mut precision) = (None, None);
        if spec.width_from_arg {
            width = Some(star(&mut args)?);
        }
        if spec.precision_from_arg {
            precision = Some(star(&mut args)?);
        }
        // A bitmap's `*` is its bit count, not a width.
        let bitmap_bits = if spec.is_bitmap() { width.take() } else { None };
        let spec = if width.is_some() || precision.is_some() {
            Cow::Owned(spec.with_star_args(width, precision))
        } else {
            Cow::Borrowed(spec)
        };
        match args.next()? {
            Arg::Bytes(field) => {
                let bits = usize::try_from(bitmap_bits.unwrap_or(0)).ok()?;
                let text = pointer::format(spec.bytes?, array_bytes(field, input.raw()?)?, bits)?;
                printf::format_str(&mut out, &spec, &text);
            }
            Arg::Int(n) => {
                let value = int(n, input)?;
                match spec.symbol {
                    Some(style) => {
                        let name = symbol(value as u64, style, input.symbolizer);
                        printf::format_str(&mut out, &spec, &name);
                    }
                    None => printf::format_int(&mut out, &spec, value),
                }
            }
            Arg::Str(s) => printf::format_str(&mut out, &spec, &string(s, input)?),
        }
    }
    Some(out)
}

/// `%pS`/`%ps`: the symbolizer's name (`name+0xoff`; `%ps` keeps the name alone), or the
/// address in hex when there is no symbolizer or it does not know the address.
fn symbol(addr: u64, style: SymbolStyle, symbolizer: Option<&Symbolizer>) -> String {
    match symbolizer.and_then(|lookup| lookup(addr)) {
        Some(name) => match style {
            SymbolStyle::WithOffset => name,
            SymbolStyle::Name => match name.split_once('+') {
                Some((bare, _)) => bare.to_string(),
                None => name,
            },
        },
        None => format!("0x{addr:x}"),
    }
}

/// `__print_flags` as libtraceevent prints it: a zero value is the name of the table's
/// zero entry (if any); otherwise each entry whose bits are all set, in table order, its
/// bits then cleared; bits no entry names end the text as `0x<bits>`.
fn flags(value: u64, delimiter: &str, table: &[(u64, String)]) -> String {
    if value == 0 {
        return table
            .iter()
            .find(|(mask, _)| *mask == 0)
            .map(|(_, name)| name.clone())
            .unwrap_or_default();
    }
    let mut out = String::new();
    let mut rest = value;
    for (mask, name) in table {
        if *mask != 0 && rest & mask == *mask {
            if !out.is_empty() {
                out.push_str(delimiter);
            }
            out.push_str(name);
            rest &= !mask;
        }
    }
    if rest != 0 {
        if !out.is_empty() {
            out.push_str(delimiter);
        }
        let _ = write!(out, "0x{rest:x}");
    }
    out
}
