//! nested-trace and the live sql profiler end to end on real tracefs (as root).
//!
//! nested-trace: uprobe/uretprobe pairs on a fixture whose outer function calls inner K
//! times (inner calls leaf once) and sleeps 10 ms, run N times: the tree is outer → inner
//! → leaf, the counts are N, N*K, N*K, and outer takes at least 10 ms.
//!
//! sql: `syscalls:sys_enter_read` of a workload reading 1, 2, …, N bytes: over all
//! intervals the query counts N reads of N(N+1)/2 bytes, from 1 to N. A query naming an
//! unknown column fails before the run, exit non-zero, saying why.

mod common;

use std::path::Path;

use common::host::{build_fixture, ensure_tracefs, perfscope, perfscope_ok, starts_with_date};

const N: u64 = 6;
const K: u64 = 4;

fn nested(dir: &Path) {
    ensure_tracefs();
    build_fixture(dir, "nested", &[]);
}

fn selectors() -> Vec<String> {
    ["perfscope_outer", "perfscope_inner", "perfscope_leaf"]
        .iter()
        .map(|f| format!("uprobe:./nested:{f},uretprobe:./nested:{f}"))
        .collect()
}

fn nested_trace(dir: &Path, implementation: &str) -> String {
    let selectors = selectors();
    let mut args = vec!["nested-trace"];
    for s in &selectors {
        args.extend(["-e", s.as_str()]);
    }
    let (n, k) = (N.to_string(), K.to_string());
    args.extend(["--impl", implementation, "--", "./nested", &n, &k]);
    perfscope_ok(dir, &args).0
}

