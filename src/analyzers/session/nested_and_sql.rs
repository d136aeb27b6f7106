//! Building nested-trace and the live sql analyzer from a session's resolved events.

use anyhow::bail;

use super::key_of;
use crate::analyzers::multi_trace::Instance;
use crate::analyzers::nested_trace::{NestedConfig, NestedFunction, NestedTraceAnalyzer};
use crate::analyzers::options::{AnalyzerKind, TraceOptions};
use crate::analyzers::sql::{SqlAnalyzer, SqlEvent};
use crate::model::analysis::CallReport;
use crate::sources::tracefs::ResolvedEvent;
use crate::trace::event::EventLayout;

/// nested-trace: each `-e` is one function, its two traced events entry then exit
/// (perf-prof refuses a stage with another number of them: "-e ... are unpaired").
pub fn nested_trace(
    options: &TraceOptions,
    stages: &[Vec<ResolvedEvent>],
    layouts: &[EventLayout],
    threads: bool,
    slow_pair_capacity: usize,
) -> anyhow::Result<NestedTraceAnalyzer> {
    let default_key = options.default_key()?;
    let mut functions = Vec::new();
    let mut index = 0usize;
    for stage in stages {
        let traced: Vec<(usize, &ResolvedEvent)> = stage
            .iter()
            .enumerate()
            .filter(|(_, e)| !e.spec.untraced)
            .map(|(i, e)| (index + i, e))
            .collect();
        index += stage.len();
        let [(entry, entry_event), (exit, exit_event)] = traced[..] else {
            let names: Vec<String> = stage.iter().map(|e| e.layout.full_name()).collect();
            bail!(
                "-e {} are unpaired: nested-trace takes one entry and one exit per -e \
                 (`-e ENTRY,EXIT`, e.g. -e irq:softirq_entry,irq:softirq_exit)",
                names.join(",")
            );
        };
        functions.push(NestedFunction {
            entry,
            exit,
            entry_key: key_of(entry_event, default_key.as_ref())?,
            exit_key: key_of(exit_event, default_key.as_ref())?,
            name: entry_event.spec.display_name().to_string(),
            exit_name: exit_event.spec.display_name().to_string(),
        });
    }
    let report = match options.analyzer {
        AnalyzerKind::NestedTraceCall => CallReport::Calls,
        AnalyzerKind::NestedTraceDelay => CallReport::Times,
        _ => CallReport::CallsAndTimes,
    };
    Ok(NestedTraceAnalyzer::new(
        layouts,
        NestedConfig {
            functions,
            instance: if threads { Instance::Thread } else { Instance::Cpu },
            report,
            than_ns: options.than_ns,
            slow_pair_capacity,
        },
    )?)
}

/// The live sql analyzer: one table per event, the query checked now.
pub fn sql(
    options: &TraceOptions,
    events: &[&ResolvedEvent],
    layouts: &[EventLayout],
) -> anyhow::Result<SqlAnalyzer> {
    let Some(query) = options.query.as_deref() else {
        bail!("sql needs --query 'SELECT ...' (its tables are named after the events)");
    };
    let specs: Vec<SqlEvent> = events
        .iter()
        .map(|e| SqlEvent {
            table: e.spec.display_name().to_string(),
            filter: e.spec.filter.clone(),
        })
        .collect();
    let created = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    Ok(SqlAnalyzer::new(layouts, &specs, query, created)?)
}
