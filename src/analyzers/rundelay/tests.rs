use super::*;
use crate::analyzers::Analyzer;
use crate::analyzers::multi_trace::MultiTraceTable;
use crate::analyzers::test_events::{self, Value, event, record};

fn layouts() -> Vec<EventLayout> {
    vec![
        test_events::sched_wakeup("sched_wakeup", 1),
        test_events::sched_wakeup("sched_wakeup_new", 2),
        test_events::sched_switch(),
    ]
}

fn switch(layouts: &[EventLayout], prev: i64, state: i64, next: i64) -> Vec<u8> {
    record(
        &layouts[2],
        prev as u32,
        &[
            ("prev_pid", Value::Int(prev)),
            ("prev_state", Value::Int(state)),
            ("next_pid", Value::Int(next)),
        ],
    )
}

#[test]
fn both_encodings_of_runnable_count_as_switched_out_runnable() {
    assert!(switched_out_runnable(0), "TASK_RUNNING through schedule()");
    assert!(switched_out_runnable(0x100), "TASK_REPORT_MAX: kernel preemption");
    assert!(!switched_out_runnable(1), "S");
    assert!(!switched_out_runnable(2), "D");
    assert!(!switched_out_runnable(0x80), "I");
    assert!(
        !switched_out_runnable(0x101),
        "S with the preempt flag is not runnable"
    );
}

#[test]
fn wakeup_and_preemption_delays_per_task_from_one_sched_switch() {
    let layouts = layouts();
    let options = RundelayOptions {
        perins: true,
        ..RundelayOptions::default()
    };
    let mut a = crate::analyzers::Tabulated::new(rundelay(&layouts, &options).unwrap());
    let wake = |pid| record(&layouts[0], 1, &[("pid", Value::Int(pid))]);
    let wake_new = |pid| record(&layouts[1], 1, &[("pid", Value::Int(pid))]);
    let evs = [
        (1, 1_000, 0, wake_new(300)),               // fork of 300
        (2, 4_000, 0, switch(&layouts, 1, 1, 300)), // 300 runs after 3 us
        (0, 5_000, 0, wake(400)),
        (2, 6_000, 0, switch(&layouts, 300, 0, 400)), // 300 preempted (R), 400 runs after 1 us
        (2, 9_000, 0, switch(&layouts, 400, 0x100, 300)), // 400 preempted (R+), 300 back after 3 us
        (2, 9_500, 0, switch(&layouts, 300, 1, 400)), // 300 sleeps (S): no delay starts; 400 waited 0.5 us
        (2, 20_000, 0, switch(&layouts, 400, 1, 0)),  // 400 sleeps, idle runs
        (2, 30_000, 0, switch(&layouts, 0, 0, 300)),  // idle (pid 0) is never a task waiting
    ];
    for (index, time, cpu, raw) in &evs {
        a.feed(&event(*index, *time, *cpu, 1, raw));
    }
    let MultiTraceTable::Delay(t) = a.take_interval() else {
        panic!("rundelay is a delay table")
    };
    assert_eq!(t.key_header.as_deref(), Some("THREAD"));
    assert!(t.comm_column);
    let names: Vec<String> = t
        .pairs
        .iter()
        .map(|p| format!("{} => {}", p.start, p.end))
        .collect();
    assert_eq!(
        names,
        [
            "sched_wakeup => sched_switch",
            "sched_wakeup_new => sched_switch",
            "sched_switch => sched_switch"
        ]
    );
    let rows: Vec<(Option<u64>, usize, u64)> = t
        .rows
        .iter()
        .map(|r| (r.instance, r.pair, r.stats.total_ns()))
        .collect();
    assert_eq!(
        rows,
        [
            (Some(300), 1, 3_000),
            (Some(300), 2, 3_000),
            (Some(400), 0, 1_000),
            (Some(400), 2, 500)
        ]
    );
}

#[test]
fn a_second_sched_switch_is_stage_two() {
    let mut layouts = layouts();
    layouts.push(test_events::sched_switch());
    let config = rundelay_config(&layouts, &RundelayOptions::default()).unwrap();
    assert_eq!(config.stages[0].last().unwrap().event, EventIndex(2));
    assert_eq!(config.stages[1][0].event, EventIndex(3));
    assert_eq!(config.stages[0].len(), 3);
}

#[test]
fn missing_events_are_named() {
    let err = rundelay(&layouts()[..2], &RundelayOptions::default())
        .err()
        .unwrap();
    assert_eq!(
        err.to_string(),
        "rundelay needs the event sched:sched_switch: add `-e sched:sched_switch`"
    );
}

#[test]
fn filters_are_written_as_perf_prof_writes_them() {
    assert_eq!(
        pid_filter("pid", &[9, 5, 7, 8, 12]),
        "pid==5 || (pid>=7&&pid<=9) || pid==12"
    );
    assert_eq!(pid_filter("next_pid", &[3]), "next_pid==3");
    assert_eq!(
        comm_filter("comm", &["sh", "kworker*"]),
        "comm == \"sh\" || comm ~ \"kworker*\""
    );
}
