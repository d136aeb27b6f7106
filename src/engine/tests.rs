//! The engine as the views and exports see it: incremental accumulation without copies,
//! every live mode and the reset applied to samples and analysis rows alike, cuts at the
//! markers, and memory bounded by distinct stacks × kept slices.

use std::sync::Arc;
use std::time::Duration;

use super::testing::engine_of;
use super::*;
use crate::feeds::memory::updates_of;
use crate::feeds::{RowsUpdate, Update};
use crate::model::aggregate::Wants;
use crate::model::analysis::{
    AnalysisInfo, AnalysisRows, AnalysisSchema, LatencyKey, LatencyRows, SyscallsSchema,
};
use crate::model::latency_stats::LatencyStats;
use crate::model::sample_list::test_support::profile_from;
use crate::model::{Focus, InstanceId, NodeId, Sample, SampleMeta, StackId};

const S: u64 = 1_000_000_000;

fn live() -> Engine {
    Engine::new(EngineOptions {
        policy: SlicePolicy::live(10 * S),
        selection: Selection::all(),
        mode: LiveMode::Accumulate,
        refresh: Duration::from_secs(1),
        recording: None,
    })
}

/// One sample of an existing stack (`stacks` of the engine's tables) at `time_ns`.
fn sample(stack: u32, time_ns: u64) -> Sample {
    Sample {
        time_ns: Some(time_ns),
        instance: InstanceId(0),
        weight: 1,
        stack: StackId(stack),
        meta: SampleMeta::default(),
    }
}

#[test]
fn accumulate_double_buffers_without_copying_the_trie() {
    let list = profile_from(&[
        (&["a", "b"], 1, Some(1)),
        (&["a", "c"], 2, Some(2)),
        (&["a", "d"], 0, Some(2)),
    ]);
    let mut engine = live();
    engine.apply(updates_of(&list));
    let (b, c, d) = (0, 1, 2);
    let s1 = engine.snapshot();
    let first = Arc::as_ptr(&s1.trie);
    engine.apply(vec![Update::Samples(vec![sample(b, 3), sample(d, 4)])]);
    let s2 = engine.snapshot();
    assert_eq!((s1.trie.total_weight(), s2.trie.total_weight()), (3, 5));
    // The views drop s1 when s2 arrives; s3 reuses s1's trie in place.
    drop(s1);
    engine.apply(vec![Update::Samples(vec![sample(c, 5)])]);
    let s3 = engine.snapshot();
    assert_eq!(Arc::as_ptr(&s3.trie), first);
    assert_eq!(s3.trie.total_weight(), 6);
    assert_eq!(s2.trie.total_weight(), 5, "a published snapshot never changes");
    let c = s3.frames.get("c").unwrap();
    assert_eq!(s3.hotspots.get(c).unwrap().self_weight, 3);
}

#[test]
fn sliding_decay_reset_and_focus_change_what_counts() {
    let list = profile_from(&[
        (&["a", "b"], 1, Some(S)),
        (&["a", "c"], 1, Some(5 * S)),
        (&["a", "c"], 1, Some(9 * S)),
    ]);
    let mut engine = engine_of(&list, SlicePolicy::live(10 * S));
    engine.set_mode(LiveMode::Sliding { seconds: 5.0 });
    // Last sample at 9 s: the window is [4 s, ∞).
    assert_eq!(engine.snapshot().trie.total_weight(), 2);
    // Decay by age in refresh intervals (1 s): 9 s weighs 1, 5 s weighs 0.5^4, 1 s 0.5^8.
    engine.set_mode(LiveMode::Decay { factor: 0.5 });
    assert_eq!(engine.snapshot().trie.total_weight(), 1);
    engine.set_mode(LiveMode::Decay { factor: 0.9 });
    // 0.9^4 = 0.66 rounds to 1, 0.9^8 = 0.43 rounds to 0.
    assert_eq!(engine.snapshot().trie.total_weight(), 2);
    engine.set_mode(LiveMode::Accumulate);
    assert_eq!(engine.snapshot().trie.total_weight(), 3);
    engine.reset();
    assert_eq!(engine.snapshot().trie.total_weight(), 0);
    engine.set_selection(Selection::all().with_focus(Some(Focus::new("^c$").unwrap())));
    engine.builder.wants = Wants::ALL;
    assert_eq!(
        engine.snapshot().trie.total_weight(),
        0,
        "the reset still applies"
    );
    engine.builder.reset_ns = None;
    engine.builder.invalidate();
    let s = engine.snapshot();
    assert_eq!(s.trie.total_weight(), 2);
    let inverted = s.inverted.as_ref().unwrap();
    let leaf = inverted.children(NodeId::ROOT).next().unwrap();
    assert_eq!(s.frames.name(inverted.node(leaf).frame().unwrap()), "c");
    assert_eq!(s.instances.len(), 1);
    assert_eq!(s.instances[0].trie.total_weight(), 2);
}

