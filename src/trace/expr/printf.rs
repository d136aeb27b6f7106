//! `printf(fmt, ...)`: the C conversions `%d %i %u %x %X %o %c %s %p %%` with flags
//! (`- + space # 0`), width, precision (`*` = taken from an argument, as `%.*s`) and
//! length modifiers (`hh h l ll z j t L`), plus the kernel's `%pS`/`%pF` (symbol+offset)
//! and `%ps`/`%pf` (symbol), the format parsed once when the expression is bound.
//!
//! Numbers print as glibc prints them (what libtraceevent, and so perf-prof, shows):
//! `%p` of 0 is `(nil)`; a symbol that cannot be named prints as `0x<addr>`.

use std::fmt::Write;

use super::pointer::{self, BytesStyle};

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Piece {
    Literal(String),
    Conversion(Spec),
}

#[derive(Clone, Debug, PartialEq, Default)]
pub(super) struct Spec {
    left: bool,
    plus: bool,
    space: bool,
    alternate: bool,
    zero: bool,
    width: usize,
    precision: Option<usize>,
    /// `*` width / `.*` precision: the value comes from the argument before this one.
    pub(super) width_from_arg: bool,
    pub(super) precision_from_arg: bool,
    /// Integer width in bits the value is cut to before printing (C's default `int` = 32).
    bits: u32,
    conversion: char,
    /// `%pS`/`%ps`: the address is printed as a kernel symbol.
    pub(super) symbol: Option<SymbolStyle>,
    /// `%pU`, `%pI4`, `%*pbl`...: the argument is a field's bytes, printed in this style
    /// (a bitmap's `*` is its bit count, not a width).
    pub(super) bytes: Option<BytesStyle>,
}

/// How `%pS`-style conversions name an address.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum SymbolStyle {
    /// `%pS`, `%pF`: `name+0xoffset`, as the symbolizer spells it.
    WithOffset,
    /// `%ps`, `%pf`: the name alone.
    Name,
}

impl Spec {
    pub(super) fn takes_string(&self) -> bool {
        self.conversion == 's'
    }

    /// A bitmap conversion (`%*pbl`): its `*` argument is the bit count.
    pub(super) fn is_bitmap(&self) -> bool {
        self.bytes.is_some_and(BytesStyle::is_bitmap)
    }

    /// This conversion with the width and precision its `*`s took from the arguments
    /// (C: a negative width means left-justified, a negative precision none).
    pub(super) fn with_star_args(&self, width: Option<i64>, precision: Option<i64>) -> Spec {
        let mut spec = self.clone();
        if let Some(width) = width {
            spec.left |= width < 0;
            spec.width = (width.unsigned_abs() as usize).min(MAX_WIDTH);
        }
        if let Some(precision) = precision {
            spec.precision = usize::try_from(precision).ok().map(|p| p.min(MAX_WIDTH));
        }
        spec
    }
}

/// A width beyond any terminal is a typo, not a request for gigabytes of padding.
const MAX_WIDTH: usize = 4096;

