//! The x86_64 test kernel (tests/guest, multiboot, high half at 0xffffffff80100000) on real
//! qemu-system-x86_64 (q35, TCG) with perfscope's plugin, given the arguments the runner
//! builds: leaf sampling, rbp-chain call paths (with the `[rsp]` rules for code that runs
//! before a frame exists), recursion, and `perfscope qemu --arch x86_64` end to end.
//! QEMU or gcc missing fails these tests.

mod common;

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use common::guest::{GuestArch, TestGuest, build_test_guest_for, instruction_addresses, symbol_range};
use common::plugin::{BenchRun, build_plugin, monotonic_ns, run_bench_on};
use common::profile::{
    KernelSymbols, MARKER_LATENCY_SAMPLES, folded_leaves, folded_lines, in_window, read_json,
    samples_before_the_start_marker, samples_outside,
};
use perfscope::sources::qemu::plugin_args::{CallchainMode, PluginOptions, SampleMode, kernel_text_of};
use perfscope::sources::qperf_file::{
    Callchain, FormatVersion, PluginSummary, QperfRecord, ReadEnd, read_file, sidecar_path,
};

const RUN_TIMEOUT: Duration = Duration::from_secs(90);
/// ≈ 0.4 s of guest work with the plugin: a few hundred samples at 1 kHz.
const BENCH_N: u32 = 200;
const FULL_PATH: &str = "kmain;run_bench;hash_workload;hash_block;mix_leaf";

fn guest() -> TestGuest {
    build_test_guest_for(GuestArch::X86_64)
}

fn symbols() -> &'static KernelSymbols {
    static S: OnceLock<KernelSymbols> = OnceLock::new();
    S.get_or_init(|| KernelSymbols::open(&guest().elf))
}

fn function(address: u64) -> String {
    symbols().function(address, false)
}

/// One QEMU run of `bench BENCH_N` and what it recorded.
struct Recording {
    _dir: tempfile::TempDir,
    out: PathBuf,
    run: BenchRun,
    epoch_ns: u64,
    records: Vec<QperfRecord>,
    wall: Duration,
}

impl Recording {
    fn in_bench(&self) -> Vec<&QperfRecord> {
        in_window(
            &self.records,
            self.epoch_ns,
            self.run.bench_start_ns,
            self.run.bench_end_ns,
        )
    }
}

/// The plugin argument the runner (`perfscope qemu`) builds for this kernel, split into
/// the library and its arguments.
fn runner_plugin_args(
    out: &std::path::Path,
    mode: SampleMode,
    callchain: CallchainMode,
    epoch_ns: u64,
) -> (PathBuf, String) {
    let g = guest();
    let arg = PluginOptions {
        library: build_plugin(),
        freq_hz: 1000,
        out: out.to_path_buf(),
        max_depth: 128,
        queue_size: 4096,
        mode,
        callchain,
        kernel_text: kernel_text_of(&g.elf).expect("read kernel.elf"),
        filter_kernel: true,
        stream: None,
        epoch_ns,
        counters: false,
    }
    .to_arg()
    .expect("plugin argument");
    let (library, args) = arg.split_once(',').expect("library,args");
    (PathBuf::from(library), args.to_string())
}

fn record(mode: SampleMode, callchain: CallchainMode) -> Recording {
    let g = guest();
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("qperf.bin");
    let epoch_ns = monotonic_ns();
    let (plugin, args) = runner_plugin_args(&out, mode, callchain, epoch_ns);
    let started = Instant::now();
    let run = run_bench_on(&g, &plugin, &args, BENCH_N, RUN_TIMEOUT);
    let wall = started.elapsed();
    assert!(
        run.exit.status.success(),
        "QEMU failed: {:?}\n{}\n{}",
        run.exit.status,
        run.exit.console,
        run.exit.stderr
    );
    assert!(
        run.exit
            .stderr
            .contains("perfscope-qemu-plugin: loaded (target=x86_64"),
        "{}",
        run.exit.stderr
    );
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

fn leaf_recording() -> &'static Recording {
    static R: OnceLock<Recording> = OnceLock::new();
    R.get_or_init(|| record(SampleMode::Tb, CallchainMode::Leaf))
}

fn fp_recording() -> &'static Recording {
    static R: OnceLock<Recording> = OnceLock::new();
    R.get_or_init(|| record(SampleMode::Tb, CallchainMode::Fp))
}

fn insn_fp_recording() -> &'static Recording {
    static R: OnceLock<Recording> = OnceLock::new();
    R.get_or_init(|| record(SampleMode::Insn, CallchainMode::Fp))
}

#[test]
fn the_kernel_text_alias_is_the_multiboot_load_address() {
    let g = guest();
    let text = kernel_text_of(&g.elf).unwrap().expect("a .text section");
    let (stext, _) = symbol_range(&g.elf, "_stext");
    let (etext, _) = symbol_range(&g.elf, "_etext");
    assert_eq!((text.start, text.end), (stext, etext));
    assert_eq!(stext, 0xffffffff80100000);
    // From the program headers (linker.ld's AT()), not the low 32 bits (0x80100000).
    assert_eq!(
        text.alias,
        Some((0x100000, 0x100000 + (etext - stext), 0xffffffff80000000))
    );
}

