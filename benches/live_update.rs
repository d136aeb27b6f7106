//! A live update on a huge profile: 1,000,000 distinct stacks are already in the engine, a
//! batch of 10,000 new samples arrives (half on known stacks, half new) and the engine
//! applies it and builds the next snapshot — what each refresh of a live session costs.
//! The previous snapshot stays alive during the build, as it does on screen.

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};

use perfscope::engine::{Engine, EngineOptions, LiveMode, SlicePolicy};
use perfscope::feeds::Update;
use perfscope::feeds::memory::updates_of;
use perfscope::model::sample_list::SampleList;
use perfscope::model::{Instance, InstanceId, ProfileTables, Sample, SampleMeta, Selection, StackId};

use support::{Rng, distinct_profile, function_names, random_stack};

/// `cargo test` runs every bench once in a debug build as a smoke test: keep that fast.
const BASE_SAMPLES: usize = if cfg!(debug_assertions) { 10_000 } else { 1_000_000 };
const BATCH: usize = 10_000;

/// A live engine holding `list`.
fn live_engine(list: &SampleList) -> Engine {
    let mut engine = Engine::new(EngineOptions {
        policy: SlicePolicy::live(10_000_000_000),
        selection: Selection::all(),
        mode: LiveMode::Accumulate,
        refresh: Duration::from_secs(1),
        recording: None,
    });
    engine.apply(updates_of(list));
    engine
}

/// Measure one refresh after a batch of `BATCH` samples whose stacks `next_stack` picks
/// (interning new ones into the feed-side `tables`).
fn bench_refresh(
    c: &mut Criterion,
    name: &str,
    list: SampleList,
    mut next_stack: impl FnMut(&mut ProfileTables, usize) -> StackId,
) {
    let mut engine = live_engine(&list);
    let mut tables = list.tables.clone();
    let mut told = tables.mark();
    let mut time_ms = list.samples().len() as u64;
    drop(list);
    // Both buffers of the double-buffered aggregate catch up once (a full build each);
    // the bench measures the steady state after that.
    let _ = engine.snapshot();
    let mut on_screen = Arc::new(engine.snapshot());
    let first = &on_screen;
    eprintln!(
        "{name}: {} samples, {} distinct stacks, {} trie nodes, {} slices",
        engine.state.stats.samples,
        engine.state.tables.stacks.len(),
        first.trie.len(),
        engine.state.store.slices().len(),
    );
    let mut group = c.benchmark_group("live_update");
    group.sample_size(10);
    // Twice: the whole refresh (apply the batch, build the snapshot), and the build alone
    // (what the previous design's bench timed: its samples were pushed untimed).
    for (label, time_apply) in [(name.to_string(), true), (format!("{name}/snapshot_only"), false)] {
        group.bench_function(label, |b| {
            b.iter_custom(|iters| {
                let mut spent = Duration::ZERO;
                for _ in 0..iters {
                    // Arrival of the batch (the feed's work, not timed).
                    let samples: Vec<Sample> = (0..BATCH)
                        .map(|i| {
                            time_ms += 1;
                            Sample {
                                time_ns: Some(time_ms * 1_000_000),
                                instance: InstanceId(0),
                                weight: 1,
                                stack: next_stack(&mut tables, i),
                                meta: SampleMeta::default(),
                            }
                        })
                        .collect();
                    let updates = vec![
                        Update::Tables(tables.take_delta(&mut told)),
                        Update::Samples(samples),
                    ];
                    let t = Instant::now();
                    engine.apply(updates);
                    let applied = t.elapsed();
                    let t = Instant::now();
                    let snapshot = engine.snapshot();
                    spent += t.elapsed() + if time_apply { applied } else { Duration::ZERO };
                    // The UI takes the new snapshot and drops the one it showed.
                    on_screen = Arc::new(snapshot);
                }
                spent
            })
        });
    }
    group.finish();
    eprintln!(
        "{name}: engine heap after the run: {:.1} MiB in slices ({} entries), {:.1} MiB in tables",
        engine.state.store.heap_bytes() as f64 / (1 << 20) as f64,
        engine.state.store.entries(),
        engine.state.tables.heap_bytes() as f64 / (1 << 20) as f64,
    );
}

fn live_update(c: &mut Criterion) {
    let names = function_names(4096);
    // Worst case: every other new sample is a stack never seen before.
    let mut rng = Rng::new(7);
    let list = distinct_profile(BASE_SAMPLES);
    let known = list.tables.stacks.len() as u64;
    bench_refresh(c, "accumulate_10k_batch_1M_distinct", list, |tables, i| {
        if i % 2 == 0 {
            StackId((rng.next() % known) as u32)
        } else {
            random_stack(tables, &names, &mut rng)
        }
    });
    // A kernel's shape: a million samples over 500 distinct stacks.
    let mut rng = Rng::new(11);
    let mut list = SampleList::default();
    let instance = list.instance(Instance::cpu(0));
    let pool: Vec<StackId> = (0..500)
        .map(|_| random_stack(&mut list.tables, &names, &mut rng))
        .collect();
    for i in 0..BASE_SAMPLES {
        support::push(&mut list, pool[(rng.next() % 500) as usize], i as u64, instance);
    }
    bench_refresh(c, "accumulate_10k_batch_500_stacks", list, move |_, _| {
        pool[(rng.next() % 500) as usize]
    });
}

criterion_group!(benches, live_update);
criterion_main!(benches);