/// Parse a format; `Err` is the message and the byte offset within the format.
pub(super) fn parse_format(format: &str) -> Result<Vec<Piece>, (String, usize)> {
    let mut pieces = Vec::new();
    let mut literal = String::new();
    let mut chars = format.char_indices().peekable();
    while let Some((start, c)) = chars.next() {
        if c != '%' {
            literal.push(c);
            continue;
        }
        if chars.peek().map(|&(_, c)| c) == Some('%') {
            chars.next();
            literal.push('%');
            continue;
        }
        let mut spec = Spec {
            bits: 32,
            ..Spec::default()
        };
        while let Some(&(_, c)) = chars.peek() {
            match c {
                '-' => spec.left = true,
                '+' => spec.plus = true,
                ' ' => spec.space = true,
                '#' => spec.alternate = true,
                '0' => spec.zero = true,
                _ => break,
            }
            chars.next();
        }
        if chars.peek().map(|&(_, c)| c) == Some('*') {
            chars.next();
            spec.width_from_arg = true;
        } else {
            spec.width = digits(&mut chars);
        }
        if chars.peek().map(|&(_, c)| c) == Some('.') {
            chars.next();
            if chars.peek().map(|&(_, c)| c) == Some('*') {
                chars.next();
                spec.precision_from_arg = true;
            } else {
                spec.precision = Some(digits(&mut chars));
            }
        }
        while let Some(&(_, c)) = chars.peek() {
            spec.bits = match (c, spec.bits) {
                ('h', 16) => 8,
                ('h', _) => 16,
                ('l' | 'L' | 'z' | 'j' | 't' | 'q', _) => 64,
                _ => break,
            };
            chars.next();
        }
        let Some((_, conversion)) = chars.next() else {
            return Err(("the format ends inside a '%' conversion".into(), start));
        };
        if !matches!(conversion, 'd' | 'i' | 'u' | 'x' | 'X' | 'o' | 'c' | 's' | 'p') {
            return Err((format!("unsupported conversion '%{conversion}'"), start));
        }
        if conversion == 'p' {
            spec.bits = 64;
            let rest = chars.peek().map_or("", |&(i, _)| &format[i..]);
            let len = pointer_extension(&mut spec, rest).map_err(|message| (message, start))?;
            for _ in 0..len {
                chars.next();
            }
        }
        spec.conversion = conversion;
        if !literal.is_empty() {
            pieces.push(Piece::Literal(std::mem::take(&mut literal)));
        }
        pieces.push(Piece::Conversion(spec));
    }
    if !literal.is_empty() {
        pieces.push(Piece::Literal(literal));
    }
    Ok(pieces)
}

/// The kernel's `%p<letter>` extension at the start of `rest` (what follows `%p`), set
/// on `spec`; its length in characters. A plain `%p` is followed by anything but a letter
/// or digit.
fn pointer_extension(spec: &mut Spec, rest: &str) -> Result<usize, String> {
    if let Some((style, len)) = pointer::parse(rest, spec.width_from_arg) {
        spec.bytes = Some(style);
        return Ok(len);
    }
    let mut chars = rest.chars();
    match (chars.next(), chars.next()) {
        (Some('F' | 'f'), Some('w')) => Err("unsupported conversion '%pfw' (a firmware node)".into()),
        (Some('S' | 'F'), _) => {
            spec.symbol = Some(SymbolStyle::WithOffset);
            Ok(1)
        }
        (Some('s' | 'f'), _) => {
            spec.symbol = Some(SymbolStyle::Name);
            Ok(1)
        }
        (Some(ext), _) if ext.is_ascii_alphanumeric() => Err(format!("unsupported conversion '%p{ext}'")),
        _ => Ok(0),
    }
}

fn digits(chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>) -> usize {
    let mut value = 0usize;
    while let Some(&(_, c)) = chars.peek() {
        let Some(d) = c.to_digit(10) else { break };
        value = (value * 10 + d as usize).min(MAX_WIDTH);
        chars.next();
    }
    value
}

/// Append `value` converted by `spec`.
pub(super) fn format_int(out: &mut String, spec: &Spec, value: i64) {
    let mask = if spec.bits >= 64 {
        u64::MAX
    } else {
        (1u64 << spec.bits) - 1
    };
    let unsigned = value as u64 & mask;
    // Sign-extend the cut value back for %d.
    let signed = if spec.bits >= 64 {
        value
    } else {
        let shift = 64 - spec.bits;
        ((unsigned << shift) as i64) >> shift
    };
    let (sign, prefix, mut body) = match spec.conversion {
        'd' | 'i' => {
            let sign = if signed < 0 {
                "-"
            } else if spec.plus {
                "+"
            } else if spec.space {
                " "
            } else {
                ""
            };
            (sign, "", signed.unsigned_abs().to_string())
        }
        'u' => ("", "", unsigned.to_string()),
        'x' => ("", alt(spec, unsigned, "0x"), format!("{unsigned:x}")),
        'X' => ("", alt(spec, unsigned, "0X"), format!("{unsigned:X}")),
        'o' => ("", alt(spec, unsigned, "0"), format!("{unsigned:o}")),
        // glibc's `%p`, which libtraceevent hands the value to.
        'p' if unsigned == 0 => ("", "", "(nil)".to_string()),
        'p' => ("", "0x", format!("{unsigned:x}")),
        'c' => {
            let ch = char::from_u32(unsigned as u32 & 0xff).unwrap_or('?');
            pad(out, spec, "", &ch.to_string(), false);
            return;
        }
        _ => ("", "", String::new()),
    };
    if let Some(precision) = spec.precision.filter(|_| spec.conversion != 'p') {
        if body.len() < precision {
            body.insert_str(0, &"0".repeat(precision - body.len()));
        } else if precision == 0 && unsigned == 0 {
            body.clear();
        }
    }
    let head = format!("{sign}{prefix}");
    pad(out, spec, &head, &body, spec.zero && spec.precision.is_none());
}

