//! Golden syscalls, delay, rundelay and pair output.

use super::*;

const SYSCALLS_TXT: &str = "\
2026-12-02 15:45:12.185600 
syscalls                calls        total(us)      min(us)      avg(us)      max(us)    err
-------------------- -------- ---------------- ------------ ------------ ------------ ------
epoll_wait(232)           736       893330.653        3.285     1213.764     3945.062      0
futex(202)                 17       851856.596    50086.733    50109.211    50143.878     17
read(0)                242047       252582.796        0.771        1.043       74.843      0
write(1)               242045       249220.187        0.751        1.029       76.855      0
fstat(5)                   40          182.804        1.442        4.570        8.022      0
newfstatat(262)             2           29.324        3.706       14.662       25.618      0
";

#[test]
fn the_syscalls_table_reproduces_perf_prof_byte_for_byte() {
    let mut rig = Syscalls::new();
    let mut a = crate::analyzers::Tabulated::new(
        SyscallsAnalyzer::new(&rig.layouts, SyscallsConfig::default()).unwrap(),
    );
    let rows = [
        (232, 736, 893_330_653, 3_285, 3_945_062, 0),
        (202, 17, 851_856_596, 50_086_733, 50_143_878, 17),
        (0, 242_047, 252_582_796, 771, 74_843, 0),
        (1, 242_045, 249_220_187, 751, 76_855, 0),
        (5, 40, 182_804, 1_442, 8_022, 0),
        (262, 2, 29_324, 3_706, 25_618, 0),
    ];
    // Fed in an order unlike the table's, from one thread.
    for &(id, n, total, min, max, errors) in rows.iter().rev() {
        rig.feed(&mut a, 4242, id, &row_latencies(n, total, min, max, None), errors);
    }
    let table = a.take_interval();
    let text = syscall_table(&table, &wall(SYSCALLS_TXT), &|_| None, PERF_PROF);
    assert_eq!(text, SYSCALLS_TXT);
}

const SYSCALLS_PERINS_THAN_TXT: &str = "\
2026-12-02 15:45:17.385481 
thread comm             syscalls                calls        total(us)      min(us)      avg(us)      max(us)    err   than(reqs)
------ ---------------- -------------------- -------- ---------------- ------------ ------------ ------------ ------ --------------
2391   memfd:sealed-91  futex(202)                 14       701471.863    50088.781    50105.133    50134.180     14     14 (100%)
2391   memfd:sealed-91  fstat(5)                   40          131.970        1.793        3.299        7.812      0      0 (  0%)
17489  dd               read(0)                256066       250108.138        0.751        0.976     1771.309      0      2 (  0%)
17489  dd               write(1)               256067       240125.784        0.741        0.937      582.264      0      0 (  0%)
17493  perf-prof        epoll_wait(232)           774       819157.813        1.923     1058.343     3923.951      0    535 ( 69%)
17493  perf-prof        newfstatat(262)          1103         6287.295        1.642        5.700       81.232      0      0 (  0%)
17493  perf-prof        write(1)                 1101         5994.947        1.672        5.445       70.225      0      0 (  0%)
17493  perf-prof        read(0)                     2            6.550        2.684        3.275        3.866      0      0 (  0%)
";

