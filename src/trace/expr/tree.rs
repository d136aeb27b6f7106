//! The bound tree: what `bind` compiles an expression into and `eval` walks over one
//! event — integer and string nodes, their operators, printf arguments and event
//! metadata. Every name is already resolved (fields are offsets and layouts), so
//! evaluating needs no lookup. Only data here: `bind` builds it and `eval` reads it, so
//! `eval` depends on this tree and never on `bind`.

use super::printf::Piece;
use crate::trace::event::FieldLayout;

/// Event metadata that is not part of the raw record.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Meta {
    Cpu,
    Pid,
    Tid,
    Time,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum IntOp {
    Mul,
    Div,
    DivU,
    Rem,
    RemU,
    Add,
    Sub,
    Shl,
    Shr,
    ShrU,
    Lt,
    LtU,
    Le,
    LeU,
    Gt,
    GtU,
    Ge,
    GeU,
    Eq,
    Ne,
    BitAnd,
    BitXor,
    BitOr,
}

/// An integer-valued node. Values are 64-bit; unsigned 64-bit operands pick the `…U`
/// operators at bind time, as C's usual arithmetic conversions would.
#[derive(Clone, Debug)]
pub(super) enum IntNode {
    Const(i64),
    /// A scalar field (or an array's first element), read in place: no layout lookup and
    /// no string data on the hot path.
    Field {
        offset: usize,
        size: usize,
        signed: bool,
    },
    /// `args[i]`, `comm[0]`, `phys_addrs[2]` (a `__data_loc` array).
    Element {
        field: FieldLayout,
        element_size: usize,
        signed: bool,
        index: Box<IntNode>,
    },
    Meta(Meta),
    Var(usize),
    /// `(T)x`: cut to `size` bytes, sign-extended when `T` is signed; `(bool)x` is `x != 0`.
    Cast {
        size: usize,
        signed: bool,
        boolean: bool,
        inner: Box<IntNode>,
    },
    Neg(Box<IntNode>),
    Not(Box<IntNode>),
    BitNot(Box<IntNode>),
    Binary(IntOp, Box<IntNode>, Box<IntNode>),
    And(Box<IntNode>, Box<IntNode>),
    Or(Box<IntNode>, Box<IntNode>),
    Cond(Box<IntNode>, Box<IntNode>, Box<IntNode>),
    StrEq {
        lhs: Box<StrNode>,
        rhs: Box<StrNode>,
        equal: bool,
    },
    Glob {
        text: Box<StrNode>,
        pattern: Box<StrNode>,
    },
    Strncmp(Box<StrNode>, Box<StrNode>, Box<IntNode>),
    Ntohl(Box<IntNode>),
    Ntohs(Box<IntNode>),
    /// `__get_dynamic_array_len(f)`: the payload length in bytes of a `__data_loc` or
    /// `__rel_loc` field.
    DynamicArrayLen(FieldLayout),
}

#[derive(Clone, Debug)]
pub(super) enum StrNode {
    Const(String),
    Field(FieldLayout),
    Cond(Box<IntNode>, Box<StrNode>, Box<StrNode>),
    Printf(Vec<Piece>, Vec<Arg>),
    Ksymbol(Box<IntNode>),
    /// `__print_symbolic(v, {N, "name"}, ...)`: the name of the entry equal to `v`, else
    /// `0x<v>`.
    Symbolic {
        value: Box<IntNode>,
        table: Vec<(u64, String)>,
    },
    /// `__print_flags(v, "|", {N, "name"}, ...)`: the names of the entries whose bits are
    /// all set in `v`, joined by `delimiter`, then any bits left as `0x<bits>`.
    Flags {
        value: Box<IntNode>,
        delimiter: String,
        table: Vec<(u64, String)>,
    },
    /// `__print_hex(buf, len)` (`01 02 ff`) and `__print_hex_str(buf, len)` (`0102ff`).
    Hex {
        source: FieldLayout,
        len: Box<IntNode>,
        separated: bool,
    },
    /// `__print_array(buf, count, element_size)`: `{0x1,0x2}`, as the kernel prints it.
    IntArray {
        source: FieldLayout,
        count: Box<IntNode>,
        element_size: Box<IntNode>,
    },
}

#[derive(Clone, Debug)]
pub(super) enum Arg {
    Int(IntNode),
    Str(StrNode),
    /// The bytes of a field, for `%pU`-style conversions.
    Bytes(FieldLayout),
}

/// A bound expression's root.
#[derive(Clone, Debug)]
pub(super) enum Bound {
    Int(IntNode),
    Str(StrNode),
}
