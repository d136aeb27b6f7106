use super::*;
use crate::analyzers::test_events::{Value, block, event, record};

const US: u64 = 1_000;
const DEV: i64 = 7 << 20;

fn layouts() -> Vec<EventLayout> {
    STAGES
        .iter()
        .enumerate()
        .map(|(i, name)| block(name, 1200 + i as u64))
        .collect()
}

struct Rig {
    layouts: Vec<EventLayout>,
    a: BlktraceAnalyzer,
}

impl Rig {
    fn new(than_ns: Option<u64>) -> Rig {
        let layouts = layouts();
        let a = BlktraceAnalyzer::new(&layouts, than_ns, 16).unwrap();
        Rig { layouts, a }
    }

    /// Stage `stage` of the request at `sector` (`nr` sectors) at `at_us`.
    fn at(&mut self, at_us: u64, stage: usize, sector: i64, nr: i64) {
        let raw = record(
            &self.layouts[stage],
            42,
            &[
                ("dev", Value::Int(DEV)),
                ("sector", Value::Int(sector)),
                ("nr_sector", Value::Int(nr)),
            ],
        );
        self.a.feed(&event(stage as u16, at_us * US, 0, 42, &raw));
    }

    /// Each row as (requests, total µs, min µs, max µs, than).
    fn rows(&mut self) -> Vec<(u64, u64, u64, u64, u64)> {
        let rows = self.a.take_rows();
        self.a
            .tabulate(&rows)
            .rows
            .iter()
            .map(|r| {
                let s = &r.stats;
                (
                    s.calls(),
                    s.total_ns() / US,
                    s.histogram.min().unwrap_or(0) / US,
                    s.histogram.max().unwrap_or(0) / US,
                    s.than,
                )
            })
            .collect()
    }
}

const GETRQ: usize = 0;
const INSERT: usize = 1;
const ISSUE: usize = 2;

#[test]
fn each_stage_row_gets_the_time_since_the_stage_before() {
    let mut r = Rig::new(None);
    // Two requests in flight at once, each tracked by its own range.
    r.at(0, GETRQ, 1000, 8);
    r.at(5, GETRQ, 2000, 8);
    r.at(10, INSERT, 1000, 8);
    r.at(25, INSERT, 2000, 8);
    r.at(40, ISSUE, 1000, 8);
    r.at(50, ISSUE, 2000, 8);
    r.at(140, COMPLETE, 1000, 8);
    r.at(350, COMPLETE, 2000, 8);
    assert_eq!(
        r.rows(),
        [(2, 30, 10, 20, 0), (2, 55, 25, 30, 0), (2, 400, 100, 300, 0)]
    );
    assert_eq!(r.a.tracked(), 0, "completions end the tracks");
    assert_eq!(r.rows(), [(0, 0, 0, 0, 0); 3], "a new interval starts empty");
}

#[test]
fn a_request_never_inserted_counts_getrq_to_issue_in_the_issue_row() {
    // No I/O scheduler (a loop device): blk-mq issues the request directly.
    let mut r = Rig::new(None);
    r.at(0, GETRQ, 64, 8);
    r.at(7, ISSUE, 64, 8);
    r.at(47, COMPLETE, 64, 8);
    assert_eq!(r.rows(), [(0, 0, 0, 0, 0), (1, 7, 7, 7, 0), (1, 40, 40, 40, 0)]);
}

#[test]
fn ranges_match_by_overlap_and_other_devices_and_flushes_do_not() {
    let mut r = Rig::new(None);
    r.at(0, GETRQ, 100, 16);
    // A completion of part of the request (the driver finished 8 of its 16 sectors).
    r.at(30, COMPLETE, 108, 8);
    // A flush (sector -1) and a completion that touches no tracked range.
    r.at(31, GETRQ, -1, 0);
    r.at(32, COMPLETE, 116, 8);
    r.at(33, COMPLETE, 92, 8);
    assert_eq!(r.rows(), [(0, 0, 0, 0, 0), (0, 0, 0, 0, 0), (1, 30, 30, 30, 0)]);
    assert_eq!(r.a.tracked(), 0);
    // Another device's request at the same sectors is another request.
    r.at(40, GETRQ, 100, 8);
    let other = record(
        &r.layouts[COMPLETE],
        42,
        &[
            ("dev", Value::Int(DEV + 1)),
            ("sector", Value::Int(100)),
            ("nr_sector", Value::Int(8)),
        ],
    );
    r.a.feed(&event(COMPLETE as u16, 50 * US, 0, 42, &other));
    assert_eq!(r.a.tracked(), 1);
    assert_eq!(r.rows()[2].0, 0);
}

