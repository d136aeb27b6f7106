//! Recursive-descent parser with C precedence: ternary, `||`, `&&`, `|`, `^`, `&`,
//! equality (`== != ~`), relational, shifts, additive, multiplicative, unary, postfix `[]`
//! and `->`. Also the C bits kernel print fmts use: adjacent string literals concatenate,
//! `sizeof(type)` is a number, `{ a, b }` is a list (a table entry of `__print_symbolic`).

use super::ExprError;
use super::ast::{BinaryOp, Node, NodeKind, UnaryOp};
use super::lexer::{Lexer, Punct, Token};

/// Deeper trees are refused: evaluation recurses, and a hostile `((((…` must not overflow
/// the stack.
pub(super) const MAX_DEPTH: usize = 64;

/// How to read a kernel filter's unquoted values.
pub(super) type StringField<'a> = &'a dyn Fn(&str) -> bool;

pub(super) struct Parser<'t, 'f> {
    text: &'t str,
    lexer: Lexer<'t>,
    token: Token,
    token_pos: usize,
    depth: usize,
    /// Filter mode: after `field ==`, `!=` or `~` where `field` is a string field, the
    /// value may be written without quotes, as the kernel accepts.
    string_field: Option<StringField<'f>>,
}

impl<'t, 'f> Parser<'t, 'f> {
    pub(super) fn new(text: &'t str, string_field: Option<StringField<'f>>) -> Result<Self, ExprError> {
        let mut lexer = Lexer::new(text);
        let (token, token_pos) = lexer.next()?;
        Ok(Self {
            text,
            lexer,
            token,
            token_pos,
            depth: 0,
            string_field,
        })
    }

    pub(super) fn parse_all(mut self) -> Result<Node, ExprError> {
        if self.token == Token::Eof {
            return Err(self.error("empty expression", self.token_pos));
        }
        let node = self.ternary()?;
        if self.token != Token::Eof {
            return Err(self.error(
                format!("unexpected {} after the expression", describe(&self.token)),
                self.token_pos,
            ));
        }
        Ok(node)
    }

    /// A tracepoint's `print fmt:` text, `"format", arg, arg...`, read as the call
    /// `printf("format", arg, arg...)`.
    pub(super) fn parse_print_fmt(mut self) -> Result<Node, ExprError> {
        let pos = self.token_pos;
        if !matches!(self.token, Token::Str(_)) {
            return Err(self.error("a print fmt starts with its format string", pos));
        }
        self.lexer.char_literals = true;
        let mut args = vec![self.primary()?];
        while self.eat(Punct::Comma)? {
            args.push(self.ternary()?);
        }
        if self.token != Token::Eof {
            return Err(self.error(
                format!(
                    "unexpected {} after the print fmt's arguments",
                    describe(&self.token)
                ),
                self.token_pos,
            ));
        }
        Ok(Node {
            pos,
            kind: NodeKind::Call("printf".into(), args),
        })
    }

    fn error(&self, message: impl Into<String>, position: usize) -> ExprError {
        ExprError::new(message, self.text, position)
    }

    fn advance(&mut self) -> Result<(), ExprError> {
        let (token, pos) = self.lexer.next()?;
        self.token = token;
        self.token_pos = pos;
        Ok(())
    }

