use super::*;
use crate::analyzers::test_events::{self, Value, event, layout, record};
use crate::trace::event::FieldKind;

fn softirq_layouts() -> Vec<EventLayout> {
    let vec = [("vec", 4, FieldKind::Unsigned)];
    vec![
        layout("irq", "softirq_entry", 1, &vec),
        layout("irq", "softirq_exit", 2, &vec),
        layout("irq", "softirq_raise", 3, &vec),
    ]
}

fn delay(table: MultiTraceTable) -> DelayTable {
    match table {
        MultiTraceTable::Delay(t) => t,
        MultiTraceTable::Pair(_) => panic!("a pair table"),
    }
}

fn rows(table: &DelayTable) -> Vec<(Option<u64>, usize, u64, u64)> {
    table
        .rows
        .iter()
        .map(|r| (r.instance, r.pair, r.stats.calls(), r.stats.total_ns()))
        .collect()
}

#[test]
fn the_instance_is_the_default_key_and_perins_splits_by_it() {
    let layouts = softirq_layouts();
    let mut config = MultiTraceConfig::new(vec![
        vec![StageEvent::new(EventIndex(0))],
        vec![StageEvent::new(EventIndex(1))],
    ]);
    config.perins = true;
    let mut a = crate::analyzers::Tabulated::new(MultiTraceAnalyzer::new(&layouts, config).unwrap());
    let raw = record(&layouts[0], 1, &[("vec", Value::Int(1))]);
    // CPU 0: entry 100, exit 150; CPU 1: entry 120, exit 400; CPU 0 again 1000 → 1010.
    a.feed(&event(0, 100, 0, 1, &raw));
    a.feed(&event(0, 120, 1, 2, &raw));
    a.feed(&event(1, 150, 0, 1, &raw));
    a.feed(&event(1, 400, 1, 2, &raw));
    a.feed(&event(0, 1_000, 0, 1, &raw));
    a.feed(&event(1, 1_010, 0, 1, &raw));
    let t = delay(a.take_interval());
    assert_eq!(t.key_header.as_deref(), Some("CPU"));
    assert_eq!(
        t.pairs,
        [PairNames {
            start: "softirq_entry".into(),
            end: "softirq_exit".into()
        }]
    );
    assert_eq!(rows(&t), [(Some(0), 0, 2, 60), (Some(1), 0, 1, 280)]);
    assert_eq!(a.pending_len(), 0);
}

#[test]
fn keys_correlate_across_cpus_and_a_newer_first_event_replaces_the_older() {
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
    let wake = |p| record(&layouts[0], 9, &[("pid", Value::Int(p))]);
    let switch = |p| record(&layouts[1], 9, &[("next_pid", Value::Int(p))]);
    let (w100, w200, s100, s200) = (wake(100), wake(200), switch(100), switch(200));
    a.feed(&event(0, 1_000, 0, 9, &w100));
    a.feed(&event(0, 1_500, 1, 9, &w100)); // replaces the wakeup at 1000
    a.feed(&event(0, 1_600, 0, 9, &w200));
    a.feed(&event(1, 2_000, 1, 9, &s200)); // another CPU: the key, not the CPU, pairs
    a.feed(&event(1, 2_500, 0, 9, &s100));
    a.feed(&event(1, 3_000, 0, 9, &s100)); // nothing pending for 100 any more
    let t = delay(a.take_interval());
    assert_eq!(t.key_header, None);
    assert_eq!(rows(&t), [(None, 0, 2, 400 + 1_000)]);
    assert_eq!(t.rows[0].stats.histogram.min(), Some(400));
    assert_eq!(t.rows[0].stats.histogram.max(), Some(1_000));
}

