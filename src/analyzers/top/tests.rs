use super::*;
use crate::analyzers::test_events::{self, Value, event, layout, record};
use crate::trace::event::{EventLayout, FieldKind};

fn runtime_layout() -> EventLayout {
    layout(
        "sched",
        "sched_stat_runtime",
        5,
        &[
            ("comm", 4, FieldKind::DataLoc { is_string: true }),
            ("pid", 4, FieldKind::Signed),
            ("runtime", 8, FieldKind::Unsigned),
        ],
    )
}

#[test]
fn top_by_sums_per_thread_and_sorts_largest_first() {
    let l = runtime_layout();
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
    let r = |v| record(&l, 0, &[("runtime", Value::Int(v))]);
    a.feed(&event(0, 1, 0, 18310, &r(900)));
    a.feed(&event(0, 2, 0, 18309, &r(500)));
    a.feed(&event(0, 3, 1, 18310, &r(100)));
    a.feed(&event(0, 4, 1, 78, &r(500)));
    let t = a.take_interval();
    assert_eq!(t.key_header.as_deref(), Some("PID"));
    assert_eq!(t.comm_header.as_deref(), Some("COMM"));
    assert!(t.comm_from_pid);
    assert_eq!(t.column_headers, ["RUNTIME"]);
    let rows: Vec<(u64, u64)> = t.rows.iter().map(|r| (r.key, r.values[0])).collect();
    assert_eq!(rows, [(18310, 1000), (78, 500), (18309, 500)], "ties by key");
    assert_eq!(t.events_total, 4);
    a.feed(&event(0, 5, 0, 78, &r(1)));
    let t = a.take_interval();
    assert_eq!(t.rows.len(), 1, "rows are per interval");
    assert_eq!(t.events_total, 5, "the event count is not");
    assert_eq!(a.snapshot().rows[0].values, [1000]);
    assert_eq!(
        a.snapshot().rows[1],
        TopRow {
            key: 78,
            comm: None,
            values: vec![501]
        }
    );
}

#[test]
fn count_columns_per_event_keys_and_comms() {
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
    let sw = |pid, name| {
        record(
            &switch,
            0,
            &[("prev_pid", Value::Int(pid)), ("prev_comm", Value::Str(name))],
        )
    };
    let wk = |pid, name| {
        record(
            &wakeup,
            0,
            &[("pid", Value::Int(pid)), ("comm", Value::Str(name))],
        )
    };
    let (a15, b15, a78, b69) = (
        sw(15, "rcu_preempt"),
        wk(15, "rcu_preempt"),
        sw(78, "kdamond.0"),
        wk(69, "tokio-rt-worker"),
    );
    for (index, raw) in [
        (0, &a15),
        (0, &a15),
        (1, &b15),
        (0, &a78),
        (0, &a78),
        (1, &b69),
        (1, &b69),
    ] {
        a.feed(&event(index, 1, 0, 1, raw));
    }
    let t = a.take_interval();
    assert_eq!(t.key_header.as_deref(), Some("PREV_PID"));
    assert_eq!(t.comm_header.as_deref(), Some("PREV_COMM"));
    assert!(!t.comm_from_pid);
    assert_eq!(t.column_headers, ["SCHED_SWITCH", "SCHED_WAKEUP"]);
    let rows: Vec<(u64, &str, Vec<u64>)> = t
        .rows
        .iter()
        .map(|r| (r.key, r.comm.as_deref().unwrap(), r.values.clone()))
        .collect();
    assert_eq!(
        rows,
        [
            (15, "rcu_preempt", vec![2, 1]),
            (78, "kdamond.0", vec![2, 0]),
            (69, "tokio-rt-worker", vec![0, 2])
        ]
    );
}

#[test]
fn only_comm_aggregates_by_name_and_mixed_keys_are_refused() {
    let l = runtime_layout();
    let comm = l.field("comm").unwrap().clone();
    let runtime = KeySource::Field(l.field("runtime").unwrap().clone());
    let mut a = crate::analyzers::Tabulated::new(
        TopAnalyzer::new(TopConfig {
            events: vec![TopEvent {
                event: EventIndex(0),
                key: None,
                comm: Some(Box::new(move |e| comm.read_str(e.raw).map(|s| s.into_owned()))),
                columns: vec![TopColumn::sum("runtime", runtime, true)],
            }],
            key_text: None,
            comm_text: None,
            only_comm: true,
            pid_comm: None,
        })
        .unwrap(),
    );
    let mut raw = record(&l, 0, &[("runtime", Value::Int(10))]);
    // __data_loc comm: payload "sh\0" appended after the fixed fields.
    let at = raw.len() as u32;
    raw[8..12].copy_from_slice(&(at | 3 << 16).to_le_bytes());
    raw.extend_from_slice(b"sh\0");
    a.feed(&event(0, 1, 0, 100, &raw));
    a.feed(&event(0, 2, 0, 101, &raw));
    let t = a.take_interval();
    assert_eq!(t.key_header, None);
    assert_eq!(
        t.rows,
        [TopRow {
            key: 0,
            comm: Some("sh".into()),
            values: vec![20]
        }]
    );

    let err = TopAnalyzer::new(TopConfig {
        events: vec![
            TopEvent {
                event: EventIndex(0),
                key: Some(KeySource::Cpu),
                comm: None,
                columns: vec![],
            },
            TopEvent {
                event: EventIndex(1),
                key: None,
                comm: None,
                columns: vec![],
            },
        ],
        key_text: None,
        comm_text: None,
        only_comm: false,
        pid_comm: None,
    })
    .err()
    .unwrap();
    assert!(err.to_string().contains("either every event has `key=`"), "{err}");
}
