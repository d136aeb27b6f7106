//! Binding: names resolved once against an [`EventLayout`] (and caller variables such as
//! printkey's `key`), types checked, and the tree compiled into the integer and string
//! nodes of [`super::tree`] that evaluate without looking anything up.

use super::ExprError;
use super::ast::{BinaryOp, Node, NodeKind, UnaryOp};
use super::ctype;
use super::printf::{self, Piece};
use super::tree::{Arg, Bound, IntNode, IntOp, Meta, StrNode};
use crate::trace::event::{EventLayout, FieldKind, FieldLayout};

mod kernel;

/// What a printf conversion (or its `*`) takes.
enum ArgKind {
    Int,
    Str,
    Bytes,
}

fn null_string() -> StrNode {
    StrNode::Const("(null)".into())
}

/// What names mean while binding.
pub(super) struct Scope<'a> {
    pub(super) text: &'a str,
    pub(super) layout: Option<&'a EventLayout>,
    pub(super) vars: &'a [&'a str],
    /// Kernel filter mode: `cpu`/`CPU` name the event's CPU when the event has no such
    /// field, as in ftrace.
    pub(super) filter: bool,
    /// Print fmt mode: fields are `REC->name`; a bare name is a C constant (an enum the
    /// kernel left unresolved), not a field.
    pub(super) print_fmt: bool,
}

enum Typed {
    /// `unsigned` = a 64-bit unsigned value (pointer, u64 field, literal above i64::MAX).
    Int(IntNode, bool),
    Str(StrNode),
}

pub(super) fn bind(node: &Node, scope: &Scope<'_>) -> Result<Bound, ExprError> {
    Ok(match scope.bind(node)? {
        Typed::Int(node, _) => Bound::Int(node),
        Typed::Str(node) => Bound::Str(node),
    })
}

