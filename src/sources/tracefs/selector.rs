//! The perf-prof event selector grammar (notes/perf-prof.md §2.2):
//!
//! ```text
//! events := event (',' event)*
//! event  := SYS ':' NAME [ '/' filter '/' (attr '/')* ]   a '/' after the name needs its closing '/'
//!         | PROBE [ '/' filter '/' (attr '/')* ]          uprobe:BINARY:FUNC[+OFF], … (see probe.rs)
//! attr   := KEY | KEY '=' VALUE                           empty attrs ('//') are ignored
//! ```
//!
//! Separators are found by [`next_sep`], which skips quoted runs and balanced parentheses,
//! so `top-by=(runtime/1000)` and `key="a,b"` keep their `/` and `,`. Surrounding quotes
//! are stripped from the name, the filter and attribute values. The filter is kernel ftrace
//! text, passed through verbatim. Expression attributes are parsed here so their syntax
//! errors point into the selector; names are bound later, against the event's layout
//! ([`super::resolve`]).

use std::fmt;
use std::sync::Arc;

use crate::trace::expr::{Expr, caret_column, glob};

mod probe;
pub use probe::{ProbeAt, ProbeSpec, UprobeSpec};

/// The longest system or event name there can be: a tracefs directory name (NAME_MAX).
pub const MAX_NAME_CHARS: usize = 255;

/// The byte offset of each `:`-separated part of `name`.
fn name_parts_offsets(name: &str) -> impl Iterator<Item = usize> + '_ {
    std::iter::once(0).chain(name.match_indices(':').map(|(i, _)| i + 1))
}

/// A malformed selector: the message, the selector text and the byte offset of the bad
/// character. Displayed as the message, the text, and a caret under that character.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct SelectorError {
    pub message: String,
    pub text: String,
    pub position: usize,
    /// A further line, e.g. the list of known attributes.
    pub hint: Option<String>,
}

impl SelectorError {
    pub(super) fn new(message: impl Into<String>, text: &str, position: usize) -> Self {
        Self {
            message: message.into(),
            text: text.to_string(),
            position: position.min(text.len()),
            hint: None,
        }
    }

    fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

impl fmt::Display for SelectorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let column = caret_column(&self.text, self.position);
        write!(
            f,
            "bad event selector: {}\n  {}\n  {}^",
            self.message,
            self.text,
            crate::model::text::spaces(column)
        )?;
        if let Some(hint) = &self.hint {
            write!(f, "\n{hint}")?;
        }
        Ok(())
    }
}

/// An expression attribute (`key=`, `top-by=`, ...): parsed, with the byte offset of its
/// text inside the selector so binding errors can point there too.
#[derive(Clone, Debug, PartialEq)]
pub struct AttrExpr {
    pub expr: Expr,
    pub offset: usize,
}

/// One event of a selector, before wildcard expansion and before tracefs is consulted.
#[derive(Clone, Debug, PartialEq)]
pub struct EventSpec {
    /// The system and event name as written; either may hold a glob until [`super::resolve`].
    pub system: String,
    pub name: String,
    /// Kernel ftrace filter text, verbatim (quotes stripped); `None` when absent or empty.
    pub filter: Option<String>,
    /// Sample the callchain with this event (`stack`, or implied by `max-stack=`).
    pub stack: bool,
    /// `max-stack=N`, capped at 127 as perf-prof does.
    pub max_stack: Option<u16>,
    pub alias: Option<String>,
    pub key: Option<AttrExpr>,
    /// Sees one variable, `key` (bind with `Expr::bind_vars(&["key"])`).
    pub printkey: Option<AttrExpr>,
    pub role: Option<AttrExpr>,
    pub untraced: bool,
    pub trigger: bool,
    /// Summed, sorted-by columns of `top`, in the order given.
    pub top_by: Vec<AttrExpr>,
    /// Summed display columns of `top`, in the order given.
    pub top_add: Vec<AttrExpr>,
    pub comm: Option<AttrExpr>,
    /// CPUs this event is opened on (`cpus=0-3` or `cpus="0,2"`).
    pub cpus: Option<Vec<u32>>,
    pub num: Option<AttrExpr>,
    /// kmemleak/kmemprof: the allocation's address (alloc and free events).
    pub ptr: Option<AttrExpr>,
    /// kmemleak/kmemprof: the allocation's size in bytes (alloc events).
    pub size: Option<AttrExpr>,
    /// `exec=EXPR`: evaluated after each event `trace` prints (a `printf(...)` prints).
    pub exec: Option<AttrExpr>,
    /// A uprobe (or kprobe) to define before the event can be resolved.
    pub probe: Option<ProbeSpec>,
    /// The whole selector text this event came from, for errors found later.
    pub source: Arc<str>,
    /// Byte offset of the name in `source`.
    pub name_offset: usize,
}