/// The call-delay row of `name` (its indent included): calls, min(us).
fn row(stdout: &str, prefix: &str) -> (u64, f64) {
    let line = stdout
        .lines()
        .find(|l| {
            l.starts_with(prefix) && !l[prefix.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
        })
        .unwrap_or_else(|| panic!("no row {prefix:?} in\n{stdout}"));
    let cells: Vec<&str> = line[prefix.len()..].split_whitespace().collect();
    let calls = cells[0].parse().unwrap_or_else(|_| panic!("calls in {line}"));
    let min = cells[2].parse().unwrap_or_else(|_| panic!("min in {line}"));
    (calls, min)
}

#[test]
fn call_delay_counts_every_nested_call_and_times_each_function() {
    let dir = tempfile::tempdir().unwrap();
    nested(dir.path());
    let stdout = nested_trace(dir.path(), "call-delay");
    let lines: Vec<&str> = stdout.lines().collect();
    let header = lines
        .iter()
        .position(|l| l.trim_start().starts_with("function call R"))
        .unwrap_or_else(|| panic!("no header in\n{stdout}"));
    assert!(starts_with_date(lines[header - 1]), "{stdout}");
    let (outer, outer_min) = row(&stdout, "perfscope_outer");
    let (inner, _) = row(&stdout, "  |-perfscope_inner");
    let (leaf, _) = row(&stdout, "  |   |-perfscope_leaf");
    assert_eq!((outer, inner, leaf), (N, N * K, N * K), "{stdout}");
    // outer sleeps 10 ms per call.
    assert!(outer_min >= 10_000.0, "outer min {outer_min} us:\n{stdout}");
    assert!(outer_min < 1_000_000.0, "outer min {outer_min} us:\n{stdout}");
    // The tree order: outer, then inner under it, then leaf under inner.
    let at = |p: &str| lines.iter().position(|l| l.starts_with(p)).unwrap();
    assert!(at("perfscope_outer") < at("  |-perfscope_inner"));
    assert!(at("  |-perfscope_inner") < at("  |   |-perfscope_leaf"));
}

#[test]
fn call_prints_the_call_tree() {
    let dir = tempfile::tempdir().unwrap();
    nested(dir.path());
    let stdout = nested_trace(dir.path(), "call");
    assert_eq!(
        stdout, "perfscope_outer\n  |-perfscope_inner\n  |   |-perfscope_leaf\n",
        "{stdout}"
    );
}

#[test]
fn delay_times_each_function_in_stage_order() {
    let dir = tempfile::tempdir().unwrap();
    nested(dir.path());
    let stdout = nested_trace(dir.path(), "delay");
    let rows: Vec<&str> = stdout.lines().filter(|l| l.contains(" => ")).collect();
    assert_eq!(rows.len(), 4, "header + 3 functions:\n{stdout}");
    let calls = |line: &str| -> u64 {
        let after = line.split(" => ").nth(1).unwrap();
        after.split_whitespace().nth(1).unwrap().parse().unwrap()
    };
    assert!(
        rows[1]
            .trim_start()
            .starts_with("perfscope_outer => perfscope_outer__return")
    );
    assert_eq!(calls(rows[1]), N, "{stdout}");
    assert_eq!(calls(rows[2]), N * K, "{stdout}");
    assert_eq!(calls(rows[3]), N * K, "{stdout}");
}

fn sizes(dir: &Path) {
    ensure_tracefs();
    build_fixture(dir, "sizes", &["-static"]);
}

/// The rows of every `=== ... ===` table in `stdout`, cells trimmed.
fn sql_rows(stdout: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let mut lines = stdout.lines();
    while let Some(line) = lines.next() {
        if !line.starts_with("=== ") {
            continue;
        }
        lines.next(); // header
        lines.next(); // dashes
        for row in lines.by_ref() {
            if row.is_empty() {
                break;
            }
            rows.push(row.split(" | ").map(|c| c.trim().to_string()).collect());
        }
    }
    rows
}

#[test]
fn sql_counts_a_workloads_reads_interval_by_interval() {
    const READS: u64 = 300;
    let dir = tempfile::tempdir().unwrap();
    sizes(dir.path());
    let reads = READS.to_string();
    let (stdout, _) = perfscope_ok(
        dir.path(),
        &[
            "sql",
            "-e",
            "syscalls:sys_enter_read",
            "-i",
            "200",
            "--query",
            "SELECT COUNT(*) AS n, SUM(count) AS bytes, MIN(count) AS lo, MAX(count) AS hi FROM sys_enter_read",
            "--",
            "./sizes",
            &reads,
        ],
    );
    assert!(stdout.lines().any(starts_with_date), "{stdout}");
    assert!(
        stdout.contains("=== SELECT COUNT(*) AS n, SUM(count) AS bytes"),
        "{stdout}"
    );
    let rows = sql_rows(&stdout);
    assert!(!rows.is_empty(), "{stdout}");
    let (mut n, mut bytes, mut lo, mut hi) = (0, 0, u64::MAX, 0);
    for row in &rows {
        let count: u64 = row[0].parse().unwrap();
        n += count;
        if count > 0 {
            bytes += row[1].parse::<u64>().unwrap();
            lo = lo.min(row[2].parse().unwrap());
            hi = hi.max(row[3].parse().unwrap());
        }
    }
    assert_eq!(n, READS, "{stdout}");
    assert_eq!(bytes, READS * (READS + 1) / 2, "{stdout}");
    assert_eq!((lo, hi), (1, READS), "{stdout}");
}

#[test]
fn sql_columns_are_perf_profs_and_metadata_counts_samples() {
    let dir = tempfile::tempdir().unwrap();
    sizes(dir.path());
    let (stdout, _) = perfscope_ok(
        dir.path(),
        &[
            "sql",
            "-e",
            "syscalls:sys_enter_read//alias=rd/",
            "--query",
            "SELECT _pid = _tid AS same, common_pid = _pid AS common, fd FROM rd LIMIT 1; \
             SELECT table_name, event_system, event_name, sample_count FROM event_metadata",
            "--",
            "./sizes",
            "50",
        ],
    );
    let rows = sql_rows(&stdout);
    assert_eq!(rows.len(), 2, "{stdout}");
    assert_eq!(rows[0][..2], ["1".to_string(), "1".to_string()], "{stdout}");
    assert_eq!(
        rows[1],
        ["rd", "syscalls", "sys_enter_read", "50"].map(String::from),
        "{stdout}"
    );
    // perf-prof echoes the second statement with its leading blank.
    assert!(stdout.contains("===  SELECT table_name"), "{stdout}");
}

#[test]
fn sql_refuses_a_bad_query_before_running() {
    let dir = tempfile::tempdir().unwrap();
    ensure_tracefs();
    let out = perfscope(
        dir.path(),
        &[
            "sql",
            "-e",
            "sched:sched_wakeup",
            "-i",
            "1000",
            "--query",
            "SELECT no_such_column FROM sched_wakeup",
            // Should the query be accepted, the run still ends.
            "--duration",
            "2",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("no such column: no_such_column"), "{stderr}");
    assert!(stderr.contains("sched_wakeup"), "{stderr}");
    assert!(out.stdout.is_empty(), "{}", String::from_utf8_lossy(&out.stdout));
}
