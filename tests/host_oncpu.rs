//! `oncpu` end to end on real tracefs (as root): a spinning child's run time, summed
//! over the CPUs it ran on, matches what the kernel says it ran (its
//! `/proc/PID/schedstat` sum_exec_runtime over the same window).

mod common;

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use common::host::{
    Background, build_fixture, ensure_tracefs, perfscope_ok, starts_with_date, trace_summary,
};

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// The CPU-bound fixture under a name no other test's child has (by-name rows must see
/// this test's child only).
const SPINNER: &str = "oncpu-spinner";

fn spinner(dir: &Path) -> PathBuf {
    let hot = build_fixture(dir, "hot", &[]);
    let exe = dir.join(SPINNER);
    std::fs::rename(&hot, &exe).unwrap();
    exe
}

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
    let _serial = serial();
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    let exe = spinner(dir.path());
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
                assert_eq!(comm, SPINNER, "{stdout}");
                child_ms += ms;
            }
        }
    }
    // The run sees the child for ~2 s of the kernel's window; it cannot see more.
    assert!(
        child_ms > 0.7 * kernel_ms && child_ms <= kernel_ms + 1.0,
        "oncpu says the child ran {child_ms} ms, the kernel {kernel_ms} ms:\n{stdout}"
    );
    // 2 s of wall time: ~2,000 ms alone, 456 ms beside two busy loops and a build.
    assert!(kernel_ms > 100.0, "the child hardly ran: {kernel_ms} ms");
}

/// Thread mode (`-p PID`): perf-prof's `THREAD COMM SUM(ms) CPUS(ms)` table, the chosen
/// spinner's row alone, its `cpu(Nms)` items adding up to its SUM and to what the kernel
/// says it ran — though the events watch every CPU (a run starts at a switch recorded in
/// another task's context).
#[test]
fn oncpu_p_prints_the_chosen_threads_cpus() {
    let _serial = serial();
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    let exe = spinner(dir.path());
    let child = Background::start(&exe, &["30"]);
    let other = Background::start(&exe, &["30"]);
    let pid = child.pid();
    std::thread::sleep(Duration::from_millis(100));
    let before = ran_ns(pid);
    let (stdout, stderr) = perfscope_ok(
        dir.path(),
        &["oncpu", "--no-tui", "--duration", "2", "-p", &pid.to_string()],
    );
    let kernel_ms = (ran_ns(pid) - before) as f64 / 1e6;
    trace_summary(&stderr, "oncpu");
    drop(other);
    let lines: Vec<&str> = stdout.lines().collect();
    let header = format!("THREAD {:<16} {:<7} CPUS(ms) ", "COMM", "SUM(ms)");
    assert!(lines.contains(&header.as_str()), "no thread header:\n{stdout}");
    let mut ran_ms = 0;
    for (i, line) in lines.iter().enumerate() {
        if lines[i.saturating_sub(1)] != header {
            continue;
        }
        // `%-6d %-16s %-7lu ` then `cpu(Nms) ` items.
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(words[..2], [pid.to_string().as_str(), SPINNER], "{line}");
        let sum: u64 = words[2].parse().unwrap();
        let items: Vec<u64> = words[3..]
            .iter()
            .map(|w| {
                w.split_once('(')
                    .unwrap()
                    .1
                    .trim_end_matches("ms)")
                    .parse()
                    .unwrap()
            })
            .collect();
        let items_sum: u64 = items.iter().sum();
        assert!(
            sum >= items_sum && sum <= items_sum + items.len() as u64,
            "{line}"
        );
        let next = lines.get(i + 1).copied().unwrap_or_default();
        assert!(
            next.is_empty() || starts_with_date(next),
            "one row, the chosen thread's: {next}"
        );
        ran_ms += sum;
    }
    assert!(
        ran_ms as f64 > 0.7 * kernel_ms - 2.0 && ran_ms as f64 <= kernel_ms + 2.0,
        "oncpu -p says {ran_ms} ms, the kernel {kernel_ms} ms:\n{stdout}"
    );
    assert!(kernel_ms > 300.0, "the child hardly ran: {kernel_ms} ms");
}