fn syscalls_info() -> Arc<AnalysisInfo> {
    Arc::new(AnalysisInfo {
        name: "syscalls".into(),
        schema: AnalysisSchema::Syscalls(SyscallsSchema {
            perins: false,
            than_ns: None,
        }),
    })
}

/// `calls` reads (syscall 0) of 1 µs in the cell at `time_ns`.
fn reads(time_ns: u64, calls: u64) -> Update {
    let mut stats = LatencyStats::default();
    for _ in 0..calls {
        stats.record(1_000, None);
    }
    Update::Rows(RowsUpdate {
        time_ns: Some(time_ns),
        rows: AnalysisRows::Latency(LatencyRows {
            rows: [(
                LatencyKey {
                    instance: 0,
                    series: 0,
                },
                stats,
            )]
            .into_iter()
            .collect(),
        }),
        events: 2 * calls,
    })
}

fn read_calls(engine: &mut Engine) -> u64 {
    let s = engine.snapshot();
    let analysis = s.analysis.as_ref().expect("an analysis");
    analysis
        .series
        .iter()
        .find(|s| s.name == "read(0)")
        .map_or(0, |s| s.stats.calls())
}

#[test]
fn live_modes_windows_and_the_reset_apply_to_analysis_rows() {
    let mut engine = live();
    let mut updates = vec![Update::Analysis(syscalls_info())];
    // 100 reads per 100 ms for 10 s.
    for i in 0..100u64 {
        updates.push(reads(i * S / 10, 100));
    }
    engine.apply(updates);
    assert_eq!(read_calls(&mut engine), 10_000);
    // The table and the distribution are one selection.
    let s = engine.snapshot();
    let table = &s.analysis.as_ref().unwrap().table;
    assert!(
        table.title.starts_with("syscalls · 20000 events"),
        "{}",
        table.title
    );
    let cells: Vec<&str> = table.rows[0].text.split_whitespace().collect();
    assert_eq!(cells[..2], ["read(0)", "10000"], "{}", table.rows[0].text);

    engine.set_mode(LiveMode::Sliding { seconds: 2.0 });
    let sliding = read_calls(&mut engine);
    assert!(
        (1_900..=2_100).contains(&sliding),
        "{sliding} calls in the last 2 s"
    );

    engine.set_mode(LiveMode::Accumulate);
    engine.set_selection(Selection::window(TimeWindow::new(Some(2 * S), Some(5 * S))));
    assert_eq!(
        read_calls(&mut engine),
        3_000,
        "a window selects rows as it selects samples"
    );
    engine.set_selection(Selection::all());

    engine.reset();
    assert_eq!(read_calls(&mut engine), 0, "the reset counts from now");
    engine.apply(vec![reads(10 * S + S / 2, 7)]);
    assert_eq!(read_calls(&mut engine), 7);
    assert_eq!(engine.snapshot().analysis.as_ref().unwrap().events, 14);
}

#[test]
fn a_run_that_never_draws_logs_nothing_for_the_views() {
    // Headless text output reads updates as they pass and never builds a snapshot: the
    // fresh log (what a drawn aggregate has not read yet) must not pin every interval.
    let mut engine = live();
    let mut updates = vec![Update::Analysis(syscalls_info())];
    for i in 0..1_000u64 {
        updates.push(reads(i * S / 100, 3));
    }
    engine.apply(updates);
    assert_eq!(engine.builder.fresh_len(), (0, 0));
    // What was not logged is still counted: the first snapshot reads the slices.
    assert_eq!(read_calls(&mut engine), 3_000);
    // Once drawn, updates are logged for the two buffers and both count them.
    engine.apply(vec![reads(10 * S + 1, 5)]);
    assert_eq!(engine.builder.fresh_len().1, 1);
    assert_eq!(read_calls(&mut engine), 3_005);
    assert_eq!(read_calls(&mut engine), 3_005);
}

