//! perf-prof's latency workflow in multi-trace, on real tracefs (as root): `--heatmap FILE`
//! (one `<end time ns> <latency ns>` line per pair the table counts, in
//! `FILE-<start>-<end>.lat`), `--lower` (the quick pairs listed beside the slow ones) and
//! `--only-than` (an interval prints only when a pair passed the threshold); rundelay, a
//! multi-trace, takes them too.

mod common;

use common::host::{ensure_tracefs, perfscope_ok, text_tables};

#[test]
fn heatmap_file_holds_one_line_per_counted_pair() {
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("softirq");
    let (stdout, _) = perfscope_ok(
        dir.path(),
        &[
            "multi-trace",
            "-e",
            "irq:softirq_entry",
            "-e",
            "irq:softirq_exit",
            "--heatmap",
            prefix.to_str().unwrap(),
            "--duration",
            "1.5",
        ],
    );
    let tables = text_tables(&stdout);
    assert_eq!(tables.len(), 1, "one table at the end:\n{stdout}");
    let table = &tables[0];
    let row = &table.rows[0];
    let calls = table.number(row, "calls");
    assert!(calls > 0, "softirqs ran in 1.5 s:\n{stdout}");
    let file = dir.path().join("softirq-softirq_entry-softirq_exit.lat");
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let points: Vec<(u64, u64)> = text
        .lines()
        .map(|l| {
            let (t, lat) = l.split_once(' ').unwrap_or_else(|| panic!("line {l:?}"));
            (t.parse().unwrap(), lat.parse().unwrap())
        })
        .collect();
    assert_eq!(points.len() as u64, calls, "a line per pair the table counts");
    assert!(points.windows(2).all(|w| w[0].0 <= w[1].0), "in time order");
    // The table's max (exact, µs with 3 decimals) is the file's largest latency.
    let max_ns = points.iter().map(|p| p.1).max().unwrap();
    let max_us: f64 = row[table.column("max(us)")].parse().unwrap();
    assert_eq!(format!("{:.3}", max_ns as f64 / 1000.0), format!("{max_us:.3}"));
}

#[test]
fn lower_lists_the_pairs_quicker_than_it() {
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("all");
    let (stdout, _) = perfscope_ok(
        dir.path(),
        &[
            "multi-trace",
            "-e",
            "irq:softirq_entry",
            "-e",
            "irq:softirq_exit",
            "--lower",
            "5us",
            "--heatmap",
            prefix.to_str().unwrap(),
            "--duration",
            "1.5",
        ],
    );
    let text = std::fs::read_to_string(dir.path().join("all-softirq_entry-softirq_exit.lat")).unwrap();
    let quick = text
        .lines()
        .filter(|l| l.split_once(' ').unwrap().1.parse::<u64>().unwrap() < 5_000)
        .count();
    // Each quick pair is listed as its two event lines.
    let entries = stdout
        .lines()
        .filter(|l| l.contains(" irq:softirq_entry: "))
        .count();
    let exits = stdout
        .lines()
        .filter(|l| l.contains(" irq:softirq_exit: "))
        .count();
    assert!(quick > 0, "no softirq under 5 µs in 1.5 s:\n{text}");
    assert_eq!((entries, exits), (quick, quick), "{stdout}");
}

#[test]
fn only_than_prints_an_interval_only_when_a_pair_passed_it() {
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    let softirqs = [
        "multi-trace",
        "-e",
        "irq:softirq_entry",
        "-e",
        "irq:softirq_exit",
        "-i",
        "200",
    ];
    let run = |extra: &[&str]| {
        let mut args = softirqs.to_vec();
        args.extend(extra);
        args.extend(["--duration", "1.1"]);
        perfscope_ok(dir.path(), &args).0
    };
    // No softirq takes a second: every interval stays silent.
    let silent = run(&["--only-than", "1s"]);
    assert_eq!(silent, "", "nothing passed 1 s");
    // The same threshold with --than prints every interval (the control).
    let control = run(&["--than", "1s"]);
    assert!(text_tables(&control).len() >= 4, "{control}");
    // Every pair passes 1 ns: each printed interval lists its pairs and counts them all
    // over the threshold.
    let loud = run(&["--only-than", "1ns"]);
    let tables = text_tables(&loud);
    assert!(!tables.is_empty(), "{loud}");
    for table in &tables {
        for row in &table.rows {
            let calls = table.number(row, "calls");
            let than = &row[table.column("than(reqs)")];
            assert_eq!(than.parse::<u64>().unwrap(), calls, "{loud}");
        }
    }
}

