//! perf-prof's periodic counters end to end on real tracefs/perf_event (as root): `stat`
//! counts a child's known number of `write()`s per interval, `hrcount` splits the same
//! count into `--period` buckets that add up to it.

mod common;

use std::sync::{Mutex, MutexGuard};

use common::host::{build_fixture, ensure_tracefs, perfscope_ok, starts_with_date};
use perfscope::model::present::Cell;

/// One test at a time: they share 2 CPUs.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// One counter row of perf-prof's stat/hrcount text: `[ 19225] sys:name  6| 1| 0 | total 8`.
#[derive(Debug)]
struct CounterRow {
    instance: Option<String>,
    event: String,
    buckets: Vec<u64>,
    total: u64,
}

fn counter_rows(stdout: &str) -> Vec<CounterRow> {
    stdout
        .lines()
        .filter(|l| !starts_with_date(l) && l.contains(" | total "))
        .map(|line| {
            let (cells, total) = line.rsplit_once(" | total ").unwrap();
            let (instance, rest) = match cells.trim_start().strip_prefix('[') {
                Some(r) => {
                    let (inst, rest) = r.split_once(']').unwrap();
                    (Some(inst.trim().to_string()), rest)
                }
                None => (None, cells),
            };
            let rest = rest.trim_start();
            let (event, buckets) = rest.split_once(' ').unwrap();
            CounterRow {
                instance,
                event: event.to_string(),
                buckets: buckets.split('|').map(|b| b.trim().parse().unwrap()).collect(),
                total: total.trim().parse().unwrap(),
            }
        })
        .collect()
}

const WRITES: u64 = 3000;

/// The writer's rows (its pid is the only instance of a workload run).
fn writes_of(stdout: &str) -> (u64, Vec<CounterRow>) {
    let rows: Vec<CounterRow> = counter_rows(stdout)
        .into_iter()
        .filter(|r| r.event == "syscalls:sys_enter_write")
        .collect();
    assert!(!rows.is_empty(), "no sys_enter_write rows in:\n{stdout}");
    for row in &rows {
        assert_eq!(row.buckets.iter().sum::<u64>(), row.total, "{row:?}\n{stdout}");
    }
    (rows.iter().map(|r| r.total).sum(), rows)
}

#[test]
fn stat_counts_every_write_of_a_child_per_interval() {
    let _serial = serial();
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    build_fixture(dir.path(), "writer", &["-static"]);
    let pause_us = "200"; // 3000 writes over ≥ 0.6 s: several 200 ms intervals
    let (stdout, _) = perfscope_ok(
        dir.path(),
        &[
            "stat",
            "--no-tui",
            "-e",
            "syscalls:sys_enter_write",
            "-i",
            "200",
            "--perins",
            "-m",
            "256",
            "--",
            "./writer",
            "3000",
            pause_us,
        ],
    );
    let (total, rows) = writes_of(&stdout);
    // The static writer makes exactly WRITES write()s and nothing else writes in its pid.
    assert_eq!(total, WRITES, "{stdout}");
    assert!(
        rows.len() >= 3,
        "one row per interval expected, {} rows:\n{stdout}",
        rows.len()
    );
    // --perins on a workload: the instance is the writer's thread, printed `[%6d]`.
    for row in &rows {
        let tid = row.instance.as_deref().expect("a --perins row has an instance");
        assert!(tid.parse::<u32>().unwrap() > 1, "{row:?}");
        assert_eq!(row.buckets.len(), 1, "stat without --period: one column, {row:?}");
    }
    let stamps = stdout.lines().filter(|l| starts_with_date(l)).count();
    assert!(
        stamps >= rows.len(),
        "every interval starts with its time:\n{stdout}"
    );
}

#[test]
fn hrcount_buckets_add_up_to_stat_count() {
    let _serial = serial();
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    build_fixture(dir.path(), "writer", &["-static"]);
    let (stdout, _) = perfscope_ok(
        dir.path(),
        &[
            "hrcount",
            "--no-tui",
            "-e",
            "syscalls:sys_enter_write",
            "--period",
            "50ms",
            "-i",
            "250",
            "-m",
            "256",
            "--",
            "./writer",
            "3000",
            "200",
        ],
    );
    let (total, rows) = writes_of(&stdout);
    assert_eq!(total, WRITES, "{stdout}");
    // 250 ms / 50 ms: five buckets per interval, and the writer (≥ 0.6 s) fills several.
    assert!(rows.iter().all(|r| r.buckets.len() == 5), "{stdout}");
    let busy_buckets = rows.iter().flat_map(|r| &r.buckets).filter(|&&b| b > 0).count();
    assert!(
        busy_buckets >= 8,
        "writes spread over ≥ 0.6 s fill ≥ 8 buckets:\n{stdout}"
    );
    assert!(
        rows.iter().all(|r| r.instance.is_none()),
        "no --perins: no instance column"
    );
}

