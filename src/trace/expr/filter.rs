//! Kernel ftrace filter text (`prev_pid > 0 && next_comm ~ "kworker*"`) evaluated in user
//! space: the fallback when `PERF_EVENT_IOC_SET_FILTER` rejects a filter (some kernels
//! refuse field-to-field compares such as `pid<prio`).
//!
//! The ftrace grammar is a subset of the expression language (`== != < <= > >= & && || !`,
//! `~` glob, parentheses, numbers, strings) with one addition: the value compared with a
//! string field may be written without quotes (`prev_comm == bash`, `comm ~ kwork*`).

use super::ExprError;
use super::bind::{self, Scope};
use super::eval::{self, Input};
use super::parser::Parser;
use super::tree::{Bound, IntNode};
use crate::trace::event::{EventLayout, TraceEvent};

/// A compiled filter for one event layout.
#[derive(Clone, Debug)]
pub struct Filter {
    text: String,
    root: IntNode,
}

impl Filter {
    pub fn compile(text: &str, layout: &EventLayout) -> Result<Self, ExprError> {
        let is_string_field = |name: &str| layout.field(name).is_some_and(|f| f.is_string());
        let root = Parser::new(text, Some(&is_string_field))?.parse_all()?;
        let scope = Scope {
            text,
            layout: Some(layout),
            vars: &[],
            filter: true,
            print_fmt: false,
        };
        match bind::bind(&root, &scope)? {
            Bound::Int(node) => Ok(Self {
                text: text.to_string(),
                root: node,
            }),
            Bound::Str(_) => Err(ExprError::new(
                "a filter must be a condition (e.g. comm == \"bash\"), not a string",
                text,
                0,
            )),
        }
    }

    /// Whether `event` passes; an event the filter cannot be computed on (short record)
    /// does not.
    pub fn matches(&self, event: &TraceEvent<'_>) -> bool {
        let input = Input {
            event: Some(*event),
            vars: &[],
            symbolizer: None,
        };
        eval::int(&self.root, &input).is_some_and(|v| v != 0)
    }

    pub fn text(&self) -> &str {
        &self.text
    }
}
