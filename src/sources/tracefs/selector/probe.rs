//! Probe selectors: `uprobe:BINARY:FUNC[+OFF]`, `uprobe:BINARY:0xOFF`,
//! `uretprobe:BINARY:FUNC`, perf-prof's `uprobe:FUNC@"PATH"`, and `kprobe:FUNC` /
//! `kretprobe:FUNC` (parsed only so the error can say what this kernel has).
//!
//! BINARY is a path and may hold `/`: it runs to the next `:` (quote it if it holds one),
//! so `uprobe:/usr/bin/x:main/arg1==3/` keeps its filter. Here the text is only split;
//! the symbol is looked up and the probe defined when the session starts.

use super::{Parser, SelectorError};

/// A probe an event selector asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProbeSpec {
    User(UprobeSpec),
    /// `kprobe:FUNC` / `kretprobe:FUNC`.
    Kernel {
        ret: bool,
        func: String,
    },
}

/// A user-space probe: which file, where in it, entry or return.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UprobeSpec {
    /// `uretprobe`: fires when the function returns.
    pub ret: bool,
    /// As written (relative paths are looked up when the probe is defined).
    pub binary: String,
    pub at: ProbeAt,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProbeAt {
    /// A symbol of the ELF, `offset` bytes into it.
    Symbol { name: String, offset: u64 },
    /// A file offset (`0x…`), for code with no symbol.
    FileOffset(u64),
}

/// Tracefs event names are at most this long (the kernel's MAX_EVENT_NAME_LEN is 64,
/// with room kept for a `_N` that tells duplicates apart).
const MAX_PROBE_NAME: usize = 58;

const PROBE_FORMS: &str = "expected uprobe:BINARY:FUNC[+OFF], uprobe:BINARY:0xOFF, \
     uretprobe:BINARY:FUNC or uprobe:FUNC@\"PATH\"";

impl ProbeSpec {
    /// The selector's kind word.
    pub fn kind(&self) -> &'static str {
        match self {
            ProbeSpec::User(u) if u.ret => "uretprobe",
            ProbeSpec::User(_) => "uprobe",
            ProbeSpec::Kernel { ret: true, .. } => "kretprobe",
            ProbeSpec::Kernel { ret: false, .. } => "kprobe",
        }
    }

    /// The probe as a selector names it (without filter and attributes).
    pub fn selector(&self) -> String {
        let kind = self.kind();
        match self {
            ProbeSpec::Kernel { func, .. } => format!("{kind}:{func}"),
            ProbeSpec::User(u) => {
                let binary = if u.binary.contains(':') {
                    format!("\"{}\"", u.binary)
                } else {
                    u.binary.clone()
                };
                match &u.at {
                    ProbeAt::Symbol { name, offset: 0 } => format!("{kind}:{binary}:{name}"),
                    ProbeAt::Symbol { name, offset } => format!("{kind}:{binary}:{name}+0x{offset:x}"),
                    ProbeAt::FileOffset(offset) => format!("{kind}:{binary}:0x{offset:x}"),
                }
            }
        }
    }

    /// The tracefs event name the probe gets: the function (and offset), `__return` for a
    /// return probe as perf names them; only `[A-Za-z0-9_]`, as tracefs wants.
    pub fn event_name(&self) -> String {
        let base = match self {
            ProbeSpec::User(u) => match &u.at {
                ProbeAt::Symbol { name, offset: 0 } => name.clone(),
                ProbeAt::Symbol { name, offset } => format!("{name}_0x{offset:x}"),
                ProbeAt::FileOffset(offset) => {
                    let file = u.binary.rsplit('/').next().unwrap_or(&u.binary);
                    format!("{file}_0x{offset:x}")
                }
            },
            ProbeSpec::Kernel { func, .. } => func.clone(),
        };
        let suffix = match self {
            ProbeSpec::User(UprobeSpec { ret: true, .. }) | ProbeSpec::Kernel { ret: true, .. } => "__return",
            _ => "",
        };
        let mut name: String = base
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .take(MAX_PROBE_NAME - suffix.len())
            .collect();
        if name.starts_with(|c: char| c.is_ascii_digit()) {
            name.insert(0, '_');
        }
        name.push_str(suffix);
        name
    }
}

/// Which probe kind `name` (the event text from its start) begins with, and the length of
/// `kind:`.
pub(super) fn probe_kind(name: &str) -> Option<(&'static str, usize)> {
    ["uprobe", "uretprobe", "kprobe", "kretprobe"]
        .into_iter()
        .find(|kind| name.strip_prefix(kind).is_some_and(|rest| rest.starts_with(':')))
        .map(|kind| (kind, kind.len() + 1))
}

