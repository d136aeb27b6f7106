//! `task-state` end to end on real tracefs (as root): a child that sleeps 500 ms at a
//! time shows ~500 ms per call in S, in the per-thread table (`--perins`) and in the
//! system-wide one, and `-S` keeps only the sleep states.

mod common;

use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use common::host::{
    Background, TextTable, build_fixture, ensure_tracefs, perfscope_ok, text_tables, trace_summary,
};

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

const SLEEP_MS: u64 = 500;

fn sleeper(dir: &Path) -> Background {
    let exe = build_fixture(dir, "sleeper", &[]);
    Background::start(&exe, &[&SLEEP_MS.to_string()])
}

/// perf-prof's task-state columns after `St`.
const STATE_COLUMNS: [&str; 8] = [
    "St",
    "calls",
    "total(us)",
    "min(us)",
    "p50(us)",
    "p95(us)",
    "p99(us)",
    "max(us)",
];

fn micros(table: &TextTable, row: &[String], column: &str) -> f64 {
    row[table.column(column)]
        .parse()
        .unwrap_or_else(|_| panic!("{column} of {row:?}"))
}

#[test]
fn task_state_perins_shows_the_sleeping_childs_s_time() {
    let _serial = serial();
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    let child = sleeper(dir.path());
    let pid = child.pid().to_string();
    let (stdout, stderr) = perfscope_ok(
        dir.path(),
        &[
            "task-state",
            "--no-tui",
            "-m",
            "256",
            "--duration",
            "2.6",
            "--perins",
        ],
    );
    // A lost record resets every task's state (as perf-prof): the numbers need none.
    assert_eq!(trace_summary(&stderr, "task-state").lost, 0, "{stderr}");
    let tables = text_tables(&stdout);
    assert_eq!(tables.len(), 1, "one table at the end:\n{stdout}");
    let table = &tables[0];
    assert_eq!(table.columns[..2], ["thread", "comm"], "{}", table.header);
    assert_eq!(table.columns[2..], STATE_COLUMNS, "{}", table.header);
    let rows: Vec<&Vec<String>> = table.rows_where("thread", &pid).collect();
    assert!(rows.iter().all(|r| r[1] == "sleeper"), "{rows:?}");
    let s = rows
        .iter()
        .find(|r| r[2] == "S")
        .unwrap_or_else(|| panic!("no S row for the sleeper {pid}:\n{stdout}"));
    // 2.6 s hold at least four whole 500 ms sleeps (the first and last may be cut).
    let calls = table.number(s, "calls");
    assert!((4..=6).contains(&calls), "S calls {calls}:\n{stdout}");
    let sleep_us = (SLEEP_MS * 1000) as f64;
    for column in ["min(us)", "p50(us)", "max(us)"] {
        let v = micros(table, s, column);
        assert!(
            v >= sleep_us && v < sleep_us * 1.1,
            "{column} {v} us is not one {SLEEP_MS} ms sleep:\n{stdout}"
        );
    }
    let total = micros(table, s, "total(us)");
    assert!(
        (total - calls as f64 * sleep_us).abs() < calls as f64 * sleep_us * 0.1,
        "total {total} us for {calls} sleeps:\n{stdout}"
    );
    // A run delay runs from a wakeup to the switch-in: at most one per sleep (the kernel
    // delivers no wakeup that fires while a CPU idles, and this one mostly idles).
    let rd = rows.iter().find(|r| r[2] == "RD");
    assert!(
        rd.is_none_or(|rd| table.number(rd, "calls") <= calls + 1),
        "{stdout}"
    );
    // Short runs of the child between its sleeps.
    let r = rows.iter().find(|r| r[2] == "R");
    assert!(
        r.is_none_or(|r| micros(table, r, "max(us)") < 100_000.0),
        "{stdout}"
    );
}

#[test]
fn task_state_s_keeps_the_sleep_states_only() {
    let _serial = serial();
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    let _child = sleeper(dir.path());
    let (stdout, stderr) = perfscope_ok(
        dir.path(),
        &[
            "task-state",
            "--no-tui",
            "-m",
            "256",
            "--duration",
            "2.2",
            "-S",
            "-i",
            "1000",
        ],
    );
    // A lost record resets every task's state (as perf-prof): the numbers need none.
    assert_eq!(trace_summary(&stderr, "task-state").lost, 0, "{stderr}");
    let tables = text_tables(&stdout);
    assert!(tables.len() >= 2, "one table a second:\n{stdout}");
    let mut s_calls = 0;
    for table in &tables {
        assert_eq!(table.columns, STATE_COLUMNS, "{}", table.header);
        for row in &table.rows {
            assert_eq!(row[0], "S", "-S prints S rows only:\n{stdout}");
            s_calls += table.number(row, "calls");
        }
    }
    // The sleeper alone sleeps 4 times in 2.2 s; every idle task on the machine more.
    assert!(s_calls >= 3, "{stdout}");
}

