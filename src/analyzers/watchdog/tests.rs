use super::*;
use crate::analyzers::test_events::{
    Value, event, hrtimer_cancel, hrtimer_expire_entry, hrtimer_start, record, sched_switch,
};
use crate::sources::perf_event::software::software_layout;

const S: u64 = 1 << 30; // one kernel "second"
const FN: i64 = 0x1000;
const OTHER_FN: i64 = 0x2000;

fn layouts() -> Vec<EventLayout> {
    vec![
        hrtimer_expire_entry(),
        hrtimer_start(),
        hrtimer_cancel(),
        sched_switch(),
        software_layout("cpu-clock").unwrap(),
    ]
}

fn analyzer(cpus: Vec<u32>) -> WatchdogAnalyzer {
    WatchdogAnalyzer::new(
        &layouts(),
        WatchdogParams {
            thresh_s: 10,
            timer_fn: FN as u64,
            cpus,
        },
        crate::analyzers::mem_events::StackTable::new(None),
    )
    .unwrap()
}

fn expire(a: &mut WatchdogAnalyzer, at: u64, cpu: u32, hrtimer: i64, function: i64) {
    let raw = record(
        &hrtimer_expire_entry(),
        0,
        &[
            ("hrtimer", Value::Int(hrtimer)),
            ("function", Value::Int(function)),
        ],
    );
    a.feed(&event(0, at, cpu, 0, &raw));
}

fn cancel(a: &mut WatchdogAnalyzer, at: u64, cpu: u32, hrtimer: i64) {
    let raw = record(&hrtimer_cancel(), 0, &[("hrtimer", Value::Int(hrtimer))]);
    a.feed(&event(2, at, cpu, 0, &raw));
}

fn stopper_runs(a: &mut WatchdogAnalyzer, at: u64, cpu: u32) {
    let raw = record(&sched_switch(), 0, &[("next_pid", Value::Int(20))]);
    a.feed(&event(3, at, cpu, 0, &raw));
}

/// A tick of the sampling clock that interrupted task 100.
fn tick(a: &mut WatchdogAnalyzer, at: u64, cpu: u32) {
    a.feed(&event(4, at, cpu, 100, &[]));
}

/// (kind, cpu, now, touch, thresh) of a warning.
type Warned = (LockupKind, u32, u64, u64, u64);

fn warnings(a: &mut WatchdogAnalyzer) -> (Vec<Warned>, Option<(u64, u32)>) {
    let AnalysisRows::Lockups(rows) = a.take_rows() else {
        panic!()
    };
    (
        rows.warnings
            .iter()
            .map(|w| (w.kind, w.cpu, w.now, w.touch, w.thresh))
            .collect(),
        rows.collected,
    )
}

#[test]
fn a_stopper_that_misses_a_watchdog_period_predicts_a_soft_lockup() {
    let mut a = analyzer(vec![0, 1]);
    expire(&mut a, 100 * S, 0, 0xa0, OTHER_FN); // another timer: not learnt
    expire(&mut a, 100 * S, 0, 0xa0, FN); // CPU 0's watchdog timer
    stopper_runs(&mut a, 100 * S, 0);
    expire(&mut a, 101 * S, 1, 0xa1, FN); // all collected at 101 s
    stopper_runs(&mut a, 101 * S, 1);
    expire(&mut a, 104 * S, 0, 0xa0, FN); // 4 s without the stopper: not over 4
    expire(&mut a, 105 * S, 1, 0xa1, FN);
    expire(&mut a, 108 * S, 0, 0xa0, FN); // 8 s: over the 2 × 10 / 5 = 4
    stopper_runs(&mut a, 108 * S, 0);
    expire(&mut a, 112 * S, 0, 0xa0, FN); // the stopper ran at 108: fine
    assert_eq!(
        warnings(&mut a),
        (vec![(LockupKind::Soft, 0, 108, 100, 4)], Some((101 * S, 2)))
    );
}