#[test]
fn three_stages_chain_and_cycle_closes_the_ring() {
    let layouts = softirq_layouts();
    let stages = || {
        vec![
            vec![StageEvent::new(EventIndex(2))],
            vec![StageEvent::new(EventIndex(0))],
            vec![StageEvent::new(EventIndex(1))],
        ]
    };
    let raw = record(&layouts[0], 1, &[]);
    let feed = |a: &mut MultiTraceAnalyzer| {
        for (i, idx) in [2u16, 0, 1, 2].into_iter().enumerate() {
            a.feed(&event(idx, 100 * (i as u64 + 1), 0, 1, &raw));
        }
    };
    let mut a = crate::analyzers::Tabulated::new(
        MultiTraceAnalyzer::new(&layouts, MultiTraceConfig::new(stages())).unwrap(),
    );
    feed(&mut a);
    let t = delay(a.take_interval());
    let names: Vec<(&str, &str)> = t
        .pairs
        .iter()
        .map(|p| (p.start.as_str(), p.end.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            ("softirq_raise", "softirq_entry"),
            ("softirq_entry", "softirq_exit")
        ]
    );
    assert_eq!(rows(&t), [(None, 0, 1, 100), (None, 1, 1, 100)]);

    let mut config = MultiTraceConfig::new(stages());
    config.cycle = true;
    let mut a = crate::analyzers::Tabulated::new(MultiTraceAnalyzer::new(&layouts, config).unwrap());
    feed(&mut a);
    let t = delay(a.take_interval());
    assert_eq!(t.pairs.len(), 3);
    assert_eq!(t.pairs[2].start, "softirq_exit");
    assert_eq!(t.pairs[2].end, "softirq_raise");
    assert_eq!(
        rows(&t),
        [(None, 0, 1, 100), (None, 1, 1, 100), (None, 2, 1, 100)]
    );
}

#[test]
fn roles_filters_and_untraced_events_limit_the_parts_played() {
    let layouts = softirq_layouts();
    let vec_field = layouts[0].field("vec").unwrap().clone();
    let mut untraced = StageEvent::new(EventIndex(2));
    untraced.untraced = true;
    let mut exit = StageEvent::new(EventIndex(1));
    exit.role = Some(KeySource::Custom(Box::new(|e| {
        Some(if e.time_ns == 200 { 0 } else { 2 })
    })));
    let entry = StageEvent::new(EventIndex(0))
        .filter(Box::new(move |e| vec_field.read_u64(e.raw) == Some(1)))
        .alias("entry1");
    let config = MultiTraceConfig::new(vec![vec![entry, untraced], vec![exit]]);
    let mut a = crate::analyzers::Tabulated::new(MultiTraceAnalyzer::new(&layouts, config).unwrap());
    let (v1, v2) = (
        record(&layouts[0], 1, &[("vec", Value::Int(1))]),
        record(&layouts[0], 1, &[("vec", Value::Int(2))]),
    );
    a.feed(&event(0, 100, 0, 1, &v1));
    a.feed(&event(1, 200, 0, 1, &v1)); // role 0 at t=200: not a second event
    a.feed(&event(2, 250, 0, 1, &v1)); // untraced: does not replace the pending entry
    a.feed(&event(1, 300, 0, 1, &v1));
    a.feed(&event(0, 400, 0, 1, &v2)); // filtered out
    a.feed(&event(1, 500, 0, 1, &v2));
    let t = delay(a.take_interval());
    assert_eq!(t.pairs.len(), 1, "untraced events make no pairs");
    assert_eq!(t.pairs[0].start, "entry1");
    assert_eq!(rows(&t), [(None, 0, 1, 200)]);
}

#[test]
fn than_queues_slow_pairs_and_lost_drops_pending_events() {
    let layouts = softirq_layouts();
    let mut config = MultiTraceConfig::new(vec![
        vec![StageEvent::new(EventIndex(0))],
        vec![StageEvent::new(EventIndex(1))],
    ]);
    config.than_ns = Some(1_000);
    let mut a = crate::analyzers::Tabulated::new(MultiTraceAnalyzer::new(&layouts, config).unwrap());
    let raw = record(&layouts[0], 1, &[("vec", Value::Int(3))]);
    a.feed(&event(0, 0, 0, 1, &raw));
    a.feed(&event(1, 5_000, 0, 1, &raw));
    a.feed(&event(0, 6_000, 0, 1, &raw));
    a.lost(6_500, 7_000);
    assert_eq!(a.pending_len(), 0);
    a.feed(&event(1, 8_000, 0, 1, &raw));
    let t = delay(a.take_interval());
    assert_eq!(t.than_ns, Some(1_000));
    assert_eq!((t.rows[0].stats.calls(), t.rows[0].stats.than), (1, 1));
    let (pairs, dropped) = a.take_slow_pairs();
    assert_eq!(dropped, 0);
    assert_eq!(pairs.len(), 1);
    assert_eq!(
        (
            pairs[0].first.time_ns,
            pairs[0].second.time_ns,
            pairs[0].latency_ns
        ),
        (0, 5_000, 5_000)
    );
    assert_eq!(pairs[0].first.raw, raw);
}

