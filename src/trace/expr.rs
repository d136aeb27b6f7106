//! The small C-like expression language of event attributes (`key=`, `top-by=`,
//! `printkey=`, `comm=`, `num=`) and of user-space filters, evaluated over a trace event's
//! fields.
//!
//! Three steps, so the per-event cost is only the last one:
//! 1. [`Expr::parse`] reads the text (positions kept for errors);
//! 2. [`Expr::bind`] resolves every name once against an [`EventLayout`] (a field, `_cpu`,
//!    `_pid`, `_tid`, `_time`) or [`Expr::bind_vars`] against caller variables (printkey's
//!    `key`), checks types and compiles a tree of integer and string nodes;
//! 3. [`BoundExpr::eval`] walks that tree over one [`TraceEvent`]; integer expressions do
//!    not allocate, strings borrow from the record.
//!
//! The language: integer literals (decimal, `0x` hex, `0` octal), `"strings"`, field names,
//! `_cpu _pid _tid _time`, `args[i]`, C casts to scalar types (`(u32)x`), unary `- ! ~`,
//! binary `* / % + - << >> < <= > >= == != & ^ | && ||` with C precedence, `?:`, string
//! `==`/`!=`, the glob match `text ~ "kworker*"`, and the builtins `printf(fmt, ...)`
//! (a string), `ksymbol(addr)`, `strncmp(a, b, n)`, `ntohl`, `ntohs`. Values are 64-bit;
//! operands that are unsigned 64-bit (u64 fields, pointers, big literals, `(u64)` casts)
//! divide, shift and compare unsigned, as C's usual conversions do.
//!
//! [`Filter`] is the same language read as a kernel ftrace filter (unquoted string values
//! allowed), the user-space fallback when the kernel rejects a filter.
//!
//! [`Expr::parse_print_fmt`] reads a tracepoint's `print fmt:` (`"NR %ld = %ld", REC->id,
//! REC->ret`) as the call `printf(...)` in the same language, with the C the kernel writes
//! there: `REC->field`, adjacent string literals, `sizeof(type)`, the `%pS`/`%ps` symbol
//! conversions and `*` widths, and the helpers `__get_str`, `__get_rel_str`,
//! `__get_dynamic_array(_len)`, `__print_symbolic(_u64)`, `__print_flags(_u64)`,
//! `__print_hex(_str)` and `__print_array`, rendered as libtraceevent renders them. A bare
//! name there is a C constant, not a field.
//!
//! The module owns no I/O: symbol lookup for `ksymbol()` is a callback the caller provides.

mod ast;
mod bind;
pub mod ctype;
mod describe;
mod eval;
mod filter;
pub mod glob;
mod lexer;
mod parser;
mod pointer;
mod printf;
#[cfg(test)]
mod tests;
mod tree;

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

pub use filter::Filter;
pub use glob::glob_match;

use crate::trace::event::{EventLayout, TraceEvent};

/// A parse or bind error: what is wrong and the byte offset in the text where it is.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct ExprError {
    pub message: String,
    /// The expression text the error is about.
    pub text: String,
    /// Byte offset into `text`.
    pub position: usize,
}

impl ExprError {
    fn new(message: impl Into<String>, text: &str, position: usize) -> Self {
        Self {
            message: message.into(),
            text: text.to_string(),
            position: position.min(text.len()),
        }
    }
}

/// Three lines: the message, the text, a caret under the bad character.
impl fmt::Display for ExprError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let column = caret_column(&self.text, self.position);
        write!(
            f,
            "bad expression: {}\n  {}\n  {}^",
            self.message,
            self.text,
            crate::model::text::spaces(column)
        )
    }
}

/// The column (in characters) of byte offset `position` in `text`, for a caret line. An
/// offset inside a character counts as that character.
pub fn caret_column(text: &str, position: usize) -> usize {
    text.char_indices()
        .take_while(|&(i, c)| i + c.len_utf8() <= position)
        .count()
}

/// The value of an expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value<'a> {
    Int(i64),
    Str(Cow<'a, str>),
}

impl Value<'_> {
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(v) => Some(*v),
            Value::Str(_) => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            Value::Int(_) => None,
        }
    }
}

impl fmt::Display for Value<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(v) => write!(f, "{v}"),
            Value::Str(s) => f.write_str(s),
        }
    }
}

/// Looks a kernel address up for `ksymbol()`; `None` prints the address in hex.
pub type Symbolizer = dyn Fn(u64) -> Option<String> + Send + Sync;

/// A parsed, not yet bound expression.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    text: String,
    root: ast::Node,
}