/// `--only-comm --detail`: perf-prof's `CPU SUM(ms/sws) COMM(ms/sws/max_ms)` table; the
/// spinning child's items (by name) add up to its run time, in runs no longer than the
/// total, and each CPU's switch count is the sum of its items'.
#[test]
fn oncpu_only_comm_detail_counts_runs_by_name() {
    let _serial = serial();
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    let exe = spinner(dir.path());
    let child = Background::start(&exe, &["30"]);
    let pid = child.pid();
    std::thread::sleep(Duration::from_millis(100));
    let before = ran_ns(pid);
    let (stdout, stderr) = perfscope_ok(
        dir.path(),
        &["oncpu", "--no-tui", "--duration", "2", "--only-comm", "--detail"],
    );
    let kernel_ms = (ran_ns(pid) - before) as f64 / 1e6;
    trace_summary(&stderr, "oncpu");
    let lines: Vec<&str> = stdout.lines().collect();
    let header = lines
        .iter()
        .position(|l| *l == "CPU SUM(ms/sws) COMM(ms/sws/max_ms)")
        .unwrap_or_else(|| panic!("no detail header:\n{stdout}"));
    let mut hot_ms = 0.0;
    let mut rows = 0;
    for line in &lines[header + 1..] {
        if starts_with_date(line) || line.is_empty() {
            break;
        }
        rows += 1;
        // `%03d %-11s ` then the items (a wider SUM cell pushes them right).
        let rest = &line[4..];
        let sum = rest.split_whitespace().next().unwrap();
        let items = rest[sum.len()..].trim_start();
        let sws: u64 = sum.split_once("ms/").unwrap().1.parse().unwrap();
        let mut item_sws = 0;
        // Items: `comm(12.3ms/4/5.6ms)`; a name may hold spaces but no `(`.
        for item in items.split("ms) ").filter(|i| !i.trim().is_empty()) {
            let (comm, cells) = item.trim().rsplit_once('(').unwrap();
            let cells: Vec<&str> = cells.trim_end_matches("ms)").split('/').collect();
            let ms: f64 = cells[0].trim_end_matches("ms").parse().unwrap();
            let runs: u64 = cells[1].parse().unwrap();
            let max_ms: f64 = cells[2].trim_end_matches("ms").parse().unwrap();
            assert!(max_ms <= ms + 0.1 && runs >= 1, "{item}:\n{stdout}");
            item_sws += runs;
            if comm == SPINNER {
                hot_ms += ms;
            }
        }
        assert_eq!(sws, item_sws, "{line}");
    }
    assert!(rows >= 1, "{stdout}");
    assert!(
        hot_ms > 0.7 * kernel_ms && hot_ms <= kernel_ms + 1.0,
        "oncpu says hot ran {hot_ms} ms, the kernel {kernel_ms} ms:\n{stdout}"
    );
}

/// A task woken on an idle CPU runs from its switch-in, not from the switch before it:
/// a sleeper pinned to each CPU in turn is credited no more than the kernel says it ran.
/// (This kernel delivers no tracepoint sample while a CPU idles — on CPU 1 here — so the
/// switch away from idle is rebuilt from the switch record; without it each 100 ms sleep
/// before a wakeup was counted as a run.)
#[test]
fn oncpu_credits_a_task_woken_from_idle_with_its_runs_only() {
    let _serial = serial();
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    let exe = build_fixture(dir.path(), "sleeper", &[]);
    let cpus = std::thread::available_parallelism().unwrap().get();
    for cpu in 0..cpus {
        let cpu = cpu.to_string();
        let child = Background::start(Path::new("taskset"), &["-c", &cpu, exe.to_str().unwrap(), "100"]);
        let pid = child.pid();
        std::thread::sleep(Duration::from_millis(100));
        let before = ran_ns(pid);
        let (stdout, stderr) = perfscope_ok(dir.path(), &["oncpu", "--no-tui", "--duration", "1.5"]);
        let kernel_ms = (ran_ns(pid) - before) as f64 / 1e6;
        trace_summary(&stderr, "oncpu");
        let (runs, child_ms) = oncpu_rows(&stdout)
            .iter()
            .flat_map(|row| row.items.iter())
            .filter(|item| item.1 == pid)
            .fold((0, 0.0), |(n, ms), item| (n + 1, ms + item.2));
        assert!(runs >= 1, "CPU {cpu}: the sleeper ran and was seen:\n{stdout}");
        assert!(
            child_ms <= kernel_ms + 1.0,
            "CPU {cpu}: oncpu says the sleeper ran {child_ms} ms, the kernel {kernel_ms} ms:\n{stdout}"
        );
    }
}
