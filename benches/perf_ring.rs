//! Decoding records from a perf ring: a 1 MiB in-memory ring image (the layout the kernel
//! writes, wrapping at the end) full of tracepoint samples (raw_syscalls-sized raw data)
//! and CPU samples with 12-frame callchains, walked with `read_records` and decoded with
//! `record::decode` — what the reader thread does per wake-up. Reports records/s.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use perf_event_open_sys::bindings as b;

use perfscope::sources::perf_event::record::{self, CONTEXT_KERNEL, CONTEXT_USER, Record, SampleFormat};
use perfscope::sources::perf_event::ring::read_records;

const RING_BYTES: usize = 1 << 20;

fn tracepoint_format() -> SampleFormat {
    let bits = b::PERF_SAMPLE_IDENTIFIER
        | b::PERF_SAMPLE_TID
        | b::PERF_SAMPLE_TIME
        | b::PERF_SAMPLE_CPU
        | b::PERF_SAMPLE_PERIOD
        | b::PERF_SAMPLE_RAW
        | b::PERF_SAMPLE_CALLCHAIN;
    SampleFormat {
        sample_type: u64::from(bits),
        read_format: 0,
        sample_id_all: true,
        regs_user: 0,
    }
}

/// One sample record: identifier, pid/tid, time, cpu, period, callchain, raw.
fn sample(time: u64, frames: usize, raw_len: usize) -> Vec<u8> {
    let mut words: Vec<u64> = vec![7, 1234 | (1234 << 32), time, 1, 1];
    if frames == 0 {
        words.push(0);
    } else {
        words.push(frames as u64 + 2);
        words.push(CONTEXT_KERNEL);
        words.extend((0..frames / 2).map(|i| 0xffff_ffff_8100_0000 + i as u64 * 64));
        words.push(CONTEXT_USER);
        words.extend((0..frames - frames / 2).map(|i| 0x5555_0000_0000 + i as u64 * 64));
    }
    let mut bytes = vec![0u8; 8];
    bytes[..4].copy_from_slice(&b::PERF_RECORD_SAMPLE.to_le_bytes());
    for w in words {
        bytes.extend_from_slice(&w.to_le_bytes());
    }
    bytes.extend_from_slice(&(raw_len as u32).to_le_bytes());
    bytes.extend((0..raw_len).map(|i| i as u8));
    while !bytes.len().is_multiple_of(8) {
        bytes.push(0);
    }
    let size = bytes.len() as u16;
    bytes[6..8].copy_from_slice(&size.to_le_bytes());
    bytes
}

/// A full ring image starting 40 bytes before its end (so a record wraps), alternating
/// tracepoint samples and stack samples. Returns (data words, tail, head, records).
fn ring_image() -> (Vec<u64>, u64, u64, u64) {
    let mut words = vec![0u64; RING_BYTES / 8];
    // SAFETY: the u64 buffer viewed as bytes.
    let data = unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u8>(), RING_BYTES) };
    let tail = (RING_BYTES - 40) as u64;
    let (mut head, mut records) = (tail, 0u64);
    loop {
        let record = if records % 2 == 0 {
            sample(records, 0, 68)
        } else {
            sample(records, 12, 4)
        };
        if head - tail + record.len() as u64 > RING_BYTES as u64 {
            break;
        }
        for &byte in &record {
            data[head as usize % RING_BYTES] = byte;
            head += 1;
        }
        records += 1;
    }
    (words, tail, head, records)
}

fn bench_decode(c: &mut Criterion) {
    let (words, tail, head, records) = ring_image();
    // SAFETY: the u64 buffer viewed as bytes.
    let data = unsafe { std::slice::from_raw_parts(words.as_ptr().cast::<u8>(), RING_BYTES) };
    let format = tracepoint_format();
    let mut scratch = Vec::new();
    let mut group = c.benchmark_group("perf_ring");
    group.throughput(Throughput::Elements(records));
    group.bench_function("walk_and_decode_1MiB_ring", |bench| {
        bench.iter(|| {
            let (mut frames, mut raw_bytes) = (0usize, 0usize);
            let outcome = read_records(data, tail, head, &mut scratch, |bytes| {
                if let Ok(Record::Sample(s)) = record::decode(bytes, &format) {
                    frames += s.callchain.user_ips().count() + s.callchain.kernel_ips().count();
                    raw_bytes += s.raw.len();
                }
            });
            assert_eq!(outcome.records, records);
            black_box((frames, raw_bytes))
        })
    });
    group.bench_function("walk_only_1MiB_ring", |bench| {
        bench.iter(|| {
            black_box(read_records(data, tail, head, &mut scratch, |bytes| {
                black_box(bytes.len());
            }))
        })
    });
    group.finish();
    eprintln!("perf_ring: {records} records in a {RING_BYTES}-byte ring image");
}

criterion_group!(benches, bench_decode);
criterion_main!(benches);