#[test]
fn the_perins_than_syscalls_table_reproduces_perf_prof_byte_for_byte() {
    let mut rig = Syscalls::new();
    let than = 1_000_000;
    let mut a = crate::analyzers::Tabulated::new(
        SyscallsAnalyzer::new(
            &rig.layouts,
            SyscallsConfig {
                perins: true,
                than_ns: Some(than),
                slow_pair_capacity: 4096,
            },
        )
        .unwrap(),
    );
    let rows = [
        (17493, 0, 2, 6_550, 2_684, 3_866, 0),
        (2391, 202, 14, 701_471_863, 50_088_781, 50_134_180, 14),
        (17489, 0, 256_066, 250_108_138, 751, 1_771_309, 2),
        (17493, 232, 774, 819_157_813, 1_923, 3_923_951, 535),
        (2391, 5, 40, 131_970, 1_793, 7_812, 0),
        (17489, 1, 256_067, 240_125_784, 741, 582_264, 0),
        (17493, 262, 1_103, 6_287_295, 1_642, 81_232, 0),
        (17493, 1, 1_101, 5_994_947, 1_672, 70_225, 0),
    ];
    for &(tid, id, n, total, min, max, over) in &rows {
        let errors = if id == 202 { n } else { 0 };
        rig.feed(
            &mut a,
            tid,
            id,
            &row_latencies(n, total, min, max, Some((than, over))),
            errors,
        );
    }
    let table = a.take_interval();
    let text = syscall_table(&table, &wall(SYSCALLS_PERINS_THAN_TXT), &comm_of, PERF_PROF);
    assert_eq!(text, SYSCALLS_PERINS_THAN_TXT);
    let (slow, dropped) = a.take_slow_pairs();
    assert_eq!((slow.len(), dropped), (14 + 2 + 535, 0));
    // Colour only wraps the non-zero than cells.
    let colored = syscall_table(
        &table,
        &wall(SYSCALLS_PERINS_THAN_TXT),
        &comm_of,
        TextStyle {
            color: true,
            perfscope_columns: false,
            event_clock_offset_ns: None,
        },
    );
    assert!(colored.contains("     14 \x1b[31;1m    14 (100%)\x1b[0m\n"));
    assert!(colored.contains("      0      0 (  0%)\n"));
}

#[test]
fn perfscope_percentiles_are_appended_after_the_last_perf_prof_column() {
    let mut rig = Syscalls::new();
    let mut a = crate::analyzers::Tabulated::new(
        SyscallsAnalyzer::new(&rig.layouts, SyscallsConfig::default()).unwrap(),
    );
    let lat: Vec<u64> = (1..=1000).map(|i| i * 1_000).collect(); // 1 .. 1000 us
    rig.feed(&mut a, 1, 0, &lat, 0);
    let text = syscall_table(
        &a.take_interval(),
        &wall(SYSCALLS_TXT),
        &|_| None,
        TextStyle::default(),
    );
    let lines: Vec<&str> = text.lines().collect();
    let perf_prof_header = SYSCALLS_TXT.lines().nth(1).unwrap();
    assert_eq!(
        lines[1],
        format!("{perf_prof_header}      p50(us)      p95(us)      p99(us)    p99.9(us)")
    );
    let perf_prof_dashes = SYSCALLS_TXT.lines().nth(2).unwrap();
    assert_eq!(
        lines[2],
        format!("{perf_prof_dashes}{}", " ------------".repeat(4))
    );
    let cells: Vec<f64> = lines[3]
        .split_whitespace()
        .skip(1)
        .map(|c| c.parse().unwrap())
        .collect();
    // calls total min avg max err | p50 p95 p99 p99.9
    assert_eq!(&cells[..6], &[1000.0, 500500.0, 1.0, 500.5, 1000.0, 0.0]);
    for (got, truth) in cells[6..].iter().zip([500.0, 950.0, 990.0, 999.0]) {
        assert!(
            (got - truth).abs() <= truth * RELATIVE_ERROR / 2.0,
            "{got} vs {truth}"
        );
    }
}

const MULTI_TRACE_DELAY_TXT: &str = "\
2026-12-02 15:46:51.137312 
       start => end             calls        total(us)      min(us)      p50(us)      p95(us)      p99(us)      max(us)
------------    ------------ -------- ---------------- ------------ ------------ ------------ ------------ ------------
sched_wakeup => sched_switch      290        49556.486        1.872       12.441      718.713     3852.393     6459.266
";

