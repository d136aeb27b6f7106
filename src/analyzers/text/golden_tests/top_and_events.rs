//! Golden top tables and raw event lines.

use super::*;

const TOP_RUNTIME_TXT: &str = "\
2026-12-02 15:46:20.837139 perf-prof - 15:46:20  sample 703 events
     PID      RUNTIME COMM
   18310    986312109 sh
   18309    977813944 sh
   18321     10815095 bash
      78      2660163 kdamond.0
";

#[test]
fn the_top_table_reproduces_perf_prof_byte_for_byte() {
    let l = layout(
        "sched",
        "sched_stat_runtime",
        5,
        &[
            ("comm", 4, FieldKind::DataLoc { is_string: true }),
            ("pid", 4, FieldKind::Signed),
            ("runtime", 8, FieldKind::Unsigned),
        ],
    );
    let runtime = KeySource::Field(l.field("runtime").unwrap().clone());
    let mut a = crate::analyzers::Tabulated::new(
        TopAnalyzer::new(TopConfig {
            events: vec![TopEvent {
                event: EventIndex(0),
                key: None,
                comm: None,
                columns: vec![TopColumn::sum("runtime", runtime, true)],
            }],
            key_text: None,
            comm_text: None,
            only_comm: false,
            pid_comm: None,
        })
        .unwrap(),
    );
    let feed = |a: &mut TopAnalyzer, tid: u32, total: u64, events: u64| {
        for v in latencies(total, &[], &[(events, 0, total)]) {
            let raw = record(&l, tid, &[("runtime", Value::Int(v as i64))]);
            a.feed(&event(0, 1, 0, tid, &raw));
        }
    };
    feed(&mut a, 78, 2_660_163, 1);
    feed(&mut a, 18309, 977_813_944, 350);
    feed(&mut a, 18321, 10_815_095, 2);
    feed(&mut a, 18310, 986_312_109, 350);
    let comms = |pid: u32| -> Option<String> {
        Some(
            match pid {
                78 => "kdamond.0",
                18321 => "bash",
                _ => "sh",
            }
            .into(),
        )
    };
    let text = top_table(
        &a.take_interval(),
        &wall(TOP_RUNTIME_TXT),
        &TopText {
            program: "perf-prof",
            comm_of: &comms,
            printkey: None,
        },
    );
    assert_eq!(text, TOP_RUNTIME_TXT);
}

const TOP_TWO_EVENTS_TXT: &str = "\
2026-12-02 15:46:30.101175 perf-prof - 15:46:30  sample 174 events
PREV_PID SCHED_SWITCH SCHED_WAKEUP PREV_COMM
   18309           35            0 sh
    2391           20           20 memfd:sealed-91
   18310           15            0 sh
      15           13           12 rcu_preempt
      78           12            2 kdamond.0
      11            7            7 kworker/0:1
      23            4            4 kworker/1:0
   11797            4            4 kworker/u8:3
   18372            3            2 perf-prof
      35            2            2 kcompactd0
      18            1            1 migration/0
      21            1            1 migration/1
      69            0            1 tokio-rt-worker
      76            0            1 tokio-rt-worker
";

