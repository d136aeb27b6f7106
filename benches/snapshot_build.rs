//! What a live refresh and an export cost in the shapes issue 26 names: the snapshot of a
//! syscalls session (a table and a latency series per thread × syscall), the snapshot of
//! a live `top` whose every refresh brings new functions (the frame table grows), and
//! the export of a tracepoint session. Only public, long-standing API is used, so the
//! same file builds against an earlier main for a side-by-side run
//! (scripts/bench-vs-main.sh).

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};

use perfscope::engine::export::ExportRequest;
use perfscope::engine::{Engine, EngineOptions, LiveMode, SlicePolicy};
use perfscope::feeds::memory::updates_of;
use perfscope::feeds::{RowsUpdate, Update};
use perfscope::model::analysis::{
    AnalysisInfo, AnalysisRows, AnalysisSchema, LatencyKey, LatencyRows, SyscallsSchema,
};
use perfscope::model::latency_stats::LatencyStats;
use perfscope::model::{InstanceId, Sample, SampleMeta, Selection};

use support::{Rng, distinct_profile};

const THREADS: u64 = if cfg!(debug_assertions) { 4 } else { 64 };
const SYSCALLS: u64 = if cfg!(debug_assertions) { 10 } else { 300 };

fn live_engine() -> Engine {
    Engine::new(EngineOptions {
        policy: SlicePolicy::live(10_000_000_000),
        selection: Selection::all(),
        mode: LiveMode::Accumulate,
        refresh: Duration::from_secs(1),
        recording: None,
    })
}

/// One interval's rows: every (thread, syscall) cell of `threads` with a few calls.
fn syscall_rows(time_ns: u64, threads: u64, rng: &mut Rng) -> Update {
    let mut rows = LatencyRows::default();
    for thread in 0..threads {
        for syscall in 0..SYSCALLS {
            let mut stats = LatencyStats::default();
            for _ in 0..3 {
                stats.record(500 + rng.next() % 100_000, None);
            }
            rows.rows.insert(
                LatencyKey {
                    instance: 1000 + thread,
                    series: syscall,
                },
                stats,
            );
        }
    }
    Update::Rows(RowsUpdate {
        time_ns: Some(time_ns),
        rows: AnalysisRows::Latency(rows),
        events: 6 * threads * SYSCALLS,
    })
}

fn syscalls_engine(threads: u64, rng: &mut Rng) -> Engine {
    let mut engine = live_engine();
    let info = Arc::new(AnalysisInfo {
        name: "syscalls".into(),
        schema: AnalysisSchema::Syscalls(SyscallsSchema {
            perins: true,
            than_ns: None,
        }),
    });
    engine.apply(vec![Update::Analysis(info)]);
    for i in 0..10 {
        engine.apply(vec![syscall_rows(i * 1_000_000_000, threads, rng)]);
    }
    engine
}

fn snapshot_build(c: &mut Criterion) {
    let mut group = c.benchmark_group("snapshot_build");
    group.sample_size(10);

    // A syscalls session: one interval's rows arrive, the next snapshot is built.
    let mut rng = Rng::new(3);
    let mut engine = syscalls_engine(THREADS, &mut rng);
    let mut on_screen = Arc::new(engine.snapshot());
    let mut time_ns = 10_000_000_000;
    group.bench_function("syscalls_64_threads_300_syscalls", |b| {
        b.iter_custom(|iters| {
            let mut spent = Duration::ZERO;
            for _ in 0..iters {
                time_ns += 1_000_000_000;
                let update = syscall_rows(time_ns, THREADS, &mut rng);
                let t = Instant::now();
                engine.apply(vec![update]);
                on_screen = Arc::new(engine.snapshot());
                spent += t.elapsed();
            }
            spent
        })
    });
    drop(on_screen);

    // A live top whose every refresh brings 200 functions never seen (a busy host
    // loading code): the frame table grows at every snapshot.
    let list = distinct_profile(if cfg!(debug_assertions) { 1_000 } else { 100_000 });
    let mut engine = live_engine();
    engine.apply(updates_of(&list));
    let mut tables = list.tables.clone();
    let mut told = tables.mark();
    let mut on_screen = Arc::new(engine.snapshot());
    let mut fresh = 0u64;
    let mut time_ms = list.samples().len() as u64;
    group.bench_function("live_top_200_new_functions_per_refresh", |b| {
        b.iter_custom(|iters| {
            let mut spent = Duration::ZERO;
            for _ in 0..iters {
                let samples: Vec<Sample> = (0..1000)
                    .map(|i| {
                        time_ms += 1;
                        let stack = if i % 5 == 0 {
                            fresh += 1;
                            let name = format!("module::new_function_{fresh}");
                            tables.intern_named_stack(&["start_kernel", "do_work", name.as_str()])
                        } else {
                            tables.intern_named_stack(&["start_kernel", "do_work", "steady"])
                        };
                        Sample {
                            time_ns: Some(time_ms * 1_000_000),
                            instance: InstanceId(0),
                            weight: 1,
                            stack,
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
                on_screen = Arc::new(engine.snapshot());
                spent += t.elapsed();
            }
            spent
        })
    });
    drop(on_screen);

    // The export of a tracepoint session: the table, its CSV/JSON, every distribution
    // (a file each: 4 threads × 300 syscalls, not 19,200 files per iteration).
    let mut rng = Rng::new(5);
    let engine = syscalls_engine(4, &mut rng);
    let dir = tempfile::tempdir().unwrap();
    let mut n = 0;
    group.bench_function("export_syscalls_session", |b| {
        b.iter(|| {
            n += 1;
            let request = ExportRequest::new(dir.path().join(format!("out{n}")));
            engine.export(&request).unwrap()
        })
    });
    group.finish();
}

criterion_group!(benches, snapshot_build);
criterion_main!(benches);