impl Scope<'_> {
    fn error(&self, message: impl Into<String>, position: usize) -> ExprError {
        ExprError::new(message, self.text, position)
    }

    fn int(&self, node: &Node) -> Result<(IntNode, bool), ExprError> {
        match self.bind(node)? {
            Typed::Int(n, unsigned) => Ok((n, unsigned)),
            Typed::Str(_) => Err(self.error("expected a number here, found a string", node.pos)),
        }
    }

    fn string(&self, node: &Node) -> Result<StrNode, ExprError> {
        match self.bind(node)? {
            Typed::Str(n) => Ok(n),
            Typed::Int(..) => Err(self.error("expected a string here, found a number", node.pos)),
        }
    }

    fn bind(&self, node: &Node) -> Result<Typed, ExprError> {
        Ok(match &node.kind {
            NodeKind::Int(v) => Typed::Int(IntNode::Const(*v as i64), *v > i64::MAX as u64),
            NodeKind::Str(s) | NodeKind::BareWord(s) => Typed::Str(StrNode::Const(s.clone())),
            NodeKind::Ident(name) if self.print_fmt => kernel::constant(self, name, node.pos)?,
            NodeKind::Ident(name) => self.name(name, node.pos)?,
            NodeKind::Member(base, name) => {
                let field = kernel::record_field(self, base, name)?;
                self.field_value(field, node.pos)?
            }
            NodeKind::List(_) => {
                return Err(self.error(
                    "a { value, \"name\" } list only goes inside __print_symbolic() or __print_flags()",
                    node.pos,
                ));
            }
            NodeKind::Index(base, index) => self.index(base, index)?,
            NodeKind::Unary(op, operand) => {
                let (inner, unsigned) = self.int(operand)?;
                let inner = Box::new(inner);
                match op {
                    UnaryOp::Neg => Typed::Int(IntNode::Neg(inner), unsigned),
                    UnaryOp::Not => Typed::Int(IntNode::Not(inner), false),
                    UnaryOp::BitNot => Typed::Int(IntNode::BitNot(inner), unsigned),
                }
            }
            NodeKind::Cast(type_name, operand) => {
                let (inner, _) = self.int(operand)?;
                let size = ctype::scalar_size(type_name).unwrap_or(8);
                let signed = ctype::is_signed(type_name);
                Typed::Int(
                    IntNode::Cast {
                        size,
                        signed,
                        boolean: matches!(type_name.as_str(), "bool" | "_Bool"),
                        inner: Box::new(inner),
                    },
                    size == 8 && !signed,
                )
            }
            NodeKind::Binary(op, lhs, rhs) => self.binary(*op, lhs, rhs, node.pos)?,
            NodeKind::Ternary(cond, then, otherwise) => {
                let (cond, _) = self.int(cond)?;
                match (self.bind(then)?, self.bind(otherwise)?) {
                    (Typed::Int(a, ua), Typed::Int(b, ub)) => {
                        Typed::Int(IntNode::Cond(Box::new(cond), Box::new(a), Box::new(b)), ua || ub)
                    }
                    (Typed::Str(a), Typed::Str(b)) => {
                        Typed::Str(StrNode::Cond(Box::new(cond), Box::new(a), Box::new(b)))
                    }
                    // `len ? __get_str(name) : NULL`: glibc prints a NULL string as `(null)`.
                    (Typed::Str(a), Typed::Int(..)) if self.print_fmt && kernel::is_null(otherwise) => {
                        Typed::Str(StrNode::Cond(
                            Box::new(cond),
                            Box::new(a),
                            Box::new(null_string()),
                        ))
                    }
                    (Typed::Int(..), Typed::Str(b)) if self.print_fmt && kernel::is_null(then) => Typed::Str(
                        StrNode::Cond(Box::new(cond), Box::new(null_string()), Box::new(b)),
                    ),
                    _ => {
                        return Err(self.error(
                            "both branches of '?:' must be numbers or both strings",
                            otherwise.pos,
                        ));
                    }
                }
            }
            NodeKind::Call(name, args) => self.call(name, args, node.pos)?,
        })
    }

    fn name(&self, name: &str, pos: usize) -> Result<Typed, ExprError> {
        if let Some(slot) = self.vars.iter().position(|v| *v == name) {
            return Ok(Typed::Int(IntNode::Var(slot), false));
        }
        let Some(layout) = self.layout else {
            return Err(self.error(
                format!("unknown name '{name}'; only {} can be used here", self.var_list()),
                pos,
            ));
        };
        let ftrace_special = self.filter && layout.field(name).is_none();
        if ftrace_special && matches!(name, "comm" | "COMM") {
            return Err(self.error(
                "the current task's comm is not in the record; filter on one of the event's \
                 comm fields, or on common_pid",
                pos,
            ));
        }
        let meta = match name {
            "cpu" | "CPU" if ftrace_special => Some(Meta::Cpu),
            "_cpu" => Some(Meta::Cpu),
            "_pid" => Some(Meta::Pid),
            "_tid" => Some(Meta::Tid),
            "_time" => Some(Meta::Time),
            _ => None,
        };
        if let Some(meta) = meta {
            return Ok(Typed::Int(IntNode::Meta(meta), meta == Meta::Time));
        }
        let field = self.field(name, pos)?;
        self.field_value(field, pos)
    }

    /// Field `name` of the layout, or an error listing the fields there are.
    fn field(&self, name: &str, pos: usize) -> Result<&FieldLayout, ExprError> {
        let layout = self
            .layout
            .ok_or_else(|| self.error(format!("unknown name '{name}'; there is no event here"), pos))?;
        layout.field(name).ok_or_else(|| {
            let fields: Vec<&str> = layout.fields.iter().map(|f| f.name.as_str()).collect();
            self.error(
                format!(
                    "unknown field '{name}' of {}:{}; its fields are {} (and _cpu, _pid, _tid, _time)",
                    layout.system,
                    layout.name,
                    fields.join(", ")
                ),
                pos,
            )
        })
    }

    /// A field read as a value: strings as text, scalars (and an array's first element)
    /// as numbers.
    fn field_value(&self, field: &FieldLayout, pos: usize) -> Result<Typed, ExprError> {
        let name = &field.name;
        Ok(if field.is_string() {
            Typed::Str(StrNode::Field(field.clone()))
        } else {
            match field.kind {
                FieldKind::DataLoc { .. } | FieldKind::RelLoc { .. } => {
                    return Err(self.error(format!("'{name}' is a dynamic array: index it ({name}[0])"), pos));
                }
                _ => {
                    let unsigned = field.kind != FieldKind::Signed
                        && field.size == 8
                        && !matches!(field.kind, FieldKind::Array { element_size } if element_size < 8);
                    let (size, signed) = match field.kind {
                        FieldKind::Array { element_size } => (element_size, false),
                        kind => (field.size, kind == FieldKind::Signed),
                    };
                    Typed::Int(
                        IntNode::Field {
                            offset: field.offset,
                            size,
                            signed,
                        },
                        unsigned,
                    )
                }
            }
        })
    }

    fn var_list(&self) -> String {
        if self.vars.is_empty() {
            "constants".into()
        } else {
            self.vars
                .iter()
                .map(|v| format!("'{v}'"))
                .collect::<Vec<_>>()
                .join(", ")
        }
    }

    fn index(&self, base: &Node, index: &Node) -> Result<Typed, ExprError> {
        let field = match &base.kind {
            NodeKind::Member(record, name) => kernel::record_field(self, record, name)?,
            NodeKind::Ident(name) if !self.print_fmt => {
                self.layout
                    .and_then(|l| l.field(name))
                    .ok_or_else(|| match self.name(name, base.pos) {
                        Err(e) => e,
                        Ok(_) => self.error(format!("'{name}' is not an array"), base.pos),
                    })?
            }
            _ => return Err(self.error("only an event field can be indexed", base.pos)),
        };
        let name = &field.name;
        let element_type = ctype::element_type(&field.declaration);
        let (element_size, signed) = match field.kind {
            FieldKind::Array { element_size } => (element_size, ctype::is_signed(element_type)),
            FieldKind::CharArray => (1, true),
            FieldKind::DataLoc { .. } | FieldKind::RelLoc { .. } => (
                ctype::scalar_size(element_type).unwrap_or(1),
                ctype::is_signed(element_type),
            ),
            FieldKind::Unsigned | FieldKind::Signed => {
                return Err(self.error(format!("'{name}' is not an array"), base.pos));
            }
        };
        let (index, _) = self.int(index)?;
        Ok(Typed::Int(
            IntNode::Element {
                field: field.clone(),
                element_size,
                signed,
                index: Box::new(index),
            },
            element_size == 8 && !signed,
        ))
    }

    fn binary(&self, op: BinaryOp, lhs: &Node, rhs: &Node, pos: usize) -> Result<Typed, ExprError> {
        let (a, b) = (self.bind(lhs)?, self.bind(rhs)?);
        let (a, ua, b, ub) = match (a, b) {
            (Typed::Int(a, ua), Typed::Int(b, ub)) => (a, ua, b, ub),
            (Typed::Str(a), Typed::Str(b)) => {
                let (a, b) = (Box::new(a), Box::new(b));
                return Ok(Typed::Int(
                    match op {
                        BinaryOp::Eq => IntNode::StrEq {
                            lhs: a,
                            rhs: b,
                            equal: true,
                        },
                        BinaryOp::Ne => IntNode::StrEq {
                            lhs: a,
                            rhs: b,
                            equal: false,
                        },
                        BinaryOp::Glob => IntNode::Glob { text: a, pattern: b },
                        _ => {
                            return Err(
                                self.error("strings can only be compared with '==', '!=' or '~'", pos)
                            );
                        }
                    },
                    false,
                ));
            }
            (Typed::Str(_), Typed::Int(..)) => {
                return Err(self.error("cannot compare a string with a number", pos));
            }
            (Typed::Int(..), Typed::Str(_)) => {
                return Err(self.error("cannot combine a number with a string", rhs.pos));
            }
        };
        let unsigned = ua || ub;
        let pick = |signed: IntOp, unsigned_op: IntOp| {
            if unsigned { unsigned_op } else { signed }
        };
        let (a, b) = (Box::new(a), Box::new(b));
        let (op, result_unsigned) = match op {
            BinaryOp::And => return Ok(Typed::Int(IntNode::And(a, b), false)),
            BinaryOp::Or => return Ok(Typed::Int(IntNode::Or(a, b), false)),
            BinaryOp::Glob => {
                return Err(self.error("'~' matches a string against a glob pattern", pos));
            }
            BinaryOp::Mul => (IntOp::Mul, unsigned),
            BinaryOp::Div => (pick(IntOp::Div, IntOp::DivU), unsigned),
            BinaryOp::Rem => (pick(IntOp::Rem, IntOp::RemU), unsigned),
            BinaryOp::Add => (IntOp::Add, unsigned),
            BinaryOp::Sub => (IntOp::Sub, unsigned),
            BinaryOp::Shl => (IntOp::Shl, ua),
            BinaryOp::Shr => (if ua { IntOp::ShrU } else { IntOp::Shr }, ua),
            BinaryOp::Lt => (pick(IntOp::Lt, IntOp::LtU), false),
            BinaryOp::Le => (pick(IntOp::Le, IntOp::LeU), false),
            BinaryOp::Gt => (pick(IntOp::Gt, IntOp::GtU), false),
            BinaryOp::Ge => (pick(IntOp::Ge, IntOp::GeU), false),
            BinaryOp::Eq => (IntOp::Eq, false),
            BinaryOp::Ne => (IntOp::Ne, false),
            BinaryOp::BitAnd => (IntOp::BitAnd, unsigned),
            BinaryOp::BitXor => (IntOp::BitXor, unsigned),
            BinaryOp::BitOr => (IntOp::BitOr, unsigned),
        };
        Ok(Typed::Int(IntNode::Binary(op, a, b), result_unsigned))
    }

    fn call(&self, name: &str, args: &[Node], pos: usize) -> Result<Typed, ExprError> {
        let arity = |n: usize| {
            if args.len() == n {
                Ok(())
            } else {
                Err(self.error(format!("{name}() takes {n} argument(s), got {}", args.len()), pos))
            }
        };
        Ok(match name {
            "printf" => {
                let Some(first) = args.first() else {
                    return Err(self.error("printf() needs a format string", pos));
                };
                let NodeKind::Str(format) = &first.kind else {
                    return Err(self.error("printf()'s format must be a string literal", first.pos));
                };
                // +1: the opening quote.
                let pieces = printf::parse_format(format)
                    .map_err(|(message, at)| self.error(message, first.pos + 1 + at))?;
                // Each conversion takes its `*` width and precision first, then its value.
                let wanted: Vec<ArgKind> = pieces
                    .iter()
                    .filter_map(|p| match p {
                        Piece::Conversion(spec) => Some(spec),
                        Piece::Literal(_) => None,
                    })
                    .flat_map(|spec| {
                        let stars = [spec.width_from_arg, spec.precision_from_arg];
                        let stars = stars.into_iter().filter(|&star| star).map(|_| ArgKind::Int);
                        let value = if spec.bytes.is_some() {
                            ArgKind::Bytes
                        } else if spec.takes_string() {
                            ArgKind::Str
                        } else {
                            ArgKind::Int
                        };
                        stars.chain([value])
                    })
                    .collect();
                if wanted.len() != args.len() - 1 {
                    return Err(self.error(
                        format!(
                            "printf() format takes {} argument(s) but {} follow",
                            wanted.len(),
                            args.len() - 1
                        ),
                        pos,
                    ));
                }
                let mut bound = Vec::with_capacity(wanted.len());
                for (kind, arg) in wanted.iter().zip(&args[1..]) {
                    bound.push(match kind {
                        ArgKind::Int => Arg::Int(self.int(arg)?.0),
                        ArgKind::Str => Arg::Str(self.string(arg)?),
                        ArgKind::Bytes => Arg::Bytes(kernel::byte_source(self, arg)?),
                    });
                }
                Typed::Str(StrNode::Printf(pieces, bound))
            }
            "ksymbol" => {
                arity(1)?;
                Typed::Str(StrNode::Ksymbol(Box::new(self.int(&args[0])?.0)))
            }
            "strncmp" => {
                arity(3)?;
                Typed::Int(
                    IntNode::Strncmp(
                        Box::new(self.string(&args[0])?),
                        Box::new(self.string(&args[1])?),
                        Box::new(self.int(&args[2])?.0),
                    ),
                    false,
                )
            }
            "ntohl" => {
                arity(1)?;
                Typed::Int(IntNode::Ntohl(Box::new(self.int(&args[0])?.0)), false)
            }
            "ntohs" => {
                arity(1)?;
                Typed::Int(IntNode::Ntohs(Box::new(self.int(&args[0])?.0)), false)
            }
            _ => {
                if let Some(typed) = kernel::helper(self, name, args, pos)? {
                    return Ok(typed);
                }
                return Err(self.error(
                    format!(
                        "unknown function '{name}'; known: printf, ksymbol, strncmp, ntohl, ntohs and \
                         the print fmt helpers {}",
                        kernel::HELPERS.join(", ")
                    ),
                    pos,
                ));
            }
        })
    }
}
