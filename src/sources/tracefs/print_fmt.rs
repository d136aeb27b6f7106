//! A raw event rendered by its tracepoint's `print fmt:`, the text the kernel (and
//! libtraceevent, so perf-prof) prints after `<sys>:<name>: `: `NR 0 (3, 7ffd1234, 1000, 0,
//! 0, 0)` for raw_syscalls:sys_enter, `prev_comm=sh ... prev_state=S ==> ...` for
//! sched:sched_switch.
//!
//! The print fmt is read by the expression language ([`Expr::parse_print_fmt`]) and bound
//! once per layout; rendering an event only evaluates the bound tree. A print fmt the
//! language cannot read (GNU statement expressions, kernel functions such as
//! `jiffies_to_msecs`, `%pU`-style pointer extensions, enum names the format file leaves
//! unresolved outside a symbol table) keeps the event on the `name=value` rendering of
//! [`format_fields`]; so does an event whose record is too short for what its print fmt
//! reads. Never an error, never a guessed value.

use std::sync::Arc;

use super::format_fields;
use crate::trace::event::{EventLayout, TraceEvent};
use crate::trace::expr::{BoundExpr, Expr, ExprError, Symbolizer};

#[cfg(test)]
mod golden_tests;
#[cfg(test)]
mod helper_tests;
#[cfg(test)]
mod record;

/// One layout's print fmt, compiled.
#[derive(Clone, Debug)]
pub struct PrintFmt {
    text: BoundExpr,
}

impl PrintFmt {
    /// Read and bind `layout.print_fmt`; the error says what the language does not know.
    pub fn compile(layout: &EventLayout) -> Result<Self, ExprError> {
        let text = Expr::parse_print_fmt(&layout.print_fmt)?.bind_print_fmt(layout)?;
        Ok(Self { text })
    }

    /// Name `%pS`/`%ps` addresses with `lookup` (without one they print in hex).
    pub fn with_symbolizer(self, lookup: Arc<Symbolizer>) -> Self {
        Self {
            text: self.text.with_symbolizer(lookup),
        }
    }

    /// The event's text; `None` when the record is too short for a field the print fmt
    /// reads (or a length in it runs past the record).
    pub fn render(&self, event: &TraceEvent<'_>) -> Option<String> {
        Some(self.text.eval(event)?.as_str()?.to_string())
    }
}

/// The print fmts of a session's events, compiled once, indexed by [`EventIndex`]
/// (the order of the layouts given to [`EventPrinter::new`]).
///
/// [`EventIndex`]: crate::trace::event::EventIndex
#[derive(Clone, Debug, Default)]
pub struct EventPrinter {
    formats: Vec<Result<PrintFmt, ExprError>>,
}

impl EventPrinter {
    pub fn new(layouts: &[EventLayout]) -> Self {
        Self {
            formats: layouts.iter().map(PrintFmt::compile).collect(),
        }
    }

    /// Name `%pS`/`%ps` addresses of every event with `lookup`.
    pub fn with_symbolizer(self, lookup: Arc<Symbolizer>) -> Self {
        Self {
            formats: self
                .formats
                .into_iter()
                .map(|format| format.map(|f| f.with_symbolizer(lookup.clone())))
                .collect(),
        }
    }

    /// The text of `event` (whose layout is `layout`): its print fmt's rendering, or the
    /// `name=value` fields when the print fmt could not be compiled or read this record.
    pub fn fields_text(&self, event: &TraceEvent<'_>, layout: &EventLayout) -> String {
        self.formats
            .get(usize::from(event.event.0))
            .and_then(|format| format.as_ref().ok())
            .and_then(|format| format.render(event))
            .unwrap_or_else(|| format_fields(layout, event.raw))
    }

    /// Why the event at `index` prints as `name=value` pairs, if it does.
    pub fn fallback_reason(&self, index: usize) -> Option<&ExprError> {
        self.formats.get(index).and_then(|format| format.as_ref().err())
    }
}
