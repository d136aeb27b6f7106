//! An analysis's rows shaped for the views: one latency series per latency row (the
//! Latency view) and the table exactly as the text output prints it, each line with its
//! typed cells (the Tables view sorts and filters on them).

use super::blktrace::blktrace_table;
use super::kvm_exit::kvm_exit_table;
use super::memory_table::stack_line;
use super::multi_trace::{delay_table, pair_table};
use super::nested_trace::{call_table, nested_delay_table};
use super::num_dist::num_dist_table;
use super::oncpu::oncpu_table;
use super::page_faults::fault_table;
use super::sql::query;
use super::stat::stat_table;
use super::syscall_label;
use super::syscalls::syscall_table;
use super::task_state::task_state_table;
use super::text::{TextStyle, UNKNOWN_COMM, WallClock, analysis_text};
use super::top::top_table;
use crate::model::analysis::{AnalysisInfo, AnalysisRows, AnalysisSchema, CallReport};
use crate::model::latency_stats::LatencyStats;
use crate::model::lockup_warnings::{LockupKind, LockupRows};
use crate::model::period_counts::CountInstance;
use crate::model::present::{AnalysisTable, Cell, Column, ColumnKind as K, LatencySeries, TableRow};
use crate::model::sql_rows::{SqlRows, SqlSchema};
use crate::model::threads::ThreadNames;
use crate::model::timer_samples::{TimerSamples, TimerSchema};
use crate::model::units::ValueUnit;
use crate::store::table::perf_prof_cell;

fn thread_label(tid: u64, names: &ThreadNames) -> String {
    let name = u32::try_from(tid)
        .ok()
        .and_then(|t| names.name(t))
        .unwrap_or_else(|| UNKNOWN_COMM.into());
    format!("{tid} {name}")
}

