//! `oncpu` end to end on real tracefs (as root): a spinning child's run time, summed
//! over the CPUs it ran on, matches what the kernel says it ran (its
//! `/proc/PID/schedstat` sum_exec_runtime over the same window).

mod common;

use std::time::Duration;

use common::host::{
    Background, build_fixture, ensure_tracefs, perfscope_ok, starts_with_date, trace_summary,
};

/// The kernel's count of the nanoseconds `pid` ran.
fn ran_ns(pid: u32) -> u64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/schedstat")).expect("schedstat");
    text.split_whitespace().next().unwrap().parse().unwrap()
}

/// One oncpu row: CPU, SUM(ms), and its `comm:tid(X.Yms)` items.
struct CpuRow {
    cpu: u32,
    sum_ms: u64,
    items: Vec<(String, u32, f64)>,
}

/// The rows of every oncpu table in `stdout` (after `CPU SUM(ms) COMM:TID(ms)` headers).
fn oncpu_rows(stdout: &str) -> Vec<CpuRow> {
    let mut rows = Vec::new();
    let mut in_table = false;
    for line in stdout.lines() {
        if starts_with_date(line) {
            in_table = false;
        } else if line == "CPU SUM(ms) COMM:TID(ms)" {
            in_table = true;
        } else if in_table {
            let mut words = line.split_whitespace();
            let cpu = words.next().unwrap();
            assert_eq!(cpu.len(), 3, "CPU is %03d: {line}");
            let sum_ms = words.next().unwrap().parse().unwrap();
            // A comm may hold spaces (rustc's "opt …" threads): an item ends at `ms)`.
            let mut items = Vec::new();
            let mut item = String::new();
            for word in words {
                if !item.is_empty() {
                    item.push(' ');
                }
                item.push_str(word);
                if let Some(rest) = item.strip_suffix("ms)") {
                    let (name, ms) = rest.rsplit_once('(').unwrap();
                    let (comm, tid) = name.rsplit_once(':').unwrap();
                    items.push((comm.to_string(), tid.parse().unwrap(), ms.parse().unwrap()));
                    item.clear();
                }
            }
            assert!(item.is_empty(), "an item without its (ms): {line}");
            rows.push(CpuRow {
                cpu: cpu.parse().unwrap(),
                sum_ms,
                items,
            });
        }
    }
    rows
}

#[test]
fn oncpu_counts_the_spinning_childs_run_time() {
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    let exe = build_fixture(dir.path(), "hot", &[]);
    let child = Background::start(&exe, &["30"]);
    let pid = child.pid();
    std::thread::sleep(Duration::from_millis(100));
    let before = ran_ns(pid);
    let (stdout, stderr) = perfscope_ok(dir.path(), &["oncpu", "--no-tui", "--duration", "2"]);
    let kernel_ms = (ran_ns(pid) - before) as f64 / 1e6;
    trace_summary(&stderr, "oncpu");
    let rows = oncpu_rows(&stdout);
    assert!(!rows.is_empty(), "no oncpu table:\n{stdout}");
    let mut child_ms = 0.0;
    for row in &rows {
        // SUM is the whole milliseconds of the row's items; items run longest first.
        let items_ms: f64 = row.items.iter().map(|i| i.2).sum();
        assert!(
            (row.sum_ms as f64 - items_ms).abs() <= 1.0 + 0.05 * row.items.len() as f64,
            "CPU {} SUM {} vs items {items_ms}:\n{stdout}",
            row.cpu,
            row.sum_ms
        );
        assert!(row.items.windows(2).all(|w| w[0].2 >= w[1].2), "{stdout}");
        for (comm, tid, ms) in &row.items {
            if *tid == pid {
                assert_eq!(comm, "hot", "{stdout}");
                child_ms += ms;
            }
        }
    }
    // The run sees the child for ~2 s of the kernel's window; it cannot see more.
    assert!(
        child_ms > 0.7 * kernel_ms && child_ms <= kernel_ms + 1.0,
        "oncpu says the child ran {child_ms} ms, the kernel {kernel_ms} ms:\n{stdout}"
    );
    assert!(kernel_ms > 500.0, "the child hardly ran: {kernel_ms} ms");
}