impl Parser<'_> {
    /// Parse the probe name at `start` (which begins with `kind:`, `skip` bytes long);
    /// returns the probe and where its name ends (the `/` of a filter, or `end`).
    pub(super) fn probe(
        &self,
        kind: &str,
        skip: usize,
        start: usize,
        end: usize,
    ) -> Result<(ProbeSpec, usize), SelectorError> {
        let p = start + skip;
        if kind.starts_with('k') {
            let name_end = self.next_sep(p, end, b'/')?.unwrap_or(end);
            let (a, b) = self.unquote(p, name_end);
            let func = self.symbol_name(a, b)?;
            let ret = kind == "kretprobe";
            return Ok((ProbeSpec::Kernel { ret, func }, name_end));
        }
        let ret = kind == "uretprobe";
        let bytes = self.text.as_bytes();
        // The first part: a quoted run, or everything up to ':' (BINARY:FUNC) or '@'
        // (FUNC@PATH); a path's '/' belongs to it.
        let first_end = if p < end && matches!(bytes[p], b'"' | b'\'') {
            self.quoted_end(p, end)?
        } else {
            (p..end)
                .find(|&i| matches!(bytes[i], b':' | b'@'))
                .ok_or_else(|| self.error(PROBE_FORMS, end))?
        };
        let (binary, func_start, func_end, name_end) = match bytes.get(first_end) {
            Some(b'@') if first_end < end => {
                // FUNC@PATH: the path is quoted, or a word without '/'.
                let path_start = first_end + 1;
                let name_end = self.next_sep(path_start, end, b'/')?.unwrap_or(end);
                let (a, b) = self.unquote(path_start, name_end);
                if a == b {
                    return Err(self.error(
                        "empty path after '@' (quote a path with '/' in it: uprobe:FUNC@\"/PATH\")",
                        path_start,
                    ));
                }
                (&self.text[a..b], p, first_end, name_end)
            }
            Some(b':') if first_end < end => {
                let (a, b) = self.unquote(p, first_end);
                let func_start = first_end + 1;
                let name_end = self.next_sep(func_start, end, b'/')?.unwrap_or(end);
                (&self.text[a..b], func_start, name_end, name_end)
            }
            _ => return Err(self.error(PROBE_FORMS, first_end)),
        };
        if binary.is_empty() {
            return Err(self.error("empty binary path", p));
        }
        if binary.contains(char::is_whitespace) {
            return Err(self.error("the kernel's uprobe_events takes no path with white space", p));
        }
        let at = self.probe_at(func_start, func_end)?;
        if ret && !matches!(at, ProbeAt::Symbol { offset: 0, .. }) {
            return Err(self.error(
                "a uretprobe goes on a function's entry: uretprobe:BINARY:FUNC, without +OFF",
                func_start,
            ));
        }
        let spec = UprobeSpec {
            ret,
            binary: binary.to_string(),
            at,
        };
        Ok((ProbeSpec::User(spec), name_end))
    }

    /// The index just past the quote that closes the one at `start`.
    fn quoted_end(&self, start: usize, end: usize) -> Result<usize, SelectorError> {
        let bytes = self.text.as_bytes();
        (start + 1..end)
            .find(|&i| bytes[i] == bytes[start])
            .map(|i| i + 1)
            .ok_or_else(|| self.error("unclosed quote", start))
    }

    /// `FUNC`, `FUNC+OFF` (decimal or 0x hex) or `0xOFF`.
    fn probe_at(&self, start: usize, end: usize) -> Result<ProbeAt, SelectorError> {
        let (start, end) = self.unquote(start, end);
        let text = &self.text[start..end];
        if text.is_empty() {
            return Err(self.error(format!("missing function: {PROBE_FORMS}"), start));
        }
        if let Some(hex) = text.strip_prefix("0x") {
            let offset = u64::from_str_radix(hex, 16).map_err(|_| {
                self.error(
                    format!("bad file offset '{text}' (expected 0x and hex digits)"),
                    start,
                )
            })?;
            return Ok(ProbeAt::FileOffset(offset));
        }
        let (name_end, offset) = match text.find('+') {
            Some(plus) => {
                let number = &text[plus + 1..];
                let parsed = match number.strip_prefix("0x") {
                    Some(hex) => u64::from_str_radix(hex, 16),
                    None => number.parse(),
                };
                let offset = parsed.map_err(|_| {
                    self.error(
                        format!("bad offset '{number}' after '+' (decimal or 0x hex)"),
                        start + plus + 1,
                    )
                })?;
                (start + plus, offset)
            }
            None => (end, 0),
        };
        let name = self.symbol_name(start, name_end)?;
        Ok(ProbeAt::Symbol { name, offset })
    }

    /// A symbol name: what C, C++ (mangled) and Rust symbols are made of.
    fn symbol_name(&self, start: usize, end: usize) -> Result<String, SelectorError> {
        let name = &self.text[start..end];
        if name.is_empty() {
            return Err(self.error("empty function name", start));
        }
        if let Some((i, c)) = name
            .char_indices()
            .find(|&(_, c)| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$')))
        {
            return Err(self.error(format!("unexpected character '{c}' in function name"), start + i));
        }
        Ok(name.to_string())
    }
}