impl EventSpec {
    /// `sys:name`.
    pub fn full_name(&self) -> String {
        format!("{}:{}", self.system, self.name)
    }

    /// Whether the name is a pattern to expand against the event list.
    pub fn is_wildcard(&self) -> bool {
        self.probe.is_none() && glob::is_glob(&self.system) || glob::is_glob(&self.name)
    }

    /// Whether the event `system:name` (a live or a recorded one) is one this spec names:
    /// the glob matches, or it is the probe this spec defined (in a perfscope group, a
    /// duplicate name with `_N` added).
    pub fn names_event(&self, system: &str, name: &str) -> bool {
        if self.probe.is_some() {
            let numbered = name
                .strip_prefix(self.name.as_str())
                .and_then(|rest| rest.strip_prefix('_'))
                .is_some_and(|n| n.parse::<u32>().is_ok());
            system.starts_with(super::PROBE_GROUP_PREFIX) && (name == self.name || numbered)
        } else {
            glob::glob_match(&self.full_name(), &format!("{system}:{name}"))
        }
    }

    /// The name as the user's tables should show it: the alias, else `name`.
    pub fn display_name(&self) -> &str {
        self.alias.as_deref().unwrap_or(&self.name)
    }
}

const KNOWN_ATTRIBUTES: &str = "known attributes: stack, max-stack=N, alias=NAME, key=EXPR, \
     printkey=EXPR, role=EXPR, untraced, trigger, top-by=EXPR, top-add=EXPR, comm=EXPR, \
     cpus=LIST, num=EXPR, ptr=EXPR, size=EXPR, exec=EXPR";

/// Parse one `-e` text into its events, in order.
pub fn parse_selectors(text: &str) -> Result<Vec<EventSpec>, SelectorError> {
    let source: Arc<str> = Arc::from(text);
    let parser = Parser {
        text,
        source: &source,
    };
    let mut specs = Vec::new();
    let mut start = 0;
    loop {
        let end = parser.next_sep(start, text.len(), b',')?;
        let stop = end.unwrap_or(text.len());
        specs.push(parser.event(start, stop)?);
        match end {
            Some(comma) => start = comma + 1,
            None => return Ok(specs),
        }
    }
}

struct Parser<'t> {
    text: &'t str,
    source: &'t Arc<str>,
}