#[test]
fn the_delay_table_matches_perf_prof_and_its_percentiles_are_within_the_error() {
    let layouts = vec![
        test_events::sched_wakeup("sched_wakeup", 1),
        test_events::sched_switch(),
    ];
    let pid = KeySource::Field(layouts[0].field("pid").unwrap().clone());
    let next_pid = KeySource::Field(layouts[1].field("next_pid").unwrap().clone());
    let config = MultiTraceConfig::new(vec![
        vec![StageEvent::new(EventIndex(0)).key(pid)],
        vec![StageEvent::new(EventIndex(1)).key(next_pid)],
    ]);
    let mut a = crate::analyzers::Tabulated::new(MultiTraceAnalyzer::new(&layouts, config).unwrap());
    // Rank 145 (p50), 276 (p95) and 288 (p99) of 290 carry perf-prof's printed values.
    let (min, p50, p95, p99, max) = (1_872, 12_441, 718_713, 3_852_393, 6_459_266);
    let lat = latencies(
        49_556_486,
        &[min, p50, p95, p99, max],
        &[(143, min, p50), (130, p50, p95), (11, p95, p99), (1, p99, max)],
    );
    let mut time = 1_000;
    for (i, latency) in lat.iter().enumerate() {
        let task = 1_000 + i as i64;
        let wake = record(&layouts[0], 1, &[("pid", Value::Int(task))]);
        let run = record(&layouts[1], 1, &[("next_pid", Value::Int(task))]);
        a.feed(&event(0, time, 0, 1, &wake));
        a.feed(&event(1, time + latency, 1, 1, &run));
        time += latency + 1;
    }
    let MultiTraceTable::Delay(table) = a.take_interval() else {
        panic!("a delay table")
    };
    let text = delay_table(&table, &wall(MULTI_TRACE_DELAY_TXT), &|_| None, PERF_PROF);
    let (got, want): (Vec<&str>, Vec<&str>) =
        (text.lines().collect(), MULTI_TRACE_DELAY_TXT.lines().collect());
    assert_eq!(got[..3], want[..3], "prefix, header and dash lines");
    let cells = |line: &str| line.split_whitespace().map(str::to_string).collect::<Vec<_>>();
    let (g, w) = (cells(got[3]), cells(want[3]));
    assert_eq!(g[..6], w[..6], "names, calls, total, min");
    assert_eq!(g[9], w[9], "max");
    assert_eq!(got[3].len(), want[3].len(), "column widths");
    for i in 6..9 {
        let (g, w): (f64, f64) = (g[i].parse().unwrap(), w[i].parse().unwrap());
        assert!(
            (g - w).abs() <= w * RELATIVE_ERROR / 2.0 + 0.0005,
            "column {i}: {g} vs {w}"
        );
    }
}

const MULTI_TRACE_PERINS_TXT: &str = "\
2026-12-02 15:46:56.433273 
CPU         start => end             calls        total(us)      min(us)      p50(us)      p95(us)      p99(us)      max(us)
--- -------------    ------------ -------- ---------------- ------------ ------------ ------------ ------------ ------------
";

#[test]
fn perins_delay_tables_have_the_instance_column() {
    let vec = [("vec", 4, FieldKind::Unsigned)];
    let layouts = vec![
        layout("irq", "softirq_entry", 1, &vec),
        layout("irq", "softirq_exit", 2, &vec),
    ];
    let mut config = MultiTraceConfig::new(vec![
        vec![StageEvent::new(EventIndex(0))],
        vec![StageEvent::new(EventIndex(1))],
    ]);
    config.perins = true;
    config.instance = Instance::Cpu;
    let mut a = crate::analyzers::Tabulated::new(MultiTraceAnalyzer::new(&layouts, config).unwrap());
    let raw = record(&layouts[0], 0, &[]);
    for cpu in [1u32, 0] {
        a.feed(&event(0, 100, cpu, 0, &raw));
        a.feed(&event(1, 100 + 40_401, cpu, 0, &raw));
    }
    let MultiTraceTable::Delay(table) = a.take_interval() else {
        panic!("a delay table")
    };
    let text = delay_table(&table, &wall(MULTI_TRACE_PERINS_TXT), &|_| None, PERF_PROF);
    assert!(text.starts_with(MULTI_TRACE_PERINS_TXT), "{text}");
    let rows: Vec<&str> = text.lines().skip(3).collect();
    assert_eq!(
        rows,
        [
            "0   softirq_entry => softirq_exit        1           40.401       40.401       40.401       40.401       40.401       40.401",
            "1   softirq_entry => softirq_exit        1           40.401       40.401       40.401       40.401       40.401       40.401",
        ]
    );
}

const RUNDELAY_PERINS_THAN_TXT: &str = "\
2026-12-02 15:45:56.635788 
THREAD comm                        start => end             calls        total(us)      min(us)      p50(us)      p95(us)      p99(us)      max(us)    than(reqs)
------ ---------------- ----------------    ------------ -------- ---------------- ------------ ------------ ------------ ------------ ------------ --------------
21     migration/1          sched_wakeup => sched_switch        1            2.424        2.424        2.424        2.424        2.424        2.424      0 (  0%)
17938  python3              sched_switch => sched_switch        1           28.273       28.273       28.273       28.273       28.273       28.273      0 (  0%)
17940  bash             sched_wakeup_new => sched_switch        1           31.838       31.838       31.838       31.838       31.838       31.838      0 (  0%)
17940  bash                 sched_switch => sched_switch        1           20.140       20.140       20.140       20.140       20.140       20.140      0 (  0%)
";

