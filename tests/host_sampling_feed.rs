//! Host samples cross from the resolver thread to the engine as ids: a real perf_event
//! sampling session (as root) of a CPU-bound child, its updates collected. Every sample
//! names a stack the tables handed over before it, and names travel once — as new table
//! entries — not per frame per sample. The same updates through the engine find the
//! child's hot function under its caller.

mod common;

use std::time::{Duration, Instant};

use common::host::build_fixture;
use perfscope::engine::{Engine, EngineOptions};
use perfscope::feeds::host::options::{HostRunOptions, HostTarget, RingOptions, SamplingOptions};
use perfscope::feeds::host::sampling_feed::HostSampleFeed;
use perfscope::feeds::{Feed, FeedStatus, Update};
use perfscope::model::Selection;
use perfscope::symbols::host::RootFrame;

#[test]
fn host_samples_reach_the_engine_as_ids_and_names_travel_once() {
    let dir = tempfile::tempdir().unwrap();
    let hot = build_fixture(dir.path(), "hot", &[]);
    let run = HostRunOptions {
        target: HostTarget {
            workload: vec![hot.display().to_string(), "2".into()],
            ..HostTarget::default()
        },
        ring: RingOptions::default(),
        record: None,
        duration: Some(Duration::from_secs(10)),
        out: dir.path().join("out"),
        exit_after: None,
    };
    let sampling = SamplingOptions {
        freq_hz: 997,
        callchain: true,
        call_graph: Default::default(),
        user_only: false,
        kernel_only: false,
        exclude_self: false,
        inline_frames: false,
        root: RootFrame::Comm,
        sample_lines: false,
    };
    let mut feed = HostSampleFeed::start(&run, &sampling).expect("sampling (run as root)");
    let mut updates = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match feed.poll(&mut updates).unwrap() {
            FeedStatus::Finished => break,
            FeedStatus::Idle => std::thread::sleep(Duration::from_millis(20)),
            FeedStatus::Progress => {}
        }
        assert!(Instant::now() < deadline, "the session did not end");
    }

    let (mut stacks, mut frames_named, mut samples, mut frames_sampled) = (0usize, 0usize, 0u64, 0u64);
    for update in &updates {
        match update {
            Update::Tables(delta) => {
                assert_eq!(delta.from_stacks(), stacks, "table deltas come in order");
                stacks += delta.stacks.len();
                frames_named += delta.frames.len();
            }
            Update::Samples(batch) => {
                for s in batch {
                    assert!(
                        s.stack.index() < stacks,
                        "a sample names stack {} before its table entry",
                        s.stack.0
                    );
                    samples += s.weight;
                    frames_sampled += u64::from(s.meta.raw_depth);
                }
            }
            _ => {}
        }
    }
    assert!(samples > 500, "{samples} samples of a 2 s busy child");
    assert!(
        (frames_named as u64) * 20 < frames_sampled,
        "{frames_named} names handed over for {frames_sampled} sampled frames: names travel once"
    );

    let mut engine = Engine::new(EngineOptions::batch(Selection::all()));
    engine.apply(updates);
    engine.finish();
    let snapshot = engine.snapshot();
    let top = &snapshot.hotspots.rows[0];
    assert_eq!(snapshot.frames.name(top.frame), "hot_leaf");
    assert_eq!(snapshot.stats.samples, samples);
}
