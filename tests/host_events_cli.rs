//! The commands about tracepoint events on real tracefs/perf_event (as root): `trace`
//! printing a workload's events by their print fmt, `trace -e EVENT help` listing the
//! event's real fields, `list REGEX` against `available_events`, and `expr` compiling an
//! expression (errors pointing at the character) and evaluating it on a workload's events.

mod common;

use std::sync::{Mutex, MutexGuard};

use common::host::{build_fixture, ensure_tracefs, perfscope, perfscope_ok, starts_with_date};

/// One test at a time: they share 2 CPUs with the other engineers' runs.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}

/// The pid a `sh -c 'echo PID=$$; exec …'` workload printed.
fn workload_pid(stdout: &str) -> u32 {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("PID="))
        .and_then(|p| p.trim().parse().ok())
        .unwrap_or_else(|| panic!("no PID= line in:\n{stdout}"))
}

#[test]
fn trace_prints_the_workloads_switches_by_their_print_fmt() {
    let _serial = serial();
    ensure_tracefs();
    let dir = tmp();
    let (stdout, stderr) = perfscope_ok(
        dir.path(),
        &[
            "trace",
            "--no-tui",
            "-e",
            "sched:sched_switch",
            "--",
            "sh",
            "-c",
            "echo PID=$$; exec sleep 0.2",
        ],
    );
    let pid = workload_pid(&stdout);
    // The sleep blocks once at least: the line perf-prof prints for that switch, its comm
    // (named from the exec's COMM record) and pid in the header, the print fmt's text after.
    let header = format!("            sleep {pid:>6} ");
    let text = format!(
        ": sched:sched_switch: prev_comm=sleep prev_pid={pid} prev_prio=120 prev_state=S ==> next_comm="
    );
    let lines: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains(&header) && l.contains(&text))
        .collect();
    assert!(
        !lines.is_empty(),
        "no switch of sleep {pid} in:\n{stdout}\nstderr:\n{stderr}"
    );
    for line in &lines {
        assert!(starts_with_date(line), "{line}");
        // `<flags> [<cpu>] <sec>.<usec>` between the pid and the event name.
        let after_pid = &line[line.find(&header).unwrap() + header.len()..];
        let (flags, rest) = after_pid.split_once(' ').unwrap();
        assert_eq!(flags.len(), 4, "latency flags in {line}");
        assert!(
            rest.starts_with('[') && rest[4..].starts_with("] "),
            "cpu in {line}"
        );
    }
    assert!(!stdout.contains("<...>"), "{stdout}");
}

#[test]
fn trace_prints_the_workloads_syscalls_with_their_arguments() {
    let _serial = serial();
    ensure_tracefs();
    let dir = tmp();
    let (stdout, stderr) = perfscope_ok(
        dir.path(),
        &[
            "trace",
            "--no-tui",
            "-e",
            "syscalls:sys_enter_write/count==4321/",
            "--",
            "sh",
            "-c",
            "echo PID=$$; exec dd if=/dev/zero of=/dev/null bs=4321 count=3",
        ],
    );
    let pid = workload_pid(&stdout);
    let writes: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains(": syscalls:sys_enter_write: "))
        .collect();
    assert_eq!(
        writes.len(),
        3,
        "three writes of 4321 bytes:\n{stdout}\nstderr:\n{stderr}"
    );
    for line in writes {
        assert!(line.contains(&format!("               dd {pid:>6} ")), "{line}");
        // 4321 = 0x10e1, as the kernel's print fmt (`count: 0x%08lx`) prints it.
        assert!(line.ends_with(", count: 0x000010e1"), "{line}");
    }
}

#[test]
fn trace_help_lists_the_events_real_fields() {
    let _serial = serial();
    ensure_tracefs();
    let dir = tmp();
    let (stdout, _) = perfscope_ok(dir.path(), &["trace", "-e", "sched:sched_switch", "help"]);
    let format = std::fs::read_to_string("/sys/kernel/tracing/events/sched/sched_switch/format").unwrap();
    let mut fields = 0;
    for line in format.lines().filter(|l| l.trim_start().starts_with("field:")) {
        // `field:char prev_comm[16];	offset:8;	size:16;	signed:0;`
        let parts: Vec<&str> = line.trim().split(';').map(str::trim).collect();
        let declaration = parts[0].trim_start_matches("field:");
        let name = declaration.rsplit(' ').next().unwrap().split('[').next().unwrap();
        let offset = parts[1].trim_start_matches("offset:");
        let size = parts[2].trim_start_matches("size:");
        let row = stdout
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no row for {name} in:\n{stdout}"));
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cells[cells.len() - 2..], [offset, size], "{row}");
        fields += 1;
    }
    assert_eq!(
        fields, 11,
        "sched_switch has 4 common and 7 own fields:\n{format}"
    );
    assert!(stdout.contains("  prev_comm             char[16]"), "{stdout}");
    assert!(
        stdout.contains("perfscope trace -e 'sched:sched_switch/prev_comm~\"*\"&&prev_pid>=0/stack/'"),
        "{stdout}"
    );
    // The example's filter is one the kernel takes: it runs.
    let out = perfscope(
        dir.path(),
        &[
            "trace",
            "--no-tui",
            "-e",
            "sched:sched_switch/prev_comm~\"*\"&&prev_pid>=0/",
            "--",
            "true",
        ],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("in userspace"));
}