#[test]
fn rundelay_perins_than_rows_reproduce_perf_prof_byte_for_byte() {
    let layouts = vec![
        test_events::sched_wakeup("sched_wakeup", 1),
        test_events::sched_wakeup("sched_wakeup_new", 2),
        test_events::sched_switch(),
    ];
    let options = RundelayOptions {
        perins: true,
        than_ns: Some(4_000_000),
        ..RundelayOptions::default()
    };
    let mut a = crate::analyzers::Tabulated::new(rundelay(&layouts, &options).unwrap());
    let wake = |i: usize, pid: i64| record(&layouts[i], 1, &[("pid", Value::Int(pid))]);
    let switch = |prev: i64, state: i64, next: i64| {
        record(
            &layouts[2],
            prev as u32,
            &[
                ("prev_pid", Value::Int(prev)),
                ("prev_state", Value::Int(state)),
                ("next_pid", Value::Int(next)),
            ],
        )
    };
    let script = [
        (0, 1_000, 1, wake(0, 21)),
        (2, 1_000 + 2_424, 1, switch(5, 1, 21)),
        (2, 10_000, 0, switch(17938, 0, 6)), // preempted, TASK_RUNNING
        (2, 10_000 + 28_273, 0, switch(6, 1, 17938)),
        (1, 50_000, 0, wake(1, 17940)),
        (2, 50_000 + 31_838, 1, switch(21, 1, 17940)),
        (2, 90_000, 1, switch(17940, 0x100, 7)), // preempted in the kernel, TASK_REPORT_MAX
        (2, 90_000 + 20_140, 1, switch(7, 1, 17940)),
    ];
    for (index, time, cpu, raw) in &script {
        a.feed(&event(*index, *time, *cpu, 1, raw));
    }
    let MultiTraceTable::Delay(table) = a.take_interval() else {
        panic!("a delay table")
    };
    let text = delay_table(&table, &wall(RUNDELAY_PERINS_THAN_TXT), &comm_of, PERF_PROF);
    assert_eq!(text, RUNDELAY_PERINS_THAN_TXT);
    // perfscope's p99.9 goes after than(reqs).
    let ours = delay_table(
        &table,
        &wall(RUNDELAY_PERINS_THAN_TXT),
        &comm_of,
        TextStyle::default(),
    );
    let row = ours.lines().nth(3).unwrap();
    assert_eq!(
        row,
        format!(
            "{}        2.424",
            RUNDELAY_PERINS_THAN_TXT.lines().nth(3).unwrap()
        )
    );
}

#[test]
fn pair_lines_match_perf_prof() {
    let vec = [("vec", 4, FieldKind::Unsigned)];
    let layouts = vec![
        layout("irq", "softirq_entry", 1, &vec),
        layout("irq", "softirq_exit", 2, &vec),
    ];
    let mut config = MultiTraceConfig::new(vec![
        vec![StageEvent::new(EventIndex(0))],
        vec![StageEvent::new(EventIndex(1))],
    ]);
    config.implementation = Implementation::Pair;
    let mut a = crate::analyzers::Tabulated::new(MultiTraceAnalyzer::new(&layouts, config).unwrap());
    let raw = record(&layouts[0], 0, &[]);
    for i in 0..85 {
        a.feed(&event(0, i * 100, (i % 2) as u32, 0, &raw));
        a.feed(&event(1, i * 100 + 50, (i % 2) as u32, 0, &raw));
    }
    let MultiTraceTable::Pair(table) = a.take_interval() else {
        panic!("a pair table")
    };
    let w = wall("2026-12-02 15:47:00.594888 ");
    assert_eq!(
        pair_lines(&table, &w),
        "2026-12-02 15:47:00.594888 irq:softirq_entry unpaired 0\n\
         2026-12-02 15:47:00.594888 irq:softirq_entry irq:softirq_exit paired 85\n"
    );
}