    fn eat(&mut self, punct: Punct) -> Result<bool, ExprError> {
        if self.token == Token::Punct(punct) {
            self.advance()?;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    fn expect(&mut self, punct: Punct, context: &str) -> Result<(), ExprError> {
        if self.eat(punct)? {
            Ok(())
        } else {
            Err(self.error(
                format!(
                    "expected '{}' {context}, found {}",
                    punct.text(),
                    describe(&self.token)
                ),
                self.token_pos,
            ))
        }
    }

    fn enter(&mut self, pos: usize) -> Result<(), ExprError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error(format!("expression nested deeper than {MAX_DEPTH} levels"), pos));
        }
        Ok(())
    }

    fn ternary(&mut self) -> Result<Node, ExprError> {
        self.enter(self.token_pos)?;
        let cond = self.binary(0)?;
        let node = if self.token == Token::Punct(Punct::Question) {
            self.advance()?;
            let then = self.ternary()?;
            self.expect(Punct::Colon, "in 'cond ? a : b'")?;
            let otherwise = self.ternary()?;
            Node {
                pos: cond.pos,
                kind: NodeKind::Ternary(Box::new(cond), Box::new(then), Box::new(otherwise)),
            }
        } else {
            cond
        };
        self.depth -= 1;
        Ok(node)
    }

    /// Precedence climbing over the binary levels (0 = `||` … 9 = `* / %`): one frame per
    /// operator of rising precedence, not one per level, so nesting stays cheap.
    fn binary(&mut self, min_level: usize) -> Result<Node, ExprError> {
        let mut lhs = self.unary()?;
        // Left-associative chains build a left-leaning tree without recursing here, so
        // count their depth explicitly.
        let mut chain = 0;
        while let Token::Punct(p) = self.token {
            let Some((level, op)) = level_of(p) else {
                break;
            };
            if level < min_level {
                break;
            }
            let op_pos = self.token_pos;
            chain += 1;
            self.enter(op_pos)?;
            let rhs = if self.string_field.is_some()
                && matches!(op, BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Glob)
                && self.is_string_field(&lhs)
                && !self.lexer.next_is_quoted()
            {
                let (word, pos) = self.lexer.bare_word();
                self.advance()?;
                Node {
                    pos,
                    kind: NodeKind::BareWord(word),
                }
            } else {
                self.advance()?;
                self.binary(level + 1)?
            };
            lhs = Node {
                pos: op_pos,
                kind: NodeKind::Binary(op, Box::new(lhs), Box::new(rhs)),
            };
        }
        self.depth -= chain;
        Ok(lhs)
    }

    fn is_string_field(&self, node: &Node) -> bool {
        match (&node.kind, self.string_field) {
            (NodeKind::Ident(name), Some(is_string)) => is_string(name),
            _ => false,
        }
    }

    fn unary(&mut self) -> Result<Node, ExprError> {
        let pos = self.token_pos;
        let op = match self.token {
            Token::Punct(Punct::Minus) => Some(UnaryOp::Neg),
            Token::Punct(Punct::Bang) => Some(UnaryOp::Not),
            Token::Punct(Punct::Tilde) => Some(UnaryOp::BitNot),
            Token::Punct(Punct::Plus) => None,
            _ => return self.postfix(),
        };
        self.enter(pos)?;
        self.advance()?;
        let operand = self.unary()?;
        self.depth -= 1;
        Ok(match op {
            Some(op) => Node {
                pos,
                kind: NodeKind::Unary(op, Box::new(operand)),
            },
            None => operand,
        })
    }

    fn postfix(&mut self) -> Result<Node, ExprError> {
        let mut node = self.primary()?;
        let mut chain = 0;
        loop {
            let pos = self.token_pos;
            if self.token == Token::Punct(Punct::LBracket) {
                chain += 1;
                self.enter(pos)?;
                self.advance()?;
                let index = self.ternary()?;
                self.expect(Punct::RBracket, "to close the index")?;
                node = Node {
                    pos: node.pos,
                    kind: NodeKind::Index(Box::new(node), Box::new(index)),
                };
            } else if self.token == Token::Punct(Punct::Arrow) {
                chain += 1;
                self.enter(pos)?;
                self.advance()?;
                let Token::Ident(member) = std::mem::replace(&mut self.token, Token::Eof) else {
                    return Err(self.error("expected a field name after '->'", self.token_pos));
                };
                self.advance()?;
                node = Node {
                    pos: node.pos,
                    kind: NodeKind::Member(Box::new(node), member),
                };
            } else {
                break;
            }
        }
        self.depth -= chain;
        Ok(node)
    }

    fn primary(&mut self) -> Result<Node, ExprError> {
        let pos = self.token_pos;
        let token = std::mem::replace(&mut self.token, Token::Eof);
        let kind = match token {
            Token::Int(value) => {
                self.advance()?;
                NodeKind::Int(value)
            }
            Token::Str(mut text) => {
                self.advance()?;
                // C concatenates adjacent literals: `"APIC_" "ID"`.
                while let Token::Str(more) = &self.token {
                    text.push_str(more);
                    self.advance()?;
                }
                NodeKind::Str(text)
            }
            Token::Ident(name) if name == "sizeof" && self.lexer_at_paren() => {
                // The lexer stands just past the `(` the current token is.
                self.advance()?;
                let Some(type_name) = self.lexer.cast_type() else {
                    return Err(self.error("sizeof() takes a C scalar type (sizeof(u64))", pos));
                };
                self.advance()?;
                NodeKind::Int(super::ctype::scalar_size(&type_name).unwrap_or(8) as u64)
            }
            Token::Punct(Punct::LBrace) => {
                self.enter(pos)?;
                self.advance()?;
                let mut items = Vec::new();
                if !self.eat(Punct::RBrace)? {
                    loop {
                        items.push(self.ternary()?);
                        if self.eat(Punct::RBrace)? {
                            break;
                        }
                        self.expect(Punct::Comma, "or '}' between list items")?;
                    }
                }
                self.depth -= 1;
                NodeKind::List(items)
            }
            Token::Ident(name) => {
                self.advance()?;
                if self.eat(Punct::LParen)? {
                    NodeKind::Call(name, self.arguments()?)
                } else {
                    NodeKind::Ident(name)
                }
            }
            Token::Punct(Punct::LParen) => {
                if let Some(type_name) = self.lexer.cast_type() {
                    // A cast binds like a unary operator.
                    self.enter(pos)?;
                    self.advance()?;
                    let operand = self.unary()?;
                    self.depth -= 1;
                    return Ok(Node {
                        pos,
                        kind: NodeKind::Cast(type_name, Box::new(operand)),
                    });
                }
                self.advance()?;
                let inner = self.ternary()?;
                self.expect(Punct::RParen, "to close '('")?;
                return Ok(inner);
            }
            other => {
                self.token = other;
                return Err(self.error(format!("expected a value, found {}", describe(&self.token)), pos));
            }
        };
        Ok(Node { pos, kind })
    }

    /// Whether the next character in the text (after the current token) is `(`.
    fn lexer_at_paren(&self) -> bool {
        self.lexer.rest().trim_start().starts_with('(')
    }

    fn arguments(&mut self) -> Result<Vec<Node>, ExprError> {
        let mut args = Vec::new();
        if self.eat(Punct::RParen)? {
            return Ok(args);
        }
        loop {
            args.push(self.ternary()?);
            if self.eat(Punct::RParen)? {
                return Ok(args);
            }
            self.expect(Punct::Comma, "or ')' between arguments")?;
        }
    }
}

