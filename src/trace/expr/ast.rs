//! The parsed, unbound expression tree: names are still text, every node keeps the byte
//! offset it starts at so binding errors point at the right character.

#[derive(Clone, Debug, PartialEq)]
pub(super) struct Node {
    pub(super) pos: usize,
    pub(super) kind: NodeKind,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) enum NodeKind {
    Int(u64),
    Str(String),
    /// An unquoted kernel-filter value; becomes a string, a number or a field when bound.
    BareWord(String),
    Ident(String),
    Index(Box<Node>, Box<Node>),
    /// `REC->field`: a print fmt's way to name a field of the record.
    Member(Box<Node>, String),
    /// `{ 0x01, "S" }`: one entry of a `__print_symbolic`/`__print_flags` table.
    List(Vec<Node>),
    Unary(UnaryOp, Box<Node>),
    /// `(u32)x`: a C scalar type name, as [`super::ctype`] knows them.
    Cast(String, Box<Node>),
    Binary(BinaryOp, Box<Node>, Box<Node>),
    Ternary(Box<Node>, Box<Node>, Box<Node>),
    Call(String, Vec<Node>),
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum UnaryOp {
    Neg,
    Not,
    BitNot,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum BinaryOp {
    Mul,
    Div,
    Rem,
    Add,
    Sub,
    Shl,
    Shr,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    /// `text ~ "glob"`.
    Glob,
    BitAnd,
    BitXor,
    BitOr,
    And,
    Or,
}
