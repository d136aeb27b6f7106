use super::*;
use crate::analyzers::Tabulated;
use crate::analyzers::test_events::{self, Value, event, record};
use crate::model::histogram::RELATIVE_ERROR;

struct Rig {
    layouts: Vec<EventLayout>,
}

impl Rig {
    fn new() -> Self {
        Self {
            layouts: vec![
                test_events::sys_enter(),
                test_events::sys_exit(),
                test_events::sched_process_free(),
            ],
        }
    }
    fn enter(&self, tid: u32, id: i64) -> Vec<u8> {
        record(&self.layouts[0], tid, &[("id", Value::Int(id))])
    }
    fn exit(&self, tid: u32, id: i64, ret: i64) -> Vec<u8> {
        record(
            &self.layouts[1],
            tid,
            &[("id", Value::Int(id)), ("ret", Value::Int(ret))],
        )
    }
    fn free(&self, pid: u32) -> Vec<u8> {
        record(&self.layouts[2], 0, &[("pid", Value::Int(pid.into()))])
    }
    fn analyzer(&self, config: SyscallsConfig) -> Tabulated<SyscallsAnalyzer> {
        Tabulated::new(SyscallsAnalyzer::new(&self.layouts, config).unwrap())
    }
}

fn call(a: &mut SyscallsAnalyzer, rig: &Rig, tid: u32, id: i64, start: u64, latency: u64, ret: i64) {
    let enter = rig.enter(tid, id);
    let exit = rig.exit(tid, id, ret);
    a.feed(&event(0, start, 0, tid, &enter));
    a.feed(&event(1, start + latency, 0, tid, &exit));
}

#[test]
fn enters_pair_with_the_next_exit_of_the_same_thread_and_syscall() {
    let rig = Rig::new();
    let mut a = rig.analyzer(SyscallsConfig::default());
    call(&mut a, &rig, 10, 0, 1_000, 700, 1);
    call(&mut a, &rig, 10, 0, 5_000, 900, 1);
    call(&mut a, &rig, 11, 1, 6_000, 2_000, -9); // EBADF
    // Interleaved threads: 12 enters, 13 enters, 12 exits, 13 exits.
    let (e12, e13) = (rig.enter(12, 0), rig.enter(13, 0));
    let (x12, x13) = (rig.exit(12, 0, 1), rig.exit(13, 0, 1));
    a.feed(&event(0, 10_000, 0, 12, &e12));
    a.feed(&event(0, 10_100, 1, 13, &e13));
    a.feed(&event(1, 10_300, 0, 12, &x12));
    a.feed(&event(1, 10_600, 1, 13, &x13));
    // An exit whose id differs (its enter was lost): no pair.
    let e = rig.enter(14, 0);
    let x = rig.exit(14, 232, 0);
    a.feed(&event(0, 20_000, 0, 14, &e));
    a.feed(&event(1, 20_500, 0, 14, &x));
    // An exit without an enter: nothing.
    a.feed(&event(1, 30_000, 0, 15, &x));

    let table = a.take_interval();
    assert!(!table.perins);
    let ids: Vec<u64> = table.rows.iter().map(|r| r.id).collect();
    assert_eq!(ids, [0, 1], "read total 2400 ns > ioctl 2000 ns");
    let read = &table.rows[0];
    assert_eq!(read.thread, None);
    assert_eq!(read.stats.calls(), 4);
    assert_eq!(read.stats.total_ns(), 700 + 900 + 300 + 500);
    assert_eq!(read.stats.histogram.min(), Some(300));
    assert_eq!(read.stats.histogram.max(), Some(900));
    assert_eq!(read.stats.errors, 0);
    assert_eq!(table.rows[1].stats.errors, 1);
    assert_eq!(table.calls_of(232), 0);
    assert_eq!(a.pending_len(), 0);
    assert!(a.pending.is_empty(), "closed entries are dropped without --than");
}

#[test]
fn perins_splits_by_thread_and_sorts_by_thread_then_total() {
    let rig = Rig::new();
    let mut a = rig.analyzer(SyscallsConfig {
        perins: true,
        ..SyscallsConfig::default()
    });
    call(&mut a, &rig, 20, 0, 0, 100, 0);
    call(&mut a, &rig, 20, 1, 1_000, 300, 0);
    call(&mut a, &rig, 7, 0, 2_000, 50, 0);
    let rows: Vec<(Option<u32>, u64, u64)> = a
        .take_interval()
        .rows
        .iter()
        .map(|r| (r.thread, r.id, r.stats.total_ns()))
        .collect();
    assert_eq!(rows, [(Some(7), 0, 50), (Some(20), 1, 300), (Some(20), 0, 100)]);
}

#[test]
fn a_newer_enter_replaces_an_older_one() {
    let rig = Rig::new();
    let mut a = rig.analyzer(SyscallsConfig::default());
    let (e, x) = (rig.enter(5, 0), rig.exit(5, 0, 0));
    a.feed(&event(0, 100, 0, 5, &e));
    a.feed(&event(0, 1_000, 0, 5, &e));
    a.feed(&event(1, 1_010, 0, 5, &x));
    let t = a.take_interval();
    assert_eq!(t.rows[0].stats.total_ns(), 10);
}