#[test]
fn a_million_samples_keep_state_bounded_by_distinct_stacks_times_slices() {
    // 200 distinct stacks, a million samples over 20 minutes, snapshots on the way.
    let mut list = profile_from(&[]);
    let instance = list.instance(crate::model::Instance::cpu(0));
    let stacks: Vec<StackId> = (0..200)
        .map(|i| list.intern_named_stack(&["main", &format!("f{}", i % 17), &format!("leaf{i}")]))
        .collect();
    let _ = instance;
    let mut engine = live();
    engine.apply(updates_of(&list));
    let n = 1_000_000u64;
    let step = 1_200 * S / n;
    let mut batch = Vec::new();
    for i in 0..n {
        batch.push(sample(stacks[(i * 7919 % 200) as usize].0, i * step));
        if batch.len() == 10_000 {
            engine.apply(vec![Update::Samples(std::mem::take(&mut batch))]);
            if i % 100_000 == 99_999 {
                engine.snapshot();
            }
        }
    }
    engine.apply(vec![Update::Samples(batch)]);
    let slices = engine.state.store.slices().len();
    let held = engine.state.store.held().len();
    let entries = engine.state.store.entries();
    assert!(
        entries <= 200 * slices + held,
        "{entries} entries for 200 stacks in {slices} slices (+{held} held)"
    );
    let policy = engine.state.store.policy();
    assert!(
        slices <= 2 * (policy.max_history + policy.max_recent),
        "{slices} slices"
    );
    // About 2 s of samples are held raw, not the run.
    assert!(held < 5_000, "{held} held");
    let heap = engine.state.store.heap_bytes();
    assert!(heap < 64 << 20, "{heap} bytes for a million samples");
    assert_eq!(engine.snapshot().trie.total_weight(), n);
}

#[test]
fn markers_cut_exactly_and_phases_select_by_them() {
    let mut engine = live();
    let list = profile_from(&[
        (&["boot"], 1, Some(10)),
        (&["work"], 1, Some(20)),
        (&["post"], 1, Some(30)),
    ]);
    engine.apply(updates_of(&list));
    // The markers arrive after the samples, as a console line is read after the fact.
    engine.apply(vec![Update::Markers(PhaseMarkers {
        start_ns: Some(15),
        stop_ns: Some(25),
    })]);
    assert_eq!(
        engine.state.markers.start_ns,
        Some(15),
        "held samples cut exactly"
    );
    engine.set_selection(Selection::window(engine.state.markers.main_window()));
    let s = engine.snapshot();
    assert_eq!(s.trie.total_weight(), 1);
    assert!(s.frames.get("work").is_some_and(|w| s.hotspots.get(w).is_some()));
}

/// `qemu --no-tui` (issue 11): the guest prints BENCH_START, the plugin's samples of that
/// moment are already applied when the console line is read — a headless engine of a live
/// feed must still cut the window there, not snap it to the run's edge (a 0 s window).
#[test]
fn a_headless_live_run_cuts_at_markers_that_arrive_after_their_samples() {
    let list = profile_from(&[
        (&["boot"], 1, Some(S)),
        (&["boot"], 1, Some(2 * S)),
        (&["work"], 1, Some(2 * S + S / 2)),
        (&["work"], 1, Some(3 * S)),
        (&["post"], 1, Some(3 * S + S / 2)),
    ]);
    let run = |live: bool| {
        let mut engine = Engine::new(EngineOptions::headless(Selection::all(), live));
        let mut updates = updates_of(&list);
        let Some(Update::Samples(samples)) = updates.pop() else {
            panic!("updates_of ends with the samples");
        };
        engine.apply(updates);
        // One batch per sample, as the stream delivers them; each batch settles.
        for s in samples {
            engine.apply(vec![Update::Samples(vec![s])]);
        }
        engine.apply(vec![Update::Markers(PhaseMarkers {
            start_ns: Some(2 * S + S / 4),
            stop_ns: Some(3 * S + S / 4),
        })]);
        engine.finish();
        engine.set_selection(Selection::window(engine.state.markers.main_window()));
        engine
    };
    let mut live = run(true);
    assert_eq!(
        (live.state.markers.start_ns, live.state.markers.stop_ns),
        (Some(2 * S + S / 4), Some(3 * S + S / 4))
    );
    assert!(
        live.state.provenance.warnings.is_empty(),
        "{:?}",
        live.state.provenance.warnings
    );
    let s = live.snapshot();
    assert_eq!(s.trie.total_weight(), 2, "the two `work` samples are the window");
    assert!(s.frames.get("work").is_some_and(|w| s.hotspots.get(w).is_some()));
    // A recorded input's markers come first; read like one, the late marker snaps to the
    // one slice's edge — what `qemu --no-tui` did before it said it is live.
    let recorded = run(false);
    assert_ne!(recorded.state.markers.start_ns, Some(2 * S + S / 4));
}