#[test]
fn top_count_columns_of_two_events_reproduce_perf_prof_byte_for_byte() {
    let switch = test_events::sched_switch();
    let wakeup = test_events::sched_wakeup("sched_wakeup", 1);
    let prev_comm = switch.field("prev_comm").unwrap().clone();
    let comm = wakeup.field("comm").unwrap().clone();
    let mut a = crate::analyzers::Tabulated::new(
        TopAnalyzer::new(TopConfig {
            events: vec![
                TopEvent {
                    event: EventIndex(0),
                    key: Some(KeySource::Field(switch.field("prev_pid").unwrap().clone())),
                    comm: Some(Box::new(move |e| {
                        prev_comm.read_str(e.raw).map(|s| s.into_owned())
                    })),
                    columns: vec![TopColumn::count("sched_switch")],
                },
                TopEvent {
                    event: EventIndex(1),
                    key: Some(KeySource::Field(wakeup.field("pid").unwrap().clone())),
                    comm: Some(Box::new(move |e| comm.read_str(e.raw).map(|s| s.into_owned()))),
                    columns: vec![TopColumn::count("sched_wakeup")],
                },
            ],
            key_text: Some("prev_pid".into()),
            comm_text: Some("prev_comm".into()),
            only_comm: false,
            pid_comm: None,
        })
        .unwrap(),
    );
    // Wakeups first, so a row's name comes from either event.
    for line in TOP_TWO_EVENTS_TXT
        .lines()
        .skip(2)
        .collect::<Vec<_>>()
        .iter()
        .rev()
    {
        let cells: Vec<&str> = line.split_whitespace().collect();
        let (pid, switches, wakeups, name): (i64, u64, u64, &'static str) = (
            cells[0].parse().unwrap(),
            cells[1].parse().unwrap(),
            cells[2].parse().unwrap(),
            Box::leak(cells[3].to_string().into_boxed_str()),
        );
        let w = record(
            &wakeup,
            1,
            &[("pid", Value::Int(pid)), ("comm", Value::Str(name))],
        );
        let s = record(
            &switch,
            1,
            &[("prev_pid", Value::Int(pid)), ("prev_comm", Value::Str(name))],
        );
        (0..wakeups).for_each(|_| a.feed(&event(1, 1, 0, 1, &w)));
        (0..switches).for_each(|_| a.feed(&event(0, 1, 0, 1, &s)));
    }
    let text = top_table(
        &a.take_interval(),
        &wall(TOP_TWO_EVENTS_TXT),
        &TopText {
            program: "perf-prof",
            comm_of: &|_| None,
            printkey: None,
        },
    );
    assert_eq!(text, TOP_TWO_EVENTS_TXT);
}

const TOP_PRINTKEY_TXT: &str = "\
2026-12-02 15:46:34.277122 perf-prof - 15:46:34  sample 226 events
(_CPU<<32)|VEC SOFTIRQ_ENTRY 
  001      9              58 
  000      9              54 
  001      1              29 
  000      1              27 
  001      4              21 
  000      7              19 
  001      7              18 
";

#[test]
fn printkey_cells_are_padded_to_the_key_column() {
    let l = layout("irq", "softirq_entry", 1, &[("vec", 4, FieldKind::Unsigned)]);
    let vec = l.field("vec").unwrap().clone();
    let key = KeySource::Custom(Box::new(move |e| {
        Some(u64::from(e.cpu) << 32 | vec.read_u64(e.raw)?)
    }));
    let mut a = crate::analyzers::Tabulated::new(
        TopAnalyzer::new(TopConfig {
            events: vec![TopEvent {
                event: EventIndex(0),
                key: Some(key),
                comm: None,
                columns: vec![TopColumn::count("softirq_entry")],
            }],
            key_text: Some("(_cpu<<32)|vec".into()),
            comm_text: None,
            only_comm: false,
            pid_comm: None,
        })
        .unwrap(),
    );
    for (cpu, v, n) in [
        (1u32, 9, 58),
        (0, 9, 54),
        (1, 1, 29),
        (0, 1, 27),
        (1, 4, 21),
        (0, 7, 19),
        (1, 7, 18),
    ] {
        let raw = record(&l, 0, &[("vec", Value::Int(v))]);
        (0..n).for_each(|_| a.feed(&event(0, 1, cpu, 0, &raw)));
    }
    let printkey = |key: u64| format!("  {:03}      {}", key >> 32, key as u32 as i32);
    let text = top_table(
        &a.take_interval(),
        &wall(TOP_PRINTKEY_TXT),
        &TopText {
            program: "perf-prof",
            comm_of: &|_| None,
            printkey: Some(&printkey),
        },
    );
    assert_eq!(text, TOP_PRINTKEY_TXT);
}

