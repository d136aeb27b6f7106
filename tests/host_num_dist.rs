//! `num-dist` end to end on real tracefs (as root): a child reads 1, 2, …, N bytes, and
//! the distribution of `count` (sys_enter_read) and `ret` (sys_exit_read) is exactly
//! that — calls, total, min, avg, max — with p99 within the histogram's error; the sizes
//! stay numbers (no `ns`) in the Latency view's series and every artifact.

mod common;

use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use common::host::{TextTable, build_fixture, ensure_tracefs, perfscope_ok, text_tables, trace_summary};
use perfscope::model::units::ValueUnit;
use perfscope::trace::field_units::expr_unit;

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

const N: u64 = 1000;

/// perf-prof's num-dist columns.
const COLUMNS: [&str; 7] = ["event", "calls", "total", "min", "avg", "p99", "max"];

fn sizes(dir: &Path) {
    build_fixture(dir, "sizes", &["-static"]);
}

/// The row of `event` has the distribution of 1..=N.
fn assert_one_to_n(table: &TextTable, row: &[String], stdout: &str) {
    assert_eq!(table.number(row, "calls"), N, "{stdout}");
    assert_eq!(table.number(row, "total"), N * (N + 1) / 2, "{stdout}");
    assert_eq!(table.number(row, "min"), 1, "{stdout}");
    assert_eq!(table.number(row, "avg"), N * (N + 1) / 2 / N, "{stdout}");
    assert_eq!(table.number(row, "max"), N, "{stdout}");
    let p99 = table.number(row, "p99") as f64;
    assert!((p99 - 990.0).abs() <= 990.0 / 64.0, "p99 {p99}:\n{stdout}");
}

#[test]
fn num_dist_of_read_sizes_is_the_workloads() {
    let _serial = serial();
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    sizes(dir.path());
    let n = N.to_string();
    let (stdout, stderr) = perfscope_ok(
        dir.path(),
        &[
            "num-dist",
            "--no-tui",
            "-m",
            "256",
            "-e",
            "syscalls:sys_enter_read//num=count/",
            "--",
            "./sizes",
            &n,
        ],
    );
    assert_eq!(trace_summary(&stderr, "num-dist").lost, 0, "{stderr}");
    let tables = text_tables(&stdout);
    assert_eq!(tables.len(), 1, "{stdout}");
    let table = &tables[0];
    assert_eq!(table.columns, COLUMNS, "{}", table.header);
    assert_eq!(table.rows.len(), 1, "{stdout}");
    assert_eq!(table.rows[0][0], "sys_enter_read", "{stdout}");
    assert_one_to_n(table, &table.rows[0], &stdout);
}

#[test]
fn num_dist_perins_splits_two_events_per_thread() {
    let _serial = serial();
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    sizes(dir.path());
    let n = N.to_string();
    let (stdout, stderr) = perfscope_ok(
        dir.path(),
        &[
            "num-dist",
            "--no-tui",
            "-m",
            "256",
            "--perins",
            "-e",
            "syscalls:sys_enter_read//num=count/,syscalls:sys_exit_read//num=ret/alias=got/",
            "--",
            "./sizes",
            &n,
        ],
    );
    assert_eq!(trace_summary(&stderr, "num-dist").lost, 0, "{stderr}");
    let tables = text_tables(&stdout);
    assert_eq!(tables.len(), 1, "{stdout}");
    let table = &tables[0];
    assert_eq!(table.columns[0], "[THREAD]", "{}", table.header);
    assert_eq!(table.columns[1..], COLUMNS, "{}", table.header);
    // One thread, the child: its enter row then its exit row (event order).
    assert_eq!(table.rows.len(), 2, "{stdout}");
    assert_eq!(table.rows[0][0], table.rows[1][0], "{stdout}");
    assert_eq!(
        (&*table.rows[0][1], &*table.rows[1][1]),
        ("sys_enter_read", "got"),
        "{stdout}"
    );
    assert_one_to_n(table, &table.rows[0], &stdout);
    // The exits are the child's N reads and one more: the exit of the 1-byte read of the
    // start gate the workload waits in while the events are enabled (its enter was before).
    let got = &table.rows[1];
    assert_eq!(table.number(got, "calls"), N + 1, "{stdout}");
    assert_eq!(table.number(got, "total"), N * (N + 1) / 2 + 1, "{stdout}");
    assert_eq!(table.number(got, "min"), 1, "{stdout}");
    assert_eq!(table.number(got, "max"), N, "{stdout}");
}

