//! What unit an expression over an event gives, where the kernel says so: a field whose
//! name ends in `_ns` (`nmi_handler`'s `delta_ns`), or whose `print fmt:` writes it with
//! `ns` after its conversion (`sched_stat_runtime`'s `runtime=%Lu [ns]`, `kvm`'s
//! `time %lld ns`), is a duration in nanoseconds; anything else — another field, an
//! arithmetic expression — is a plain number. num-dist labels its distributions with it.

use super::event::EventLayout;
use crate::model::units::ValueUnit;

/// The unit of `expr` (a `num=` text) over events of `layout`.
pub fn expr_unit(layout: &EventLayout, expr: &str) -> ValueUnit {
    let name = expr.trim();
    let is_field = layout.field(name).is_some();
    if is_field && (name.ends_with("_ns") || nanosecond_fields(&layout.print_fmt).any(|f| f == name)) {
        ValueUnit::Nanoseconds
    } else {
        ValueUnit::Number
    }
}

/// The fields a print fmt writes as nanoseconds: its `REC->field` arguments whose
/// conversion the format string follows with `ns` or `[ns]`.
fn nanosecond_fields(print_fmt: &str) -> impl Iterator<Item = &str> {
    let (format, args) = split_print_fmt(print_fmt).unwrap_or_default();
    let args = arguments(args);
    conversions(format)
        .into_iter()
        .filter(|&(_, after)| reads_ns(after))
        .filter_map(move |(arg, _)| args.get(arg).and_then(|a| record_field(a)))
}

/// The format string (without its quotes) and the argument text after it.
fn split_print_fmt(print_fmt: &str) -> Option<(&str, &str)> {
    let text = print_fmt.trim();
    let body = text.strip_prefix('"')?;
    let b = body.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return Some((&body[..i], body[i + 1..].trim_start().trim_start_matches(','))),
            _ => i += 1,
        }
    }
    None
}