#[test]
fn raw_event_lines_reproduce_perf_prof_byte_for_byte() {
    let enter = test_events::sys_enter();
    let args = [4u64, 0x7f52_0004_0080, 0x40, 0xffff_ffff, 1, 0x7f52_0009_0080];
    let mut raw = record(&enter, 17493, &[("id", Value::Int(232))]);
    raw[3] = 1; // common_preempt_count
    let a = enter.field("args").unwrap();
    for (i, arg) in args.iter().enumerate() {
        raw[a.offset + 8 * i..a.offset + 8 * i + 8].copy_from_slice(&arg.to_le_bytes());
    }
    let e = event(0, 2_423_208_314_123, 0, 17493, &raw);
    let fields = |e: &crate::trace::event::TraceEvent<'_>, l: &EventLayout| {
        let id = l.field("id").and_then(|f| f.read_i64(e.raw)).unwrap_or(0);
        let args = l.field("args").unwrap();
        let list: Vec<String> = (0..6)
            .map(|i| format!("{:x}", args.read_index(e.raw, i).unwrap_or(0)))
            .collect();
        format!("NR {id} ({})", list.join(", "))
    };
    let line = event_line(
        &wall("2026-12-02 15:45:16.387940 "),
        ' ',
        &e,
        &enter,
        &comm_of,
        &fields,
    );
    assert_eq!(
        line,
        "2026-12-02 15:45:16.387940          perf-prof  17493 ...1 [000] 2423.208314: raw_syscalls:sys_enter: NR 232 (4, 7f5200040080, 40, ffffffff, 1, 7f5200090080)\n"
    );

    let wakeup = test_events::sched_wakeup("sched_wakeup_new", 2);
    let mut raw = record(&wakeup, 17954, &[]);
    raw[2] = 0x01 | 0x04 | 0x20; // irqs off, need resched
    raw[3] = 3;
    let e = event(0, 2_462_456_146_999, 1, 17954, &raw);
    let text = |_: &crate::trace::event::TraceEvent<'_>, _: &EventLayout| {
        "comm=bash pid=17955 prio=120 target_cpu=001".to_string()
    };
    let bash = |_| Some("bash".to_string());
    assert_eq!(
        event_line(
            &wall("2026-12-02 15:45:55.635788 "),
            ' ',
            &e,
            &wakeup,
            &bash,
            &text
        ),
        "2026-12-02 15:45:55.635788               bash  17954 dN.3 [001] 2462.456146: sched:sched_wakeup_new: comm=bash pid=17955 prio=120 target_cpu=001\n"
    );
    let unknown = event_line(
        &wall("2026-12-02 15:45:55.635788 "),
        'G',
        &e,
        &wakeup,
        &|_| None,
        &text,
    );
    assert!(
        unknown.starts_with("2026-12-02 15:45:55.635788 G            <...>  17954 "),
        "{unknown}"
    );
}

#[test]
fn slow_pairs_print_as_two_raw_lines_each() {
    let mut rig = Syscalls::new();
    let mut a = crate::analyzers::Tabulated::new(
        SyscallsAnalyzer::new(
            &rig.layouts,
            SyscallsConfig {
                than_ns: Some(1_000_000),
                ..SyscallsConfig::default()
            },
        )
        .unwrap(),
    );
    rig.feed(&mut a, 17493, 232, &[1_005_000, 10], 0);
    let (pairs, _) = a.take_slow_pairs();
    let wall_of = |t: u64| WallClock {
        microsecond: (t / 1_000 % 1_000_000) as u32,
        ..wall("2026-12-02 15:45:16.000000 ")
    };
    let fields = |e: &crate::trace::event::TraceEvent<'_>, l: &EventLayout| {
        let id = l.field("id").and_then(|f| f.read_i64(e.raw)).unwrap_or(0);
        match l.field("ret") {
            Some(ret) => format!("NR {id} = {}", ret.read_i64(e.raw).unwrap_or(0)),
            None => format!("NR {id}"),
        }
    };
    assert_eq!(
        slow_pair_lines(&pairs, &rig.layouts, &wall_of, &comm_of, &fields, None),
        "2026-12-02 15:45:16.000001          perf-prof  17493 .... [000] 0.000001: raw_syscalls:sys_enter: NR 232\n\
         2026-12-02 15:45:16.001006          perf-prof  17493 .... [000] 0.001006: raw_syscalls:sys_exit: NR 232 = 0\n"
    );
}
