use super::*;
use crate::analyzers::test_events::{event, layout, record};
use crate::model::analysis::CallReport;

/// Three functions a, b, c: events 0/1 = a entry/exit, 2/3 = b, 4/5 = c.
fn analyzer(report: CallReport, than_ns: Option<u64>) -> (NestedTraceAnalyzer, Vec<EventLayout>) {
    let layouts: Vec<EventLayout> = (0..6)
        .map(|i| layout("uprobes", &format!("e{i}"), 100 + i, &[]))
        .collect();
    let functions = ["a", "b", "c"]
        .iter()
        .enumerate()
        .map(|(i, name)| NestedFunction {
            entry: 2 * i,
            exit: 2 * i + 1,
            entry_key: None,
            exit_key: None,
            name: name.to_string(),
            exit_name: format!("{name}_ret"),
        })
        .collect();
    let a = NestedTraceAnalyzer::new(
        &layouts,
        NestedConfig {
            functions,
            instance: Instance::Thread,
            report,
            than_ns,
            slow_pair_capacity: 16,
        },
    )
    .unwrap();
    (a, layouts)
}

/// Feed `(event index, time, tid)` in order.
fn feed(a: &mut NestedTraceAnalyzer, layouts: &[EventLayout], events: &[(u16, u64, u32)]) {
    for &(index, time, tid) in events {
        let raw = record(&layouts[usize::from(index)], tid, &[]);
        a.feed(&event(index, time, 0, tid, &raw));
    }
}

fn calls(rows: &AnalysisRows) -> &CallRows {
    match rows {
        AnalysisRows::Calls(c) => c,
        other => panic!("{other:?}"),
    }
}

#[test]
fn entries_nest_under_the_newest_pending_entry_and_exits_time_their_own() {
    let (mut a, layouts) = analyzer(CallReport::CallsAndTimes, None);
    // Thread 7: a { b { c } b { c } }; thread 8 interleaved: a { }.
    feed(
        &mut a,
        &layouts,
        &[
            (0, 100, 7),
            (0, 105, 8),
            (2, 110, 7),
            (4, 120, 7),
            (5, 125, 7),
            (3, 130, 7),
            (1, 131, 8),
            (2, 140, 7),
            (4, 150, 7),
            (5, 160, 7),
            (3, 170, 7),
            (1, 200, 7),
        ],
    );
    let rows = a.take_rows();
    let c = calls(&rows);
    assert_eq!(c.edges[&(Caller::Root, 0)], 2);
    assert_eq!(c.edges[&(Caller::Function(0), 1)], 2);
    assert_eq!(c.edges[&(Caller::Function(1), 2)], 2);
    assert_eq!(c.edges.len(), 3);
    assert_eq!(c.times[&0].calls(), 2);
    assert_eq!(c.times[&0].total_ns(), 100 + 26);
    assert_eq!(c.times[&1].total_ns(), 20 + 30);
    assert_eq!(c.times[&2].total_ns(), 5 + 10);
    assert_eq!(a.pending_len(), 0);
    let table = a.tabulate(&rows);
    let shape: Vec<(&str, usize, u64)> = table
        .lines
        .iter()
        .map(|l| (l.name.as_str(), l.depth, l.calls))
        .collect();
    assert_eq!(shape, [("a", 0, 2), ("b", 1, 2), ("c", 2, 2)]);
    assert!(calls(&a.take_rows()).is_empty(), "a new interval starts empty");
}

#[test]
fn an_exit_closes_the_newest_entry_of_its_function_only() {
    let (mut a, layouts) = analyzer(CallReport::CallsAndTimes, None);
    // b's exit never comes: a's exit still closes a, and b stays pending.
    feed(&mut a, &layouts, &[(0, 10, 1), (2, 20, 1), (1, 50, 1)]);
    let rows = a.take_rows();
    assert_eq!(calls(&rows).times[&0].total_ns(), 40);
    assert!(!calls(&rows).times.contains_key(&1));
    assert_eq!(a.pending_len(), 1);
    // A later entry of c is b's callee, as perf-prof's newest backup says.
    feed(&mut a, &layouts, &[(4, 60, 1)]);
    assert_eq!(calls(&a.take_rows()).edges[&(Caller::Function(1), 2)], 1);
    a.lost(0, 0);
    assert_eq!(a.pending_len(), 0);
}

#[test]
fn recursion_counts_each_level_and_marks_the_function() {
    let (mut a, layouts) = analyzer(CallReport::CallsAndTimes, None);
    feed(
        &mut a,
        &layouts,
        &[(0, 10, 1), (0, 20, 1), (1, 30, 1), (1, 50, 1)],
    );
    let rows = a.take_rows();
    let c = calls(&rows);
    assert_eq!(c.edges[&(Caller::Function(0), 0)], 1);
    // The inner call returns first (10 ns), then the outer (40 ns).
    assert_eq!(c.times[&0].histogram.min(), Some(10));
    assert_eq!(c.times[&0].histogram.max(), Some(40));
    let table = a.tabulate(&rows);
    assert_eq!(table.lines.len(), 1);
    assert!(table.lines[0].recursive);
}

#[test]
fn than_lists_slow_functions_and_call_counts_no_times() {
    let (mut a, layouts) = analyzer(CallReport::CallsAndTimes, Some(25));
    feed(&mut a, &layouts, &[(0, 0, 1), (2, 5, 1), (3, 10, 1), (1, 100, 1)]);
    let (slow, dropped) = a.take_slow_pairs();
    assert_eq!((slow.len(), dropped), (1, 0));
    assert_eq!(slow[0].latency_ns, 100);
    assert_eq!(calls(&a.take_rows()).times[&0].than, 1);

    let (mut a, layouts) = analyzer(CallReport::Calls, None);
    feed(&mut a, &layouts, &[(0, 0, 1), (1, 100, 1)]);
    let rows = a.take_rows();
    assert!(calls(&rows).times.is_empty());
    assert_eq!(calls(&rows).edges[&(Caller::Root, 0)], 1);
}

#[test]
fn an_event_in_two_functions_is_refused() {
    let layouts: Vec<EventLayout> = (0..2).map(|i| layout("x", &format!("e{i}"), i, &[])).collect();
    let f = |entry, exit| NestedFunction {
        entry,
        exit,
        entry_key: None,
        exit_key: None,
        name: "f".into(),
        exit_name: "f_ret".into(),
    };
    let err = NestedTraceAnalyzer::new(
        &layouts,
        NestedConfig {
            functions: vec![f(0, 1), f(1, 0)],
            instance: Instance::Cpu,
            report: CallReport::Calls,
            than_ns: None,
            slow_pair_capacity: 1,
        },
    )
    .err()
    .unwrap();
    assert!(err.to_string().contains("two functions"), "{err}");
}
