//! The engine's memory bound: 10,000,000 samples over one hour of simulated time (2,000
//! distinct stacks over 4 CPUs, ~2.8 kHz) go through the engine of a live session in
//! batches of 10,000, with a snapshot every 10 s of simulated time as the TUI would ask
//! for. A counting allocator reports the peak heap (and what the engine holds at the end):
//! memory grows with distinct stacks × kept slices, not with samples — keeping every
//! sample would take 10 M × 32 bytes = 305 MiB for the samples alone.

mod support;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

use perfscope::engine::{Engine, EngineOptions, LiveMode, SlicePolicy};
use perfscope::feeds::Update;
use perfscope::model::{Instance, ProfileTables, Sample, SampleMeta, Selection, StackId};

use support::{Rng, function_names, random_stack};

/// Counts the bytes allocated now and at most.
struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(bytes: usize) {
    let now = CURRENT.fetch_add(bytes, Ordering::Relaxed) + bytes;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: every call is forwarded to the system allocator unchanged; only counters move.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as is.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded as is.
        unsafe { System.dealloc(ptr, layout) };
        CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded as is.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
            grew(new_size);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// `cargo test` runs every bench once in a debug build as a smoke test: keep that fast.
const SAMPLES: usize = if cfg!(debug_assertions) {
    200_000
} else {
    10_000_000
};
const SPAN_NS: u64 = 3_600_000_000_000;
const STACKS: usize = 2_000;
const BATCH: usize = 10_000;
const SNAPSHOT_EVERY_NS: u64 = 10_000_000_000;

fn mib(bytes: usize) -> f64 {
    bytes as f64 / (1 << 20) as f64
}

/// What one run measured.
struct Run {
    elapsed: Duration,
    peak_bytes: usize,
    baseline_bytes: usize,
    end_bytes: usize,
    slices: usize,
    entries: usize,
    total_weight: u64,
}

/// Feed the hour through a live engine.
fn run() -> Run {
    let names = function_names(4096);
    let mut rng = Rng::new(0x9e37_79b9_7f4a_7c15);
    let mut tables = ProfileTables::default();
    let cpus: Vec<_> = (0..4).map(|c| tables.instance(Instance::cpu(c))).collect();
    let pool: Vec<StackId> = (0..STACKS)
        .map(|_| random_stack(&mut tables, &names, &mut rng))
        .collect();
    let mut engine = Engine::new(EngineOptions {
        policy: SlicePolicy::live(10_000_000_000),
        selection: Selection::all(),
        mode: LiveMode::Accumulate,
        refresh: Duration::from_secs(1),
        recording: None,
    });
    let mut told = Default::default();
    engine.apply(vec![Update::Tables(tables.take_delta(&mut told))]);
    // The tables are loaded: what grows from here is the engine's own.
    let baseline_bytes = CURRENT.load(Ordering::Relaxed);
    PEAK.store(baseline_bytes, Ordering::Relaxed);
    let step = SPAN_NS / SAMPLES as u64;
    let started = Instant::now();
    let mut next_snapshot = SNAPSHOT_EVERY_NS;
    let mut on_screen = None;
    let mut i = 0usize;
    while i < SAMPLES {
        let batch: Vec<Sample> = (i..(i + BATCH).min(SAMPLES))
            .map(|n| Sample {
                time_ns: Some(n as u64 * step),
                instance: cpus[n % cpus.len()],
                weight: 1,
                // A skewed pick: a few stacks are hot, as in a real profile.
                stack: pool[{
                    let r = (rng.next() % STACKS as u64) as usize;
                    r * r / STACKS
                }],
                meta: SampleMeta::default(),
            })
            .collect();
        i += batch.len();
        engine.apply(vec![Update::Samples(batch)]);
        if i as u64 * step >= next_snapshot {
            next_snapshot += SNAPSHOT_EVERY_NS;
            // The UI holds the previous snapshot while the next is built.
            on_screen = Some(engine.snapshot());
        }
    }
    let last = engine.snapshot();
    drop(on_screen);
    Run {
        elapsed: started.elapsed(),
        peak_bytes: PEAK.load(Ordering::Relaxed),
        baseline_bytes,
        end_bytes: CURRENT.load(Ordering::Relaxed),
        slices: engine.state.store.slices().len(),
        entries: engine.state.store.entries(),
        total_weight: last.trie.total_weight(),
    }
}

fn bench(c: &mut Criterion) {
    let first = run();
    assert_eq!(first.total_weight, SAMPLES as u64, "every sample counted");
    eprintln!(
        "engine memory: {SAMPLES} samples over {} s, {STACKS} stacks: peak heap {:.1} MiB above the \
         {:.1} MiB of loaded tables (end {:.1} MiB); {} slices, {} entries; {:.2} s, {:.1} M samples/s",
        SPAN_NS / 1_000_000_000,
        mib(first.peak_bytes - first.baseline_bytes),
        mib(first.baseline_bytes),
        mib(first.end_bytes.saturating_sub(first.baseline_bytes)),
        first.slices,
        first.entries,
        first.elapsed.as_secs_f64(),
        SAMPLES as f64 / first.elapsed.as_secs_f64() / 1e6
    );
    let mut group = c.benchmark_group("engine_memory");
    group.sample_size(10);
    group.throughput(Throughput::Elements(SAMPLES as u64));
    group.bench_function("10M_samples_1h_live_engine", |b| b.iter(run));
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