/// `--detail=sametid`: each slow pair — a sleeper's 100 ms nanosleep, enter to exit — is
/// listed with the thread's own events between its two, here the `untraced` switch that
/// took it off the CPU.
#[test]
fn detail_lists_the_threads_events_inside_each_slow_pair() {
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    let exe = common::host::build_fixture(dir.path(), "sleeper", &[]);
    let child = common::host::Background::start(&exe, &["100"]);
    let pid = child.pid();
    let enter = format!("raw_syscalls:sys_enter/common_pid=={pid}/");
    let exit = format!("raw_syscalls:sys_exit/common_pid=={pid}/");
    let switch = format!("sched:sched_switch/prev_pid=={pid}/untraced/");
    let (stdout, _) = perfscope_ok(
        dir.path(),
        &[
            "multi-trace",
            "-e",
            &enter,
            "-e",
            &exit,
            "-e",
            &switch,
            "-k",
            "common_pid",
            "--order",
            "--than",
            "50ms",
            "--detail=sametid",
            "--duration",
            "1.2",
        ],
    );
    let lines: Vec<&str> = stdout.lines().collect();
    let switch_out = format!("sched:sched_switch: prev_comm=sleeper prev_pid={pid} ");
    let mut slow = 0;
    for (i, line) in lines.iter().enumerate() {
        if !line.contains(": raw_syscalls:sys_enter: ") {
            continue;
        }
        slow += 1;
        // The gutter line(s), then the exit.
        let gutter = lines[i + 1];
        assert!(
            gutter.starts_with("|+ ") && gutter.contains(&switch_out),
            "{stdout}"
        );
        let ms: f64 = gutter[3..].split_whitespace().next().unwrap().parse().unwrap();
        assert!(
            (100_000.0..150_000.0).contains(&ms),
            "the pair's latency in µs: {gutter}"
        );
        let end = lines[i + 2..].iter().find(|l| !l.starts_with('|')).unwrap();
        assert!(end.contains(": raw_syscalls:sys_exit: "), "{stdout}");
    }
    // 1.2 s of 100 ms sleeps: ten or so, the first and last maybe cut.
    assert!((8..=13).contains(&slow), "{slow} slow pairs:\n{stdout}");
}

#[test]
fn detail_needs_a_threshold_and_names_what_it_does_not_know() {
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    for (args, says) in [
        (&["--detail"][..], "--than, --only-than or --lower"),
        (&["--than", "1ms", "--detail=-1ms"][..], "--detail=-1ms"),
    ] {
        let mut all = vec!["multi-trace", "-e", "irq:softirq_entry", "-e", "irq:softirq_exit"];
        all.extend(args);
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_perfscope"))
            .args(&all)
            .current_dir(dir.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        // A command line that cannot work is a usage error.
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
}

/// rundelay is multi-trace underneath, and takes its workflow flags: with three busy
/// loops on this machine's CPUs every loop waits for a CPU, so `--than 1ms` lists run
/// delays, `--detail=samecpu` puts the CPU's events of each delay in the gutter, and
/// `--heatmap` writes a line per counted delay (the table's calls) per `start => end` row.
#[test]
fn rundelay_takes_detail_and_heatmap() {
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    let cpus = std::thread::available_parallelism().unwrap().get();
    let loops: Vec<common::host::Background> = (0..=cpus)
        .map(|_| common::host::Background::start(std::path::Path::new("sh"), &["-c", "while :; do :; done"]))
        .collect();
    let prefix = dir.path().join("rd");
    let (stdout, _) = perfscope_ok(
        dir.path(),
        &[
            "rundelay",
            "--than",
            "1ms",
            "--detail=samecpu",
            "--heatmap",
            prefix.to_str().unwrap(),
            "--duration",
            "1.5",
        ],
    );
    drop(loops);
    let lines: Vec<&str> = stdout.lines().collect();
    let gutters = lines.iter().filter(|l| l.starts_with("|+ ")).count();
    assert!(gutters > 0, "no --detail gutter:\n{stdout}");
    let tables = text_tables(&stdout);
    let table = tables.last().expect("a table");
    let calls: u64 = table.rows.iter().map(|row| table.number(row, "calls")).sum();
    let mut points = 0u64;
    for entry in std::fs::read_dir(dir.path()).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("rd-") && name.ends_with(".lat") {
            let text = std::fs::read_to_string(entry.path()).unwrap();
            assert!(text.lines().all(|l| l.split(' ').count() == 2), "{name}: {text}");
            points += text.lines().count() as u64;
        }
    }
    assert!(calls > 0, "{stdout}");
    assert_eq!(points, calls, "a heatmap line per delay the table counts");
}