/// The arguments, split at the commas outside brackets and strings.
fn arguments(args: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    let (mut in_string, mut escaped) = (false, false);
    for (i, c) in args.char_indices() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(args[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    if !args[start..].trim().is_empty() {
        out.push(args[start..].trim());
    }
    out
}

/// Each conversion of `format`: the index of the argument it prints (a `*` width or
/// precision takes one too) and the format text after it.
fn conversions(format: &str) -> Vec<(usize, &str)> {
    let b = format.as_bytes();
    let mut out = Vec::new();
    let mut arg = 0;
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'%' {
            i += 1;
            continue;
        }
        i += 1;
        if b.get(i) == Some(&b'%') {
            i += 1;
            continue;
        }
        while i < b.len()
            && (b"-+ #0".contains(&b[i]) || b[i].is_ascii_digit() || b[i] == b'.' || b[i] == b'*')
        {
            if b[i] == b'*' {
                arg += 1;
            }
            i += 1;
        }
        while i < b.len() && b"hlLqjzZt".contains(&b[i]) {
            i += 1;
        }
        let Some(&conversion) = b.get(i) else { break };
        i += 1;
        if conversion == b'p' {
            // The kernel's %pS, %pI4, %pK…: letters and digits after the p.
            while i < b.len() && b[i].is_ascii_alphanumeric() {
                i += 1;
            }
        }
        out.push((arg, &format[i..]));
        arg += 1;
    }
    out
}

/// Format text that starts by naming nanoseconds: `ns`, ` ns`, ` [ns]`.
fn reads_ns(after: &str) -> bool {
    let rest = after.trim_start_matches(' ');
    let rest = rest.strip_prefix('[').unwrap_or(rest);
    rest.strip_prefix("ns")
        .is_some_and(|r| !r.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_'))
}

/// The field an argument prints: `REC->runtime`, `(unsigned long long)REC->runtime`,
/// `((u64)(REC->runtime))`; `None` for anything computed.
fn record_field(arg: &str) -> Option<&str> {
    let at = arg.find("REC->")?;
    let name = &arg[at + 5..];
    let end = name
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(name.len());
    let rest = name[end..].trim_matches(|c: char| c == ')' || c.is_whitespace());
    // Only casts and parentheses around the field: no operator, no call.
    let before = &arg[..at];
    let only_casts = before
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '(' || c == ')' || c == ' ' || c == '*');
    (rest.is_empty() && only_casts && end > 0).then(|| &name[..end])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::event::{FieldKind, FieldLayout};

    fn layout(fields: &[&str], print_fmt: &str) -> EventLayout {
        EventLayout {
            system: "sys".into(),
            name: "event".into(),
            id: 1,
            fields: fields
                .iter()
                .enumerate()
                .map(|(i, name)| FieldLayout {
                    name: name.to_string(),
                    declaration: format!("u64 {name}"),
                    offset: 8 + i * 8,
                    size: 8,
                    kind: FieldKind::Unsigned,
                })
                .collect(),
            print_fmt: print_fmt.into(),
        }
    }

    /// The print fmts as this machine's 6.x kernel writes them in tracefs.
    #[test]
    fn the_kernels_own_ns_marks_make_a_field_a_duration() {
        let runtime = layout(
            &["comm", "pid", "runtime"],
            "\"comm=%s pid=%d runtime=%Lu [ns]\", __get_str(comm), REC->pid, (unsigned long long)REC->runtime",
        );
        assert_eq!(expr_unit(&runtime, "runtime"), ValueUnit::Nanoseconds);
        assert_eq!(expr_unit(&runtime, " runtime "), ValueUnit::Nanoseconds);
        assert_eq!(expr_unit(&runtime, "pid"), ValueUnit::Number);
        assert_eq!(
            expr_unit(&runtime, "runtime/1000"),
            ValueUnit::Number,
            "an expression: no unit"
        );
        let poll = layout(
            &["ns", "waited", "valid"],
            "\"%s time %lld ns, polling %s\", REC->waited ? \"wait\" : \"poll\", REC->ns, REC->valid ? \"valid\" : \"invalid\"",
        );
        assert_eq!(expr_unit(&poll, "ns"), ValueUnit::Nanoseconds);
        let nmi = layout(
            &["handler", "delta_ns", "handled"],
            "\"%ps() delta_ns: %lld handled: %d\", REC->handler, REC->delta_ns, REC->handled",
        );
        assert_eq!(expr_unit(&nmi, "delta_ns"), ValueUnit::Nanoseconds);
        assert_eq!(expr_unit(&nmi, "handled"), ValueUnit::Number);
    }

    #[test]
    fn sizes_counts_and_return_values_are_numbers() {
        let read = layout(
            &["__syscall_nr", "fd", "buf", "count"],
            "\"fd: 0x%08lx, buf: 0x%08lx, count: 0x%08lx\", ((unsigned long)(REC->fd)), ((unsigned long)(REC->buf)), ((unsigned long)(REC->count))",
        );
        assert_eq!(expr_unit(&read, "count"), ValueUnit::Number);
        // `ns` must be a word of its own: "nsec" or "nsid" is not nanoseconds.
        let ids = layout(&["a", "b"], "\"a=%d nsid b=%d nsecs\", REC->a, REC->b");
        assert_eq!(expr_unit(&ids, "a"), ValueUnit::Number);
        assert_eq!(expr_unit(&ids, "b"), ValueUnit::Number);
        // A `*` width takes an argument; `%%` none.
        let star = layout(&["w", "t"], "\"%% %*d t=%llu ns\", REC->w, 5, REC->t");
        assert_eq!(expr_unit(&star, "t"), ValueUnit::Nanoseconds);
        assert_eq!(expr_unit(&layout(&["x"], "garbage"), "x"), ValueUnit::Number);
        // A comma inside a string argument does not shift the arguments after it.
        let quoted = layout(&["s", "t"], "\"%s %llu ns\", REC->s ? \"a,b\" : \"c\", REC->t");
        assert_eq!(expr_unit(&quoted, "t"), ValueUnit::Nanoseconds);
    }
}