/// What spin_touch says of itself: its CPU time (ns) at the end.
fn child_cpu_ns(stderr: &str) -> u64 {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("cpu_ns="))
        .unwrap_or_else(|| panic!("spin_touch printed no cpu_ns:\n{stderr}"));
    line["cpu_ns=".len()..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn stat_counts_software_events_cpu_clock_and_page_faults() {
    let _serial = serial();
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    build_fixture(dir.path(), "spin_touch", &["-static"]);
    const PAGES: u64 = 2000;
    let (stdout, stderr) = perfscope_ok(
        dir.path(),
        &[
            "stat",
            "--no-tui",
            "-e",
            "cpu-clock,page-faults",
            "-i",
            "200",
            "-m",
            "256",
            "--",
            "./spin_touch",
            "600",
            "2000",
        ],
    );
    let rows = counter_rows(&stdout);
    let total_of = |event: &str| -> u64 {
        let of: Vec<&CounterRow> = rows.iter().filter(|r| r.event == event).collect();
        assert!(!of.is_empty(), "no {event} rows in:\n{stdout}");
        of.iter().map(|r| r.total).sum()
    };
    // cpu-clock counts ns: the child's own CPU time, to the 1 ms sampling period (and the
    // exec before main, which its clock also counts). It may fall short of the child's
    // rusage by a partial period per CPU the child ran on and by the exec's work before
    // enable_on_exec armed the counters, which a machine busy just before (page cache
    // evicted) makes longer: 2 % + 3 ms (measured: up to 11 ms of 604 on a loaded 2-core
    // machine, under 4 ms otherwise).
    let cpu_ns = child_cpu_ns(&stderr);
    let clock_ns = total_of("cpu-clock");
    assert!(
        clock_ns + 3_000_000 + cpu_ns / 50 >= cpu_ns && clock_ns <= cpu_ns + cpu_ns / 10 + 3_000_000,
        "cpu-clock {clock_ns} ns for a child that ran {cpu_ns} ns:\n{stdout}"
    );
    // Every fresh page written is a fault of its own.
    let faults = total_of("page-faults");
    assert!(
        faults >= PAGES,
        "{faults} page faults for {PAGES} fresh pages:\n{stdout}"
    );
    assert!(
        faults < PAGES + 500,
        "{faults} page faults for {PAGES} fresh pages:\n{stdout}"
    );
}

/// percpu-stat: perf's software events per CPU, CPU-wide. The clocks are counted from
/// their samples (1 ms each), which the kernel does not take on an idle CPU: a CPU kept
/// busy for the whole run counts the run's length of cpu-clock (perf stat, reading the
/// counter, would count wall time on an idle CPU too — a known difference). A child
/// touching K fresh pages during the run adds ≥ K page faults over the CPUs.
#[test]
fn percpu_stat_counts_software_events_on_every_cpu() {
    let _serial = serial();
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    let exe = build_fixture(dir.path(), "spin_touch", &["-static"]);
    const PAGES: u64 = 3000;
    let toucher = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(400));
        let out = std::process::Command::new(&exe)
            .args(["20", "3000"])
            .output()
            .unwrap();
        assert!(out.status.success());
    });
    // One busy loop pinned to each CPU for longer than the run.
    let spinners: Vec<std::process::Child> = ["0", "1"]
        .iter()
        .map(|cpu| {
            std::process::Command::new("taskset")
                .args(["-c", cpu, "timeout", "3", "sh", "-c", "while :; do :; done"])
                .spawn()
                .expect("taskset (util-linux) runs a busy loop")
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(100));
    let (stdout, _) = perfscope_ok(
        dir.path(),
        &[
            "percpu-stat",
            "--no-tui",
            "-i",
            "400",
            "--duration",
            "1.3",
            "-C",
            "0-1",
        ],
    );
    toucher.join().unwrap();
    // Waited for, not killed: killing `timeout` would orphan its busy
    // child, which then spins forever; `timeout 3` ends it soon after.
    for mut spinner in spinners {
        let _ = spinner.wait();
    }
    let rows = counter_rows(&stdout);
    for cpu in ["000", "001"] {
        let clocks: Vec<u64> = rows
            .iter()
            .filter(|r| r.event == "cpu-clock" && r.instance.as_deref() == Some(cpu))
            .map(|r| r.total)
            .collect();
        // Three 400 ms intervals, then the rest, adding up to the 1.3 s the CPU was busy.
        assert!(clocks.len() >= 3, "cpu {cpu}: {clocks:?}\n{stdout}");
        let total: u64 = clocks.iter().sum();
        assert!(
            (1_000_000_000..=1_450_000_000).contains(&total),
            "cpu {cpu} counted {total} ns of cpu-clock in a busy 1.3 s run:\n{stdout}"
        );
    }
    let faults: u64 = rows
        .iter()
        .filter(|r| r.event == "page-faults")
        .map(|r| r.total)
        .sum();
    assert!(
        faults >= PAGES,
        "{faults} page faults, the child alone made {PAGES}:\n{stdout}"
    );
    for event in ["task-clock", "context-switches", "cpu-migrations"] {
        assert!(rows.iter().any(|r| r.event == event), "no {event} row:\n{stdout}");
    }
}

