use super::*;
use crate::analyzers::test_events::{Value as V, event, record, sched_wakeup};
use rusqlite::types::Value;

fn analyzer(query: &str) -> Result<SqlAnalyzer, AnalyzerError> {
    let layouts = [sched_wakeup("sched_wakeup", 374)];
    let events = [SqlEvent {
        table: "sched_wakeup".into(),
        filter: Some("pid>0".into()),
    }];
    SqlAnalyzer::new(&layouts, &events, query, 1_700_000_000)
}

#[test]
fn events_become_rows_with_perf_profs_columns() {
    let mut a =
        analyzer("SELECT comm, COUNT(*) AS n, SUM(pid) FROM sched_wakeup GROUP BY comm ORDER BY n DESC")
            .unwrap();
    let AnalysisSchema::Sql(schema) = a.schema() else {
        panic!()
    };
    let names: Vec<&str> = schema.tables[0].columns.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "_pid",
            "_tid",
            "_time",
            "_cpu",
            "_period",
            "common_flags",
            "common_preempt_count",
            "common_pid",
            "comm",
            "pid",
            "prio",
            "target_cpu"
        ]
    );
    assert_eq!(schema.tables[0].columns[8].1, SqlType::Text);
    assert_eq!(schema.tables[0].field_count, 12);
    let layout = sched_wakeup("sched_wakeup", 374);
    for (i, (comm, pid)) in [("sh", 10), ("sh", 11), ("rcu", 15)].iter().enumerate() {
        let raw = record(&layout, 3, &[("comm", V::Str(comm)), ("pid", V::Int(*pid))]);
        a.feed(&event(0, 1_000 + i as u64, 1, 3, &raw));
    }
    let rows = a.take_rows();
    let results = a.tabulate(&rows).unwrap();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].columns, ["comm", "n", "SUM(pid)"]);
    assert_eq!(
        results[0].rows,
        vec![
            vec![Value::Text("sh".into()), Value::Integer(2), Value::Integer(21)],
            vec![Value::Text("rcu".into()), Value::Integer(1), Value::Integer(15)],
        ]
    );
    // The next interval starts with empty tables.
    let next = a.take_rows();
    let empty = a.tabulate(&next).unwrap();
    assert!(empty[0].rows.is_empty());
}

#[test]
fn metadata_says_what_each_table_holds() {
    let mut a = analyzer(
        "SELECT table_name, event_system, event_name, event_id, filter_expression, field_count, \
         created_time, sample_count, first_sample_time, last_sample_time FROM event_metadata",
    )
    .unwrap();
    let layout = sched_wakeup("sched_wakeup", 374);
    for t in [500, 700] {
        let raw = record(&layout, 3, &[]);
        a.feed(&event(0, t, 0, 3, &raw));
    }
    let results = a.tabulate(&a.rows()).unwrap();
    assert_eq!(
        results[0].rows[0],
        vec![
            Value::Text("sched_wakeup".into()),
            Value::Text("sched".into()),
            Value::Text("sched_wakeup".into()),
            Value::Integer(374),
            Value::Text("pid>0".into()),
            Value::Integer(12),
            Value::Integer(1_700_000_000),
            Value::Integer(2),
            Value::Integer(500),
            Value::Integer(700),
        ]
    );
}

#[test]
fn a_bad_query_is_refused_when_built() {
    let err = analyzer("SELECT nope FROM sched_wakeup")
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("no such column: nope"), "{err}");
    let err = analyzer("SELECT * FROM missing").err().unwrap().to_string();
    assert!(
        err.contains("no such table: missing") && err.contains("sched_wakeup"),
        "{err}"
    );
    let err = analyzer("  ").err().unwrap().to_string();
    assert!(err.contains("no statement"), "{err}");
}

#[test]
fn the_text_keeps_widths_from_one_interval_to_the_next() {
    use crate::analyzers::text::{SqlWidths, WallClock, sql_text};
    let mut a = analyzer("SELECT comm FROM sched_wakeup").unwrap();
    let AnalysisSchema::Sql(schema) = a.schema() else {
        panic!()
    };
    let layout = sched_wakeup("sched_wakeup", 374);
    let raw = record(&layout, 3, &[("comm", V::Str("kworker/0:1"))]);
    a.feed(&event(0, 1, 0, 3, &raw));
    let AnalysisRows::Sql(first) = a.take_rows() else {
        panic!()
    };
    let AnalysisRows::Sql(second) = a.take_rows() else {
        panic!()
    };
    let wall = WallClock::local(std::time::UNIX_EPOCH);
    let mut widths = SqlWidths::default();
    let one = sql_text(&schema, &first, &wall, &mut widths);
    let two = sql_text(&schema, &second, &wall, &mut widths);
    let body = |t: &str| {
        t.lines()
            .skip(1)
            .map(str::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(
        body(&one),
        "=== SELECT comm FROM sched_wakeup ===\ncomm\n----\nkworker/0:1\n"
    );
    assert_eq!(
        body(&two),
        "=== SELECT comm FROM sched_wakeup ===\ncomm       \n-----------\n"
    );
}
