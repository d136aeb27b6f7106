//! The plugin and `perfscope qemu` checks every architecture's test kernel must pass, each
//! taking the architecture: one recorded `bench` session per (mode, callchain), the leaf
//! ranking, the frame-pointer paths to mix_leaf, the bounded recursion and the end-to-end
//! run with its artifacts. tests/plugin_qemu_<arch>.rs add what is particular to an arch.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::guest::{GuestArch, TestGuest, build_test_guest_for, symbol_range};
use super::plugin::{BenchRun, build_plugin, monotonic_ns, output_ok, perfscope_qemu, run_bench_on};
use super::profile::{
    KernelSymbols, MARKER_LATENCY_SAMPLES, folded_leaves, folded_lines, in_window, read_json,
    samples_before_the_start_marker, samples_outside,
};
use super::{OnceCache, once_per};
use perfscope::sources::qemu::plugin_args::{CallchainMode, PluginOptions, SampleMode, kernel_text_of};
use perfscope::sources::qperf_file::{
    Callchain, FormatVersion, PluginSummary, QperfRecord, ReadEnd, read_file, sidecar_path,
};

pub const RUN_TIMEOUT: Duration = Duration::from_secs(90);
pub const FULL_PATH: &str = "kmain;run_bench;hash_workload;hash_block;mix_leaf";
/// ≈ 0.2–0.4 s of guest work with the plugin: a few hundred samples at 1 kHz.
pub const BENCH_N: u32 = 200;

/// `arch`'s test kernel symbols, opened once per test process.
pub fn symbols(arch: GuestArch) -> &'static KernelSymbols {
    static CACHE: OnceCache<GuestArch, KernelSymbols> = Mutex::new(Vec::new());
    once_per(&CACHE, arch).get_or_init(|| KernelSymbols::open(&build_test_guest_for(arch).elf))
}

/// `bench BENCH_N` on `arch`'s kernel in `mode` with `callchain`, recorded once per test
/// process and shared by the tests that read it.
pub fn recording(arch: GuestArch, mode: SampleMode, callchain: CallchainMode) -> &'static Recording {
    type Key = (GuestArch, SampleMode, CallchainMode);
    static CACHE: OnceCache<Key, Recording> = Mutex::new(Vec::new());
    once_per(&CACHE, (arch, mode, callchain)).get_or_init(|| record(arch, BENCH_N, mode, callchain))
}

/// One QEMU run of `bench N` and what it recorded.
pub struct Recording {
    _dir: tempfile::TempDir,
    pub out: PathBuf,
    pub run: BenchRun,
    pub epoch_ns: u64,
    pub records: Vec<QperfRecord>,
    pub wall: Duration,
}

impl Recording {
    pub fn in_bench(&self) -> Vec<&QperfRecord> {
        in_window(
            &self.records,
            self.epoch_ns,
            self.run.bench_start_ns,
            self.run.bench_end_ns,
        )
    }

    pub fn summary(&self) -> PluginSummary {
        PluginSummary::read(&sidecar_path(&self.out))
            .expect("read the sidecar")
            .expect("the atexit callback ran (clean QEMU exit)")
    }
}

/// The plugin argument the runner (`perfscope qemu`) builds for this kernel, split into
/// the library and its arguments.
pub fn runner_plugin_args(
    guest: &TestGuest,
    out: &Path,
    mode: SampleMode,
    callchain: CallchainMode,
    epoch_ns: u64,
) -> (PathBuf, String) {
    let arg = PluginOptions {
        library: build_plugin(),
        freq_hz: 1000,
        out: out.to_path_buf(),
        max_depth: 128,
        queue_size: 4096,
        mode,
        callchain,
        kernel_text: kernel_text_of(&guest.elf).expect("read kernel.elf"),
        filter_kernel: true,
        stream: None,
        epoch_ns,
        counters: false,
        cfi: (callchain == CallchainMode::Dwarf).then(|| guest.elf.clone()),
    }
    .to_arg()
    .expect("plugin argument");
    let (library, args) = arg.split_once(',').expect("library,args");
    (PathBuf::from(library), args.to_string())
}