/// Issue 25: time stamps at 0 and u64::MAX (a 40-byte qperf.bin, a session whose last
/// sample has time -1) with markers hung the timeline and panicked the slices. A time past
/// the clock's range is taken out of its record, counted, and the session is incomplete.
#[test]
fn garbage_time_stamps_are_counted_without_a_time_not_gridded() {
    for policy in [
        SlicePolicy::BATCH,
        SlicePolicy::live(10 * S),
        SlicePolicy::live_headless(),
    ] {
        let list = profile_from(&[
            (&["a", "b"], 1, Some(0)),
            (&["a", "c"], 2, Some(u64::MAX)),
            (&["a", "d"], 3, Some(u64::MAX - 1)),
            (&["a", "e"], 4, Some(5 * S)),
        ]);
        let mut engine = Engine::new(EngineOptions {
            policy,
            ..EngineOptions::batch(Selection::all())
        });
        let mut updates = vec![Update::Markers(crate::model::PhaseMarkers {
            start_ns: Some(1),
            stop_ns: Some(u64::MAX),
        })];
        updates.extend(updates_of(&list));
        updates.push(Update::Lost {
            total: 3,
            time_ns: Some(u64::MAX),
        });
        engine.apply(updates);
        engine.reset();
        engine.finish();
        engine.builder.wants = Wants::ALL;
        let snapshot = engine.snapshot();
        // The reset and the window leave the timed samples behind; the two without a time
        // belong to no slice and still count.
        assert_eq!(snapshot.trie.total_weight(), 5);
        engine.set_selection(Selection::all());
        assert_eq!(
            engine.state.stats.bad_times, 4,
            "two samples, the stop marker, the lost"
        );
        let v = engine.verdict();
        assert_eq!(v.find(crate::model::Gap::BadTimes).and_then(|f| f.count), Some(4));
        assert_eq!(v.exit_code(), 3);
        let timeline = engine.state.store.timeline().cloned().expect("a timeline");
        assert!(timeline.duration_ns() <= 6 * S, "{}", timeline.duration_ns());
    }
}

#[test]
fn a_session_exports_at_its_end_unless_its_source_failed_before_handing_anything_over() {
    use crate::model::verdict::{Finding, Gap};
    let dir = tempfile::tempdir().unwrap();
    let request = export::ExportRequest::new(dir.path().join("nothing"));
    let mut empty = live();
    empty.note(Finding::new(Gap::SourceFailed, None, "perf_event_open: EACCES"));
    empty.finish();
    assert!(empty.export_at_end(&request).is_none(), "nothing to write");
    assert!(!dir.path().join("nothing").exists());

    let list = profile_from(&[(&["main", "work"], 3, Some(1))]);
    let mut some = engine_of(&list, SlicePolicy::live(10 * S));
    some.note(Finding::new(Gap::SourceFailed, None, "the ring went away"));
    some.finish();
    let request = export::ExportRequest::new(dir.path().join("some"));
    let set = some
        .export_at_end(&request)
        .expect("what was recorded is written")
        .unwrap();
    assert!(set.layout.work_dir.exists());
}