/// num-dist rows live on the engine: a recorded session replays to the same table, and
/// the Latency view's series is the same distribution.
#[test]
fn a_recorded_num_dist_session_replays_the_same_table() {
    let _serial = serial();
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    sizes(dir.path());
    let n = N.to_string();
    let (stdout, stderr) = perfscope_ok(
        dir.path(),
        &[
            "num-dist",
            "--no-tui",
            "-m",
            "256",
            "--record",
            "n.db",
            "-e",
            "syscalls:sys_enter_read//num=count/",
            "--",
            "./sizes",
            &n,
        ],
    );
    let summary = trace_summary(&stderr, "num-dist");
    assert_eq!(summary.lost, 0, "{stderr}");
    let live = text_tables(&stdout).remove(0);

    let feed = perfscope::feeds::replay::ReplayFeed::open(&dir.path().join("n.db")).unwrap();
    let mut engine = perfscope::batch::headless::run(
        Box::new(feed),
        perfscope::batch::headless::Headless {
            selection: perfscope::model::Selection::all(),
            export: None,
            recording: None,
            progress: None,
        },
        &mut [],
    )
    .unwrap()
    .engine;
    // Every read of the workload is in the session (the run's own read events are too).
    assert!(
        engine.state.stats.events >= N,
        "{} events replayed",
        engine.state.stats.events
    );
    let snapshot = engine.snapshot();
    let replayed = snapshot.analysis.as_ref().expect("a trace session replays");
    let series = replayed
        .series
        .iter()
        .find(|s| s.name == "sys_enter_read")
        .expect("a sys_enter_read series");
    assert_eq!(series.stats.histogram.count(), N);
    assert_eq!(series.stats.histogram.sum(), u128::from(N * (N + 1) / 2));
    // A read's byte count is a plain number, not a time.
    assert_eq!(series.unit, ValueUnit::Number);
    let rows: Vec<Vec<String>> = replayed
        .table
        .rows
        .iter()
        .map(|r| r.text.split_whitespace().map(str::to_string).collect())
        .collect();
    assert_eq!(rows, live.rows);

    // The session's artifacts write the sizes as numbers: latency.csv's columns carry no
    // `_ns`, report.json's series say `number`, report.md's table has no time unit.
    let (stdout, _) = perfscope_ok(dir.path(), &["report", "n.db", "--out", "out"]);
    let work = common::host::artifact(&stdout, dir.path(), "report")
        .parent()
        .unwrap()
        .to_path_buf();
    let latency = std::fs::read_to_string(work.join("latency.csv")).unwrap();
    let mut lines = latency.lines();
    assert_eq!(
        lines.next(),
        Some("series,calls,total,min,avg,p50,p95,p99,p99_9,max,than,errors,buckets_csv"),
        "{latency}"
    );
    let row = lines
        .find(|l| l.starts_with("sys_enter_read,"))
        .unwrap_or_else(|| panic!("{latency}"));
    let cells: Vec<u64> = row
        .split(',')
        .skip(1)
        .take(9)
        .map(|c| c.parse().unwrap())
        .collect();
    assert_eq!(
        (cells[0], cells[1], cells[2], cells[8]),
        (N, N * (N + 1) / 2, 1, N),
        "calls, total, min, max: {row}"
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(work.join("report.json")).unwrap()).unwrap();
    let series = &report["analysis"]["latency"][0];
    assert_eq!(series["unit"], "number", "{series:#}");
    assert_eq!(series["max"], N, "{series:#}");
    assert!(series.get("max_ns").is_none(), "{series:#}");
    let md = std::fs::read_to_string(work.join("report.md")).unwrap();
    let table_row = md
        .lines()
        .find(|l| l.starts_with("| `sys_enter_read`"))
        .unwrap_or_else(|| panic!("{md}"));
    assert!(md.contains("## Distributions"), "{md}");
    assert!(
        table_row.ends_with(&format!("| {N} |")),
        "max as a number: {table_row}"
    );
    assert!(
        !table_row.contains("ns |") && !table_row.contains("us |"),
        "{table_row}"
    );
}

/// The kernel's own formats say which fields are durations: `sched_stat_runtime`'s
/// `runtime` is printed `[ns]`, `nmi_handler`'s `delta_ns` is named so; a read's `count`
/// and a switch's `prev_prio` are plain numbers.
#[test]
fn tracefs_formats_mark_the_duration_fields() {
    ensure_tracefs();
    let tracefs = perfscope::sources::tracefs::Tracefs::open().expect("tracefs (run as root)");
    let unit = |system: &str, event: &str, field: &str| {
        let layout = tracefs
            .layout(system, event)
            .unwrap_or_else(|e| panic!("{system}:{event}: {e}"));
        expr_unit(&layout, field)
    };
    assert_eq!(
        unit("sched", "sched_stat_runtime", "runtime"),
        ValueUnit::Nanoseconds
    );
    assert_eq!(unit("nmi", "nmi_handler", "delta_ns"), ValueUnit::Nanoseconds);
    assert_eq!(unit("syscalls", "sys_enter_read", "count"), ValueUnit::Number);
    assert_eq!(unit("sched", "sched_switch", "prev_prio"), ValueUnit::Number);
    assert_eq!(unit("sched", "sched_stat_runtime", "pid"), ValueUnit::Number);
}