#[test]
fn boots_through_multiboot_and_powers_off_cleanly() {
    let rec = leaf_recording();
    let console = &rec.run.exit.console;
    assert!(
        console.contains("tinyk: x86_64 kernel running at 0xffffffff8010"),
        "{console}"
    );
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
        "x86_64 leaf run: {:?} wall, bench {ms} ms (guest TSC) / {window_ms} ms (host)",
        rec.wall
    );
    // The TSC calibrated on the PIT measures host time: it agrees with the console window.
    assert!(
        ms > 0 && ms <= window_ms + 50,
        "guest {ms} ms vs host {window_ms} ms"
    );
    assert!(console.contains("bye"), "exit reached the poweroff: {console}");
    let summary = PluginSummary::read(&sidecar_path(&rec.out))
        .expect("read the sidecar")
        .expect("the atexit callback ran (clean QEMU exit)");
    assert_eq!(summary.arch(), Some("x86_64"));
    assert_eq!(summary.samples(), Some(rec.records.len() as u64));
}

#[test]
fn leaf_mode_hottest_self_function_in_the_bench_is_mix_leaf() {
    let rec = leaf_recording();
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
        *self_counts.entry(function(r.pc)).or_default() += 1;
    }
    let mut ranked: Vec<_> = self_counts.into_iter().collect();
    ranked.sort_by_key(|(_, count)| std::cmp::Reverse(*count));
    eprintln!(
        "x86_64 leaf: {} bench samples, self ranking {ranked:?}",
        bench.len()
    );
    assert_eq!(ranked[0].0, "mix_leaf", "ranking: {ranked:?}");
    assert!(
        ranked[0].1 * 100 >= bench.len() * 30,
        "mix_leaf share: {ranked:?}"
    );
    // filter_kernel with the alias: every pc is kernel text at its linked (high) address,
    // including any taken in the 32-bit boot code, which runs at its physical address.
    let (stext, _) = symbol_range(&guest().elf, "_stext");
    let (etext, _) = symbol_range(&guest().elf, "_etext");
    assert!(rec.records.iter().all(|r| (stext..etext).contains(&r.pc)));
}