fn level_of(punct: Punct) -> Option<(usize, BinaryOp)> {
    LEVELS
        .iter()
        .enumerate()
        .find_map(|(level, ops)| ops.iter().find(|(p, _)| *p == punct).map(|&(_, op)| (level, op)))
}

const LEVELS: [&[(Punct, BinaryOp)]; 10] = [
    &[(Punct::OrOr, BinaryOp::Or)],
    &[(Punct::AndAnd, BinaryOp::And)],
    &[(Punct::Pipe, BinaryOp::BitOr)],
    &[(Punct::Caret, BinaryOp::BitXor)],
    &[(Punct::Amp, BinaryOp::BitAnd)],
    &[
        (Punct::EqEq, BinaryOp::Eq),
        (Punct::Ne, BinaryOp::Ne),
        (Punct::Tilde, BinaryOp::Glob),
    ],
    &[
        (Punct::Lt, BinaryOp::Lt),
        (Punct::Le, BinaryOp::Le),
        (Punct::Gt, BinaryOp::Gt),
        (Punct::Ge, BinaryOp::Ge),
    ],
    &[(Punct::Shl, BinaryOp::Shl), (Punct::Shr, BinaryOp::Shr)],
    &[(Punct::Plus, BinaryOp::Add), (Punct::Minus, BinaryOp::Sub)],
    &[
        (Punct::Star, BinaryOp::Mul),
        (Punct::Slash, BinaryOp::Div),
        (Punct::Percent, BinaryOp::Rem),
    ],
];

fn describe(token: &Token) -> String {
    match token {
        Token::Eof => "the end".into(),
        Token::Int(v) => format!("number {v}"),
        Token::Str(_) => "a string".into(),
        Token::Ident(name) => format!("'{name}'"),
        Token::Punct(p) => format!("'{}'", p.text()),
    }
}