#[test]
fn ticks_that_find_the_watchdog_timer_stalled_predict_a_hard_lockup() {
    let mut a = analyzer(vec![0]);
    let thresh = 4_200_000_000; // 2 × 10 s / 5 + 0.2 s
    expire(&mut a, 1_000_000_000, 0, 0xa0, FN);
    tick(&mut a, 2_000_000_000, 0); // the timer fired since the last tick
    tick(&mut a, 5_000_000_000, 0); // stalled, but 4 s < 4.2 s
    tick(&mut a, 5_300_000_000, 0); // stalled 4.3 s: warned
    expire(&mut a, 5_400_000_000, 0, 0xa0, FN);
    tick(&mut a, 9_500_000_000, 0); // fired since: fine
    cancel(&mut a, 9_600_000_000, 0, 0xbeef); // not the watchdog's timer
    tick(&mut a, 13_700_000_000, 0); // stalled 8.3 s: warned
    cancel(&mut a, 13_800_000_000, 0, 0xa0); // the watchdog stops: no more warnings
    tick(&mut a, 20_000_000_000, 0);
    assert_eq!(
        warnings(&mut a).0,
        [
            (LockupKind::Hard, 0, 5_300_000_000, 1_000_000_000, thresh),
            (LockupKind::Hard, 0, 13_700_000_000, 5_400_000_000, thresh),
        ]
    );
}

#[test]
fn a_tick_in_idle_is_a_sign_of_life() {
    let mut a = analyzer(vec![0]);
    expire(&mut a, 1_000_000_000, 0, 0xa0, FN);
    tick(&mut a, 2_000_000_000, 0);
    a.feed(&event(4, 5_000_000_000, 0, 0, &[])); // idle: expiries may have gone unseen
    tick(&mut a, 6_000_000_000, 0); // 1 s after the idle tick: no warning
    tick(&mut a, 9_300_000_000, 0); // 4.3 s of a busy CPU without its timer: warned
    assert_eq!(
        warnings(&mut a).0,
        [(LockupKind::Hard, 0, 9_300_000_000, 5_000_000_000, 4_200_000_000)]
    );
}

#[test]
fn the_timer_is_learnt_from_its_start_too() {
    let mut a = analyzer(vec![0]);
    let raw = record(
        &hrtimer_start(),
        0,
        &[("hrtimer", Value::Int(0xa0)), ("function", Value::Int(FN))],
    );
    a.feed(&event(1, 7, 0, 0, &raw));
    assert_eq!(warnings(&mut a).1, Some((7, 1)));
}

/// `PERF_CONTEXT_KERNEL`, then a kernel frame.
const KERNEL_CHAIN: [u64; 2] = [(-128i64) as u64, 0xffff_ffff_8100_1000];

#[test]
fn a_hard_lockup_carries_its_ticks_kernel_stack_and_gives_it_to_the_profile() {
    let mut a = analyzer(vec![0]);
    let tick_with_stack = |a: &mut WatchdogAnalyzer, at: u64| {
        let mut e = event(4, at, 0, 100, &[]);
        e.callchain = &KERNEL_CHAIN;
        a.feed(&e);
        a.took_stack()
    };
    expire(&mut a, 1_000_000_000, 0, 0xa0, FN);
    assert!(
        !tick_with_stack(&mut a, 2_000_000_000),
        "the timer fired: no warning"
    );
    assert!(
        tick_with_stack(&mut a, 5_300_000_000),
        "stalled 4.3 s: warned with its stack"
    );
    assert!(!a.took_stack(), "asked once per event");
    let AnalysisRows::Lockups(rows) = a.take_rows() else {
        panic!()
    };
    let frames: Vec<Vec<u64>> = rows
        .warnings
        .iter()
        .map(|w| {
            w.stack
                .iter()
                .flat_map(|s| s.frames.iter().map(|f| f.address))
                .collect()
        })
        .collect();
    assert_eq!(frames, [vec![0xffff_ffff_8100_1000]]);
}
