use super::*;
use crate::analyzers::mem_events::{MemEvent, MemRole, StackTable};
use crate::analyzers::test_events::{Value, event, kfree, kmalloc, record};
use crate::trace::expr::Expr;

fn analyzer() -> KmemprofAnalyzer {
    let (alloc, free) = (kmalloc(), kfree());
    let bind = |text: &str, layout| Expr::parse(text).unwrap().bind(layout).unwrap();
    let events = vec![
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
    ];
    KmemprofAnalyzer::new(events, StackTable::new(None)).unwrap()
}

fn feed(a: &mut KmemprofAnalyzer, index: u16, ptr: i64, bytes: i64, chain: &[u64]) {
    let layout = if index == 0 { kmalloc() } else { kfree() };
    let mut values = vec![("ptr", Value::Int(ptr))];
    if index == 0 {
        values.push(("bytes_alloc", Value::Int(bytes)));
    }
    let raw = record(&layout, 1, &values);
    a.feed(&TraceEvent {
        callchain: chain,
        ..event(index, 1, 0, 1, &raw)
    });
}

#[test]
fn freed_pairs_count_by_alloc_and_free_stack_and_the_rest_is_not_freed() {
    let mut a = analyzer();
    feed(&mut a, 0, 0x10, 64, &[0xa1]);
    feed(&mut a, 0, 0x20, 64, &[0xa1]);
    feed(&mut a, 0, 0x30, 256, &[0xb1]);
    feed(&mut a, 1, 0x10, 0, &[0xf1]);
    feed(&mut a, 1, 0x30, 0, &[0xf2]);
    feed(&mut a, 1, 0x40, 0, &[0xf2]); // never allocated in the run
    a.finish();
    let AnalysisRows::MemProf(rows) = a.take_rows() else {
        panic!()
    };
    let paired = &rows.blocks[&AllocPair {
        alloc: 0,
        free: Some(1),
    }];
    assert_eq!(
        paired.allocated,
        MemCell {
            bytes: 320,
            objects: 2
        }
    );
    assert_eq!(
        paired.freed,
        MemCell {
            bytes: 320,
            objects: 2
        }
    );
    let by_address = |cells: &rustc_hash::FxHashMap<StackRef, MemCell>| {
        let mut v: Vec<(u64, i64)> = cells
            .iter()
            .map(|(s, c)| (s.frames[0].address, c.bytes))
            .collect();
        v.sort();
        v
    };
    assert_eq!(by_address(&paired.alloc), [(0xa1, 64), (0xb1, 256)]);
    assert_eq!(by_address(&paired.free), [(0xf1, 64), (0xf2, 256)]);
    let unfreed = &rows.blocks[&AllocPair { alloc: 0, free: None }];
    assert_eq!(
        unfreed.allocated,
        MemCell {
            bytes: 64,
            objects: 1
        }
    );
}