/// The checks of the rbp walk on the hash phase, for tb and insn sampling.
fn assert_full_paths_to_mix_leaf(label: &str, rec: &Recording) {
    let bench = rec.in_bench();
    assert!(
        bench.len() >= 100,
        "only {} {label} samples in the bench",
        bench.len()
    );
    let paths: Vec<String> = bench.iter().map(|r| symbols().path(r)).collect();
    for (r, p) in bench.iter().zip(&paths) {
        assert_eq!(r.callchain, Some(Callchain::Fp));
        assert!(r.sp.is_some() && r.fp.is_some(), "rsp and rbp are recorded");
        // No frame twice in a row, except real recursion.
        let frames: Vec<&str> = p.split(';').collect();
        assert!(
            frames.windows(2).all(|w| w[0] != w[1] || w[0] == "tree_walk"),
            "{label}: duplicated frame in {p}"
        );
    }
    let mix: Vec<&String> = bench
        .iter()
        .zip(&paths)
        .filter(|(r, _)| function(r.pc) == "mix_leaf")
        .map(|(_, p)| p)
        .collect();
    let from_hash = mix.iter().filter(|p| p.contains("hash_workload")).count();
    let complete = mix.iter().filter(|p| p.ends_with(FULL_PATH)).count();
    let mut others: Vec<&&String> = mix.iter().filter(|p| !p.ends_with(FULL_PATH)).collect();
    others.dedup();
    eprintln!(
        "x86_64 {label}: {} bench samples, {} in mix_leaf, {from_hash} under hash_workload, {complete} with the full path; others {:?}",
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
}

#[test]
fn fp_mode_recovers_the_full_path_to_the_frameless_mix_leaf() {
    let rec = fp_recording();
    assert_full_paths_to_mix_leaf("tb+fp", rec);
    let g = guest();
    // gcc gives mix_leaf no frame at all (a leaf using no stack): rbp is hash_block's in
    // its whole body, so its caller comes only from [rsp] (the frameless rule).
    assert!(
        instruction_addresses(&g.elf, "mix_leaf", |t| t.contains("%rbp")).is_empty(),
        "mix_leaf touches rbp: the test no longer covers a frameless leaf"
    );
    let entry = symbol_range(&g.elf, "mix_leaf").0;
    let at_entry: Vec<String> = rec
        .in_bench()
        .iter()
        .filter(|r| r.pc == entry)
        .map(|r| symbols().path(r))
        .collect();
    eprintln!("x86_64 tb+fp: {} samples at mix_leaf's entry", at_entry.len());
    for p in &at_entry {
        assert!(
            p.ends_with(FULL_PATH) || p.ends_with("sort_workload;mix_leaf"),
            "entry sample: {p}"
        );
    }
}

/// hash_block is shrink-wrapped: `mov; test; jle` run on hash_workload's rbp, then a block
/// starting with `push %rbp` ([rsp] is the caller), instructions scheduled before
/// `mov %rsp,%rbp` ([rsp+8]), then the body on its own frame. Every sample in it, at
/// block starts (tb) or anywhere (insn), has hash_workload as its caller.
#[test]
fn hash_block_keeps_its_caller_before_during_and_after_its_delayed_prologue() {
    let g = guest();
    let push = instruction_addresses(&g.elf, "hash_block", |t| t == "push %rbp");
    let set = instruction_addresses(&g.elf, "hash_block", |t| t == "mov %rsp,%rbp");
    let (entry, _) = symbol_range(&g.elf, "hash_block");
    assert_eq!(
        (push.len(), set.len()),
        (1, 1),
        "one push %rbp and one mov %rsp,%rbp"
    );
    assert!(entry < push[0], "the prologue is delayed (shrink-wrapped)");
    let want = "kmain;run_bench;hash_workload;hash_block";
    for (label, rec) in [("tb+fp", fp_recording()), ("insn+fp", insn_fp_recording())] {
        let in_block: Vec<(u64, String)> = rec
            .in_bench()
            .iter()
            .filter(|r| function(r.pc) == "hash_block")
            .map(|r| (r.pc, symbols().path(r)))
            .collect();
        let before_frame = in_block.iter().filter(|(pc, _)| *pc <= set[0]).count();
        eprintln!(
            "x86_64 {label}: {} samples in hash_block, {before_frame} before its frame is set",
            in_block.len()
        );
        assert!(!in_block.is_empty(), "{label}: samples in hash_block");
        for (pc, p) in &in_block {
            assert!(p.ends_with(want), "{label} sample at {pc:#x}: {p}");
        }
    }
}

#[test]
fn fp_mode_shows_tree_walk_recursion_bounded_by_its_depth() {
    let rec = fp_recording();
    let depths: Vec<usize> = rec
        .in_bench()
        .iter()
        .map(|r| symbols().path(r))
        .filter(|p| p.contains("run_bench;tree_workload;tree_walk"))
        .map(|p| p.split(';').filter(|f| *f == "tree_walk").count())
        .collect();
    let deepest = depths.iter().copied().max().expect("samples under tree_workload");
    eprintln!(
        "x86_64 tb+fp: {} tree_walk samples, deepest {deepest}",
        depths.len()
    );
    // tree_walk(6) recurses to depth 0: seven tree_walk frames at the bottom.
    assert!(deepest >= 5, "deepest recursion seen: {deepest}");
    assert!(deepest <= 7, "never deeper than the real recursion: {deepest}");
}

/// insn mode samples inside prologues too: between `push %rbp` and `mov %rsp,%rbp` the
/// return address is at [rsp+8].
#[test]
fn insn_mode_keeps_the_full_path_inside_blocks() {
    let rec = insn_fp_recording();
    assert_full_paths_to_mix_leaf("insn+fp", rec);
    let distinct: std::collections::BTreeSet<u64> = rec
        .in_bench()
        .iter()
        .filter(|r| function(r.pc) == "mix_leaf")
        .map(|r| r.pc)
        .collect();
    assert!(
        distinct.len() > 3,
        "insn mode lands inside blocks: {} pcs",
        distinct.len()
    );
}

#[test]
fn perfscope_qemu_x86_64_writes_the_workload_window_and_every_artifact() {
    let g = guest();
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let o = Command::new(env!("CARGO_BIN_EXE_perfscope"))
        .args(["qemu", "--no-tui", "--arch", "x86_64", "--kernel"])
        .arg(&g.bin)
        .arg("--elf")
        .arg(&g.elf)
        .arg("--plugin")
        .arg(build_plugin())
        .arg("--out")
        .arg(dir.path())
        .args([
            "--freq",
            "1000",
            "--callchain",
            "fp",
            "--shell-prefix",
            "starry:~# ",
        ])
        .args(["--workload", "bench 300", "--start-marker", "BENCH_START"])
        .args(["--stop-marker", "BENCH_END", "--timeout", "90"])
        .output()
        .unwrap();
    let wall = started.elapsed();
    assert!(
        o.status.success(),
        "perfscope qemu failed:\n{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let latest = dir.path().join("perf/x86_64/latest");
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
        "perfscope qemu --arch x86_64: {wall:?} wall, {total} workload samples, mix_leaf {mix}, {on_path} with the full path"
    );
    assert!(
        on_path * 10 >= mix * 9,
        "{on_path} of {mix} mix_leaf samples have {FULL_PATH}"
    );
    let (records, end) = read_file(q.join("qperf.bin")).unwrap();
    assert_eq!(end.end, ReadEnd::CleanEof);
    assert_eq!(report["input"]["records"].as_u64().unwrap(), records.len() as u64);
}