#[test]
fn lost_records_drop_every_track() {
    let mut r = Rig::new(None);
    r.at(0, GETRQ, 8, 8);
    r.a.lost(US, 2 * US);
    r.at(10, COMPLETE, 8, 8);
    assert_eq!(r.rows()[2].0, 0, "the completion found no request");
    // A request seen only from its insert on is tracked from there.
    r.at(20, INSERT, 8, 8);
    r.at(26, ISSUE, 8, 8);
    assert_eq!(r.rows(), [(0, 0, 0, 0, 0), (1, 6, 6, 6, 0), (0, 0, 0, 0, 0)]);
}

#[test]
fn than_counts_slow_stages_and_keeps_both_events_of_each() {
    let mut r = Rig::new(Some(50 * US));
    r.at(0, GETRQ, 8, 8);
    r.at(10, INSERT, 8, 8);
    r.at(100, ISSUE, 8, 8); // 90 µs > 50
    r.at(150, COMPLETE, 8, 8); // 50 µs: not above
    // A getrq over a range still tracked (a request that merged away): no row, but slow.
    r.at(1000, GETRQ, 64, 8);
    r.at(2000, GETRQ, 64, 8);
    assert_eq!(
        r.rows(),
        [(1, 10, 10, 10, 0), (1, 90, 90, 90, 1), (1, 50, 50, 50, 0)]
    );
    let (pairs, dropped) = r.a.take_slow_pairs();
    assert_eq!(dropped, 0);
    let seen: Vec<(u16, u64, u16, u64, u64)> = pairs
        .iter()
        .map(|p| {
            (
                p.first.event.0,
                p.first.time_ns / US,
                p.second.event.0,
                p.second.time_ns / US,
                p.latency_ns / US,
            )
        })
        .collect();
    assert_eq!(seen, [(1, 10, 2, 100, 90), (0, 1000, 0, 2000, 1000)]);
    // The restarted track times the request from its new getrq.
    r.at(2003, ISSUE, 64, 8);
    assert_eq!(r.rows()[1], (1, 3, 3, 3, 0));
}

#[test]
fn the_selectors_filter_every_event_on_the_device() {
    assert_eq!(
        selectors("dev==7340032"),
        [
            "block:block_getrq/dev==7340032/,block:block_rq_insert/dev==7340032/,\
          block:block_rq_issue/dev==7340032/,block:block_rq_complete/dev==7340032/"
        ]
    );
    let layouts = layouts();
    let e = BlktraceAnalyzer::new(&layouts[..3], None, 1).err().unwrap();
    assert_eq!(
        e,
        AnalyzerError::MissingEvent {
            analyzer: "blktrace",
            event: "block:block_rq_complete".into()
        }
    );
}

/// The views and the export see the same three rows the text prints, each line with its
/// typed cells, and one latency series per stage.
#[test]
fn the_views_get_the_printed_rows_and_a_series_per_stage() {
    use crate::model::analysis::AnalysisInfo;
    use crate::model::present::Cell;
    let mut r = Rig::new(Some(50 * US));
    r.at(0, GETRQ, 8, 8);
    r.at(4, ISSUE, 8, 8);
    r.at(104, COMPLETE, 8, 8);
    let info = AnalysisInfo {
        name: "blktrace".into(),
        schema: r.a.schema(),
    };
    let rows = r.a.take_rows();
    let names = crate::model::threads::ThreadNames::new();
    let table = crate::analyzers::present::table(&info, &rows, &names);
    assert_eq!(table.header.len(), 2);
    assert_eq!(table.rows.len(), 3);
    assert!(
        table.rows[2]
            .text
            .starts_with("   block_rq_issue => block_rq_complete        1          100.000"),
        "{}",
        table.rows[2].text
    );
    let cells = &table.rows[2].cells;
    let column = |name: &str| table.columns.iter().position(|c| c.name == name).unwrap();
    assert_eq!(cells[column("end")], Cell::Text("block_rq_complete".into()));
    assert_eq!(cells[column("calls")], Cell::Int(1));
    assert_eq!(cells[column("total")], Cell::Int(100_000));
    assert_eq!(cells[column("than")], Cell::Int(1));
    let series = crate::analyzers::present::latency_series(&info, &rows, &names);
    let named: Vec<(&str, u64)> = series
        .iter()
        .map(|s| (s.name.as_str(), s.stats.calls()))
        .collect();
    assert_eq!(
        named,
        [
            ("block_getrq => block_rq_insert", 0),
            ("block_rq_insert => block_rq_issue", 1),
            ("block_rq_issue => block_rq_complete", 1)
        ]
    );
}
