//! The syscalls analyzer's hot path: 1,000,000 raw_syscalls enter/exit events (500,000
//! calls: 64 threads each calling one of 8 syscalls after another, latencies 0.5–50 us)
//! fed in timestamp order, then one interval taken. Reports events per second — the rate the analyzer keeps up
//! with, to set against the ring-buffer reading it sits behind.

use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

use perfscope::analyzers::Analyzer;
use perfscope::analyzers::syscalls::{SyscallsAnalyzer, SyscallsConfig};
use perfscope::feeds::host::tracing::ROW_CELL_NS;
use perfscope::trace::event::{EventIndex, EventLayout, FieldKind, FieldLayout, TraceEvent};

/// `cargo test` runs every bench once in a debug build as a smoke test: keep that fast.
const EVENTS: usize = if cfg!(debug_assertions) { 20_000 } else { 1_000_000 };

/// The 6.18 raw_syscalls layouts.
fn layouts() -> Vec<EventLayout> {
    let common = || {
        vec![
            FieldLayout::new("common_type", 0, 2, FieldKind::Unsigned),
            FieldLayout::new("common_flags", 2, 1, FieldKind::Unsigned),
            FieldLayout::new("common_preempt_count", 3, 1, FieldKind::Unsigned),
            FieldLayout::new("common_pid", 4, 4, FieldKind::Signed),
            FieldLayout::new("id", 8, 8, FieldKind::Signed),
        ]
    };
    let mut enter = common();
    enter.push(FieldLayout::new(
        "args",
        16,
        48,
        FieldKind::Array { element_size: 8 },
    ));
    let mut exit = common();
    exit.push(FieldLayout::new("ret", 16, 8, FieldKind::Signed));
    let layout = |name: &str, id, fields| EventLayout {
        system: "raw_syscalls".into(),
        name: name.into(),
        id,
        fields,
        print_fmt: String::new(),
    };
    vec![layout("sys_enter", 21, enter), layout("sys_exit", 20, exit)]
}

struct Stream {
    /// (event index, time, tid, raw)
    events: Vec<(u16, u64, u32, Vec<u8>)>,
}

fn stream() -> Stream {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let ids = [0i64, 1, 3, 5, 16, 202, 232, 262];
    let mut events = Vec::with_capacity(EVENTS);
    // Each thread makes one call after another (its clock), threads interleave.
    let mut clock = [1_000_000u64; 64];
    while events.len() < EVENTS {
        let slot = (next() % 64) as usize;
        let tid = 1000 + slot as u32;
        let id = ids[(next() % ids.len() as u64) as usize];
        let latency = 500 + next() % 50_000;
        let mut enter = vec![0u8; 64];
        enter[4..8].copy_from_slice(&tid.to_le_bytes());
        enter[8..16].copy_from_slice(&id.to_le_bytes());
        let mut exit = vec![0u8; 24];
        exit[4..8].copy_from_slice(&tid.to_le_bytes());
        exit[8..16].copy_from_slice(&id.to_le_bytes());
        exit[16..24].copy_from_slice(&(if next() % 10 == 0 { -11i64 } else { 1 }).to_le_bytes());
        let start = clock[slot];
        events.push((0, start, tid, enter));
        events.push((1, start + latency, tid, exit));
        clock[slot] = start + latency + 100 + next() % 5_000;
    }
    events.sort_by_key(|e| e.1);
    Stream { events }
}

fn bench_syscalls(c: &mut Criterion) {
    let layouts = layouts();
    let stream = stream();
    let mut group = c.benchmark_group("syscalls_analyzer");
    group.throughput(Throughput::Elements(stream.events.len() as u64));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    group.bench_function("feed_1m_enter_exit", |b| {
        b.iter(|| {
            let mut analyzer =
                SyscallsAnalyzer::new(&layouts, SyscallsConfig::default()).expect("raw_syscalls layouts");
            for (index, time_ns, tid, raw) in &stream.events {
                analyzer.feed(&TraceEvent {
                    time_ns: *time_ns,
                    cpu: 0,
                    pid: *tid,
                    tid: *tid,
                    event: EventIndex(*index),
                    raw,
                    callchain: &[],
                    rebuilt: false,
                });
            }
            analyzer.take_rows()
        })
    });
    group.finish();

    // One plain timing for the closing note (criterion's own report has the spread).
    let start = Instant::now();
    let mut analyzer = SyscallsAnalyzer::new(&layouts, SyscallsConfig::default()).expect("layouts");
    for (index, time_ns, tid, raw) in &stream.events {
        analyzer.feed(&TraceEvent {
            time_ns: *time_ns,
            cpu: 0,
            pid: *tid,
            tid: *tid,
            event: EventIndex(*index),
            raw,
            callchain: &[],
            rebuilt: false,
        });
    }
    let rows = analyzer.take_rows();
    let table = analyzer.tabulate(&rows);
    let elapsed = start.elapsed();
    let calls: u64 = table.rows.iter().map(|r| r.stats.calls()).sum();
    eprintln!(
        "syscalls analyzer: {} events ({calls} calls paired) in {:.1} ms = {:.1} M events/s",
        stream.events.len(),
        elapsed.as_secs_f64() * 1e3,
        stream.events.len() as f64 / elapsed.as_secs_f64() / 1e6
    );
}

/// What handing rows over per cell of event time costs a tracing session: the same stream
/// fed to the analyzer, its rows taken whenever an event starts a new cell (16 ms), as the
/// tracing feed does — against feeding alone above.
fn bench_rows_per_cell(c: &mut Criterion) {
    let stream = stream();
    let layouts = layouts();
    let mut group = c.benchmark_group("rows_per_cell");
    group.throughput(Throughput::Elements(stream.events.len() as u64));
    group.sample_size(10);
    group.bench_function("feed_1m_events_take_rows_per_cell", |b| {
        b.iter(|| {
            let mut analyzer =
                SyscallsAnalyzer::new(&layouts, SyscallsConfig::default()).expect("raw_syscalls layouts");
            let mut cell = None;
            let mut taken = 0usize;
            for (index, time_ns, tid, raw) in &stream.events {
                let this = time_ns - time_ns % ROW_CELL_NS;
                if cell.is_some_and(|c| c != this) {
                    taken += usize::from(!analyzer.take_rows().is_empty());
                }
                cell = Some(this);
                analyzer.feed(&TraceEvent {
                    time_ns: *time_ns,
                    cpu: 0,
                    pid: *tid,
                    tid: *tid,
                    event: EventIndex(*index),
                    raw,
                    callchain: &[],
                    rebuilt: false,
                });
            }
            taken
        })
    });
    group.finish();
}

criterion_group!(benches, bench_syscalls, bench_rows_per_cell);
criterion_main!(benches);