/// One distribution per latency row, in the table's order, with the unit of its values
/// (nanoseconds, but a num-dist event's own).
pub fn latency_series(info: &AnalysisInfo, rows: &AnalysisRows, names: &ThreadNames) -> Vec<LatencySeries> {
    match (&info.schema, rows) {
        (AnalysisSchema::Syscalls(schema), AnalysisRows::Latency(rows)) => syscall_table(schema, rows)
            .rows
            .into_iter()
            .map(|row| LatencySeries {
                name: syscall_label(row.id),
                instance: row.thread.map(|tid| thread_label(u64::from(tid), names)),
                stats: row.stats,
                unit: ValueUnit::Nanoseconds,
                counts_errors: true,
            })
            .collect(),
        (AnalysisSchema::Delay(schema), AnalysisRows::Latency(rows)) => {
            let table = delay_table(schema, rows);
            table
                .rows
                .iter()
                .filter_map(|row| {
                    let pair = table.pairs.get(row.pair)?;
                    let instance = row.instance.map(|key| {
                        if table.comm_column {
                            thread_label(key, names)
                        } else {
                            format!("{} {key}", table.key_header.as_deref().unwrap_or("key"))
                        }
                    });
                    Some(LatencySeries {
                        name: format!("{} => {}", pair.start, pair.end),
                        instance,
                        stats: row.stats.clone(),
                        unit: ValueUnit::Nanoseconds,
                        counts_errors: false,
                    })
                })
                .collect()
        }
        (AnalysisSchema::TaskState(schema), AnalysisRows::Latency(rows)) => task_state_table(schema, rows)
            .rows
            .into_iter()
            .map(|row| LatencySeries {
                name: row.state.label().to_string(),
                instance: row.thread.map(|tid| thread_label(u64::from(tid), names)),
                stats: row.stats,
                unit: ValueUnit::Nanoseconds,
                counts_errors: false,
            })
            .collect(),
        (AnalysisSchema::Blktrace(schema), AnalysisRows::Latency(rows)) => blktrace_table(schema, rows)
            .rows
            .into_iter()
            .map(|row| LatencySeries {
                name: format!("{} => {}", row.start, row.end),
                instance: None,
                stats: row.stats,
                unit: ValueUnit::Nanoseconds,
                counts_errors: false,
            })
            .collect(),
        (AnalysisSchema::NumDist(schema), AnalysisRows::Latency(rows)) => num_dist_table(schema, rows)
            .rows
            .into_iter()
            .map(|row| LatencySeries {
                name: row.event,
                instance: row
                    .instance
                    .map(|i| format!("{} {i}", schema.instance_header.as_deref().unwrap_or("instance"))),
                stats: row.stats,
                unit: row.unit,
                counts_errors: false,
            })
            .collect(),
        (AnalysisSchema::KvmExit(schema), AnalysisRows::Latency(rows)) => kvm_exit_table(schema, rows)
            .rows
            .into_iter()
            .map(|row| LatencySeries {
                name: row.name().to_string(),
                instance: row.instance.map(|i| match schema.instance {
                    Some(CountInstance::Thread) => thread_label(i, names),
                    _ => format!("cpu {i}"),
                }),
                stats: row.stats,
                unit: ValueUnit::Nanoseconds,
                counts_errors: false,
            })
            .collect(),
        (AnalysisSchema::Calls(schema), AnalysisRows::Calls(rows)) => call_table(schema, rows)
            .lines
            .into_iter()
            .filter_map(|line| {
                Some(LatencySeries {
                    name: line.name,
                    instance: None,
                    stats: line.stats?,
                    unit: ValueUnit::Nanoseconds,
                    counts_errors: false,
                })
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The live sql results of `rows`: every statement's rows, each line as the text prints
/// it, cells by position (statements of different columns share the grid).
fn sql_table(info: &AnalysisInfo, schema: &SqlSchema, rows: &SqlRows) -> AnalysisTable {
    use rusqlite::types::Value;
    let results = match query::run(schema, rows) {
        Ok(results) => results,
        Err(e) => {
            return AnalysisTable {
                title: format!("{}: the query failed: {e}", info.name),
                header: Vec::new(),
                columns: Vec::new(),
                rows: Vec::new(),
            };
        }
    };
    let width = results.iter().map(|r| r.columns.len()).max().unwrap_or(0);
    let names: Vec<String> = results.first().map(|r| r.columns.clone()).unwrap_or_default();
    let mut columns: Vec<Column> = names.iter().map(|n| Column::new(n.clone(), K::Number)).collect();
    columns.resize(width, Column::new(String::new(), K::Number));
    let mut table_rows = Vec::new();
    for result in &results {
        for row in &result.rows {
            let cells: Vec<Cell> = row
                .iter()
                .map(|v| match v {
                    Value::Integer(i) => Cell::Int(i128::from(*i)),
                    Value::Real(f) => Cell::Float(*f),
                    other => Cell::Text(perf_prof_cell(other.into())),
                })
                .collect();
            let text: Vec<String> = row.iter().map(|v| perf_prof_cell(v.into())).collect();
            table_rows.push(TableRow {
                text: text.join(" | "),
                cells,
            });
        }
    }
    let statements: Vec<&str> = results.iter().map(|r| r.statement.trim()).collect();
    AnalysisTable {
        title: format!(
            "{}: {} ({} events)",
            info.name,
            statements.join(" "),
            rows.events()
        ),
        // The first statement's header as the text prints it (the others' rows follow).
        header: vec![names.join(" | ")],
        columns,
        rows: table_rows,
    }
}

fn number(n: u64) -> Cell {
    Cell::Int(i128::from(n))
}

fn seconds(time_ns: u64) -> Cell {
    Cell::Float(time_ns as f64 / 1e9)
}

/// The latency cells every latency table shares, and their column names.
fn latency_cells(stats: &LatencyStats, than: bool, cells: &mut Vec<Cell>) {
    let h = &stats.histogram;
    cells.push(number(stats.calls()));
    cells.push(number(stats.total_ns()));
    cells.push(number(h.min().unwrap_or(0)));
    cells.push(number(stats.avg_ns()));
    cells.push(number(h.percentile(50.0).unwrap_or(0)));
    cells.push(number(h.percentile(95.0).unwrap_or(0)));
    cells.push(number(h.percentile(99.0).unwrap_or(0)));
    cells.push(number(h.percentile(99.9).unwrap_or(0)));
    cells.push(number(h.max().unwrap_or(0)));
    if than {
        cells.push(number(stats.than));
    }
}

const LATENCY_COLUMNS: [(&str, K); 9] = [
    ("calls", K::Count),
    ("total", K::Nanoseconds),
    ("min", K::Nanoseconds),
    ("avg", K::Nanoseconds),
    ("p50", K::Nanoseconds),
    ("p95", K::Nanoseconds),
    ("p99", K::Nanoseconds),
    ("p99.9", K::Nanoseconds),
    ("max", K::Nanoseconds),
];

fn columns(spec: &[(&str, K)]) -> Vec<Column> {
    spec.iter().map(|&(name, kind)| Column::new(name, kind)).collect()
}

/// `--than`'s column: how many were slower.
fn than_column() -> Column {
    Column::new("than", K::Count)
}

/// A pair's columns: its two events, the latency figures, `than` with `--than`.
fn pair_latency_columns(than: bool) -> Vec<Column> {
    let mut cols = columns(&[("start", K::Text), ("end", K::Text)]);
    cols.extend(columns(&LATENCY_COLUMNS));
    if than {
        cols.push(than_column());
    }
    cols
}

/// A period's column name: `now` for the latest, else `-N ms` (its start, before the
/// latest period's).
fn period_column(periods_ago: usize, period_ns: u64) -> String {
    if periods_ago == 0 {
        "now".into()
    } else {
        format!("-{}ms", periods_ago as u64 * period_ns / 1_000_000)
    }
}

/// hrtimer's kept periods, one line each (the text prints a period on several lines),
/// with `-g` the timer's kernel stack at the end of the line.
fn timer_table(info: &AnalysisInfo, schema: &TimerSchema, samples: &TimerSamples) -> AnalysisTable {
    let mut columns = columns(&[
        ("time", K::Seconds),
        ("cpu", K::Id),
        ("pid", K::Id),
        ("tid", K::Id),
        ("period", K::Nanoseconds),
    ]);
    columns.extend(schema.events.iter().map(|e| Column::new(e.clone(), K::Count)));
    let stacks = samples.matched.iter().any(|s| s.stack.is_some());
    if stacks {
        columns.push(Column::new("stack", K::Text));
    }
    let rows = samples
        .matched
        .iter()
        .map(|s| {
            let mut text = format!(
                "[{:03}] {}.{:06} pid {:6} tid {:6} cpu-clock {} ns",
                s.cpu,
                s.time_ns / 1_000_000_000,
                s.time_ns % 1_000_000_000 / 1_000,
                s.pid,
                s.tid,
                s.period_ns
            );
            for (name, n) in schema.events.iter().zip(&s.counts) {
                text.push_str(&format!("  {name} {n}"));
            }
            let mut cells = vec![
                seconds(s.time_ns),
                number(u64::from(s.cpu)),
                number(u64::from(s.pid)),
                number(u64::from(s.tid)),
                number(s.period_ns),
            ];
            cells.extend(s.counts.iter().map(|&n| number(n)));
            if stacks {
                // A tick in user space has no kernel stack.
                let line = s
                    .stack
                    .as_deref()
                    .map_or_else(|| "(user space)".into(), stack_line);
                text.push_str(&format!("  {line}"));
                cells.push(Cell::Text(line));
            }
            TableRow { text, cells }
        })
        .collect();
    let condition = schema.condition.as_deref().unwrap_or("(no condition)");
    AnalysisTable {
        title: format!(
            "{}: {condition} — {} of {} periods",
            info.name,
            samples.matched.len() as u64 + samples.dropped,
            samples.periods
        ),
        header: Vec::new(),
        columns,
        rows,
    }
}

/// watchdog's predicted lockups, one line each.
fn lockup_table(info: &AnalysisInfo, rows: &LockupRows) -> AnalysisTable {
    let table_rows = rows
        .warnings
        .iter()
        .map(|w| {
            let kind = match w.kind {
                LockupKind::Soft => "soft",
                LockupKind::Hard => "hard",
            };
            let mut text = format!(
                "{}.{:06} WILL: {kind} lockup - CPU#{} [{} - {} > {}]",
                w.time_ns / 1_000_000_000,
                w.time_ns % 1_000_000_000 / 1_000,
                w.cpu,
                w.now,
                w.touch,
                w.thresh
            );
            if let Some(stack) = &w.stack {
                // `-g`: where the CPU was when the tick found it stuck.
                text.push_str(&format!("  {}", stack_line(stack)));
            }
            TableRow {
                text,
                cells: vec![
                    seconds(w.time_ns),
                    number(u64::from(w.cpu)),
                    Cell::Text(kind.into()),
                    number(w.now),
                    number(w.touch),
                    number(w.thresh),
                ],
            }
        })
        .collect();
    let found = match rows.collected {
        Some((_, cpus)) => format!("watchdog timers of {cpus} CPUs found"),
        None => "watchdog timers not all found yet".into(),
    };
    AnalysisTable {
        title: format!(
            "{}: {found}, {} watchdog ticks, {} warnings",
            info.name,
            rows.watchdog_ticks,
            rows.warnings.len() as u64 + rows.dropped
        ),
        header: Vec::new(),
        columns: columns(&[
            ("time", K::Seconds),
            ("cpu", K::Id),
            ("lockup", K::Text),
            ("now", K::Number),
            ("touch", K::Number),
            ("thresh", K::Number),
        ]),
        rows: table_rows,
    }
}

/// The table as the text output prints it, line by line with typed cells.
pub fn table(info: &AnalysisInfo, rows: &AnalysisRows, names: &ThreadNames) -> AnalysisTable {
    if let (AnalysisSchema::Timer(schema), AnalysisRows::Timer(samples)) = (&info.schema, rows) {
        return timer_table(info, schema, samples);
    }
    if let (AnalysisSchema::Lockups, AnalysisRows::Lockups(lockups)) = (&info.schema, rows) {
        return lockup_table(info, lockups);
    }
    if let Some(table) = super::memory_table::memory_table(info, rows) {
        return table;
    }
    if let (AnalysisSchema::Sql(schema), AnalysisRows::Sql(sql_rows)) = (&info.schema, rows) {
        return sql_table(info, schema, sql_rows);
    }
    // The rows never print the clock; only the stamp line does, and it is dropped (top's
    // title keeps what follows it): a fixed clock keeps the engine off the wall clock.
    let wall = WallClock::utc_epoch();
    let text = analysis_text(info, rows, &wall, names, TextStyle::default(), None);
    let name = |tid: u64| {
        u32::try_from(tid)
            .ok()
            .and_then(|t| names.name(t))
            .unwrap_or_else(|| UNKNOWN_COMM.into())
    };
    let (stamp, header_lines, columns, cells): (bool, usize, Vec<Column>, Vec<Vec<Cell>>) =
        match (&info.schema, rows) {
            (AnalysisSchema::Syscalls(schema), AnalysisRows::Latency(rows)) => {
                let table = syscall_table(schema, rows);
                let mut cols = Vec::new();
                if schema.perins {
                    cols.extend(columns(&[("thread", K::Id), ("comm", K::Text)]));
                }
                cols.push(Column::new("syscall", K::Text));
                cols.extend(columns(&LATENCY_COLUMNS));
                if schema.than_ns.is_some() {
                    cols.push(than_column());
                }
                cols.push(Column::new("err", K::Count));
                let cells = table
                    .rows
                    .iter()
                    .map(|row| {
                        let mut c = Vec::new();
                        if let Some(tid) = row.thread {
                            c.push(number(u64::from(tid)));
                            c.push(Cell::Text(name(u64::from(tid))));
                        }
                        c.push(Cell::Text(syscall_label(row.id)));
                        latency_cells(&row.stats, schema.than_ns.is_some(), &mut c);
                        c.push(number(row.stats.errors));
                        c
                    })
                    .collect();
                (true, 2, cols, cells)
            }
            (AnalysisSchema::Delay(schema), AnalysisRows::Latency(rows)) => {
                let table = delay_table(schema, rows);
                let mut cols = Vec::new();
                if let Some(header) = &schema.key_header {
                    cols.push(Column::new(header.to_lowercase(), K::Id));
                    if schema.comm_column {
                        cols.push(Column::new("comm", K::Text));
                    }
                }
                cols.extend(pair_latency_columns(schema.than_ns.is_some()));
                let cells = table
                    .rows
                    .iter()
                    .filter_map(|row| {
                        let pair = table.pairs.get(row.pair)?;
                        let mut c = Vec::new();
                        if let Some(key) = row.instance {
                            c.push(number(key));
                            if schema.comm_column {
                                c.push(Cell::Text(name(key)));
                            }
                        }
                        c.push(Cell::Text(pair.start.clone()));
                        c.push(Cell::Text(pair.end.clone()));
                        latency_cells(&row.stats, schema.than_ns.is_some(), &mut c);
                        Some(c)
                    })
                    .collect();
                (true, 2, cols, cells)
            }
            (AnalysisSchema::TaskState(schema), AnalysisRows::Latency(rows)) => {
                let table = task_state_table(schema, rows);
                let mut cols = Vec::new();
                if schema.perins {
                    cols.extend(columns(&[("thread", K::Id), ("comm", K::Text)]));
                }
                cols.push(Column::new("st", K::Text));
                cols.extend(columns(&LATENCY_COLUMNS));
                let cells = table
                    .rows
                    .iter()
                    .map(|row| {
                        let mut c = Vec::new();
                        if let Some(tid) = row.thread {
                            c.push(number(u64::from(tid)));
                            c.push(Cell::Text(name(u64::from(tid))));
                        }
                        c.push(Cell::Text(row.state.label().into()));
                        latency_cells(&row.stats, false, &mut c);
                        c
                    })
                    .collect();
                (true, 2, cols, cells)
            }
            (AnalysisSchema::OnCpu(schema), AnalysisRows::Latency(rows)) => {
                // One line per CPU, as printed: its total and its busiest task.
                let table = oncpu_table(schema, rows, &|tid| names.name(tid));
                let cells = table
                    .rows
                    .iter()
                    .map(|row| {
                        let top = row.tasks.first();
                        vec![
                            number(u64::from(row.cpu)),
                            number(row.total_ns),
                            Cell::Text(top.map(|t| t.comm.clone()).unwrap_or_default()),
                            number(top.map_or(0, |t| t.stats.total_ns())),
                            number(row.tasks.len() as u64),
                        ]
                    })
                    .collect();
                (
                    true,
                    1,
                    columns(&[
                        ("cpu", K::Id),
                        ("sum", K::Nanoseconds),
                        ("top comm", K::Text),
                        ("top run", K::Nanoseconds),
                        ("tasks", K::Count),
                    ]),
                    cells,
                )
            }
            (AnalysisSchema::Blktrace(schema), AnalysisRows::Latency(rows)) => {
                let cols = pair_latency_columns(schema.than_ns.is_some());
                let cells = blktrace_table(schema, rows)
                    .rows
                    .iter()
                    .map(|row| {
                        let mut c = vec![Cell::Text(row.start.into()), Cell::Text(row.end.into())];
                        latency_cells(&row.stats, schema.than_ns.is_some(), &mut c);
                        c
                    })
                    .collect();
                (true, 2, cols, cells)
            }
            (AnalysisSchema::NumDist(schema), AnalysisRows::Latency(rows)) => {
                let table = num_dist_table(schema, rows);
                let mut cols = Vec::new();
                if let Some(header) = &schema.instance_header {
                    cols.push(Column::new(header.to_lowercase(), K::Id));
                }
                cols.extend(columns(&[("event", K::Text), ("calls", K::Count)]));
                // The values' unit: durations when every event's are, else plain numbers.
                let unit = if !schema.units.is_empty()
                    && schema.units.iter().all(|&u| u == ValueUnit::Nanoseconds)
                {
                    ValueUnit::Nanoseconds
                } else {
                    ValueUnit::Number
                };
                cols.extend(["total", "min", "avg", "p99", "max"].map(|n| Column::valued(n, unit)));
                let cells = table
                    .rows
                    .iter()
                    .map(|row| {
                        let h = &row.stats.histogram;
                        let mut c = Vec::new();
                        if let Some(i) = row.instance {
                            c.push(number(i));
                        }
                        c.push(Cell::Text(row.event.clone()));
                        c.push(number(row.stats.calls()));
                        c.push(number(row.total()));
                        c.push(number(h.min().unwrap_or(0)));
                        c.push(number(row.avg()));
                        c.push(number(h.percentile(99.0).unwrap_or(0)));
                        c.push(number(h.max().unwrap_or(0)));
                        c
                    })
                    .collect();
                (true, 2, cols, cells)
            }
            (AnalysisSchema::Pairs(schema), AnalysisRows::Pairs(rows)) => {
                let table = pair_table(schema, rows);
                let cells = table
                    .rows
                    .iter()
                    .map(|row| {
                        vec![
                            Cell::Text(row.first.clone()),
                            Cell::Text(row.second.clone().unwrap_or_default()),
                            number(row.count),
                        ]
                    })
                    .collect();
                let cols = columns(&[("first", K::Text), ("second", K::Text), ("count", K::Count)]);
                (false, 0, cols, cells)
            }
            (AnalysisSchema::Top(schema), AnalysisRows::Top(rows)) => {
                let table = top_table(schema, rows);
                let mut cols = Vec::new();
                if let Some(header) = &schema.key_header {
                    cols.push(Column::new(header.to_lowercase(), K::Id));
                }
                cols.extend(
                    schema
                        .column_headers
                        .iter()
                        .map(|h| Column::new(h.to_lowercase(), K::Number)),
                );
                if let Some(header) = &schema.comm_header {
                    cols.push(Column::new(header.to_lowercase(), K::Text));
                }
                let cells = table
                    .rows
                    .iter()
                    .map(|row| {
                        let mut c = Vec::new();
                        if schema.key_header.is_some() {
                            c.push(number(row.key));
                        }
                        c.extend(row.values.iter().map(|&v| number(v)));
                        if schema.comm_header.is_some() {
                            let comm = match &row.comm {
                                Some(n) => n.clone(),
                                None if schema.comm_from_pid => name(row.key),
                                None => String::new(),
                            };
                            c.push(Cell::Text(comm));
                        }
                        c
                    })
                    .collect();
                (true, 1, cols, cells)
            }
            (AnalysisSchema::Periods(schema), AnalysisRows::Periods(counts)) => {
                let table = stat_table(schema, counts);
                let mut cols = Vec::new();
                if schema.instance.is_some() {
                    let name = match schema.instance {
                        Some(CountInstance::Cpu) => "cpu",
                        _ => "thread",
                    };
                    cols.push(Column::new(name, K::Id));
                }
                cols.push(Column::new("event", K::Text));
                // Periods oldest first, named by how long ago they ended (the last is `now`).
                let columns = schema.columns.max(1);
                cols.extend(
                    (0..columns)
                        .map(|i| Column::new(period_column(columns - 1 - i, schema.period_ns), K::Count)),
                );
                cols.push(Column::new("total", K::Count));
                let cells = table
                    .rows
                    .iter()
                    .map(|row| {
                        let mut c = Vec::new();
                        if let Some(instance) = row.instance {
                            c.push(number(instance));
                        }
                        c.push(Cell::Text(
                            table.events.get(row.event).cloned().unwrap_or_default(),
                        ));
                        c.extend(row.buckets.iter().map(|&n| number(n)));
                        c.push(number(row.total));
                        c
                    })
                    .collect();
                (true, 0, cols, cells)
            }
            (AnalysisSchema::KvmExit(schema), AnalysisRows::Latency(rows)) => {
                let table = kvm_exit_table(schema, rows);
                let mut cols = Vec::new();
                if let Some(instance) = schema.instance {
                    let name = match instance {
                        CountInstance::Cpu => "cpu",
                        CountInstance::Thread => "thread",
                    };
                    cols.push(Column::new(name, K::Id));
                }
                cols.extend(columns(&[
                    ("exit_reason", K::Text),
                    ("calls", K::Count),
                    ("total", K::Nanoseconds),
                    ("min", K::Nanoseconds),
                    ("avg", K::Nanoseconds),
                    ("p99", K::Nanoseconds),
                    ("max", K::Nanoseconds),
                    ("%gsys", K::Percent),
                ]));
                let cells = table
                    .rows
                    .iter()
                    .map(|row| {
                        let h = &row.stats.histogram;
                        let mut c = Vec::new();
                        if let Some(i) = row.instance {
                            c.push(number(i));
                        }
                        c.push(Cell::Text(row.name().to_string()));
                        c.push(number(row.stats.calls()));
                        c.push(number(row.stats.total_ns()));
                        c.push(number(h.min().unwrap_or(0)));
                        c.push(number(row.stats.avg_ns()));
                        c.push(number(h.percentile(99.0).unwrap_or(0)));
                        c.push(number(h.max().unwrap_or(0)));
                        c.push(Cell::Float(row.gsys_percent()));
                        c
                    })
                    .collect();
                (true, 2, cols, cells)
            }
            (AnalysisSchema::Faults, AnalysisRows::Faults(counts)) => {
                let cells = fault_table(counts)
                    .iter()
                    .map(|row| {
                        vec![
                            number(u64::from(row.tid)),
                            Cell::Text(name(u64::from(row.tid))),
                            Cell::Text(format!("{:#x}", row.region_start)),
                            number(row.total()),
                            number(row.user),
                            number(row.kernel),
                            number(row.write),
                        ]
                    })
                    .collect();
                let cols = columns(&[
                    ("thread", K::Id),
                    ("comm", K::Text),
                    ("region", K::Text),
                    ("faults", K::Count),
                    ("user", K::Count),
                    ("kernel", K::Count),
                    ("write", K::Count),
                ]);
                (true, 2, cols, cells)
            }
            (AnalysisSchema::Calls(schema), AnalysisRows::Calls(rows)) => {
                let mut cols = vec![Column::new("function", K::Text)];
                match schema.report {
                    CallReport::Times => {
                        let table = nested_delay_table(schema, rows, schema.than_ns);
                        cols = pair_latency_columns(schema.than_ns.is_some());
                        let cells = table
                            .rows
                            .iter()
                            .filter_map(|row| {
                                let pair = table.pairs.get(row.pair)?;
                                let mut c =
                                    vec![Cell::Text(pair.start.clone()), Cell::Text(pair.end.clone())];
                                latency_cells(&row.stats, schema.than_ns.is_some(), &mut c);
                                Some(c)
                            })
                            .collect();
                        (true, 2, cols, cells)
                    }
                    report => {
                        let table = call_table(schema, rows);
                        let timed = report == CallReport::CallsAndTimes;
                        cols.push(Column::new("R", K::Text));
                        cols.push(Column::new("entries", K::Count));
                        if timed {
                            cols.extend(columns(&LATENCY_COLUMNS));
                        }
                        let cells = table
                            .lines
                            .iter()
                            .map(|line| {
                                let mut c = vec![
                                    Cell::Text(line.name.clone()),
                                    Cell::Text(if line.recursive { "R" } else { "" }.into()),
                                    number(line.calls),
                                ];
                                if timed {
                                    latency_cells(&line.stats.clone().unwrap_or_default(), false, &mut c);
                                }
                                c
                            })
                            .collect();
                        // call-delay: a time line and two header lines; call: the tree only.
                        (timed, if timed { 2 } else { 0 }, cols, cells)
                    }
                }
            }
            // Every kind is named, so a new analysis cannot fall through unnoticed: the
            // kinds with tables of their own were returned above, and rows of another shape
            // than the schema (a bug upstream) show an empty table rather than a wrong one.
            (
                AnalysisSchema::Syscalls(_)
                | AnalysisSchema::Delay(_)
                | AnalysisSchema::TaskState(_)
                | AnalysisSchema::OnCpu(_)
                | AnalysisSchema::Blktrace(_)
                | AnalysisSchema::NumDist(_)
                | AnalysisSchema::Pairs(_)
                | AnalysisSchema::Top(_)
                | AnalysisSchema::Periods(_)
                | AnalysisSchema::Faults
                | AnalysisSchema::KvmExit(_)
                | AnalysisSchema::Timer(_)
                | AnalysisSchema::Lockups
                | AnalysisSchema::Leaks(_)
                | AnalysisSchema::MemProf(_)
                | AnalysisSchema::Calls(_)
                | AnalysisSchema::Sql(_),
                _,
            ) => (false, 0, Vec::new(), Vec::new()),
        };
    let mut lines = text.lines().map(str::to_string);
    let first = if stamp { lines.next() } else { None };
    let header: Vec<String> = lines.by_ref().take(header_lines).collect();
    let title = match (&info.schema, first) {
        // top's first line says what it counted: keep it, without the clock.
        (AnalysisSchema::Top(_), Some(line)) => line
            .get(wall.prefix().len()..)
            .unwrap_or(&line)
            .trim_end()
            .to_string(),
        _ => info.name.clone(),
    };
    let rows = lines
        .zip(cells)
        .map(|(text, cells)| TableRow { text, cells })
        .collect();
    AnalysisTable {
        title,
        header,
        columns,
        rows,
    }
}