/// `--than`: each of the sleeper's 500 ms sleeps is an offender, printed as perf-prof
/// prints it — its `task-state: PID COMM WAIT N ms` headline, the switch-out in S, then
/// the wakeup that ended it.
#[test]
fn task_state_than_prints_the_events_around_each_long_sleep() {
    let _serial = serial();
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    let child = sleeper(dir.path());
    let pid = child.pid();
    let (stdout, stderr) = perfscope_ok(
        dir.path(),
        &[
            "task-state",
            "--no-tui",
            "-m",
            "256",
            "--duration",
            "2.2",
            "-S",
            "--than",
            "400ms",
        ],
    );
    // A lost record resets every task's state (as perf-prof): the numbers need none.
    assert_eq!(trace_summary(&stderr, "task-state").lost, 0, "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    let switch_out = format!("prev_comm=sleeper prev_pid={pid} ");
    let wakeup = format!("comm=sleeper pid={pid} ");
    let switch_in = format!("next_comm=sleeper next_pid={pid} ");
    let mut offenders = 0;
    for (i, line) in lines.iter().enumerate() {
        if line.contains("sched:sched_switch: ") && line.contains(&switch_out) {
            assert!(line.contains("prev_state=S"), "{line}");
            // perf-prof's headline above the pair: who slept, and how long (500 ms).
            let headline = lines[i - 1];
            let words: Vec<&str> = headline.split_whitespace().collect();
            assert_eq!(
                words[2..5],
                ["task-state:", &pid.to_string(), "sleeper"],
                "{headline}"
            );
            assert_eq!(words[5], "WAIT", "{headline}");
            assert!(
                (490..700).contains(&words[6].parse::<u64>().unwrap()),
                "{headline}"
            );
            assert_eq!(words[7], "ms", "{headline}");
            let next = lines.get(i + 1).copied().unwrap_or_default();
            // What ended the sleep: the wakeup, or — when the kernel did not deliver
            // it (a timer firing while the CPU idled) — the switch back onto the CPU.
            assert!(
                (next.contains("sched:sched_wakeup: ") && next.contains(&wakeup))
                    || (next.contains("sched:sched_switch: ") && next.contains(&switch_in)),
                "the wakeup or the switch-in follows the switch-out:\n{stdout}"
            );
            offenders += 1;
        }
    }
    // 2.2 s hold three whole sleeps at least (the first one may have begun before).
    assert!((3..=5).contains(&offenders), "{offenders} offenders:\n{stdout}");
}

/// The sleeper's S row of a `--perins` table, and every thread the table has rows for.
fn sleeper_s_row(table: &TextTable, pid: &str) -> (Vec<String>, Vec<String>) {
    let threads: Vec<String> = table.rows.iter().map(|r| r[0].clone()).collect();
    let s = table
        .rows_where("thread", pid)
        .find(|r| r[2] == "S")
        .cloned()
        .unwrap_or_else(|| panic!("no S row for {pid}"));
    (s, threads)
}

/// `-p PID` and `--filter COMM` watch only those tasks, as perf-prof: the events are
/// taken on every CPU (a task's switch-in and wakeup happen in another task's context)
/// and only the chosen tasks' states are counted.
#[test]
fn task_state_p_and_filter_watch_only_the_chosen_tasks() {
    let _serial = serial();
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    // A name no other test's child (or anything else running) has: --filter picks by name.
    let exe = build_fixture(dir.path(), "sleeper", &[]);
    let named = dir.path().join("tsfilter-sleep");
    std::fs::rename(&exe, &named).unwrap();
    let child = Background::start(&named, &[&SLEEP_MS.to_string()]);
    let pid = child.pid().to_string();
    for target in [["-p", pid.as_str()], ["--filter", "tsfilter-*,nothing-else"]] {
        let mut args = vec![
            "task-state",
            "--no-tui",
            "-m",
            "256",
            "--duration",
            "1.6",
            "--perins",
        ];
        args.extend(target);
        let (stdout, stderr) = perfscope_ok(dir.path(), &args);
        // A lost record resets every task's state (as perf-prof): the numbers need none.
        assert_eq!(trace_summary(&stderr, "task-state").lost, 0, "{stderr}");
        let tables = text_tables(&stdout);
        assert_eq!(tables.len(), 1, "{target:?}:\n{stdout}");
        let (s, threads) = sleeper_s_row(&tables[0], &pid);
        assert!(
            threads.iter().all(|t| *t == pid),
            "{target:?}: only the sleeper:\n{stdout}"
        );
        let max = micros(&tables[0], &s, "max(us)");
        assert!((500_000.0..550_000.0).contains(&max), "{target:?}:\n{stdout}");
        // Its runs: the switch-ins, in another task's (or the idle task's) context, are seen.
        assert!(
            tables[0].rows.iter().any(|r| r[2] == "R"),
            "{target:?}: its runs:\n{stdout}"
        );
    }
}

/// `task-state -- CMD` watches the workload and the tasks it forks — on every CPU, since
/// its switch-ins and wakeups are recorded in other tasks' context: `sh` forks a `sleep`
/// of 0.5 s, waits for it, then execs a `sleep` of 0.3 s.
#[test]
fn task_state_of_a_workload_follows_it_into_its_children() {
    let _serial = serial();
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    let (stdout, stderr) = perfscope_ok(
        dir.path(),
        &[
            "task-state",
            "--no-tui",
            "-m",
            "256",
            "--perins",
            "--",
            "sh",
            "-c",
            "sleep 0.5; sleep 0.3",
        ],
    );
    // A lost record resets every task's state (as perf-prof): the numbers need none.
    assert_eq!(trace_summary(&stderr, "task-state").lost, 0, "{stderr}");
    let tables = text_tables(&stdout);
    assert_eq!(tables.len(), 1, "{stdout}");
    let table = &tables[0];
    assert!(
        table.rows.iter().all(|r| r[1] == "sh" || r[1] == "sleep"),
        "only the workload and its children:\n{stdout}"
    );
    // The longest sleeps: the forked child's 0.5 s (the shell waits as long), then the
    // exec'd 0.3 s.
    let mut sleeps: Vec<f64> = table
        .rows
        .iter()
        .filter(|r| r[2] == "S")
        .map(|r| micros(table, r, "max(us)"))
        .collect();
    sleeps.sort_by(|a, b| b.total_cmp(a));
    assert!(sleeps.len() >= 2, "{stdout}");
    assert!((500_000.0..560_000.0).contains(&sleeps[0]), "{stdout}");
    let threads: std::collections::BTreeSet<&str> = table.rows.iter().map(|r| r[0].as_str()).collect();
    assert!(threads.len() >= 2, "the shell and its forked child:\n{stdout}");
    assert!(
        sleeps.iter().any(|s| (300_000.0..360_000.0).contains(s)),
        "the exec'd 0.3 s sleep:\n{stdout}"
    );
}

/// Every sleep ends, on every CPU: the sleeper pinned to each CPU in turn. Where the
/// kernel delivers no event while the CPU idles (here CPU 1: neither the timer's wakeup nor
/// the switch away from idle), the switch record of the sleeper coming back in rebuilds
/// that switch and ends the sleep — the same S as on a CPU that delivers everything.
#[test]
fn task_state_sees_every_sleep_on_every_cpu() {
    let _serial = serial();
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    let exe = build_fixture(dir.path(), "sleeper", &[]);
    let cpus = std::thread::available_parallelism().unwrap().get();
    for cpu in 0..cpus {
        let cpu = cpu.to_string();
        let child = Background::start(
            Path::new("taskset"),
            &["-c", &cpu, exe.to_str().unwrap(), &SLEEP_MS.to_string()],
        );
        let pid = child.pid().to_string();
        let (stdout, stderr) = perfscope_ok(
            dir.path(),
            &[
                "task-state",
                "--no-tui",
                "-m",
                "256",
                "--duration",
                "1.8",
                "--perins",
                "-p",
                &pid,
            ],
        );
        assert_eq!(trace_summary(&stderr, "task-state").lost, 0, "{stderr}");
        let tables = text_tables(&stdout);
        assert_eq!(tables.len(), 1, "CPU {cpu}:\n{stdout}");
        let (s, _) = sleeper_s_row(&tables[0], &pid);
        // 1.8 s hold two whole 500 ms sleeps at least.
        let calls = tables[0].number(&s, "calls");
        assert!((2..=4).contains(&calls), "CPU {cpu}: S calls {calls}:\n{stdout}");
        let max = micros(&tables[0], &s, "max(us)");
        assert!((500_000.0..550_000.0).contains(&max), "CPU {cpu}:\n{stdout}");
    }
}
