//! One analyzer of a tracepoint session, whichever it is, behind one face: events in,
//! perf-prof text per interval out, and the cumulative tables and distributions the TUI
//! shows. The analyzers themselves (src/analyzers) know nothing of sessions or views;
//! this is where the selectors' expressions (`key=`, `top-by=`, `comm=`) become their
//! key sources.

use anyhow::{Context, bail};

use crate::analyzers::Analyzer;
use crate::analyzers::key::KeySource;
use crate::analyzers::latency::{LatencyStats, SlowPair};
use crate::analyzers::multi_trace::{
    Implementation, Instance, MultiTraceAnalyzer, MultiTraceConfig, MultiTraceTable, StageEvent,
};
use crate::analyzers::rundelay::{RundelayOptions, rundelay};
use crate::analyzers::syscalls::{SyscallTable, SyscallsAnalyzer, SyscallsConfig};
use crate::analyzers::text::{self, TextStyle, TopText, WallClock};
use crate::analyzers::top::{TopAnalyzer, TopColumn, TopConfig, TopEvent, TopTable};
use crate::live::snapshot::{HistogramSeries, TextTable};
use crate::sources::tracefs::{EventPrinter, ResolvedEvent};
use crate::symbols::host::comms::read_proc_comm;
use crate::trace::event::{EventLayout, TraceEvent};
use crate::trace::expr::{BoundExpr, Expr};

use super::options::{AnalyzerKind, TraceOptions};

/// How slow pairs are kept between two prints.
const SLOW_PAIRS: usize = 1024;

/// A pid → command name lookup shared with the session's comm cache.
pub type CommOf<'a> = &'a dyn Fn(u32) -> Option<String>;

enum Kind {
    Syscalls(SyscallsAnalyzer),
    MultiTrace(MultiTraceAnalyzer),
    Top {
        analyzer: TopAnalyzer,
        printkey: Option<BoundExpr>,
    },
}

/// A running analyzer with the layouts of the events it was built over.
pub struct Analysis {
    kind: Kind,
    layouts: Vec<EventLayout>,
    /// The events' print fmts, compiled once, for the `--than` raw lines.
    printer: EventPrinter,
    name: &'static str,
}

/// An expression as a key source: integers only, negative → 0 as perf-prof's keys.
fn number_of(expr: BoundExpr) -> KeySource {
    KeySource::Custom(Box::new(move |event: &TraceEvent<'_>| {
        expr.eval_int(event).map(|v| v.max(0) as u64)
    }))
}

