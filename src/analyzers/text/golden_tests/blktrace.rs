//! Golden blktrace output: perf-prof's tables (notes/perf-prof-outputs/blktrace.txt)
//! rebuilt from request lifecycles whose stage latencies add up to its rows.

use super::*;
use crate::analyzers::blktrace::{BlktraceAnalyzer, STAGES};

const BLKTRACE_TXT: &str = "\
2026-12-02 15:50:16.894381 
            start => end                   reqs        total(us)      min(us)      avg(us)      max(us)
-----------------    ----------------- -------- ---------------- ------------ ------------ ------------
      block_getrq => block_rq_insert        857         8564.845        1.422        9.993      157.817
  block_rq_insert => block_rq_issue         857         6350.456        1.873        7.410       64.768
   block_rq_issue => block_rq_complete      857        91169.405       55.699      106.382      258.783
";

const BLKTRACE_EMPTY_TXT: &str = "\
2026-12-02 15:50:17.894396 
            start => end                   reqs        total(us)      min(us)      avg(us)      max(us)
-----------------    ----------------- -------- ---------------- ------------ ------------ ------------
      block_getrq => block_rq_insert          0            0.000        0.000        0.000        0.000
  block_rq_insert => block_rq_issue           0            0.000        0.000        0.000        0.000
   block_rq_issue => block_rq_complete        0            0.000        0.000        0.000        0.000
";

const BLKTRACE_THAN_TXT: &str = "\
2026-12-02 15:50:33.217060 
            start => end                   reqs        total(us)      min(us)      avg(us)      max(us)    than(reqs)
-----------------    ----------------- -------- ---------------- ------------ ------------ ------------  -------------
      block_getrq => block_rq_insert        408        11214.777        3.135       27.487      171.848      0 (  0%)
  block_rq_insert => block_rq_issue         492        87915.620        1.702      178.690     5149.831     84 ( 17%)
   block_rq_issue => block_rq_complete      195        99058.536       46.329      507.992     2483.839     81 ( 41%)
";

/// Feed requests, one after another at their own sectors: request `i` starts with a getrq
/// when `getrq_insert` has an `i`-th latency (else with its insert), is issued
/// `insert_issue[i]` later, and completes `issue_complete[i]` after that when there is one.
fn feed_requests(
    a: &mut BlktraceAnalyzer,
    getrq_insert: &[u64],
    insert_issue: &[u64],
    issue_complete: &[u64],
) {
    let layouts: Vec<EventLayout> = STAGES
        .iter()
        .enumerate()
        .map(|(i, name)| test_events::block(name, 1200 + i as u64))
        .collect();
    let mut feed = |stage: usize, at: u64, sector: i64| {
        let raw = record(
            &layouts[stage],
            1,
            &[
                ("dev", Value::Int(254 << 20)),
                ("sector", Value::Int(sector)),
                ("nr_sector", Value::Int(2048)),
            ],
        );
        a.feed(&event(stage as u16, at, 1, 1, &raw));
    };
    for (i, &issue_after) in insert_issue.iter().enumerate() {
        let sector = i as i64 * 4096;
        let mut t = i as u64 * 100_000_000;
        if let Some(&insert_after) = getrq_insert.get(i) {
            feed(0, t, sector);
            t += insert_after;
        }
        feed(1, t, sector);
        t += issue_after;
        feed(2, t, sector);
        if let Some(&complete_after) = issue_complete.get(i) {
            feed(3, t + complete_after, sector);
        }
    }
}

fn analyzer(than_ns: Option<u64>) -> crate::analyzers::Tabulated<BlktraceAnalyzer> {
    let layouts: Vec<EventLayout> = STAGES
        .iter()
        .enumerate()
        .map(|(i, name)| test_events::block(name, 1200 + i as u64))
        .collect();
    crate::analyzers::Tabulated::new(BlktraceAnalyzer::new(&layouts, than_ns, 1024).unwrap())
}

#[test]
fn the_blktrace_table_reproduces_perf_prof_byte_for_byte() {
    let mut a = analyzer(None);
    feed_requests(
        &mut a,
        &row_latencies(857, 8_564_845, 1_422, 157_817, None),
        &row_latencies(857, 6_350_456, 1_873, 64_768, None),
        &row_latencies(857, 91_169_405, 55_699, 258_783, None),
    );
    let text = blktrace_table(&a.take_interval(), &wall(BLKTRACE_TXT), PERF_PROF);
    assert_eq!(text, BLKTRACE_TXT);
    // An interval without requests still prints its three rows.
    let text = blktrace_table(&a.take_interval(), &wall(BLKTRACE_EMPTY_TXT), PERF_PROF);
    assert_eq!(text, BLKTRACE_EMPTY_TXT);
}

#[test]
fn the_blktrace_than_table_reproduces_perf_prof_byte_for_byte() {
    let than = 500_000;
    let mut a = analyzer(Some(than));
    // 408 requests from their getrq, 84 more seen from their insert on; 195 complete.
    feed_requests(
        &mut a,
        &row_latencies(408, 11_214_777, 3_135, 171_848, Some((than, 0))),
        &row_latencies(492, 87_915_620, 1_702, 5_149_831, Some((than, 84))),
        &row_latencies(195, 99_058_536, 46_329, 2_483_839, Some((than, 81))),
    );
    let table = a.take_interval();
    assert_eq!(
        blktrace_table(&table, &wall(BLKTRACE_THAN_TXT), PERF_PROF),
        BLKTRACE_THAN_TXT
    );
    let (slow, _) = a.take_slow_pairs();
    assert_eq!(slow.len(), 84 + 81, "each slow stage is listed");
    let colored = blktrace_table(
        &table,
        &wall(BLKTRACE_THAN_TXT),
        TextStyle {
            color: true,
            perfscope_columns: false,
            event_clock_offset_ns: None,
        },
    );
    assert!(colored.contains("      0 (  0%)\n"));
    assert!(colored.contains(" \x1b[31;1m    84 ( 17%)\x1b[0m\n"));
}

#[test]
fn perfscope_percentiles_follow_the_blktrace_columns() {
    let mut a = analyzer(None);
    let lat: Vec<u64> = (1..=1000).map(|i| i * 1_000).collect();
    feed_requests(&mut a, &lat, &lat, &lat);
    let text = blktrace_table(&a.take_interval(), &wall(BLKTRACE_TXT), TextStyle::default());
    let lines: Vec<&str> = text.lines().collect();
    let perf_prof: Vec<&str> = BLKTRACE_TXT.lines().collect();
    assert_eq!(
        lines[1],
        format!(
            "{}      p50(us)      p95(us)      p99(us)    p99.9(us)",
            perf_prof[1]
        )
    );
    assert_eq!(lines[2], format!("{}{}", perf_prof[2], " ------------".repeat(4)));
    let p50: f64 = lines[3].split_whitespace().nth(8).unwrap().parse().unwrap();
    assert!((p50 - 500.0).abs() <= 500.0 * RELATIVE_ERROR, "{}", lines[3]);
}