fn alt(spec: &Spec, value: u64, prefix: &'static str) -> &'static str {
    if spec.alternate && value != 0 { prefix } else { "" }
}

/// Append `text` converted by `%s` (precision cuts it, in characters).
pub(super) fn format_str(out: &mut String, spec: &Spec, text: &str) {
    let text = match spec.precision {
        Some(p) => match text.char_indices().nth(p) {
            Some((end, _)) => &text[..end],
            None => text,
        },
        None => text,
    };
    pad(out, spec, "", text, false);
}

fn pad(out: &mut String, spec: &Spec, head: &str, body: &str, zero_fill: bool) {
    let len = head.chars().count() + body.chars().count();
    let fill = spec.width.saturating_sub(len);
    if spec.left {
        let _ = write!(out, "{head}{body}{:fill$}", "");
    } else if zero_fill {
        let _ = write!(out, "{head}{}{body}", "0".repeat(fill));
    } else {
        let _ = write!(out, "{:fill$}{head}{body}", "");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(format: &str, ints: &[i64], strs: &[&str]) -> String {
        let pieces = parse_format(format).expect("format parses");
        let (mut ints, mut strs) = (ints.iter(), strs.iter());
        let mut out = String::new();
        for piece in &pieces {
            match piece {
                Piece::Literal(text) => out.push_str(text),
                Piece::Conversion(spec) if spec.takes_string() => {
                    format_str(&mut out, spec, strs.next().expect("a string argument"))
                }
                Piece::Conversion(spec) => format_int(&mut out, spec, *ints.next().expect("an int argument")),
            }
        }
        out
    }

    #[test]
    fn conversions_match_c() {
        assert_eq!(run("pid %d", &[42], &[]), "pid 42");
        assert_eq!(run("%5d|%-5d|%05d", &[-3, 7, -42], &[]), "   -3|7    |-0042");
        assert_eq!(
            run("%x %#x %X %lx", &[255, 255, 255, -1], &[]),
            "ff 0xff FF ffffffffffffffff"
        );
        assert_eq!(run("%x", &[-1], &[]), "ffffffff", "%x without 'l' is 32-bit");
        assert_eq!(run("%u %lu", &[-1, -1], &[]), "4294967295 18446744073709551615");
        assert_eq!(run("%d", &[0x1_0000_0001], &[]), "1", "%d is a C int");
        assert_eq!(run("%ld", &[0x1_0000_0001], &[]), "4294967297");
        assert_eq!(run("%o %c %p", &[8, 65, 0x1000], &[]), "10 A 0x1000");
        assert_eq!(
            run("[%-8s][%8s][%.3s]", &[], &["ab", "cd", "kworker"]),
            "[ab      ][      cd][kwo]"
        );
        assert_eq!(run("100%%", &[], &[]), "100%");
        assert_eq!(run("%+d % d %.4d", &[5, 5, 5], &[]), "+5  5 0005");
        assert_eq!(run("%hhx", &[0x1ff], &[]), "ff");
    }

    #[test]
    fn bad_formats_are_errors() {
        assert_eq!(parse_format("a %").unwrap_err().1, 2);
        assert!(parse_format("%f").unwrap_err().0.contains("%f"));
    }
}
