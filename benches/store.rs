//! Session recording throughput: samples/s and events/s through the [`Recorder`] into a
//! real SQLite file (channel, writer thread, batched WAL commits, final checkpoint), and
//! whether a source offering 100k rows/s loses any.

use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

use perfscope::model::{Instance, SampleMeta};
use perfscope::store::{Recorder, SessionMeta, StackRef};
use perfscope::trace::event::{EventIndex, EventLayout, FieldKind, FieldLayout, TraceEvent};

const ROWS: u64 = 50_000;

fn recorder(dir: &tempfile::TempDir) -> Recorder {
    Recorder::create(&dir.path().join("bench.db"), &SessionMeta::now("bench", "bench"))
        .expect("create session")
}

fn stacks(r: &mut Recorder) -> Vec<StackRef> {
    (0..1000)
        .map(|i| {
            let names = [
                "main".to_string(),
                format!("worker_{}", i % 17),
                format!("compute_{}", i % 97),
                format!("leaf_{i}"),
            ];
            r.named_stack(&names)
        })
        .collect()
}

fn layout() -> EventLayout {
    EventLayout {
        system: "raw_syscalls".into(),
        name: "sys_enter".into(),
        id: 21,
        fields: vec![FieldLayout {
            name: "id".into(),
            declaration: "long id".into(),
            offset: 8,
            size: 8,
            kind: FieldKind::Signed,
        }],
        print_fmt: String::new(),
    }
}

/// Offer `rate` samples/s for `seconds` and return (offered, dropped).
fn paced(rate: u64, seconds: f64) -> (u64, u64) {
    let dir = tempfile::tempdir().unwrap();
    let mut r = recorder(&dir);
    let cpu = r.instance(&Instance::cpu(0));
    let stacks = stacks(&mut r);
    let start = Instant::now();
    let total = (rate as f64 * seconds) as u64;
    for n in 0..total {
        // Bursts of 1000, as a ring reader drains them.
        if n % 1000 == 0 {
            let due = Duration::from_secs_f64(n as f64 / rate as f64);
            if let Some(wait) = due.checked_sub(start.elapsed()) {
                std::thread::sleep(wait);
            }
        }
        r.sample(
            Some(n),
            cpu,
            1,
            stacks[(n % 1000) as usize],
            &SampleMeta::default(),
        );
    }
    let s = r.finish().unwrap();
    (total, s.rows_dropped)
}

fn bench(c: &mut Criterion) {
    let (offered, dropped) = paced(100_000, 2.0);
    eprintln!("store: offered {offered} samples at 100k/s, dropped {dropped}");

    let mut g = c.benchmark_group("store_record");
    g.sample_size(10);
    g.throughput(Throughput::Elements(ROWS));
    g.bench_function("samples", |b| {
        b.iter_custom(|iters| {
            let mut elapsed = Duration::ZERO;
            for _ in 0..iters {
                let dir = tempfile::tempdir().unwrap();
                let start = Instant::now();
                let mut r = recorder(&dir);
                let cpu = r.instance(&Instance::cpu(0));
                let stacks = stacks(&mut r);
                for n in 0..ROWS {
                    r.sample(
                        Some(n),
                        cpu,
                        1,
                        stacks[(n % 1000) as usize],
                        &SampleMeta::default(),
                    );
                }
                let s = r.finish().unwrap();
                elapsed += start.elapsed();
                assert_eq!(
                    s.rows_dropped, 0,
                    "the bench offers faster than the writer writes"
                );
            }
            elapsed
        })
    });
    g.bench_function("events", |b| {
        let raw = [7u8; 64];
        b.iter_custom(|iters| {
            let mut elapsed = Duration::ZERO;
            for _ in 0..iters {
                let dir = tempfile::tempdir().unwrap();
                let start = Instant::now();
                let mut r = recorder(&dir);
                r.event_type(EventIndex(0), &layout(), None, None);
                for n in 0..ROWS {
                    r.event(&TraceEvent {
                        time_ns: n,
                        cpu: (n % 4) as u32,
                        pid: 100,
                        tid: 100,
                        event: EventIndex(0),
                        raw: &raw,
                        callchain: &[],
                        rebuilt: false,
                    })
                    .unwrap();
                }
                let s = r.finish().unwrap();
                elapsed += start.elapsed();
                assert_eq!(s.rows_dropped, 0);
            }
            elapsed
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