/// `bench n` on `arch`'s kernel with the runner's plugin arguments for `mode` and `callchain`.
pub fn record(arch: GuestArch, n: u32, mode: SampleMode, callchain: CallchainMode) -> Recording {
    let g = build_test_guest_for(arch);
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("qperf.bin");
    let epoch_ns = monotonic_ns();
    let (plugin, args) = runner_plugin_args(&g, &out, mode, callchain, epoch_ns);
    let started = Instant::now();
    let run = run_bench_on(&g, &plugin, &args, n, RUN_TIMEOUT);
    let wall = started.elapsed();
    assert!(
        run.exit.status.success(),
        "QEMU failed: {:?}\n{}\n{}",
        run.exit.status,
        run.exit.console,
        run.exit.stderr
    );
    let loaded = format!("perfscope-qemu-plugin: loaded (target={}", arch.name());
    assert!(run.exit.stderr.contains(&loaded), "{}", run.exit.stderr);
    let (records, report) = read_file(&out).expect("read qperf.bin");
    assert_eq!(report.version, Some(FormatVersion::V3));
    assert_eq!(report.end, ReadEnd::CleanEof, "a poweroff ends the file cleanly");
    Recording {
        _dir: dir,
        out,
        run,
        epoch_ns,
        records,
        wall,
    }
}

/// The kernel printed its banner at `link_prefix…`, timed the bench with its own clock in
/// agreement with the host's console window, reached poweroff, and QEMU's clean exit let
/// the plugin write its sidecar.
pub fn assert_boots_and_powers_off(arch: GuestArch, rec: &Recording, link_prefix: &str) {
    let console = &rec.run.exit.console;
    let banner = format!("tinyk: {} kernel running at {link_prefix}", arch.name());
    assert!(console.contains(&banner), "{console}");
    let end = console
        .lines()
        .find(|l| l.starts_with("BENCH_END"))
        .expect("BENCH_END line");
    let ms: u64 = end
        .rsplit_once("ms=")
        .and_then(|(_, v)| v.trim().parse().ok())
        .expect("ms= value");
    let window_ms = (rec.run.bench_end_ns - rec.run.bench_start_ns) / 1_000_000;
    eprintln!(
        "{} leaf run: {:?} wall, bench {ms} ms (guest clock) / {window_ms} ms (host)",
        arch.name(),
        rec.wall
    );
    // Under TCG the guest's clock is the host's: it agrees with the console window.
    assert!(
        ms > 0 && ms <= window_ms + 50,
        "guest {ms} ms vs host {window_ms} ms"
    );
    assert!(console.contains("bye"), "exit reached the poweroff: {console}");
    let summary = rec.summary();
    assert_eq!(summary.arch(), Some(arch.name()));
    assert_eq!(summary.samples(), Some(rec.records.len() as u64));
}

/// Leaf mode: only the pc, mix_leaf the hottest self function, and (kernel filter with the
/// alias) every pc kernel text at its linked address, on vCPU 0.
pub fn assert_leaf_ranking(arch: GuestArch, rec: &Recording) {
    let symbols = symbols(arch);
    let bench = rec.in_bench();
    assert!(
        bench.len() >= 100,
        "only {} samples in the bench window",
        bench.len()
    );
    let mut self_counts: HashMap<String, usize> = HashMap::new();
    for r in &bench {
        assert_eq!(r.trace, vec![r.pc], "leaf mode records only the pc");
        assert_eq!(r.callchain, Some(Callchain::Leaf));
        *self_counts.entry(symbols.function(r.pc, false)).or_default() += 1;
    }
    let mut ranked: Vec<_> = self_counts.into_iter().collect();
    ranked.sort_by_key(|(_, count)| std::cmp::Reverse(*count));
    eprintln!(
        "{} leaf: {} bench samples, self ranking {ranked:?}",
        arch.name(),
        bench.len()
    );
    assert_eq!(ranked[0].0, "mix_leaf", "ranking: {ranked:?}");
    assert!(
        ranked[0].1 * 100 >= bench.len() * 30,
        "mix_leaf share: {ranked:?}"
    );
    let elf = &build_test_guest_for(arch).elf;
    let (stext, _) = symbol_range(elf, "_stext");
    let (etext, _) = symbol_range(elf, "_etext");
    for r in &rec.records {
        // An idle tick has no pc: the kernel halted (its poweroff loop halts before QEMU
        // has acted on the request).
        if r.callchain == Some(Callchain::Idle) {
            assert!(r.trace.is_empty(), "{r:x?}");
            continue;
        }
        assert!(
            (stext..etext).contains(&r.pc),
            "pc {:#x} outside the kernel text",
            r.pc
        );
        assert_eq!(r.cpu, Some(0));
    }
}