#[test]
fn list_filters_the_available_events_by_a_regex() {
    let _serial = serial();
    ensure_tracefs();
    let dir = tmp();
    let available = std::fs::read_to_string("/sys/kernel/tracing/available_events").unwrap();
    let (all, _) = perfscope_ok(dir.path(), &["list"]);
    assert_eq!(all.lines().count(), available.lines().count());
    let (sched, _) = perfscope_ok(dir.path(), &["list", "^sched:sched_wak"]);
    let expected: Vec<&str> = available
        .lines()
        .filter(|l| l.starts_with("sched:sched_wak"))
        .collect();
    assert!(expected.len() >= 3, "{expected:?}");
    assert_eq!(sched.lines().collect::<Vec<_>>(), expected);
    let (syscalls, _) = perfscope_ok(dir.path(), &["list", "enter_write$"]);
    assert!(
        syscalls.lines().any(|l| l == "syscalls:sys_enter_write"),
        "{syscalls}"
    );
    assert!(syscalls.lines().all(|l| l.ends_with("enter_write")), "{syscalls}");
    let bad = perfscope(dir.path(), &["list", "sched:("]);
    assert_eq!(bad.status.code(), Some(2), "a usage error");
    assert!(String::from_utf8_lossy(&bad.stderr).contains("not a regular expression"));
}

#[test]
fn expr_evaluates_a_field_to_the_value_the_workload_wrote() {
    let _serial = serial();
    ensure_tracefs();
    let dir = tmp();
    let (stdout, stderr) = perfscope_ok(
        dir.path(),
        &[
            "expr",
            "--no-tui",
            "-e",
            "syscalls:sys_enter_write/count==4321/",
            "count * 2 + (fd == 1)",
            "--",
            "dd",
            "if=/dev/zero",
            "of=/dev/null",
            "bs=4321",
            "count=3",
        ],
    );
    assert!(
        stdout.starts_with(
            "syscalls:sys_enter_write: count * 2 + (fd == 1) : integer\n\
             bound: ((u64@32 * 2) + (u64@16 == 1))\n"
        ),
        "{stdout}"
    );
    let values: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("    count * 2 + (fd == 1) = "))
        .collect();
    assert_eq!(values, ["8643"; 3], "{stdout}\nstderr:\n{stderr}");
}

#[test]
fn expr_points_at_the_bad_character() {
    let _serial = serial();
    ensure_tracefs();
    let dir = tmp();
    let out = perfscope(dir.path(), &["expr", "-e", "sched:sched_switch", "prev_pid +* 2"]);
    assert_eq!(out.status.code(), Some(2), "a usage error");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("  prev_pid +* 2\n            ^"), "{stderr}");
    let out = perfscope(
        dir.path(),
        &[
            "expr",
            "-e",
            "sched:sched_switch",
            "--compile-only",
            "prev_pidd + 1",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("prev_pidd"), "{stderr}");
    let (stdout, _) = perfscope_ok(
        dir.path(),
        &["expr", "-e", "sched:sched_switch", "--compile-only", "prev_comm"],
    );
    assert_eq!(
        stdout,
        "sched:sched_switch: prev_comm : string\nbound: str@8(prev_comm)\n"
    );
}

#[test]
fn trace_g_prints_each_events_stack_with_the_fixtures_frames() {
    let _serial = serial();
    ensure_tracefs();
    let dir = tmp();
    let reader = build_fixture(dir.path(), "reader", &["-static"]);
    let reader = reader.to_str().unwrap();
    let (stdout, stderr) = perfscope_ok(
        dir.path(),
        &[
            "trace",
            "--no-tui",
            "-g",
            "-e",
            "syscalls:sys_enter_read/count==1/",
            "--",
            reader,
            "3",
        ],
    );
    let lines: Vec<&str> = stdout.lines().collect();
    let events: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].contains(": syscalls:sys_enter_read: "))
        .collect();
    assert_eq!(
        events.len(),
        3,
        "three one-byte reads:\n{stdout}\nstderr:\n{stderr}"
    );
    for (n, &at) in events.iter().enumerate() {
        let end = events.get(n + 1).copied().unwrap_or(lines.len());
        let stack = &lines[at + 1..end];
        // `    <address %016x> function (module)`, as perf-prof prints a callchain.
        assert!(
            stack.iter().all(|l| l.len() > 21
                && l.starts_with("    ")
                && l[4..20].chars().all(|c| c.is_ascii_hexdigit())
                && l.as_bytes()[20] == b' '),
            "{stack:?}"
        );
        // The leaf is the fixture's (static libc) read wrapper, named from its symbols.
        assert!(
            stack
                .first()
                .is_some_and(|l| l.contains("read") && l.ends_with(" (reader)")),
            "the stack of {} starts in the fixture's read: {stack:?}",
            lines[at]
        );
    }
}

