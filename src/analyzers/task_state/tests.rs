use super::*;
use crate::analyzers::test_events::{Value, event, record, sched_switch, sched_wakeup};

const MS: u64 = 1_000_000;

fn analyzer(perins: bool, sleeping: bool) -> TaskStateAnalyzer {
    analyzer_than(perins, sleeping, None)
}

fn analyzer_than(perins: bool, sleeping: bool, than_ns: Option<u64>) -> TaskStateAnalyzer {
    TaskStateAnalyzer::new(
        &[sched_switch(), sched_wakeup("sched_wakeup", 317)],
        TaskStateOptions {
            perins,
            than_ns,
            sleeping,
            disk_sleep: false,
            slow_pair_capacity: 16,
            only: None,
        },
    )
    .unwrap()
}

fn switch(a: &mut TaskStateAnalyzer, at_ms: u64, prev: i64, state: i64, next: i64) {
    let raw = record(
        &sched_switch(),
        prev as u32,
        &[
            ("prev_pid", Value::Int(prev)),
            ("prev_state", Value::Int(state)),
            ("next_pid", Value::Int(next)),
        ],
    );
    a.feed(&event(0, at_ms * MS, 0, prev as u32, &raw));
}

fn wakeup(a: &mut TaskStateAnalyzer, at_ms: u64, pid: i64) {
    let raw = record(&sched_wakeup("sched_wakeup", 317), 0, &[("pid", Value::Int(pid))]);
    a.feed(&event(1, at_ms * MS, 0, 0, &raw));
}

/// (thread, state label, calls, total ms) of every row, in table order.
fn rows(a: &mut TaskStateAnalyzer) -> Vec<(Option<u32>, &'static str, u64, u64)> {
    let rows = a.take_rows();
    a.tabulate(&rows)
        .rows
        .iter()
        .map(|r| {
            (
                r.thread,
                r.state.label(),
                r.stats.calls(),
                r.stats.total_ns() / MS,
            )
        })
        .collect()
}

#[test]
fn a_sleep_then_a_wakeup_counts_s_then_the_run_delay_then_the_run() {
    let mut a = analyzer(true, false);
    switch(&mut a, 0, 0, 0, 7); // 7's first event: its clock starts running
    switch(&mut a, 10, 7, 1, 0); // runs 10 ms, sleeps (S)
    wakeup(&mut a, 510, 7); // slept 500 ms
    wakeup(&mut a, 511, 7); // a second wakeup does not move the run delay's start
    switch(&mut a, 513, 0, 0, 7); // waited 3 ms for the CPU
    switch(&mut a, 514, 7, 2, 0); // runs 1 ms, then D
    wakeup(&mut a, 520, 7); // 6 ms in D
    switch(&mut a, 520, 0, 0, 7);
    switch(&mut a, 530, 7, 0x100, 8); // preempted (R+): run delay; 8's clock starts
    switch(&mut a, 540, 8, 0x80, 7); // 8 ran 10 ms and goes idle; 7 waited 10 ms
    assert_eq!(
        rows(&mut a),
        [
            (Some(7), "R", 3, 21),
            (Some(7), "S", 1, 500),
            (Some(7), "D", 1, 6),
            (Some(7), "RD", 3, 13),
            (Some(8), "R", 1, 10),
        ]
    );
    // The next interval goes on from the states reached: 8 was idle since 540 ms.
    wakeup(&mut a, 600, 8);
    assert_eq!(rows(&mut a), [(Some(8), "I", 1, 60)]);
}

#[test]
fn dead_tasks_are_forgotten_and_lost_records_start_every_task_over() {
    let mut a = analyzer(false, false);
    switch(&mut a, 0, 0, 0, 7);
    switch(&mut a, 5, 7, 0x10, 0); // exits (X) after 5 ms of R
    wakeup(&mut a, 9, 7); // a reused pid starts anew
    switch(&mut a, 10, 9, 1, 0);
    a.lost(11 * MS, 12 * MS);
    wakeup(&mut a, 20, 9); // 9's sleep began before the loss: not counted
    assert_eq!(rows(&mut a), [(None, "R", 1, 5)]);
}

#[test]
fn minus_s_reports_interruptible_sleeps_only() {
    let mut a = analyzer(false, true);
    switch(&mut a, 0, 0, 0, 7);
    switch(&mut a, 10, 7, 1, 0);
    wakeup(&mut a, 30, 7);
    switch(&mut a, 31, 0, 0, 7);
    switch(&mut a, 32, 7, 2, 0);
    wakeup(&mut a, 40, 7);
    assert_eq!(rows(&mut a), [(None, "S", 1, 20)]);
}

#[test]
fn than_keeps_the_events_around_a_long_sleep_not_short_run_delays() {
    let mut a = analyzer_than(false, false, Some(100 * MS));
    switch(&mut a, 0, 0, 0, 7);
    switch(&mut a, 10, 7, 1, 0); // sleeps 500 ms: an offender
    wakeup(&mut a, 510, 7);
    switch(&mut a, 513, 0, 0, 7); // a 3 ms run delay: not one
    switch(&mut a, 900, 7, 0, 0); // a 387 ms run: R is never an offender
    let (pairs, dropped) = a.take_slow_pairs();
    assert_eq!(dropped, 0);
    let got: Vec<(u16, u64, u16, u64, u64)> = pairs
        .iter()
        .map(|p| {
            (
                p.first.event.0,
                p.first.time_ns / MS,
                p.second.event.0,
                p.second.time_ns / MS,
                p.latency_ns / MS,
            )
        })
        .collect();
    assert_eq!(got, [(0, 10, 1, 510, 500)], "the switch-out, then the wakeup");
    assert_eq!(
        pairs[0].print,
        PairPrint::TaskState {
            pid: 7,
            run_delay: false
        }
    );
    assert_eq!(
        rows(&mut a),
        [(None, "R", 2, 397), (None, "S", 1, 500), (None, "RD", 1, 3)]
    );
}

#[test]
fn than_names_a_long_run_delay_rundelay() {
    let mut a = analyzer_than(false, false, Some(2 * MS));
    switch(&mut a, 0, 0, 0, 7);
    switch(&mut a, 10, 7, 0, 0); // preempted: waits for a CPU from here
    switch(&mut a, 15, 0, 0, 7); // 5 ms later it runs
    let (pairs, _) = a.take_slow_pairs();
    let got: Vec<_> = pairs.iter().map(|p| (p.latency_ns / MS, p.print)).collect();
    assert_eq!(
        got,
        [(
            5,
            PairPrint::TaskState {
                pid: 7,
                run_delay: true
            }
        )]
    );
}

/// A wakeup the kernel did not deliver (a timer on an idle CPU): the switch that puts the
/// sleeper back on a CPU ends its sleep.
#[test]
fn a_sleep_whose_wakeup_was_not_seen_ends_when_the_task_runs_again() {
    let mut a = analyzer(true, false);
    switch(&mut a, 0, 0, 0, 7);
    switch(&mut a, 10, 7, 1, 0); // sleeps (S)
    switch(&mut a, 110, 0, 0, 7); // back on the CPU, no wakeup seen: slept 100 ms
    switch(&mut a, 112, 7, 1, 0);
    assert_eq!(rows(&mut a), [(Some(7), "R", 2, 12), (Some(7), "S", 1, 100)]);
}
