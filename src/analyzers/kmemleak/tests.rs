use super::*;
use crate::analyzers::mem_events::{MemEvent, MemRole, StackTable};
use crate::analyzers::test_events::{Value, event, kfree, kmalloc, record};
use crate::trace::event::TraceEvent;
use crate::trace::expr::Expr;

fn mem_events() -> Vec<MemEvent> {
    let (alloc, free) = (kmalloc(), kfree());
    let bind = |text: &str, layout| Expr::parse(text).unwrap().bind(layout).unwrap();
    vec![
        MemEvent {
            role: MemRole::Alloc,
            name: "kmem:kmalloc".into(),
            ptr: bind("ptr", &alloc),
            size: Some(bind("bytes_alloc", &alloc)),
        },
        MemEvent {
            role: MemRole::Free,
            name: "kmem:kfree".into(),
            ptr: bind("ptr", &free),
            size: None,
        },
    ]
}

fn analyzer(than_ns: Option<u64>) -> KmemleakAnalyzer {
    KmemleakAnalyzer::new(mem_events(), StackTable::new(None), than_ns).unwrap()
}

fn alloc(a: &mut KmemleakAnalyzer, at: u64, ptr: i64, bytes: i64, chain: &[u64]) {
    let raw = record(
        &kmalloc(),
        1,
        &[("ptr", Value::Int(ptr)), ("bytes_alloc", Value::Int(bytes))],
    );
    a.feed(&TraceEvent {
        callchain: chain,
        ..event(0, at, 0, 1, &raw)
    });
}

fn free(a: &mut KmemleakAnalyzer, at: u64, ptr: i64) {
    let raw = record(&kfree(), 1, &[("ptr", Value::Int(ptr))]);
    a.feed(&event(1, at, 0, 1, &raw));
}

fn leaks(rows: &AnalysisRows) -> Vec<(u64, i64, i64)> {
    let AnalysisRows::Leaks(l) = rows else { panic!() };
    let mut v: Vec<_> = l
        .stacks
        .iter()
        .map(|(s, c)| (s.frames.first().map_or(0, |f| f.address), c.bytes, c.objects))
        .collect();
    v.sort();
    v
}

#[test]
fn allocations_never_freed_are_the_leaks_by_stack() {
    let mut a = analyzer(None);
    alloc(&mut a, 1, 0x1000, 64, &[0xa1, 0xa2]);
    alloc(&mut a, 2, 0x2000, 64, &[0xa1, 0xa2]);
    alloc(&mut a, 3, 0x3000, 128, &[0xb1]);
    let first = a.take_rows();
    free(&mut a, 4, 0x1000);
    free(&mut a, 5, 0x3000);
    free(&mut a, 6, 0x9999); // allocated before the run: not ours
    let mut all = first.clone();
    all.merge(&a.take_rows());
    assert_eq!(leaks(&first), [(0xa1, 128, 2), (0xb1, 128, 1)]);
    assert_eq!(leaks(&all), [(0xa1, 64, 1)]);
    let AnalysisRows::Leaks(l) = &all else { panic!() };
    assert_eq!((l.allocs, l.frees), (3, 3));
    assert_eq!(a.live_count(), 1);
}

#[test]
fn a_reused_address_replaces_the_older_allocation() {
    let mut a = analyzer(None);
    alloc(&mut a, 1, 0x1000, 64, &[0xa1]);
    alloc(&mut a, 1, 0x1000, 32, &[0xb1]);
    assert_eq!(leaks(&a.take_rows()), [(0xb1, 32, 1)]);
}

#[test]
fn than_leaves_out_young_allocations_and_lost_records_report_early() {
    let mut a = analyzer(Some(1_000));
    alloc(&mut a, 100, 0x1000, 64, &[0xa1]);
    alloc(&mut a, 1_900, 0x2000, 64, &[0xb1]);
    a.finish(2_000);
    assert_eq!(leaks(&a.take_rows()), [(0xa1, 64, 1)], "0xb1 is 100 ns old");

    // After lost records, what was tracked is reported and forgotten: its free, if it
    // comes, matches nothing.
    let mut b = analyzer(None);
    alloc(&mut b, 1, 0x1000, 64, &[0xa1]);
    b.lost(2, 3);
    free(&mut b, 4, 0x1000);
    alloc(&mut b, 5, 0x2000, 16, &[0xb1]);
    assert_eq!(leaks(&b.take_rows()), [(0xa1, 64, 1), (0xb1, 16, 1)]);
    assert_eq!(b.live_count(), 1);
}

#[test]
fn kmemleak_needs_both_kinds_of_event() {
    let mut events = mem_events();
    events.pop();
    assert!(KmemleakAnalyzer::new(events, StackTable::new(None), None).is_err());
}
