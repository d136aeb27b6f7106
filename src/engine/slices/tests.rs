use super::*;
use crate::model::analysis::{LatencyKey, LatencyRows};
use crate::model::latency_stats::LatencyStats;
use crate::model::{InstanceId, SampleMeta, StackId};

const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

fn sample(stack: u32, time_ns: u64) -> Sample {
    Sample {
        time_ns: Some(time_ns),
        instance: InstanceId(0),
        weight: 1,
        stack: StackId(stack),
        meta: SampleMeta::default(),
    }
}

/// Weight inside `window`, by the store's own rule.
fn weight_in(store: &SliceStore, window: TimeWindow) -> u64 {
    let mut total = 0;
    store.visit(&window, &mut |v| {
        if v.position == WindowPosition::Inside {
            total += v.weight;
        }
    });
    total
}

#[test]
fn a_batch_store_bins_by_time_and_selects_by_slice_start() {
    let mut store = SliceStore::new(SlicePolicy::BATCH);
    // A cut known before the samples (a --start-sec): exact.
    assert_eq!(store.cut(500 * MS + 7, false), 500 * MS + 7);
    for i in 0..1000u64 {
        store.add_sample(&sample((i % 3) as u32, i * MS));
    }
    store.settle();
    store.seal();
    assert_eq!(weight_in(&store, TimeWindow::ALL), 1000);
    // Samples at 0..=500 ms are before the cut at 500 ms + 7 ns.
    assert_eq!(weight_in(&store, TimeWindow::new(Some(500 * MS + 7), None)), 499);
    assert_eq!(weight_in(&store, TimeWindow::new(None, Some(500 * MS + 7))), 501);
    // One slice each side of the cut: a batch read needs no finer grid.
    assert_eq!(store.slices().len(), 2);
    // No slice straddles the cut.
    assert!(
        store
            .slices()
            .iter()
            .all(|s| !(s.start_ns < 500 * MS + 7 && 500 * MS + 7 < s.end_ns))
    );
    assert_eq!(store.sample_time_range(), Some((0, 999 * MS)));
}

#[test]
fn held_samples_cut_exactly_after_the_fact() {
    let mut store = SliceStore::new(SlicePolicy::live(10 * S));
    for i in 0..100u64 {
        store.add_sample(&sample(0, S + i * MS));
    }
    store.settle();
    // A marker that arrives late, at a time the held samples already passed: exact.
    let at = S + 37 * MS + 1;
    assert_eq!(store.cut(at, false), at);
    store.seal();
    assert_eq!(weight_in(&store, TimeWindow::new(Some(at), None)), 62);
    // A cut inside a slice that was binned before it snaps to the nearer edge.
    let inside = store
        .slices()
        .iter()
        .find(|s| s.end_ns - s.start_ns > 2)
        .map(|s| (s.start_ns, s.end_ns))
        .unwrap();
    let asked = inside.0 + 1;
    assert_eq!(store.cut(asked, false), inside.0);
}

#[test]
fn memory_is_bounded_by_distinct_stacks_times_slices() {
    let policy = SlicePolicy::live(10 * S);
    let mut store = SliceStore::new(policy);
    // One million samples over an hour of 100 distinct stacks.
    let n = 1_000_000u64;
    let span = 3600 * S;
    for i in 0..n {
        store.add_sample(&sample((i % 100) as u32, i * (span / n)));
        if i % 10_000 == 0 {
            store.settle();
        }
    }
    store.settle();
    let slices = store.slices().len();
    let bound = 2 * (policy.max_history + policy.max_recent);
    assert!(slices <= bound, "{slices} slices kept (bound {bound})");
    // Entries: at most distinct stacks per slice, plus what is held (2 s of samples).
    let held = store.held().len();
    assert!(held <= 1_000, "{held} samples held");
    assert!(
        store.entries() <= 100 * slices + held,
        "{} entries",
        store.entries()
    );
    assert_eq!(weight_in(&store, TimeWindow::ALL), n);
    // The recent span stays fine: the last 10 s are still selectable to about 1/10 s.
    let latest = store.latest_ns().unwrap();
    let last_ten = weight_in(&store, TimeWindow::new(Some(latest - 10 * S), None));
    let expected = 10 * S / (span / n);
    assert!(
        last_ten.abs_diff(expected) * 10 <= expected,
        "{last_ten} samples in the last 10 s, expected about {expected}"
    );
}

