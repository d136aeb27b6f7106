//! A live update on a huge profile: 1,000,000 distinct stacks are already aggregated, a
//! batch of 10,000 new samples arrives (half on known stacks, half new) and the model
//! thread builds the next snapshot — what each refresh of a live session costs. The
//! previous snapshot stays alive during the build, as it does on screen.

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};

use perfscope::live::LiveMode;
use perfscope::live::build::SnapshotBuilder;
use perfscope::live::state::ModelState;
use perfscope::model::{Instance, InstanceId, Profile, Selection, StackId};

use support::{Rng, distinct_profile, function_names, push, random_stack};

/// `cargo test` runs every bench once in a debug build as a smoke test: keep that fast.
const BASE_SAMPLES: usize = if cfg!(debug_assertions) { 10_000 } else { 1_000_000 };
const BATCH: usize = 10_000;

/// Measure one refresh after a batch of `BATCH` samples whose stacks `next_stack` picks.
fn bench_refresh(
    c: &mut Criterion,
    name: &str,
    mut state: ModelState,
    mut next_stack: impl FnMut(&mut ModelState, usize) -> StackId,
) {
    let mut builder = SnapshotBuilder::new(Selection::all(), LiveMode::Accumulate);
    // Both buffers of the double-buffered aggregate catch up with the million samples
    // once (a full build each); the bench measures the steady state after that.
    let _ = builder.build(&state);
    let first = Arc::new(builder.build(&state));
    eprintln!(
        "{name}: {} samples, {} distinct stacks, {} trie nodes",
        state.profile.samples().len(),
        state.profile.stacks.len(),
        first.trie.len()
    );
    let mut group = c.benchmark_group("live_update");
    group.sample_size(10);
    group.bench_function(name, |b| {
        let mut on_screen = first.clone();
        b.iter_custom(|iters| {
            let mut spent = Duration::ZERO;
            for _ in 0..iters {
                // Arrival of the batch (the source's work, not timed).
                let n = state.profile.samples().len() as u64;
                for i in 0..BATCH {
                    let stack = next_stack(&mut state, i);
                    push(&mut state.profile, stack, n + i as u64, InstanceId(0));
                }
                let t = Instant::now();
                let snapshot = builder.build(&state);
                spent += t.elapsed();
                // The UI takes the new snapshot and drops the one it showed.
                on_screen = Arc::new(snapshot);
            }
            spent
        })
    });
    group.finish();
}

fn live_update(c: &mut Criterion) {
    let names = function_names(4096);
    // Worst case: every other new sample is a stack never seen before.
    let mut rng = Rng::new(7);
    let state = ModelState {
        profile: distinct_profile(BASE_SAMPLES),
        ..ModelState::default()
    };
    bench_refresh(c, "accumulate_10k_batch_1M_distinct", state, |st, i| {
        let n = st.profile.samples().len() as u64;
        if i % 2 == 0 {
            st.profile.samples()[(rng.next() % n) as usize].stack
        } else {
            random_stack(&mut st.profile, &names, &mut rng)
        }
    });
    // A kernel's shape: a million samples over 500 distinct stacks.
    let mut rng = Rng::new(11);
    let mut profile = Profile::default();
    let instance = profile.instance(Instance::cpu(0));
    let pool: Vec<StackId> = (0..500)
        .map(|_| random_stack(&mut profile, &names, &mut rng))
        .collect();
    for i in 0..BASE_SAMPLES {
        push(
            &mut profile,
            pool[(rng.next() % 500) as usize],
            i as u64,
            instance,
        );
    }
    let state = ModelState {
        profile,
        ..ModelState::default()
    };
    bench_refresh(c, "accumulate_10k_batch_500_stacks", state, move |_, _| {
        pool[(rng.next() % 500) as usize]
    });
}

criterion_group!(benches, live_update);
criterion_main!(benches);
