//! Tokens of the expression language, each with the byte offset it starts at (errors
//! point there).

use super::ExprError;

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Token {
    Int(u64),
    Str(String),
    Ident(String),
    Punct(Punct),
    Eof,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Punct {
    LParen,
    RParen,
    LBracket,
    RBracket,
    /// `{` and `}`: the `{ value, "name" }` entries of `__print_symbolic`/`__print_flags`.
    LBrace,
    RBrace,
    /// `->`: `REC->field` in a tracepoint's print fmt.
    Arrow,
    Comma,
    Question,
    Colon,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Shl,
    Shr,
    Lt,
    Le,
    Gt,
    Ge,
    EqEq,
    Ne,
    Amp,
    Caret,
    Pipe,
    AndAnd,
    OrOr,
    Bang,
    Tilde,
}

impl Punct {
    pub(super) fn text(self) -> &'static str {
        use Punct::*;
        match self {
            LParen => "(",
            RParen => ")",
            LBracket => "[",
            RBracket => "]",
            LBrace => "{",
            RBrace => "}",
            Arrow => "->",
            Comma => ",",
            Question => "?",
            Colon => ":",
            Plus => "+",
            Minus => "-",
            Star => "*",
            Slash => "/",
            Percent => "%",
            Shl => "<<",
            Shr => ">>",
            Lt => "<",
            Le => "<=",
            Gt => ">",
            Ge => ">=",
            EqEq => "==",
            Ne => "!=",
            Amp => "&",
            Caret => "^",
            Pipe => "|",
            AndAnd => "&&",
            OrOr => "||",
            Bang => "!",
            Tilde => "~",
        }
    }
}

pub(super) struct Lexer<'t> {
    text: &'t str,
    pos: usize,
    /// C's `'c'`: a single-quoted character is a number (print fmts), not a string
    /// (filters and attributes, where `'bash'` is a string).
    pub(super) char_literals: bool,
}

impl<'t> Lexer<'t> {
    pub(super) fn new(text: &'t str) -> Self {
        Self {
            text,
            pos: 0,
            char_literals: false,
        }
    }