impl Expr {
    pub fn parse(text: &str) -> Result<Self, ExprError> {
        let root = parser::Parser::new(text, None)?.parse_all()?;
        Ok(Self {
            text: text.to_string(),
            root,
        })
    }

    /// A tracepoint's `print fmt:` text (as the format file has it after `print fmt: `),
    /// read as `printf(<format>, <args>...)`. Bind it with [`Expr::bind_print_fmt`].
    pub fn parse_print_fmt(text: &str) -> Result<Self, ExprError> {
        let root = parser::Parser::new(text, None)?.parse_print_fmt()?;
        Ok(Self {
            text: text.to_string(),
            root,
        })
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// Resolve a print fmt against `layout`: fields are `REC->name`, bare names C
    /// constants. The result is a string expression, the event's text.
    pub fn bind_print_fmt(&self, layout: &EventLayout) -> Result<BoundExpr, ExprError> {
        let scope = bind::Scope {
            text: &self.text,
            layout: Some(layout),
            vars: &[],
            filter: false,
            print_fmt: true,
        };
        Ok(BoundExpr {
            root: bind::bind(&self.root, &scope)?,
            symbolizer: None,
        })
    }

    /// Resolve names against `layout`'s fields plus `_cpu`, `_pid`, `_tid`, `_time`.
    pub fn bind(&self, layout: &EventLayout) -> Result<BoundExpr, ExprError> {
        self.bind_in(Some(layout), &[])
    }

    /// Resolve names against caller variables only (printkey's `key`); evaluate the result
    /// with [`BoundExpr::eval_vars`].
    pub fn bind_vars(&self, vars: &[&str]) -> Result<BoundExpr, ExprError> {
        self.bind_in(None, vars)
    }

    fn bind_in(&self, layout: Option<&EventLayout>, vars: &[&str]) -> Result<BoundExpr, ExprError> {
        let scope = bind::Scope {
            text: &self.text,
            layout,
            vars,
            filter: false,
            print_fmt: false,
        };
        Ok(BoundExpr {
            root: bind::bind(&self.root, &scope)?,
            symbolizer: None,
        })
    }
}

/// An expression compiled against one event layout, ready to evaluate per event.
#[derive(Clone)]
pub struct BoundExpr {
    root: tree::Bound,
    symbolizer: Option<Arc<Symbolizer>>,
}

impl fmt::Debug for BoundExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BoundExpr")
            .field("root", &self.root)
            .field("symbolizer", &self.symbolizer.is_some())
            .finish()
    }
}

impl BoundExpr {
    /// Use `lookup` for `ksymbol(addr)` (without one, addresses print as hex).
    pub fn with_symbolizer(mut self, lookup: Arc<Symbolizer>) -> Self {
        self.symbolizer = Some(lookup);
        self
    }

    /// The compiled tree as text: fields as `u32@24` (size and offset in the record),
    /// operators parenthesised, unsigned forms marked (`<u`), for `perfscope expr`.
    pub fn bound_text(&self) -> String {
        describe::bound(&self.root)
    }

    /// Whether the expression gives a string (`comm`, `printf(...)`) rather than a number.
    pub fn is_string(&self) -> bool {
        matches!(self.root, tree::Bound::Str(_))
    }

    /// The value over `event`; `None` when it cannot be computed (record too short,
    /// division by zero, index out of range).
    pub fn eval<'a>(&'a self, event: &TraceEvent<'a>) -> Option<Value<'a>> {
        self.run(&eval::Input {
            event: Some(*event),
            vars: &[],
            symbolizer: self.symbolizer.as_deref(),
        })
    }

    /// An integer expression's value over `event` (strings give `None`). No allocation.
    pub fn eval_int(&self, event: &TraceEvent<'_>) -> Option<i64> {
        match &self.root {
            tree::Bound::Int(node) => eval::int(
                node,
                &eval::Input {
                    event: Some(*event),
                    vars: &[],
                    symbolizer: None,
                },
            ),
            tree::Bound::Str(_) => None,
        }
    }

    /// The value of an expression bound with [`Expr::bind_vars`], `vars` in the same order.
    pub fn eval_vars(&self, vars: &[i64]) -> Option<Value<'_>> {
        self.run(&eval::Input {
            event: None,
            vars,
            symbolizer: self.symbolizer.as_deref(),
        })
    }

    fn run<'a>(&'a self, input: &eval::Input<'a, '_>) -> Option<Value<'a>> {
        match &self.root {
            tree::Bound::Int(node) => eval::int(node, input).map(Value::Int),
            tree::Bound::Str(node) => eval::string(node, input).map(Value::Str),
        }
    }
}
