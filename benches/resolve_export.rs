//! Resolve and export 1,000,000 samples: decode a qperf.bin, symbolize every address
//! against the test kernel's ELF (assets/), build the model and write the full artifact
//! set. Two inputs:
//!
//! - `recorded`: the real recording in assets/ repeated to a million samples (a real
//!   kernel's few hundred distinct stacks);
//! - `distinct`: random stacks of depth 1–10 over every function, almost every sample its
//!   own stack (890 000 distinct stacks, 2.7 million trie nodes) — the worst case.
//!
//! The stages alone are measured too, so a regression points at its stage.
//!
//! Peak memory is printed after the run (VmHWM of the bench process).

use std::path::{Path, PathBuf};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use object::{Object, ObjectSymbol, SymbolKind};

use perfscope::batch::headless::{self, Headless};
use perfscope::batch::report::{self, ReportInput, ReportOptions};
use perfscope::feeds::file::{FileFeed, Input};
use perfscope::feeds::symbol_options::{OpenOptions, SymbolSource};
use perfscope::model::{PhaseMarkers, Selection};
use perfscope::sources::qperf_file::{Callchain, QperfReader, QperfRecord, encode_v3, read_file};

/// `cargo test` runs every bench once in a debug build as a smoke test: keep that fast.
const SAMPLES: u64 = if cfg!(debug_assertions) { 20_000 } else { 1_000_000 };

fn elf_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/tinyk-riscv64.elf")
}

/// Functions of the ELF as (start, size).
fn functions(elf: &Path) -> Vec<(u64, u64)> {
    let data = std::fs::read(elf).expect("assets/tinyk-riscv64.elf");
    let file = object::File::parse(&*data).expect("ELF");
    let mut f: Vec<(u64, u64)> = file
        .symbols()
        .filter(|s| s.kind() == SymbolKind::Text && s.size() >= 8)
        .map(|s| (s.address(), s.size()))
        .collect();
    f.sort_unstable();
    f.dedup();
    f
}

/// A deterministic qperf.bin of `n` fp samples over the ELF's functions: random stacks of
/// depth 1–10, random addresses inside each function, 1 ms apart on two vCPUs.
fn write_samples(path: &Path, n: u64) {
    let funcs = functions(&elf_path());
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut out = Vec::with_capacity(n as usize * 60);
    for i in 0..n {
        let depth = 1 + (next() % 10) as usize;
        let trace: Vec<u64> = (0..depth)
            .map(|_| {
                let (start, size) = funcs[(next() % funcs.len() as u64) as usize];
                start + 4 + (next() % (size - 4)) / 2 * 2
            })
            .collect();
        let record = QperfRecord {
            elapsed_ns: Some(i * 1_000_000),
            pc: trace[0],
            sp: Some(0xffffffc080210000),
            fp: Some(0xffffffc080210040),
            cpu: Some((i % 2) as u32),
            callchain: Some(Callchain::Fp),
            trace,
        };
        encode_v3(&record, &mut out);
    }
    std::fs::write(path, out).expect("write qperf.bin");
}

/// The recorded assets repeated until `n` samples, each copy later in time.
fn write_recorded(path: &Path, n: u64) {
    let asset = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/tinyk-riscv64.qperf.bin");
    let (records, _) = read_file(&asset).expect("assets/tinyk-riscv64.qperf.bin");
    let span = records.last().and_then(|r| r.elapsed_ns).unwrap_or(0) + 1;
    let mut out = Vec::new();
    for i in 0..n {
        let mut r = records[(i % records.len() as u64) as usize].clone();
        let copy = i / records.len() as u64;
        r.elapsed_ns = r.elapsed_ns.map(|t| t + copy * span);
        encode_v3(&r, &mut out);
    }
    std::fs::write(path, out).expect("write qperf.bin");
}

fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tempdir");
    for (name, write) in [
        ("recorded", write_recorded as fn(&Path, u64)),
        ("distinct", write_samples),
    ] {
        let bin = dir.path().join(format!("{name}.bin"));
        write(&bin, SAMPLES);
        let input = Input::Qperf {
            path: bin.clone(),
            symbols: SymbolSource::Elf(elf_path()),
        };
        let mut group = c.benchmark_group(format!("1M samples, {name}"));
        group.sample_size(10);
        group.throughput(Throughput::Elements(SAMPLES));
        group.bench_function("decode", |b| {
            b.iter(|| {
                let mut reader = QperfReader::open(&bin).expect("open");
                let mut n = 0u64;
                while let Some(_r) = reader.next_record().expect("read") {
                    n += 1;
                }
                assert_eq!(n, SAMPLES);
            })
        });
        group.bench_function("decode+resolve+model", |b| {
            b.iter(|| {
                let feed = FileFeed::new(
                    input.clone(),
                    OpenOptions::default(),
                    None,
                    PhaseMarkers::default(),
                );
                let outcome = headless::run(
                    Box::new(feed),
                    Headless {
                        selection: Selection::all(),
                        export: None,
                        recording: None,
                        progress: None,
                    },
                    &mut [],
                )
                .expect("run");
                assert_eq!(outcome.engine.state.stats.samples, SAMPLES);
            })
        });
        group.bench_function("decode+resolve+model+export all artifacts", |b| {
            b.iter(|| {
                let out = dir.path().join("out");
                let mut o = ReportOptions::new(ReportInput::File(input.clone()), out);
                let span = 1e-9 * SAMPLES as f64 * 1_000_000.0;
                o.start_sec = Some(span * 0.1);
                o.stop_sec = Some(span * 0.9);
                o.focus = Some("hash".into());
                let set = report::run(&o).expect("report");
                assert!(set.total_samples > 0);
            })
        });
        group.finish();
    }
    if let Some(kib) = peak_rss_kib() {
        eprintln!("peak RSS of the bench process: {:.1} MiB", kib as f64 / 1024.0);
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