#[test]
fn than_counts_and_queues_the_slow_pairs() {
    let rig = Rig::new();
    let mut a = rig.analyzer(SyscallsConfig {
        than_ns: Some(1_000_000),
        slow_pair_capacity: 1,
        ..SyscallsConfig::default()
    });
    call(&mut a, &rig, 9, 232, 0, 1_500_000, 1);
    call(&mut a, &rig, 9, 232, 2_000_000, 1_000_000, 1); // not above
    call(&mut a, &rig, 9, 232, 4_000_000, 3_000_000, 1); // above, queue full
    let t = a.take_interval();
    assert_eq!((t.rows[0].stats.calls(), t.rows[0].stats.than), (3, 2));
    assert_eq!(t.than_ns, Some(1_000_000));
    let (pairs, dropped) = a.take_slow_pairs();
    assert_eq!((pairs.len(), dropped), (1, 1));
    assert_eq!(pairs[0].latency_ns, 1_500_000);
    assert_eq!((pairs[0].first.time_ns, pairs[0].second.time_ns), (0, 1_500_000));
    assert_eq!(
        (pairs[0].first.event, pairs[0].second.event),
        (EventIndex(0), EventIndex(1))
    );
    assert_eq!(pairs[0].first.raw, rig.enter(9, 232));
}

#[test]
fn process_free_closes_the_pending_enter_of_the_exiting_task() {
    let rig = Rig::new();
    let mut a = rig.analyzer(SyscallsConfig::default());
    let e = rig.enter(42, 231); // exit_group never returns
    let free = rig.free(42);
    a.feed(&event(0, 1_000, 0, 42, &e));
    assert_eq!(a.pending_len(), 1);
    a.feed(&event(2, 51_000, 1, 15, &free)); // freed from an RCU callback on another task
    assert_eq!(a.pending_len(), 0);
    let t = a.take_interval();
    assert_eq!(t.rows.len(), 1);
    assert_eq!((t.rows[0].id, t.rows[0].stats.total_ns()), (231, 50_000));
}

#[test]
fn lost_records_discard_enters_from_before_the_hole() {
    let rig = Rig::new();
    let mut a = rig.analyzer(SyscallsConfig::default());
    let (e, x) = (rig.enter(3, 0), rig.exit(3, 0, 0));
    a.feed(&event(0, 100, 0, 3, &e));
    a.lost(200, 300);
    a.feed(&event(1, 400, 0, 3, &x));
    assert!(
        a.take_interval().rows.is_empty(),
        "the exit may belong to a lost enter"
    );
    a.feed(&event(0, 500, 0, 3, &e));
    a.feed(&event(1, 600, 0, 3, &x));
    assert_eq!(a.take_interval().rows[0].stats.total_ns(), 100);
}

#[test]
fn intervals_reset_and_the_snapshot_accumulates() {
    let rig = Rig::new();
    let mut a = rig.analyzer(SyscallsConfig::default());
    call(&mut a, &rig, 1, 0, 0, 10, 0);
    assert_eq!(a.take_interval().calls_of(0), 1);
    call(&mut a, &rig, 1, 0, 100, 20, 0);
    call(&mut a, &rig, 1, 0, 200, 30, 0);
    let snapshot = a.snapshot();
    assert_eq!(snapshot.calls_of(0), 3);
    assert_eq!(snapshot.rows[0].stats.total_ns(), 60);
    let interval = a.take_interval();
    assert_eq!(interval.calls_of(0), 2);
    assert!(a.take_interval().rows.is_empty());
    assert_eq!(a.snapshot().calls_of(0), 3);
}

#[test]
fn percentiles_are_within_the_stated_error() {
    let rig = Rig::new();
    let mut a = rig.analyzer(SyscallsConfig::default());
    let latencies: Vec<u64> = (1..=10_000u64).map(|i| 700 + i * i % 97_003).collect();
    for (i, &l) in latencies.iter().enumerate() {
        call(&mut a, &rig, 1, 0, i as u64 * 1_000_000, l, 0);
    }
    let t = a.take_interval();
    let h = &t.rows[0].stats.histogram;
    let mut sorted = latencies.clone();
    sorted.sort_unstable();
    for p in [50.0, 95.0, 99.0, 99.9] {
        let rank = ((p * 10_000.0f64 / 100.0).round() as usize).max(1);
        let truth = sorted[rank - 1] as f64;
        let got = h.percentile(p).unwrap() as f64;
        assert!(
            (got - truth).abs() <= truth * RELATIVE_ERROR / 2.0,
            "p{p}: {got} vs {truth}"
        );
    }
}

#[test]
fn missing_events_and_fields_are_named_in_the_error() {
    let err = SyscallsAnalyzer::new(&[test_events::sys_enter()], SyscallsConfig::default())
        .err()
        .unwrap();
    assert_eq!(
        err.to_string(),
        "syscalls needs the event raw_syscalls:sys_exit: add `-e raw_syscalls:sys_exit`"
    );
    let mut exit = test_events::sys_exit();
    exit.fields.retain(|f| f.name != "ret");
    let err = SyscallsAnalyzer::new(&[test_events::sys_enter(), exit], SyscallsConfig::default())
        .err()
        .unwrap();
    assert!(
        err.to_string()
            .contains("raw_syscalls:sys_exit has no field `ret`"),
        "{err}"
    );
}