#[test]
fn analysis_rows_merge_per_slice_and_windows_select_them() {
    let mut store = SliceStore::new(SlicePolicy::live(10 * S));
    let key = LatencyKey {
        instance: 0,
        series: 0,
    };
    for i in 0..10u64 {
        let mut stats = LatencyStats::default();
        stats.record(1_000 + i, None);
        let rows = AnalysisRows::Latency(LatencyRows {
            rows: [(key, stats)].into_iter().collect(),
        });
        store.add_analysis(Some(i * 100 * MS), &rows, 2);
    }
    store.seal();
    let mut calls = 0;
    let mut events = 0;
    store.visit_analysis(
        &TimeWindow::new(Some(500 * MS), None),
        &mut |data, position, _| {
            if position == WindowPosition::Inside {
                events += data.events;
                if let Some(AnalysisRows::Latency(rows)) = &data.analysis {
                    calls += rows.rows[&key].calls();
                }
            }
        },
    );
    assert_eq!((calls, events), (5, 10));
}

/// Times at the ends of a u64, in every order, with cuts there too: the store's
/// arithmetic saturates (a slice's end is exclusive, so the last time it keeps is
/// u64::MAX - 1 and a sample at u64::MAX lands there) and its slices stay sorted,
/// disjoint and non-empty, every weight counted once. Issue 25: a sample at -1 beside
/// two markers made `compact` ask for a range whose start was past its end.
#[test]
fn any_u64_time_is_binned_without_a_panic() {
    const EDGES: [u64; 9] = [
        0,
        1,
        2,
        MS,
        1 << 62,
        u64::MAX / 2,
        u64::MAX - 2,
        u64::MAX - 1,
        u64::MAX,
    ];
    let policies = [
        SlicePolicy::BATCH,
        SlicePolicy::live_headless(),
        SlicePolicy::live(10 * S),
        SlicePolicy::live(u64::MAX),
        SlicePolicy {
            base_ns: u64::MAX,
            max_history: 1,
            recent_ns: u64::MAX,
            max_recent: 1,
            hold_ns: u64::MAX,
            max_held: 1,
        },
    ];
    for policy in policies {
        for rotation in 0..EDGES.len() {
            let mut store = SliceStore::new(policy);
            let times: Vec<u64> = EDGES
                .iter()
                .cycle()
                .skip(rotation)
                .take(EDGES.len())
                .copied()
                .collect();
            // Markers at the ends and one amid the samples, as the fuzzed session had.
            store.cut(times[0], false);
            store.cut(u64::MAX, rotation % 2 == 0);
            for (i, &t) in times.iter().enumerate() {
                store.add_sample(&sample(i as u32 % 3, t));
                if i == times.len() / 2 {
                    store.cut(t, true);
                    store.add_lost(Some(t), 2);
                    store.add_lost(None, u64::MAX);
                }
                store.settle();
            }
            let total = weight_in(&store, TimeWindow::ALL);
            assert_eq!(total, EDGES.len() as u64, "{policy:?} rotation {rotation}");
            store.seal();
            assert_eq!(weight_in(&store, TimeWindow::ALL), EDGES.len() as u64);
            let slices = store.slices();
            assert!(
                slices.iter().all(|s| s.start_ns < s.end_ns),
                "{policy:?}: {slices:?}"
            );
            assert!(
                slices.windows(2).all(|w| w[0].end_ns <= w[1].start_ns),
                "{policy:?}: {slices:?}"
            );
            assert_eq!(store.time_range(), Some((0, u64::MAX)));
            // A window with edges at the limits: the sample at u64::MAX was binned at
            // LAST_NS, in a slice that starts before the window's (exclusive) stop.
            assert_eq!(
                weight_in(&store, TimeWindow::new(Some(0), Some(u64::MAX))),
                EDGES.len() as u64,
            );
            assert_eq!(weight_in(&store, TimeWindow::new(Some(u64::MAX), None)), 0);
            store.release_cut(u64::MAX);
            store.set_recent(u64::MAX);
            store.compact();
            assert_eq!(weight_in(&store, TimeWindow::ALL), EDGES.len() as u64);
        }
    }
}