impl Analysis {
    /// Build the analyzer `options` names over the resolved events (`stages[i]` = the
    /// events of the i-th `-e`, in the order they were opened). `threads`: the session is
    /// attached to threads (the default key is then the thread, else the CPU).
    pub fn build(
        options: &TraceOptions,
        stages: &[Vec<ResolvedEvent>],
        threads: bool,
    ) -> anyhow::Result<Analysis> {
        let events: Vec<&ResolvedEvent> = stages.iter().flatten().collect();
        let layouts: Vec<EventLayout> = events.iter().map(|e| e.layout.clone()).collect();
        let kind = match options.analyzer {
            AnalyzerKind::Syscalls => Kind::Syscalls(SyscallsAnalyzer::new(
                &layouts,
                SyscallsConfig {
                    perins: options.perins,
                    than_ns: options.than_ns,
                    slow_pair_capacity: SLOW_PAIRS,
                },
            )?),
            AnalyzerKind::Rundelay => Kind::MultiTrace(rundelay(
                &layouts,
                &RundelayOptions {
                    perins: options.perins,
                    than_ns: options.than_ns,
                    slow_pair_capacity: SLOW_PAIRS,
                    skip_unnecessary_wakeups: true,
                },
            )?),
            AnalyzerKind::MultiTraceDelay | AnalyzerKind::MultiTracePair => {
                Kind::MultiTrace(multi_trace(options, stages, &layouts, threads)?)
            }
            AnalyzerKind::Top => {
                let (config, printkey) = top_config(options, &events)?;
                Kind::Top {
                    analyzer: TopAnalyzer::new(config)?,
                    printkey,
                }
            }
        };
        Ok(Analysis {
            kind,
            printer: EventPrinter::new(&layouts),
            layouts,
            name: options.analyzer.name(),
        })
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Name the kernel addresses raw event lines print with `%pS`/`%ps` (hex without).
    pub fn name_kernel_addresses(&mut self, lookup: std::sync::Arc<crate::trace::expr::Symbolizer>) {
        self.printer = std::mem::take(&mut self.printer).with_symbolizer(lookup);
    }

    pub fn layouts(&self) -> &[EventLayout] {
        &self.layouts
    }

    pub fn feed(&mut self, event: &TraceEvent<'_>) {
        match &mut self.kind {
            Kind::Syscalls(a) => a.feed(event),
            Kind::MultiTrace(a) => a.feed(event),
            Kind::Top { analyzer, .. } => analyzer.feed(event),
        }
    }

    pub fn lost(&mut self, from_ns: u64, to_ns: u64) {
        match &mut self.kind {
            Kind::Syscalls(a) => a.lost(from_ns, to_ns),
            Kind::MultiTrace(a) => a.lost(from_ns, to_ns),
            Kind::Top { analyzer, .. } => analyzer.lost(from_ns, to_ns),
        }
    }

    /// The end of the session: flush pending state (multi-trace's unpaired events).
    pub fn finish(&mut self) {
        if let Kind::MultiTrace(a) = &mut self.kind {
            a.finish();
        }
    }

    fn take_slow_pairs(&mut self) -> (Vec<SlowPair>, u64) {
        match &mut self.kind {
            Kind::Syscalls(a) => a.take_slow_pairs(),
            Kind::MultiTrace(a) => a.take_slow_pairs(),
            Kind::Top { .. } => (Vec::new(), 0),
        }
    }

    /// What `-i` prints: the `--than` offenders as raw event lines, then the interval's
    /// table, exactly as perf-prof; the interval starts over.
    pub fn interval_text(
        &mut self,
        wall: &WallClock,
        wall_of: &dyn Fn(u64) -> WallClock,
        comm_of: CommOf<'_>,
    ) -> String {
        let (pairs, _dropped) = self.take_slow_pairs();
        let fields = |event: &TraceEvent<'_>, layout: &EventLayout| self.printer.fields_text(event, layout);
        let mut out = text::slow_pair_lines(&pairs, &self.layouts, wall_of, comm_of, &fields);
        let style = TextStyle::default();
        let table = match &mut self.kind {
            Kind::Syscalls(a) => text::syscall_table(&a.take_interval(), wall, comm_of, style),
            Kind::MultiTrace(a) => text::multi_trace_text(&a.take_interval(), wall, comm_of, style),
            Kind::Top { analyzer, printkey } => {
                top_text(&analyzer.take_interval(), wall, comm_of, printkey.as_ref())
            }
        };
        out.push_str(&table);
        out
    }

    /// The cumulative distributions, one per table row, for the latency view.
    pub fn series(&self, comm_of: CommOf<'_>) -> Vec<HistogramSeries> {
        match &self.kind {
            Kind::Syscalls(a) => syscall_series(&a.snapshot(), comm_of),
            Kind::MultiTrace(a) => match a.snapshot() {
                MultiTraceTable::Delay(table) => table
                    .rows
                    .iter()
                    .map(|row| {
                        let names = &table.pairs[row.pair];
                        let instance = row.instance.map(|key| {
                            if table.comm_column {
                                format!(
                                    "{key} {}",
                                    comm_of(key as u32).unwrap_or_else(|| text::UNKNOWN_COMM.into())
                                )
                            } else {
                                format!("{} {key}", table.key_header.as_deref().unwrap_or("key"))
                            }
                        });
                        series(
                            format!("{} => {}", names.start, names.end),
                            instance,
                            &row.stats,
                            false,
                        )
                    })
                    .collect(),
                MultiTraceTable::Pair(_) => Vec::new(),
            },
            Kind::Top { .. } => Vec::new(),
        }
    }

    /// The cumulative table in perf-prof's layout, for the tables view.
    pub fn table(&self, wall: &WallClock, comm_of: CommOf<'_>) -> TextTable {
        let style = TextStyle::default();
        let (text, header_lines) = match &self.kind {
            Kind::Syscalls(a) => (text::syscall_table(&a.snapshot(), wall, comm_of, style), 2),
            Kind::MultiTrace(a) => {
                let table = a.snapshot();
                let header = if matches!(table, MultiTraceTable::Delay(_)) {
                    2
                } else {
                    0
                };
                (text::multi_trace_text(&table, wall, comm_of, style), header)
            }
            Kind::Top { analyzer, printkey } => (
                top_text(&analyzer.snapshot(), wall, comm_of, printkey.as_ref()),
                1,
            ),
        };
        let mut lines = text.lines().map(str::to_string);
        // The first line is the interval's time stamp: the title says what it is instead.
        let stamp = if header_lines > 0 { lines.next() } else { None };
        let header: Vec<String> = lines.by_ref().take(header_lines).collect();
        let rows: Vec<String> = lines.collect();
        let title = match (&self.kind, stamp) {
            (Kind::Top { .. }, Some(stamp)) => stamp.trim_end().to_string(),
            _ => format!("{} (since the start)", self.name),
        };
        TextTable { title, header, rows }
    }
}

fn series(name: String, instance: Option<String>, stats: &LatencyStats, errors: bool) -> HistogramSeries {
    let mut extra = vec![(
        "total".to_string(),
        crate::model::units::format_ns(stats.total_ns()),
    )];
    if errors {
        extra.push(("err".into(), stats.errors.to_string()));
    }
    if stats.than > 0 {
        extra.push((
            "than".into(),
            format!("{} ({}%)", stats.than, stats.than_percent()),
        ));
    }
    HistogramSeries {
        name,
        instance,
        histogram: stats.histogram.clone(),
        extra,
    }
}

fn syscall_series(table: &SyscallTable, comm_of: CommOf<'_>) -> Vec<HistogramSeries> {
    table
        .rows
        .iter()
        .map(|row| {
            let instance = row.thread.map(|tid| {
                format!(
                    "{tid} {}",
                    comm_of(tid).unwrap_or_else(|| text::UNKNOWN_COMM.into())
                )
            });
            series(
                crate::analyzers::syscall_label(row.id),
                instance,
                &row.stats,
                true,
            )
        })
        .collect()
}

fn top_text(table: &TopTable, wall: &WallClock, comm_of: CommOf<'_>, printkey: Option<&BoundExpr>) -> String {
    let printkey_fn = |key: u64| {
        printkey
            .and_then(|p| p.eval_vars(&[key as i64]))
            .and_then(|v| {
                v.as_str()
                    .map(str::to_string)
                    .or_else(|| v.as_int().map(|i| i.to_string()))
            })
            .unwrap_or_else(|| key.to_string())
    };
    let printkey_ref: &dyn Fn(u64) -> String = &printkey_fn;
    text::top_table(
        table,
        wall,
        &TopText {
            program: "perfscope",
            comm_of,
            printkey: printkey.map(|_| printkey_ref),
        },
    )
}

/// `-k EXPR` bound to one event's layout, or its own `key=`.
fn key_of(event: &ResolvedEvent, default_key: Option<&Expr>) -> anyhow::Result<Option<KeySource>> {
    if let Some(key) = &event.attrs.key {
        return Ok(Some(number_of(key.clone())));
    }
    match default_key {
        Some(expr) => {
            let bound = expr
                .bind(&event.layout)
                .with_context(|| format!("-k {} on {}", expr.text(), event.layout.full_name()))?;
            Ok(Some(number_of(bound)))
        }
        None => Ok(None),
    }
}

fn multi_trace(
    options: &TraceOptions,
    stages: &[Vec<ResolvedEvent>],
    layouts: &[EventLayout],
    threads: bool,
) -> anyhow::Result<MultiTraceAnalyzer> {
    if stages.len() < 2 {
        bail!("multi-trace needs two stages at least: `-e EVENT1 -e EVENT2`");
    }
    let default_key = options
        .key
        .as_deref()
        .map(Expr::parse)
        .transpose()
        .map_err(|e| anyhow::anyhow!("-k: {e}"))?;
    let mut index = 0u16;
    let mut config_stages = Vec::new();
    let mut key_text = options.key.clone();
    for stage in stages {
        let mut events = Vec::new();
        for event in stage {
            let mut part = StageEvent::new(crate::trace::event::EventIndex(index));
            index += 1;
            if let Some(key) = key_of(event, default_key.as_ref())? {
                part = part.key(key);
            }
            if key_text.is_none() {
                key_text = event.spec.key.as_ref().map(|k| k.expr.text().to_string());
            }
            if let Some(role) = &event.attrs.role {
                part.role = Some(number_of(role.clone()));
            }
            part.untraced = event.spec.untraced;
            if let Some(alias) = &event.spec.alias {
                part = part.alias(alias.clone());
            }
            events.push(part);
        }
        config_stages.push(events);
    }
    let mut config = MultiTraceConfig::new(config_stages);
    config.implementation = match options.analyzer {
        AnalyzerKind::MultiTracePair => Implementation::Pair,
        _ => Implementation::Delay,
    };
    config.instance = if threads { Instance::Thread } else { Instance::Cpu };
    config.perins = options.perins;
    config.cycle = options.cycle;
    config.than_ns = options.than_ns;
    config.slow_pair_capacity = SLOW_PAIRS;
    config.key_header = key_text;
    Ok(MultiTraceAnalyzer::new(layouts, config)?)
}

fn top_config(
    options: &TraceOptions,
    events: &[&ResolvedEvent],
) -> anyhow::Result<(TopConfig, Option<BoundExpr>)> {
    let default_key = options
        .key
        .as_deref()
        .map(Expr::parse)
        .transpose()
        .map_err(|e| anyhow::anyhow!("-k: {e}"))?;
    let mut top_events = Vec::new();
    let mut key_text = options.key.clone();
    let mut comm_text = None;
    let mut printkey = None;
    for (i, event) in events.iter().enumerate() {
        let spec = &event.spec;
        let mut columns = Vec::new();
        for (expr, attr) in event.attrs.top_by.iter().zip(&spec.top_by) {
            let header = if columns.is_empty() {
                spec.alias.clone()
            } else {
                None
            };
            let header = header.unwrap_or_else(|| attr.expr.text().to_string());
            columns.push(TopColumn::sum(&header, number_of(expr.clone()), true));
        }
        for (expr, attr) in event.attrs.top_add.iter().zip(&spec.top_add) {
            let header = if columns.is_empty() {
                spec.alias.clone()
            } else {
                None
            };
            let header = header.unwrap_or_else(|| attr.expr.text().to_string());
            columns.push(TopColumn::sum(&header, number_of(expr.clone()), false));
        }
        if columns.is_empty() {
            columns.push(TopColumn::count(spec.display_name()));
        }
        if key_text.is_none() {
            key_text = spec.key.as_ref().map(|k| k.expr.text().to_string());
        }
        if comm_text.is_none() {
            comm_text = spec.comm.as_ref().map(|c| c.expr.text().to_string());
        }
        if printkey.is_none() {
            printkey = event.attrs.printkey.clone();
        }
        let comm = event.attrs.comm.clone().map(|expr| {
            Box::new(move |e: &TraceEvent<'_>| {
                expr.eval(e).map(|v| match v.as_str() {
                    Some(s) => s.to_string(),
                    None => v.as_int().map(|i| i.to_string()).unwrap_or_default(),
                })
            }) as crate::analyzers::top::CommSource
        });
        top_events.push(TopEvent {
            event: crate::trace::event::EventIndex(i as u16),
            key: key_of(event, default_key.as_ref())?,
            comm,
            columns,
        });
    }
    let config = TopConfig {
        events: top_events,
        key_text,
        comm_text,
        only_comm: options.only_comm,
        // A pid key is a thread id: its name is the thread's own.
        pid_comm: Some(Box::new(|tid| read_proc_comm(tid, tid))),
    };
    Ok((config, printkey))
}
