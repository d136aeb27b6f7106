use super::*;
use crate::analyzers::test_events::{Value, event, record, sched_switch};
use crate::trace::expr::Expr;

const MS: u64 = 1_000_000;

fn analyzer(condition: &str) -> HrtimerAnalyzer {
    let events = vec!["sched_switch".to_string(), "wakeup".to_string()];
    let bound = Expr::parse(condition)
        .unwrap()
        .bind_vars(&condition_vars(&events))
        .unwrap();
    HrtimerAnalyzer::new(
        HrtimerConfig {
            events,
            clock: EventIndex(2),
            condition: Some((condition.to_string(), bound)),
            period_ns: 10 * MS,
        },
        StackTable::new(None),
    )
}

/// `n` events of index `index` on `cpu` at `at_ms`.
fn events(a: &mut HrtimerAnalyzer, index: u16, at_ms: u64, cpu: u32, n: usize) {
    let raw = record(&sched_switch(), 1, &[("prev_pid", Value::Int(1))]);
    for _ in 0..n {
        a.feed(&event(index, at_ms * MS, cpu, 1, &raw));
    }
}

fn tick(a: &mut HrtimerAnalyzer, at_ms: u64, cpu: u32, tid: u32) {
    a.feed(&event(2, at_ms * MS, cpu, tid, &[]));
}

/// (cpu, end ms, period ms, counts) of a kept period.
type Kept = (u32, u64, u64, Vec<u64>);

/// Every kept period, and how many were tested.
fn kept(a: &mut HrtimerAnalyzer) -> (Vec<Kept>, u64) {
    let AnalysisRows::Timer(s) = a.take_rows() else {
        panic!()
    };
    (
        s.matched
            .iter()
            .map(|m| (m.cpu, m.time_ns / MS, m.period_ns / MS, m.counts.clone()))
            .collect(),
        s.periods,
    )
}

#[test]
fn counts_per_cpu_period_are_tested_when_that_cpus_timer_fires() {
    let mut a = analyzer("sched_switch==0");
    a.begin(0);
    events(&mut a, 0, 3, 0, 4); // CPU 0, first period: 4 switches
    tick(&mut a, 10, 0, 7);
    tick(&mut a, 10, 1, 8); // CPU 1's first period: none → kept
    events(&mut a, 1, 12, 0, 2); // wakeups only → kept
    events(&mut a, 0, 15, 1, 1);
    tick(&mut a, 25, 0, 7); // a late tick: 15 ms
    tick(&mut a, 20, 1, 8);
    assert_eq!(
        kept(&mut a),
        (vec![(1, 10, 10, vec![0, 0]), (0, 25, 15, vec![0, 2])], 4)
    );
}

#[test]
fn the_condition_sees_the_real_period_and_a_loss_voids_the_running_periods() {
    let mut a = analyzer("period > 12000000 && wakeup >= 1");
    a.begin(0);
    events(&mut a, 1, 5, 0, 1);
    tick(&mut a, 20, 0, 7); // 20 ms, one wakeup → kept
    events(&mut a, 1, 22, 0, 3);
    a.lost(23 * MS, 24 * MS);
    tick(&mut a, 40, 0, 7); // began before the loss: not tested
    events(&mut a, 1, 45, 0, 1);
    tick(&mut a, 50, 0, 7); // 10 ms: too short
    assert_eq!(kept(&mut a), (vec![(0, 20, 20, vec![0, 1])], 2));
}

/// `PERF_CONTEXT_KERNEL`, then two kernel frames.
const KERNEL_CHAIN: [u64; 3] = [(-128i64) as u64, 0xffff_ffff_8100_1000, 0xffff_ffff_8100_2000];

#[test]
fn a_kept_tick_carries_its_kernel_stack_and_only_kept_ticks_give_theirs_to_the_profile() {
    let mut a = analyzer("wakeup > 0");
    a.begin(0);
    let tick_with_stack = |a: &mut HrtimerAnalyzer, at_ms: u64, chain: &'static [u64]| {
        let mut e = event(2, at_ms * MS, 0, 7, &[]);
        e.callchain = chain;
        a.feed(&e);
        a.took_stack()
    };
    assert!(!tick_with_stack(&mut a, 10, &KERNEL_CHAIN), "no wakeup: not kept");
    events(&mut a, 1, 12, 0, 1);
    assert!(tick_with_stack(&mut a, 20, &KERNEL_CHAIN), "kept with its stack");
    events(&mut a, 1, 22, 0, 1);
    // A tick in user space: kept, but no kernel frames to give.
    assert!(!tick_with_stack(&mut a, 30, &[]));
    events(&mut a, 1, 32, 0, 1);
    assert!(tick_with_stack(&mut a, 40, &KERNEL_CHAIN));
    assert!(!a.took_stack(), "asked once per event");
    let AnalysisRows::Timer(s) = a.take_rows() else {
        panic!()
    };
    let stacks: Vec<Option<Vec<u64>>> = s
        .matched
        .iter()
        .map(|m| {
            m.stack
                .as_ref()
                .map(|st| st.frames.iter().map(|f| f.address).collect())
        })
        .collect();
    let kernel = Some(vec![0xffff_ffff_8100_1000, 0xffff_ffff_8100_2000]);
    assert_eq!(stacks, [kernel.clone(), None, kernel]);
    let (first, last) = (&s.matched[0].stack, &s.matched[2].stack);
    assert_eq!(
        first.as_ref().map(|s| s.id),
        last.as_ref().map(|s| s.id),
        "named once"
    );
}