#[test]
fn pair_counts_paired_and_unpaired_per_interval() {
    let layouts = softirq_layouts();
    let mut config = MultiTraceConfig::new(vec![
        vec![StageEvent::new(EventIndex(0))],
        vec![StageEvent::new(EventIndex(1))],
    ]);
    config.implementation = Implementation::Pair;
    let mut a = crate::analyzers::Tabulated::new(MultiTraceAnalyzer::new(&layouts, config).unwrap());
    let raw = record(&layouts[0], 1, &[]);
    a.feed(&event(0, 10, 0, 1, &raw));
    a.feed(&event(1, 20, 0, 1, &raw));
    a.feed(&event(0, 30, 1, 1, &raw));
    a.feed(&event(0, 40, 1, 1, &raw)); // replaces the entry at 30, which perf-prof forgets
    a.feed(&event(1, 50, 1, 1, &raw));
    let counts = |t: MultiTraceTable| match t {
        MultiTraceTable::Pair(p) => p
            .rows
            .iter()
            .map(|r| (r.second.is_some(), r.count))
            .collect::<Vec<_>>(),
        MultiTraceTable::Delay(_) => panic!("a delay table"),
    };
    let first = a.take_interval();
    if let MultiTraceTable::Pair(p) = &first {
        assert_eq!(p.rows[0].first, "irq:softirq_entry");
        assert_eq!(p.rows[1].second.as_deref(), Some("irq:softirq_exit"));
    }
    assert_eq!(counts(first), [(false, 0), (true, 2)]);
    assert!(a.take_unpaired_events().is_empty());
    // Entries pending on both CPUs; records of CPU 1 are lost: only its entry is unpaired.
    a.feed(&event(0, 60, 0, 1, &raw));
    a.feed(&event(0, 61, 1, 1, &raw));
    a.lost_instance(1, 62, 70);
    assert_eq!(a.pending_len(), 1);
    let unpaired = a.take_unpaired_events();
    assert_eq!(
        unpaired.iter().map(|e| (e.time_ns, e.cpu)).collect::<Vec<_>>(),
        [(61, 1)]
    );
    a.finish();
    assert_eq!(counts(a.take_interval()), [(false, 2), (true, 0)]);
    assert_eq!(counts(a.snapshot()), [(false, 2), (true, 2)]);
    assert_eq!(a.take_unpaired_events().len(), 1, "the CPU 0 entry, at the end");
}

#[test]
fn wakeups_of_running_tasks_start_no_delay() {
    let layouts = vec![
        test_events::sched_wakeup("sched_wakeup", 1),
        test_events::sched_switch(),
    ];
    let pid_field = layouts[0].field("pid").unwrap().clone();
    let next_pid_field = layouts[1].field("next_pid").unwrap().clone();
    let mut config = MultiTraceConfig::new(vec![
        vec![StageEvent::new(EventIndex(0)).key(KeySource::Field(pid_field.clone()))],
        vec![StageEvent::new(EventIndex(1)).key(KeySource::Field(next_pid_field.clone()))],
    ]);
    config.unnecessary_wakeup = Some(UnnecessaryWakeup {
        wakeups: vec![(EventIndex(0), pid_field)],
        switch: EventIndex(1),
        next_pid: next_pid_field,
    });
    let mut a = crate::analyzers::Tabulated::new(MultiTraceAnalyzer::new(&layouts, config).unwrap());
    let wake = record(&layouts[0], 1, &[("pid", Value::Int(50))]);
    let to_50 = record(&layouts[1], 1, &[("next_pid", Value::Int(50))]);
    let to_60 = record(&layouts[1], 50, &[("next_pid", Value::Int(60))]);
    a.feed(&event(1, 100, 0, 1, &to_50)); // 50 runs on CPU 0
    a.feed(&event(0, 200, 1, 1, &wake)); // woken while running: ignored
    a.feed(&event(1, 300, 0, 50, &to_60)); // 50 leaves CPU 0
    a.feed(&event(1, 5_000, 1, 7, &to_50)); // would be a bogus 4.8 us delay
    assert!(delay(a.take_interval()).rows.is_empty());
    a.feed(&event(1, 6_000, 1, 50, &to_60)); // 50 leaves CPU 1
    a.feed(&event(0, 7_000, 0, 1, &wake)); // a real wakeup
    a.feed(&event(1, 7_250, 1, 7, &to_50));
    assert_eq!(rows(&delay(a.take_interval())), [(None, 0, 1, 250)]);
}

