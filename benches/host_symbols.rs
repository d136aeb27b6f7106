//! Host symbolization speed on this bench process's own text and on libc: 100,000
//! addresses spread over each file's executable mapping (almost all distinct), resolved
//!
//! - `cold`: by a fresh symbolizer — /proc/self/maps read, the file's symbols (and its
//!   debug file) loaded, every address symbolized once;
//! - `cached`: again by a warm symbolizer — every lookup a per-address cache hit;
//! - `cached_hot_1k`: 1,000 of them 100 times each (a profile's few hot addresses);
//!
//! plus `load`: a fresh symbolizer's first address in the file (maps + symbol load only).
//! `libc` uses the distro's debug file when installed (found by build-id);
//! `libc_symtab_only` ignores it, measuring the ELF symbol tables alone.

use std::time::Duration;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};

use perfscope::symbols::host::{HostSymbolizer, HostSymbolizerOptions};

/// `cargo test` runs every bench once in a debug build as a smoke test: keep that fast.
const ADDRESSES: u64 = if cfg!(debug_assertions) { 2_000 } else { 100_000 };

fn options() -> HostSymbolizerOptions {
    HostSymbolizerOptions {
        kernel: false,
        ..HostSymbolizerOptions::default()
    }
}

/// No separate debug files: libc's own .symtab/.dynsym only.
fn symtab_only() -> HostSymbolizerOptions {
    HostSymbolizerOptions {
        debug_root: "/nonexistent".into(),
        ..options()
    }
}

/// The executable mapping of the file whose path ends with `suffix`: (start, end).
fn text_mapping(suffix: &str) -> (u64, u64) {
    let maps = std::fs::read_to_string("/proc/self/maps").expect("/proc/self/maps");
    maps.lines()
        .filter(|l| l.split_whitespace().nth(1) == Some("r-xp") && l.ends_with(suffix))
        .find_map(|l| {
            let (start, end) = l.split_whitespace().next()?.split_once('-')?;
            Some((
                u64::from_str_radix(start, 16).ok()?,
                u64::from_str_radix(end, 16).ok()?,
            ))
        })
        .unwrap_or_else(|| panic!("no executable mapping of {suffix}"))
}

/// `ADDRESSES` addresses spread evenly over `[start, end)`.
fn spread(start: u64, end: u64) -> Vec<u64> {
    let stride = ((end - start) / ADDRESSES).max(1);
    (0..ADDRESSES)
        .map(|i| start + (i * stride) % (end - start))
        .collect()
}

fn bench_file(c: &mut Criterion, label: &str, suffix: &str, options: fn() -> HostSymbolizerOptions) {
    let pid = std::process::id();
    let (start, end) = text_mapping(suffix);
    let addresses = spread(start, end);

    let mut warm = HostSymbolizer::new(options()).expect("symbolizer");
    for &a in &addresses {
        warm.resolve_user(pid, a);
    }
    let counters = warm.counters();
    eprintln!(
        "{label}: {} KiB of text, {} addresses, {} named, {} unknown, symbols from {:?}",
        (end - start) / 1024,
        addresses.len(),
        counters.resolved,
        counters.unresolved,
        warm.symbol_sources(pid, start)
    );

    let mut group = c.benchmark_group(format!("host_symbols/{label}"));
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.bench_function("load", |b| {
        b.iter_batched(
            || HostSymbolizer::new(options()).expect("symbolizer"),
            |mut s| {
                s.resolve_user(pid, start);
                s
            },
            BatchSize::PerIteration,
        )
    });
    group.throughput(Throughput::Elements(addresses.len() as u64));
    group.bench_function("cold", |b| {
        b.iter_batched(
            || HostSymbolizer::new(options()).expect("symbolizer"),
            |mut s| {
                for &a in &addresses {
                    std::hint::black_box(s.resolve_user(pid, a));
                }
                s
            },
            BatchSize::PerIteration,
        )
    });
    group.bench_function("cached", |b| {
        b.iter(|| {
            for &a in &addresses {
                std::hint::black_box(warm.resolve_user(pid, a));
            }
        })
    });
    // The usual case: a few hot addresses sampled again and again.
    let hot: Vec<u64> = addresses.iter().step_by(100).copied().collect();
    group.bench_function("cached_hot_1k", |b| {
        b.iter(|| {
            for _ in 0..100 {
                for &a in &hot {
                    std::hint::black_box(warm.resolve_user(pid, a));
                }
            }
        })
    });
    group.finish();
}

fn host_symbols(c: &mut Criterion) {
    let exe = std::env::current_exe().expect("current exe");
    let exe = exe.to_str().expect("utf-8 path").to_string();
    bench_file(c, "own_text", &exe, options);
    bench_file(c, "libc", "/libc.so.6", options);
    bench_file(c, "libc_symtab_only", "/libc.so.6", symtab_only);
}

criterion_group!(benches, host_symbols);
criterion_main!(benches);
