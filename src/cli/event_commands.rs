//! The commands about tracepoint events themselves: `trace` (print every event by its
//! print fmt, or `trace -e EVENT help`: its fields), `list [REGEX]` (the tracepoints and
//! probes tracefs has) and `expr -e EVENT 'EXPR'` (an expression compiled against the
//! event's format, then evaluated on each live event: a developer's check).

use clap::Args;

use crate::analyzers::options::AnalyzerKind;
use crate::batch::folded_stacks::FoldedStacks;
use crate::feeds::host::probes::define_probes;
use crate::sources::tracefs::{ResolveError, ResolvedEvent, Tracefs, UprobeGroup, parse_selectors, resolve};
use crate::trace::event_help::event_help;
use crate::trace::expr::Expr;

use super::exit::{Outcome, UsageError};
use super::host::{HostArgs, KeyArg, TraceArgs};
use super::host_run::{run_trace_command, run_trace_text};
use super::tui::TuiArgs;

#[derive(Args)]
pub struct TraceEventsArgs {
    /// `help`: list the -e event's fields (name, C type, offset, size) and a ready
    /// command line, then exit.
    #[arg(id = "help_word", value_name = "help", value_parser = ["help"])]
    pub help_word: Option<String>,
    #[command(flatten)]
    pub host: HostArgs,
    #[command(flatten)]
    pub trace: TraceArgs,
    #[command(flatten)]
    pub key: KeyArg,
    /// Sample every event's callchain (kernel and user) and print it under the event.
    #[arg(short = 'g', long = "call-graph")]
    pub call_graph: bool,
    /// With -g: write the events' stacks to FILE.folded instead of printing them (`''`:
    /// to stdout).
    #[arg(long = "flame-graph", value_name = "FILE", requires = "call_graph")]
    pub flame_graph: Option<String>,
    #[command(flatten)]
    pub tui: TuiArgs,
}

#[derive(Args)]
pub struct ListArgs {
    /// Only the events whose `sys:name` matches this regular expression.
    #[arg(value_name = "REGEX")]
    pub pattern: Option<String>,
}

#[derive(Args)]
pub struct ExprArgs {
    /// The event the expression is compiled against (`sys:name[/filter/]`).
    #[arg(short = 'e', long = "event", value_name = "EVENT", required = true)]
    pub event: String,
    /// The expression: fields of the event, `_cpu _pid _tid _time`, C operators,
    /// `printf`, `ksymbol`, … (the language of `key=`, `top-by=` and filters).
    #[arg(value_name = "EXPRESSION")]
    pub expression: String,
    /// Only compile and print the bound expression; do not open the event.
    #[arg(long)]
    pub compile_only: bool,
    #[command(flatten)]
    pub host: HostArgs,
}

/// The events one `-e` text names; its probes are defined in `probes` (removed when it
/// is dropped).
fn resolve_text(
    tracefs: &Tracefs,
    text: &str,
    probes: &mut Option<UprobeGroup>,
) -> anyhow::Result<Vec<ResolvedEvent>> {
    let mut specs = parse_selectors(text).map_err(crate::model::usage::UsageError::of)?;
    define_probes(tracefs, &mut specs, probes)?;
    resolve(tracefs, &specs).map_err(ResolveError::into_command_error)
}

pub fn run_trace(args: TraceEventsArgs) -> anyhow::Result<Outcome> {
    if args.help_word.is_some() {
        let Some(text) = args.trace.events.first() else {
            crate::usage!("`trace help` needs the event: `perfscope trace -e sys:name help`");
        };
        let tracefs = Tracefs::open()?;
        let mut out = String::new();
        for event in resolve_text(&tracefs, text, &mut None)? {
            let selector = match &event.spec.probe {
                Some(probe) => probe.selector(),
                None => event.layout.full_name(),
            };
            out.push_str(&event_help(&event.layout, "trace", &selector));
        }
        crate::stdio::print(&out)?;
        return Ok(Outcome::Clean);
    }
    if args.trace.events.is_empty() {
        crate::usage!(
            "trace needs events: give them with -e sys:name[/filter/attrs/] (see `perfscope list`)"
        );
    }
    let mut options = args.trace.options(AnalyzerKind::Trace);
    args.key.apply(&mut options);
    options.call_graph = args.call_graph;
    // The TUI lists the events in its console view.
    options.event_lines = !args.host.text_output() && args.flame_graph.is_none();
    if let Some(name) = &args.flame_graph {
        // The folded file is written when the run ends: a text run.
        let mut folded = FoldedStacks::new(std::path::Path::new(name));
        return run_trace_text(&args.host, &options, None, Some(&mut folded));
    }
    run_trace_command(&args.host, &options, &args.tui)
}

/// `list [REGEX]`: every event of `available_events` (tracepoints, and the uprobes and
/// kprobes defined in tracefs) whose `sys:name` matches, in the kernel's order.
pub fn run_list(args: ListArgs) -> anyhow::Result<Outcome> {
    let pattern = args
        .pattern
        .as_deref()
        .map(regex::Regex::new)
        .transpose()
        .map_err(|e| {
            UsageError(format!(
                "list: the pattern is not a regular expression (e.g. `sched:.*wake`): {e}"
            ))
        })?;
    let tracefs = Tracefs::open()?;
    let mut out = String::new();
    for event in tracefs.events() {
        if pattern.as_ref().is_none_or(|p| p.is_match(event)) {
            out.push_str(event);
            out.push('\n');
        }
    }
    crate::stdio::print(&out)?;
    Ok(Outcome::Clean)
}

/// `expr -e EVENT 'EXPR'`: compile (an error points at the character), print the
/// expression, its type and the bound form (where each field is read), then evaluate it
/// on every event until the workload ends, `--duration` runs out or Ctrl-C.
pub fn run_expr(args: ExprArgs) -> anyhow::Result<Outcome> {
    let tracefs = Tracefs::open()?;
    // Removed before the session below defines the same probes again.
    let events = resolve_text(&tracefs, &args.event, &mut None)?;
    let [event] = events.as_slice() else {
        crate::usage!(
            "expr compiles against one event; `{}` names {}",
            args.event,
            events.len()
        );
    };
    // The expression is the command line's: one that does not compile is a usage error.
    let parsed = Expr::parse(&args.expression).map_err(UsageError::of)?;
    let bound = parsed.bind(&event.layout).map_err(UsageError::of)?;
    let kind = if bound.is_string() { "string" } else { "integer" };
    crate::stdio::print(&format!(
        "{}: {} : {kind}\nbound: {}\n",
        event.layout.full_name(),
        parsed.text(),
        bound.bound_text()
    ))?;
    if args.compile_only {
        return Ok(Outcome::Clean);
    }
    let options = crate::analyzers::options::TraceOptions::new(AnalyzerKind::Trace, vec![args.event.clone()]);
    run_trace_text(
        &args.host,
        &options,
        Some((parsed.text().to_string(), bound)),
        None,
    )
}