#[test]
fn trace_flame_graph_writes_the_events_stacks_folded() {
    let _serial = serial();
    ensure_tracefs();
    let dir = tmp();
    let reader = build_fixture(dir.path(), "reader", &["-static"]);
    let reader = reader.to_str().unwrap();
    let name = dir.path().join("reads");
    let (stdout, stderr) = perfscope_ok(
        dir.path(),
        &[
            "trace",
            "--no-tui",
            "-g",
            "--flame-graph",
            name.to_str().unwrap(),
            "-e",
            "syscalls:sys_enter_read/count==1/",
            "--",
            reader,
            "5",
        ],
    );
    let folded_path = dir.path().join("reads.folded");
    assert!(
        stdout.contains(&format!(
            "To generate the flame graph, running THIS shell command:\n\n  flamegraph.pl {} > {}\n",
            folded_path.display(),
            dir.path().join("reads.svg").display()
        )),
        "{stdout}\nstderr:\n{stderr}"
    );
    // The events still print, without their stacks.
    assert_eq!(
        stdout.matches(": syscalls:sys_enter_read: ").count(),
        5,
        "{stdout}"
    );
    assert!(!stdout.lines().any(|l| l.starts_with("    ")), "{stdout}");
    let folded = std::fs::read_to_string(&folded_path).unwrap();
    let mut total = 0;
    for line in folded.lines() {
        let (stack, count) = line.rsplit_once(' ').unwrap();
        // Root first: the comm, then the fixture's frames down to its read.
        assert!(stack.starts_with("reader;"), "{line}");
        assert!(stack.rsplit(';').next().unwrap().contains("read"), "{line}");
        total += count.parse::<u64>().unwrap();
    }
    assert_eq!(total, 5, "{folded}");
}

#[test]
fn trace_on_one_cpu_names_a_thread_renamed_on_another() {
    let _serial = serial();
    ensure_tracefs();
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_default();
    if online.trim() == "0" {
        eprintln!("one CPU online: nothing outside -C to rename on");
        return;
    }
    let dir = tmp();
    // CPU 0 only; the ring is read at the end or at poll timeouts (it never fills), so
    // each task below is reaped — gone from /proc — before its exit is read.
    let mut perfscope = std::process::Command::new(env!("CARGO_BIN_EXE_perfscope"))
        .current_dir(dir.path())
        .args([
            "trace",
            "--no-tui",
            "--duration",
            "8",
            "-C",
            "0",
            "-m",
            "64",
            "--watermark",
            "100",
        ])
        .args(["-e", "sched:sched_process_exit"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run perfscope");
    // A task renames itself on CPU 1 (a COMM record in CPU 1's ring only), moves to CPU 0
    // and exits there: its exit is all -C 0 sees of it. One every 200 ms while perfscope
    // runs, so some come after its events are on however long its start takes.
    let mut pids = Vec::new();
    while perfscope.try_wait().expect("perfscope's status").is_none() {
        let task = std::process::Command::new("taskset")
            .args(["-c", "1", "sh", "-c"])
            .arg("echo $$; printf catrenamed >/proc/$$/comm; taskset -p 1 $$ >/dev/null; sleep 0.05")
            .output()
            .expect("run the renamed task");
        let pid: u32 = String::from_utf8_lossy(&task.stdout)
            .trim()
            .parse()
            .expect("its pid");
        pids.push(pid);
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let out = perfscope.wait_with_output().expect("perfscope ran");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "perfscope failed:\n{stdout}\n{stderr}");
    let lines: Vec<(u32, &str)> = pids
        .iter()
        .filter_map(|&pid| {
            let line = stdout
                .lines()
                .find(|l| l.contains(&format!("comm=catrenamed pid={pid} ")))?;
            Some((pid, line))
        })
        .collect();
    assert!(
        !lines.is_empty(),
        "no exit of {pids:?} in:\n{stdout}\nstderr:\n{stderr}"
    );
    for (pid, line) in lines {
        assert!(
            line.contains(&format!("       catrenamed {pid:>6} ")),
            "the exit's thread is not named by the rename on CPU 1: {line}"
        );
    }
}