#[test]
fn a_single_stage_is_refused_with_what_to_do() {
    let err = MultiTraceAnalyzer::new(
        &softirq_layouts(),
        MultiTraceConfig::new(vec![vec![StageEvent::new(EventIndex(0))]]),
    )
    .err()
    .unwrap();
    assert!(err.to_string().contains("give `-e` twice"), "{err}");
}

#[test]
fn key_columns_are_as_wide_as_perf_prof_makes_them() {
    let layouts = softirq_layouts();
    let stages = || {
        vec![
            vec![StageEvent::new(EventIndex(0))],
            vec![StageEvent::new(EventIndex(1))],
        ]
    };
    let table = |config: MultiTraceConfig| {
        let mut a = crate::analyzers::Tabulated::new(MultiTraceAnalyzer::new(&layouts, config).unwrap());
        let raw = record(&layouts[0], 1, &[]);
        a.feed(&event(0, 1, 0, 9, &raw));
        a.feed(&event(1, 2, 0, 9, &raw));
        delay(a.take_interval())
    };
    let mut by_cpu = MultiTraceConfig::new(stages());
    by_cpu.perins = true;
    let t = table(by_cpu);
    assert_eq!(
        (t.key_header.as_deref(), t.key_width, t.comm_column),
        (Some("CPU"), 3, false)
    );

    let mut by_thread = MultiTraceConfig::new(stages());
    by_thread.perins = true;
    by_thread.instance = Instance::Thread;
    let t = table(by_thread);
    assert_eq!(
        (t.key_header.as_deref(), t.key_width, t.comm_column),
        (Some("THREAD"), 6, true)
    );
    assert_eq!(t.rows[0].instance, Some(9));

    let mut by_key = MultiTraceConfig::new(stages());
    by_key.perins = true;
    by_key.key_header = Some("pid".into());
    let t = table(by_key);
    assert_eq!((t.key_header.as_deref(), t.key_width), (Some("pid"), 6));
}

/// `--lower`: pairs closer than it are listed beside the `--than` ones; those between
/// the two are not.
#[test]
fn lower_lists_the_quick_pairs_too() {
    let layouts = softirq_layouts();
    let mut config = MultiTraceConfig::new(vec![
        vec![StageEvent::new(EventIndex(0))],
        vec![StageEvent::new(EventIndex(1))],
    ]);
    config.than_ns = Some(10_000);
    config.lower_ns = Some(1_000);
    let mut a = crate::analyzers::Tabulated::new(MultiTraceAnalyzer::new(&layouts, config).unwrap());
    let raw = record(&layouts[0], 1, &[("vec", Value::Int(3))]);
    for (start, latency) in [(0, 500), (1_000, 5_000), (10_000, 20_000), (40_000, 999)] {
        a.feed(&event(0, start, 0, 1, &raw));
        a.feed(&event(1, start + latency, 0, 1, &raw));
    }
    let t = delay(a.take_interval());
    assert_eq!(t.rows[0].stats.calls(), 4);
    let (pairs, _) = a.take_slow_pairs();
    let latencies: Vec<u64> = pairs.iter().map(|p| p.latency_ns).collect();
    assert_eq!(latencies, [500, 20_000, 999]);
}