/// A recorded stat session (tracepoint and software events) replays through the engine
/// into the table the TUI shows: the same counts as the live run printed.
#[test]
fn a_recorded_stat_session_replays_the_same_counts() {
    let _serial = serial();
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    build_fixture(dir.path(), "writer", &["-static"]);
    let (stdout, _) = perfscope_ok(
        dir.path(),
        &[
            "stat",
            "--no-tui",
            "-e",
            "syscalls:sys_enter_write,page-faults",
            "-i",
            "200",
            "-m",
            "256",
            "--record",
            "s.db",
            "--",
            "./writer",
            "1000",
            "300",
        ],
    );
    let (writes, _) = writes_of(&stdout);
    assert_eq!(writes, 1000, "{stdout}");
    let live_faults: u64 = counter_rows(&stdout)
        .iter()
        .filter(|r| r.event == "page-faults")
        .map(|r| r.total)
        .sum();
    assert!(live_faults > 0, "{stdout}");

    let feed = perfscope::feeds::replay::ReplayFeed::open(&dir.path().join("s.db")).unwrap();
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
    let snapshot = engine.snapshot();
    let replayed = snapshot.analysis.as_ref().expect("a stat session replays");
    let table = &replayed.table;
    assert_eq!(
        table.columns.first().map(|c| c.name.as_str()),
        Some("event"),
        "{table:?}"
    );
    assert_eq!(
        table.columns.last().map(|c| c.name.as_str()),
        Some("total"),
        "{table:?}"
    );
    let total_of = |event: &str| -> u64 {
        let row = table
            .rows
            .iter()
            .find(|r| r.cells.first() == Some(&Cell::Text(event.into())))
            .unwrap_or_else(|| panic!("no {event} row in {table:?}"));
        match row.cells.last() {
            Some(Cell::Int(n)) => *n as u64,
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(total_of("syscalls:sys_enter_write"), 1000);
    assert_eq!(total_of("page-faults"), live_faults);
}

/// The area spin_touch touched: `area=0xSTART-0xEND` on its stderr line.
fn child_area(stderr: &str) -> (u64, u64) {
    let line = stderr.lines().find(|l| l.starts_with("cpu_ns=")).unwrap();
    let area = line.split("area=").nth(1).unwrap().trim();
    let (start, end) = area.split_once('-').unwrap();
    let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap();
    (hex(start), hex(end))
}

/// page-faults: a child writing K fresh pages takes ≥ K user write faults, all in the
/// 2 MiB regions of the mapping it wrote.
#[test]
fn page_faults_sees_every_fresh_page_a_child_writes_in_its_mapping() {
    let _serial = serial();
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    build_fixture(dir.path(), "spin_touch", &["-static"]);
    const PAGES: u64 = 3000;
    let (stdout, stderr) = perfscope_ok(
        dir.path(),
        &[
            "page-faults",
            "--no-tui",
            "-m",
            "1024",
            "--",
            "./spin_touch",
            "0",
            "3000",
        ],
    );
    let (start, end) = child_area(&stderr);
    let table = common::host::text_tables(&stdout).remove(0);
    assert_eq!(
        table.columns,
        [
            "THREAD",
            "COMM",
            "REGION(2M)",
            "FAULTS",
            "USER",
            "KERNEL",
            "WRITE"
        ],
        "{stdout}"
    );
    let region = |row: &Vec<String>| u64::from_str_radix(row[2].trim_start_matches("0x"), 16).unwrap();
    let in_area: Vec<&Vec<String>> = table
        .rows
        .iter()
        .filter(|r| region(r) + (2 << 20) > start && region(r) < end)
        .collect();
    let user: u64 = in_area.iter().map(|r| table.number(r, "USER")).sum();
    let writes: u64 = in_area.iter().map(|r| table.number(r, "WRITE")).sum();
    assert!(
        user >= PAGES,
        "{user} user faults in the mapping {start:#x}-{end:#x}:\n{stdout}"
    );
    assert!(writes >= PAGES, "{writes} write faults in the mapping:\n{stdout}");
    assert!(user < PAGES + 64, "{user} faults for {PAGES} pages:\n{stdout}");
    assert!(in_area.iter().all(|r| r[1] == "spin_touch"), "{stdout}");
}