impl Parser<'_> {
    fn error(&self, message: impl Into<String>, position: usize) -> SelectorError {
        SelectorError::new(message, self.text, position)
    }

    /// The first `sep` in `start..end` outside quotes and parentheses (perf-prof's
    /// `next_sep`). Unclosed quotes or parentheses, and stray `)`, are errors.
    fn next_sep(&self, start: usize, end: usize, sep: u8) -> Result<Option<usize>, SelectorError> {
        let bytes = &self.text.as_bytes()[..end];
        let mut parens: Vec<usize> = Vec::new();
        let mut i = start;
        while i < end {
            match bytes[i] {
                quote @ (b'"' | b'\'') => {
                    // A backslash inside quotes escapes the next byte (`"a\"/b"`).
                    let mut j = i + 1;
                    while j < end && bytes[j] != quote {
                        j += if bytes[j] == b'\\' { 2 } else { 1 };
                    }
                    if j >= end {
                        return Err(self.error("unclosed quote", i));
                    }
                    i = j + 1;
                    continue;
                }
                b'(' => parens.push(i),
                b')' => {
                    let Some(_) = parens.pop() else {
                        return Err(self.error("')' without a matching '('", i));
                    };
                }
                c if c == sep && parens.is_empty() => return Ok(Some(i)),
                _ => {}
            }
            i += 1;
        }
        match parens.last() {
            Some(&open) => Err(self.error("'(' is never closed", open)),
            None => Ok(None),
        }
    }

    /// `start..end` without surrounding white space, then without one pair of matching
    /// surrounding quotes.
    fn unquote(&self, start: usize, end: usize) -> (usize, usize) {
        let (start, end) = self.trim(start, end);
        let bytes = self.text.as_bytes();
        if end >= start + 2 && matches!(bytes[start], b'"' | b'\'') && bytes[end - 1] == bytes[start] {
            (start + 1, end - 1)
        } else {
            (start, end)
        }
    }

    fn trim(&self, mut start: usize, mut end: usize) -> (usize, usize) {
        let bytes = self.text.as_bytes();
        while start < end && bytes[start].is_ascii_whitespace() {
            start += 1;
        }
        while end > start && bytes[end - 1].is_ascii_whitespace() {
            end -= 1;
        }
        (start, end)
    }

    fn event(&self, start: usize, end: usize) -> Result<EventSpec, SelectorError> {
        let (start, end) = self.trim(start, end);
        if start == end {
            return Err(self.error("empty event (two ',' in a row, or a ',' at an end?)", start));
        }
        let (system, name, probe, slash, name_start) = match probe::probe_kind(&self.text[start..end]) {
            Some((kind, skip)) => {
                let (probe, name_end) = self.probe(kind, skip, start, end)?;
                let slash = (name_end < end).then_some(name_end);
                // Named as the tracefs event will be; the system becomes perfscope's
                // probe group when the probe is defined.
                (kind.to_string(), probe.event_name(), Some(probe), slash, start)
            }
            None => {
                let slash = self.next_sep(start, end, b'/')?;
                let (name_start, name_end) = self.unquote(start, slash.unwrap_or(end));
                let (system, name) = self.name(name_start, name_end)?;
                (system, name, None, slash, name_start)
            }
        };
        let mut spec = EventSpec {
            system,
            name,
            filter: None,
            stack: false,
            max_stack: None,
            alias: None,
            key: None,
            printkey: None,
            role: None,
            untraced: false,
            trigger: false,
            top_by: Vec::new(),
            top_add: Vec::new(),
            comm: None,
            exec: None,
            cpus: None,
            num: None,
            ptr: None,
            size: None,
            probe,
            source: self.source.clone(),
            name_offset: name_start,
        };
        let Some(slash) = slash else {
            return Ok(spec);
        };
        let filter_end = self.next_sep(slash + 1, end, b'/')?.ok_or_else(|| {
            self.error(
                "missing closing '/' after the filter (write name/filter/ or name//attr/)",
                end,
            )
        })?;
        let (f_start, f_end) = self.unquote(slash + 1, filter_end);
        if f_start < f_end {
            spec.filter = Some(self.text[f_start..f_end].to_string());
        }
        let mut pos = filter_end + 1;
        while pos < end {
            let Some(next) = self.next_sep(pos, end, b'/')? else {
                let (a, b) = self.trim(pos, end);
                return Err(self.error(
                    format!("missing closing '/' after attribute '{}'", &self.text[a..b]),
                    end,
                ));
            };
            let (a, b) = self.trim(pos, next);
            if a < b {
                self.attribute(&mut spec, a, b)?;
            }
            pos = next + 1;
        }
        Ok(spec)
    }

    fn name(&self, start: usize, end: usize) -> Result<(String, String), SelectorError> {
        let name = &self.text[start..end];
        if name.is_empty() {
            return Err(self.error("empty event name (expected sys:name)", start));
        }
        // Checked first: every later step (the character scan, the "did you mean" search
        // over the kernel's events) costs per character, and no longer name can exist.
        for (part, offset) in name.split(':').zip(name_parts_offsets(name)) {
            let length = part.chars().count();
            if length > MAX_NAME_CHARS {
                let cut = part.char_indices().nth(MAX_NAME_CHARS).map_or(0, |(i, _)| i);
                return Err(self.error(
                    format!(
                        "a name of {length} characters: tracefs names are at most {MAX_NAME_CHARS} (the kernel's limit)"
                    ),
                    start + offset + cut,
                ));
            }
        }
        if let Some((i, c)) = name.char_indices().find(|&(_, c)| {
            !(c.is_ascii_alphanumeric()
                || matches!(c, '_' | '-' | '.' | ':' | '*' | '?' | '[' | ']' | '!' | '^'))
        }) {
            return Err(self.error(format!("unexpected character '{c}' in event name"), start + i));
        }
        let Some(colon) = name.find(':') else {
            return Err(self.error(
                format!("missing ':' in '{name}' (expected sys:name, e.g. sched:sched_switch)"),
                end,
            ));
        };
        let (system, event) = (&name[..colon], &name[colon + 1..]);
        if system.is_empty() {
            return Err(self.error("empty system name before ':'", start));
        }
        if event.is_empty() {
            return Err(self.error("empty event name after ':'", start + colon + 1));
        }
        if let Some(i) = event.find(':') {
            return Err(self.error("a second ':' in the event name", start + colon + 1 + i));
        }
        Ok((system.to_string(), event.to_string()))
    }

    fn attribute(&self, spec: &mut EventSpec, start: usize, end: usize) -> Result<(), SelectorError> {
        let eq = self.next_sep(start, end, b'=')?;
        let (k_start, k_end) = self.trim(start, eq.unwrap_or(end));
        let key = &self.text[k_start..k_end];
        let value = eq.map(|eq| self.unquote(eq + 1, end));
        let flag = |set: &mut bool| match eq {
            Some(eq) => Err(self.error(format!("attribute '{key}' takes no value"), eq)),
            None => {
                *set = true;
                Ok(())
            }
        };
        let needs_value =
            || value.ok_or_else(|| self.error(format!("attribute '{key}' needs a value ({key}=...)"), k_end));
        let once = |present: bool| {
            if present {
                Err(self.error(format!("attribute '{key}' given twice"), k_start))
            } else {
                Ok(())
            }
        };
        match key {
            "stack" => flag(&mut spec.stack)?,
            "untraced" => flag(&mut spec.untraced)?,
            "trigger" => flag(&mut spec.trigger)?,
            "max-stack" => {
                once(spec.max_stack.is_some())?;
                let (a, b) = needs_value()?;
                let text = &self.text[a..b];
                let n: u32 = text
                    .parse()
                    .map_err(|_| self.error(format!("bad number '{text}' for max-stack"), a))?;
                spec.max_stack = Some(n.min(127) as u16);
                spec.stack = true;
            }
            "alias" => {
                once(spec.alias.is_some())?;
                let (a, b) = needs_value()?;
                if a == b {
                    return Err(self.error("empty alias", a));
                }
                spec.alias = Some(self.text[a..b].to_string());
            }
            "cpus" => {
                once(spec.cpus.is_some())?;
                let (a, b) = needs_value()?;
                spec.cpus = Some(self.cpu_list(a, b)?);
            }
            "key" | "printkey" | "role" | "comm" | "num" | "ptr" | "size" | "exec" | "top-by" | "top-add" => {
                let (a, b) = needs_value()?;
                let expr = self.expr(key, a, b)?;
                let slot = match key {
                    "key" => &mut spec.key,
                    "printkey" => &mut spec.printkey,
                    "role" => &mut spec.role,
                    "comm" => &mut spec.comm,
                    "num" => &mut spec.num,
                    "ptr" => &mut spec.ptr,
                    "size" => &mut spec.size,
                    "exec" => &mut spec.exec,
                    "top-by" => {
                        spec.top_by.push(expr);
                        return Ok(());
                    }
                    _ => {
                        spec.top_add.push(expr);
                        return Ok(());
                    }
                };
                once(slot.is_some())?;
                *slot = Some(expr);
            }
            _ => {
                return Err(self
                    .error(format!("unknown attribute '{key}'"), k_start)
                    .with_hint(KNOWN_ATTRIBUTES));
            }
        }
        Ok(())
    }

    fn expr(&self, key: &str, start: usize, end: usize) -> Result<AttrExpr, SelectorError> {
        if start == end {
            return Err(self.error(format!("empty expression for {key}="), start));
        }
        let expr = Expr::parse(&self.text[start..end])
            .map_err(|e| self.error(format!("{key}=: {}", e.message), start + e.position))?;
        Ok(AttrExpr { expr, offset: start })
    }

    /// `0-3,5,7-8`.
    fn cpu_list(&self, start: usize, end: usize) -> Result<Vec<u32>, SelectorError> {
        let mut cpus = Vec::new();
        let mut pos = start;
        for part in self.text[start..end].split(',') {
            let bad = || self.error(format!("bad CPU list entry '{part}' (expected e.g. 0-3,5)"), pos);
            let number = |s: &str| s.trim().parse::<u32>().map_err(|_| bad());
            match part.split_once('-') {
                Some((lo, hi)) => {
                    let (lo, hi) = (number(lo)?, number(hi)?);
                    if lo > hi || hi - lo > 65_536 {
                        return Err(bad());
                    }
                    cpus.extend(lo..=hi);
                }
                None => cpus.push(number(part)?),
            }
            pos += part.len() + 1;
        }
        cpus.sort_unstable();
        cpus.dedup();
        Ok(cpus)
    }
}

#[cfg(test)]
mod tests;