    /// The text not read yet.
    pub(super) fn rest(&self) -> &'t str {
        &self.text[self.pos..]
    }

    fn skip_space(&mut self) {
        let rest = &self.text[self.pos..];
        self.pos += rest.len() - rest.trim_start().len();
    }

    fn error(&self, message: impl Into<String>, position: usize) -> ExprError {
        ExprError::new(message, self.text, position)
    }

    /// Whether the next token is a quoted string, a parenthesis or the end (so not a bare
    /// filter value).
    pub(super) fn next_is_quoted(&mut self) -> bool {
        self.skip_space();
        matches!(
            self.text.as_bytes().get(self.pos),
            Some(b'"' | b'\'' | b'(') | None
        )
    }

    /// A kernel filter value written without quotes (`prev_comm == bash`, `comm ~ kwork*`):
    /// everything up to white space, `)`, `&` or `|`.
    pub(super) fn bare_word(&mut self) -> (String, usize) {
        self.skip_space();
        let start = self.pos;
        let rest = &self.text[start..];
        let len = rest
            .find(|c: char| c.is_whitespace() || matches!(c, ')' | '&' | '|'))
            .unwrap_or(rest.len());
        self.pos += len;
        (rest[..len].to_string(), start)
    }

    /// After a `(`: a C scalar type name closed by `)` (`(u32)`, `(unsigned long)`,
    /// `(void *)`), consumed and returned normalized; otherwise nothing is consumed.
    pub(super) fn cast_type(&mut self) -> Option<String> {
        let rest = &self.text[self.pos..];
        let close = rest.find(')')?;
        let inner = &rest[..close];
        if !inner
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b' ' || b == b'*')
        {
            return None;
        }
        let name = inner
            .replace('*', " * ")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        super::ctype::scalar_size(&name)?;
        self.pos += close + 1;
        Some(name)
    }

    /// The next token and its offset.
    pub(super) fn next(&mut self) -> Result<(Token, usize), ExprError> {
        self.skip_space();
        let start = self.pos;
        let bytes = self.text.as_bytes();
        let Some(&c) = bytes.get(start) else {
            return Ok((Token::Eof, start));
        };
        let token = match c {
            b'0'..=b'9' => self.number(start)?,
            b'"' | b'\'' => self.string(start, c)?,
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let len = bytes[start..]
                    .iter()
                    .position(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
                    .unwrap_or(bytes.len() - start);
                self.pos += len;
                Token::Ident(self.text[start..start + len].to_string())
            }
            _ => Token::Punct(self.punct(start)?),
        };
        Ok((token, start))
    }

    fn punct(&mut self, start: usize) -> Result<Punct, ExprError> {
        use Punct::*;
        let bytes = self.text.as_bytes();
        let next = bytes.get(start + 1).copied();
        let (punct, len) = match (bytes[start], next) {
            (b'<', Some(b'<')) => (Shl, 2),
            (b'>', Some(b'>')) => (Shr, 2),
            (b'<', Some(b'=')) => (Le, 2),
            (b'>', Some(b'=')) => (Ge, 2),
            (b'=', Some(b'=')) => (EqEq, 2),
            (b'!', Some(b'=')) => (Ne, 2),
            (b'&', Some(b'&')) => (AndAnd, 2),
            (b'|', Some(b'|')) => (OrOr, 2),
            (b'-', Some(b'>')) => (Arrow, 2),
            (b'(', _) => (LParen, 1),
            (b')', _) => (RParen, 1),
            (b'[', _) => (LBracket, 1),
            (b']', _) => (RBracket, 1),
            (b'{', _) => (LBrace, 1),
            (b'}', _) => (RBrace, 1),
            (b',', _) => (Comma, 1),
            (b'?', _) => (Question, 1),
            (b':', _) => (Colon, 1),
            (b'+', _) => (Plus, 1),
            (b'-', _) => (Minus, 1),
            (b'*', _) => (Star, 1),
            (b'/', _) => (Slash, 1),
            (b'%', _) => (Percent, 1),
            (b'<', _) => (Lt, 1),
            (b'>', _) => (Gt, 1),
            (b'&', _) => (Amp, 1),
            (b'^', _) => (Caret, 1),
            (b'|', _) => (Pipe, 1),
            (b'!', _) => (Bang, 1),
            (b'~', _) => (Tilde, 1),
            (b'=', _) => return Err(self.error("'=' is not an operator here; use '=='", start)),
            _ => {
                let ch = self.text[start..].chars().next().unwrap_or('?');
                return Err(self.error(format!("unexpected character '{ch}'"), start));
            }
        };
        self.pos += len;
        Ok(punct)
    }

    /// Decimal, `0x` hex or leading-`0` octal, as C spells them; `u`/`l` suffixes ignored.
    fn number(&mut self, start: usize) -> Result<Token, ExprError> {
        let rest = &self.text[start..];
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let word = &rest[..len];
        let digits = word.trim_end_matches(['u', 'U', 'l', 'L']);
        let (radix, body) = if let Some(hex) = digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X"))
        {
            (16, hex)
        } else if digits.len() > 1 && digits.starts_with('0') {
            (8, &digits[1..])
        } else {
            (10, digits)
        };
        let value = u64::from_str_radix(body, radix)
            .map_err(|_| self.error(format!("bad number '{word}'"), start))?;
        self.pos += len;
        Ok(Token::Int(value))
    }

    fn string(&mut self, start: usize, quote: u8) -> Result<Token, ExprError> {
        let mut out = String::new();
        let mut chars = self.text[start + 1..].char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                c if c as u32 == u32::from(quote) => {
                    self.pos = start + 1 + i + 1;
                    if self.char_literals && quote == b'\'' {
                        let mut chars = out.chars();
                        return match (chars.next(), chars.next()) {
                            (Some(c), None) => Ok(Token::Int(u64::from(u32::from(c)))),
                            _ => Err(self.error("a character literal holds one character", start)),
                        };
                    }
                    return Ok(Token::Str(out));
                }
                '\\' => {
                    let Some((_, escaped)) = chars.next() else { break };
                    out.push(match escaped {
                        'n' => '\n',
                        't' => '\t',
                        'r' => '\r',
                        '0' => '\0',
                        other => other,
                    });
                }
                c => out.push(c),
            }
        }
        Err(self.error("unterminated string", start))
    }
}