/// The checks of the frame-pointer walk on the hash phase, for tb and insn sampling: no
/// frame twice in a row (except real recursion), and (almost) every hash-phase mix_leaf
/// sample reached through kmain;run_bench;hash_workload;hash_block — also at mix_leaf's
/// entry, before its prologue, where only the return-address rule gives the caller.
pub fn assert_full_paths_to_mix_leaf(arch: GuestArch, label: &str, rec: &Recording) {
    let symbols = symbols(arch);
    let bench = rec.in_bench();
    assert!(
        bench.len() >= 100,
        "only {} {label} samples in the bench",
        bench.len()
    );
    let paths: Vec<String> = bench.iter().map(|r| symbols.path(r)).collect();
    for (r, p) in bench.iter().zip(&paths) {
        assert_eq!(r.callchain, Some(Callchain::Fp));
        assert!(r.sp.is_some() && r.fp.is_some(), "sp and fp are recorded");
        assert_eq!(r.trace.first(), Some(&r.pc));
        let frames: Vec<&str> = p.split(';').collect();
        assert!(
            frames.windows(2).all(|w| w[0] != w[1] || w[0] == "tree_walk"),
            "{label}: duplicated frame in {p}"
        );
    }
    let mix: Vec<&String> = bench
        .iter()
        .zip(&paths)
        .filter(|(r, _)| symbols.function(r.pc, false) == "mix_leaf")
        .map(|(_, p)| p)
        .collect();
    let from_hash = mix.iter().filter(|p| p.contains("hash_workload")).count();
    let complete = mix.iter().filter(|p| p.ends_with(FULL_PATH)).count();
    let mut others: Vec<&&String> = mix.iter().filter(|p| !p.ends_with(FULL_PATH)).collect();
    others.dedup();
    eprintln!(
        "{} {label}: {} bench samples, {} in mix_leaf, {from_hash} under hash_workload, {complete} with the full path; others {:?}",
        arch.name(),
        bench.len(),
        mix.len(),
        &others[..others.len().min(6)]
    );
    assert!(mix.len() >= 30, "mix_leaf samples: {}", mix.len());
    assert!(
        complete * 10 >= from_hash * 9,
        "{complete} of {from_hash} hash-phase mix_leaf samples have {FULL_PATH}; others: {:?}",
        &others[..others.len().min(8)]
    );
    assert!(
        complete * 2 > mix.len(),
        "{complete} of {} mix_leaf samples",
        mix.len()
    );
    let entry = symbol_range(&build_test_guest_for(arch).elf, "mix_leaf").0;
    for r in bench.iter().filter(|r| r.pc == entry) {
        let p = symbols.path(r);
        assert!(
            p.ends_with(FULL_PATH) || p.ends_with("sort_workload;mix_leaf"),
            "{label} entry sample: {p}"
        );
    }
}

/// tree_walk(6) recurses to depth 0: between five and seven tree_walk frames at the bottom
/// of the deepest paths, never more.
pub fn assert_tree_walk_recursion(arch: GuestArch, rec: &Recording) {
    let symbols = symbols(arch);
    let depths: Vec<usize> = rec
        .in_bench()
        .iter()
        .map(|r| symbols.path(r))
        .filter(|p| p.contains("run_bench;tree_workload;tree_walk"))
        .map(|p| p.split(';').filter(|f| *f == "tree_walk").count())
        .collect();
    let deepest = depths.iter().copied().max().expect("samples under tree_workload");
    eprintln!(
        "{} tb+fp: {} tree_walk samples, deepest {deepest}",
        arch.name(),
        depths.len()
    );
    assert!(deepest >= 5, "deepest recursion seen: {deepest}");
    assert!(deepest <= 7, "never deeper than the real recursion: {deepest}");
}

/// insn mode lands inside blocks: more distinct pcs in mix_leaf than a handful.
pub fn assert_insn_pcs_inside_blocks(arch: GuestArch, rec: &Recording) {
    let symbols = symbols(arch);
    let distinct: std::collections::BTreeSet<u64> = rec
        .in_bench()
        .iter()
        .filter(|r| symbols.function(r.pc, false) == "mix_leaf")
        .map(|r| r.pc)
        .collect();
    assert!(
        distinct.len() > 3,
        "insn mode lands inside blocks: {} pcs",
        distinct.len()
    );
    assert_eq!(rec.summary().get("sampling_mode"), Some("insn"));
}

/// `perfscope qemu --arch <arch> --no-tui` with `bench n` between the markers: exit 0, every
/// artifact, the window bounded by the markers, mix_leaf first with its full path.
pub fn assert_perfscope_qemu_end_to_end(arch: GuestArch, n: u32) {
    let g = build_test_guest_for(arch);
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let bench = format!("bench {n}");
    output_ok(
        perfscope_qemu(&g, dir.path())
            .args([
                "--freq",
                "1000",
                "--callchain",
                "fp",
                "--shell-prefix",
                "starry:~# ",
            ])
            .args(["--workload", &bench, "--start-marker", "BENCH_START"])
            .args(["--stop-marker", "BENCH_END", "--timeout", "90"]),
        "perfscope qemu",
    );
    let wall = started.elapsed();
    let latest = dir.path().join(format!("perf/{}/latest", arch.name()));
    let q = latest.join("qperf");
    for f in [
        "report.json",
        "report.md",
        "hotspots.csv",
        "qperf/stack.folded",
        "qperf/stack.boot.folded",
        "qperf/stack.workload.folded",
        "qperf/flamegraph.svg",
        "qperf/profile.pb.gz",
        "qperf/window.json",
        "qperf/qemu.time.txt",
        "qperf/qemu.toml",
        "qperf/qperf.bin",
        "qperf/qperf.summary.txt",
    ] {
        assert!(latest.join(f).is_file(), "{f} missing");
    }
    let report = read_json(&latest.join("report.json"));
    assert_eq!(report["result"], "ok", "{report:#}");
    assert_eq!(
        report["hotspots"]["top_functions"][0]["function"], "mix_leaf",
        "{report:#}"
    );
    let window = read_json(&q.join("window.json"));
    assert_eq!(window["stop_method"], "qmp_quit", "{window:#}");
    let workload = folded_lines(&q.join("stack.workload.folded"));
    let outside = samples_outside(&q.join("stack.workload.folded"), "run_bench");
    assert!(
        outside <= 2 * MARKER_LATENCY_SAMPLES,
        "{outside} workload samples outside the bench: {workload:?}"
    );
    let leaves = folded_leaves(&q.join("stack.workload.folded"));
    assert_eq!(leaves[0].0, "mix_leaf", "{leaves:?}");
    let early = samples_before_the_start_marker(&q.join("stack.boot.folded"), "run_bench");
    assert!(
        early <= MARKER_LATENCY_SAMPLES,
        "{early} bench samples before BENCH_START"
    );
    let mix = leaves[0].1;
    let on_path: u64 = workload
        .iter()
        .filter(|(s, _)| s.ends_with(FULL_PATH))
        .map(|(_, n)| n)
        .sum();
    let total: u64 = workload.iter().map(|(_, n)| n).sum();
    eprintln!(
        "perfscope qemu --arch {}: {wall:?} wall, {total} workload samples, mix_leaf {mix}, {on_path} with the full path",
        arch.name()
    );
    assert!(
        on_path * 10 >= mix * 9,
        "{on_path} of {mix} mix_leaf samples have {FULL_PATH}"
    );
    let (records, end) = read_file(q.join("qperf.bin")).unwrap();
    assert_eq!(end.end, ReadEnd::CleanEof);
    assert_eq!(report["input"]["records"].as_u64().unwrap(), records.len() as u64);
}
