//! The perfscope QEMU plugin on real QEMU (qemu-system-riscv64) with the test kernel:
//! sampling, frame-pointer call paths, the qperf v3 file and its sidecar, the live stream,
//! and a QEMU killed mid-run. QEMU or the cross compiler missing fails these tests.

mod common;

use std::collections::HashMap;
use std::io::Read;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use common::guest::{TestGuest, build_test_guest, symbol_range};
use common::plugin::{BenchRun, PROMPT, QemuGuest, build_plugin, monotonic_ns, run_bench};
use common::profile::KernelSymbols;
use perfscope::sources::qperf_file::{
    Callchain, FormatVersion, PluginSummary, QperfRecord, ReadEnd, encode_v3, read_file, sidecar_path,
};

const RUN_TIMEOUT: Duration = Duration::from_secs(90);
/// ≈ 0.4 s of guest work at full speed: a few hundred samples at 1 kHz.
const BENCH_N: u32 = 100;
const FREQ: &str = "1000";

/// One recorded session and everything the tests look at.
struct Recording {
    dir: tempfile::TempDir,
    out: PathBuf,
    run: BenchRun,
    epoch_ns: u64,
    records: Vec<QperfRecord>,
    stream_bytes: Option<Vec<u8>>,
}

fn text_filter(guest: &TestGuest) -> String {
    let (stext, _) = symbol_range(&guest.elf, "_stext");
    let (etext, _) = symbol_range(&guest.elf, "_etext");
    // The kernel's physical alias (it runs at 0x80200000 before paging is on).
    format!(
        "filter_start={stext:#x},filter_end={etext:#x},filter_alias_start={:#x},filter_alias_end={:#x},filter_alias_offset=0xffffffc000000000",
        stext - 0xffffffc000000000,
        etext - 0xffffffc000000000
    )
}

/// One QEMU run of `bench BENCH_N` with the plugin in `mode` (tb or insn) and `callchain`.
fn record(mode: &str, callchain: &str, with_stream: bool) -> Recording {
    let guest = build_test_guest();
    let plugin = build_plugin();
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("qperf.bin");
    let socket = dir.path().join("stream.sock");
    let reader = with_stream.then(|| {
        let listener = UnixListener::bind(&socket).expect("bind the stream socket");
        std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().expect("the plugin connects");
            let mut bytes = Vec::new();
            conn.read_to_end(&mut bytes).expect("read the stream");
            bytes
        })
    });
    let epoch_ns = monotonic_ns();
    let mut args = format!(
        "out={},freq={FREQ},mode={mode},callchain={callchain},epoch_ns={epoch_ns},counters=on,{}",
        out.display(),
        text_filter(&guest)
    );
    if with_stream {
        args.push_str(&format!(",stream={}", socket.display()));
    }
    let run = run_bench(&guest.bin, &plugin, &args, BENCH_N, RUN_TIMEOUT);
    assert!(
        run.exit.status.success(),
        "QEMU failed: {:?}\n{}",
        run.exit.status,
        run.exit.stderr
    );
    assert!(
        run.exit.stderr.contains("perfscope-qemu-plugin: loaded"),
        "{}",
        run.exit.stderr
    );
    let (records, report) = read_file(&out).expect("read qperf.bin");
    assert_eq!(report.version, Some(FormatVersion::V3));
    assert_eq!(report.end, ReadEnd::CleanEof, "a normal exit ends cleanly");
    assert_eq!(report.records, records.len() as u64);
    let stream_bytes = reader.map(|r| r.join().expect("stream reader thread"));
    Recording {
        dir,
        out,
        run,
        epoch_ns,
        records,
        stream_bytes,
    }
}

fn leaf_recording() -> &'static Recording {
    static R: OnceLock<Recording> = OnceLock::new();
    R.get_or_init(|| record("tb", "leaf", true))
}

fn fp_recording() -> &'static Recording {
    static R: OnceLock<Recording> = OnceLock::new();
    R.get_or_init(|| record("tb", "fp", false))
}

fn insn_fp_recording() -> &'static Recording {
    static R: OnceLock<Recording> = OnceLock::new();
    R.get_or_init(|| record("insn", "fp", false))
}

/// The test kernel's symbols, opened once.
fn symbols() -> &'static KernelSymbols {
    static S: OnceLock<KernelSymbols> = OnceLock::new();
    S.get_or_init(|| KernelSymbols::open(&build_test_guest().elf))
}

fn function(address: u64, is_return: bool) -> String {
    symbols().function(address, is_return)
}

fn path(record: &QperfRecord) -> String {
    symbols().path(record)
}

impl Recording {
    /// Samples between BENCH_START and BENCH_END on the shared clock.
    fn in_bench(&self) -> Vec<&QperfRecord> {
        let start = self.run.bench_start_ns - self.epoch_ns;
        let end = self.run.bench_end_ns - self.epoch_ns;
        self.records
            .iter()
            .filter(|r| r.elapsed_ns.is_some_and(|t| t >= start && t <= end))
            .collect()
    }

    fn summary(&self) -> PluginSummary {
        PluginSummary::read(&sidecar_path(&self.out))
            .expect("read the sidecar")
            .expect("the plugin writes the sidecar at exit")
    }
}

#[test]
fn leaf_mode_hottest_self_function_in_the_bench_is_mix_leaf() {
    let rec = leaf_recording();
    let bench = rec.in_bench();
    assert!(
        bench.len() >= 100,
        "only {} samples inside the bench window",
        bench.len()
    );
    let mut self_counts: HashMap<String, usize> = HashMap::new();
    for r in &bench {
        assert_eq!(r.trace, vec![r.pc], "leaf mode records only the pc");
        assert_eq!(r.callchain, Some(Callchain::Leaf));
        assert_eq!((r.sp, r.fp), (None, None), "no registers are read in leaf mode");
        *self_counts.entry(function(r.pc, false)).or_default() += 1;
    }
    let mut ranked: Vec<_> = self_counts.into_iter().collect();
    ranked.sort_by_key(|(_, count)| std::cmp::Reverse(*count));
    eprintln!("leaf: {} bench samples, self ranking {ranked:?}", bench.len());
    assert_eq!(ranked[0].0, "mix_leaf", "ranking: {ranked:?}");
    assert!(
        ranked[0].1 * 100 >= bench.len() * 30,
        "mix_leaf has most of the bench time: {ranked:?}"
    );
    // Outside the bench the kernel polls the UART: the window is what separates them.
    let before = rec
        .records
        .iter()
        .filter(|r| {
            r.elapsed_ns
                .is_some_and(|t| t + rec.epoch_ns < rec.run.bench_start_ns)
        })
        .count();
    assert!(before > 0, "samples before BENCH_START (boot, prompt)");
}

#[test]
fn every_sample_is_kernel_text_in_canonical_addresses() {
    let rec = leaf_recording();
    let (stext, _) = symbol_range(&build_test_guest().elf, "_stext");
    let (etext, _) = symbol_range(&build_test_guest().elf, "_etext");
    assert!(!rec.records.is_empty());
    for r in &rec.records {
        assert!(
            (stext..etext).contains(&r.pc),
            "pc {:#x} outside the kernel text",
            r.pc
        );
        assert_eq!(r.cpu, Some(0));
    }
    let times: Vec<u64> = rec.records.iter().filter_map(|r| r.elapsed_ns).collect();
    assert!(
        times.windows(2).all(|w| w[0] <= w[1]),
        "one vCPU: timestamps ascend"
    );
}

#[test]
fn sidecar_has_the_reference_keys_then_perfscopes() {
    let rec = leaf_recording();
    let summary = rec.summary();
    let keys: Vec<&str> = summary.entries.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        keys,
        [
            "qperf_format_version",
            "record_timestamp",
            "record_fields",
            "callchain_method",
            "callchain_enabled",
            "samples",
            "dropped_samples",
            "sample_failures",
            "max_stack_depth",
            "frequency_hz",
            "arch",
            "output",
            "executed_instructions",
            "executed_blocks",
            "skipped_samples",
            "epoch_ns",
            "stream",
            "stream_errors",
            "sampling_mode",
            "written_records",
            "idle_samples",
        ]
    );
    assert_eq!(summary.format_version(), Some(FormatVersion::V3));
    assert_eq!(
        summary.samples(),
        Some(rec.records.len() as u64),
        "every queued sample was written"
    );
    assert_eq!(summary.dropped_samples(), Some(0));
    assert_eq!(summary.sample_failures(), Some(0));
    assert_eq!(summary.frequency_hz(), Some(1000));
    assert_eq!(summary.arch(), Some("riscv64"));
    assert_eq!(summary.callchain_method(), Some(Callchain::Leaf));
    assert_eq!(
        summary.get("output"),
        Some(rec.out.display().to_string().as_str())
    );
    assert_eq!(summary.get("epoch_ns"), Some(rec.epoch_ns.to_string().as_str()));
    let socket = rec.dir.path().join("stream.sock");
    assert_eq!(summary.get("stream"), Some(socket.display().to_string().as_str()));
    assert_eq!(summary.get("stream_errors"), Some("0"));
    let instructions = summary.executed_instructions().expect("executed_instructions");
    let blocks = summary.executed_blocks().expect("executed_blocks");
    // bench 100 alone runs hundreds of millions of guest instructions.
    assert!(
        instructions > 100_000_000,
        "executed_instructions = {instructions}"
    );
    assert!(blocks > 0 && blocks < instructions, "executed_blocks = {blocks}");
    assert!(
        summary
            .get("skipped_samples")
            .and_then(|v| v.parse::<u64>().ok())
            .is_some()
    );
}

#[test]
fn stream_socket_receives_exactly_the_file_bytes() {
    let rec = leaf_recording();
    let file = std::fs::read(&rec.out).expect("read qperf.bin");
    let stream = rec.stream_bytes.as_ref().expect("the stream was recorded");
    assert!(!file.is_empty());
    assert_eq!(stream.len(), file.len(), "same length");
    assert!(stream == &file, "same bytes");
}

#[test]
fn fp_mode_recovers_the_full_path_to_mix_leaf() {
    assert_full_paths_to_mix_leaf("tb+fp", fp_recording());
}

/// insn mode samples any instruction, so its fp walk also meets the middle of prologues and
/// epilogues (after the `sp` decrement, before `fp` is set; after `fp` is reloaded): the
/// paths must stay as complete as at block starts, and the pcs must be finer than blocks.
#[test]
fn insn_mode_samples_inside_blocks_and_keeps_the_full_path() {
    let insn = insn_fp_recording();
    assert_full_paths_to_mix_leaf("insn+fp", insn);
    let distinct_pcs = |rec: &Recording| {
        let mut pcs: Vec<u64> = rec
            .in_bench()
            .iter()
            .filter(|r| function(r.pc, false) == "mix_leaf")
            .map(|r| r.pc)
            .collect();
        pcs.sort_unstable();
        pcs.dedup();
        pcs.len()
    };
    let (tb_pcs, insn_pcs) = (distinct_pcs(fp_recording()), distinct_pcs(insn));
    eprintln!("distinct pcs in mix_leaf: tb {tb_pcs}, insn {insn_pcs}");
    assert!(
        insn_pcs > tb_pcs,
        "insn mode lands inside blocks: {insn_pcs} distinct pcs vs {tb_pcs} block starts"
    );
    assert_eq!(insn.summary().get("sampling_mode"), Some("insn"));
}

/// What the frame-pointer walk must give on the bench: mix_leaf is reached through
/// kmain;run_bench;hash_workload;hash_block in (almost) every hash-phase sample.
fn assert_full_paths_to_mix_leaf(label: &str, rec: &Recording) {
    let bench = rec.in_bench();
    assert!(
        bench.len() >= 100,
        "only {} {label} samples in the bench",
        bench.len()
    );
    for r in &bench {
        assert_eq!(r.callchain, Some(Callchain::Fp));
        assert!(r.sp.is_some() && r.fp.is_some(), "sp and fp are recorded");
        assert_eq!(r.trace.first(), Some(&r.pc));
    }
    let mix: Vec<String> = bench
        .iter()
        .filter(|r| function(r.pc, false) == "mix_leaf")
        .map(|r| path(r))
        .collect();
    assert!(mix.len() >= 30, "mix_leaf samples: {}", mix.len());
    let full = "kmain;run_bench;hash_workload;hash_block;mix_leaf";
    let from_hash = mix.iter().filter(|p| p.contains("hash_workload")).count();
    let complete = mix.iter().filter(|p| p.ends_with(full)).count();
    eprintln!(
        "{label}: {} bench samples, {} in mix_leaf, {from_hash} under hash_workload, {complete} with the full path",
        bench.len(),
        mix.len()
    );
    let mut examples: Vec<&String> = mix.iter().filter(|p| !p.ends_with(full)).collect();
    examples.dedup();
    assert!(
        complete * 10 >= from_hash * 9,
        "{complete} of {from_hash} hash-phase mix_leaf samples have {full}; others: {:?}",
        &examples[..examples.len().min(8)]
    );
    assert!(
        complete * 2 > mix.len(),
        "most mix_leaf samples ({complete} of {}) have the full path",
        mix.len()
    );
    // Samples at mix_leaf's entry block run before its prologue: only the ra rule gives
    // them hash_block (fp still points at hash_block's frame there).
    let entry = symbol_range(&build_test_guest().elf, "mix_leaf").0;
    for r in bench.iter().filter(|r| r.pc == entry) {
        let p = path(r);
        assert!(
            p.ends_with(full) || p.ends_with("sort_workload;mix_leaf"),
            "entry sample: {p}"
        );
    }
    // The ra rule never duplicates a frame: no path has hash_block twice in a row.
    assert!(
        !mix.iter().any(|p| p.contains("hash_block;hash_block")),
        "{examples:?}"
    );
}

#[test]
fn fp_mode_shows_tree_walk_recursion() {
    let rec = fp_recording();
    let deepest = rec
        .in_bench()
        .iter()
        .map(|r| path(r))
        .filter(|p| p.contains("run_bench;tree_workload;tree_walk"))
        .map(|p| p.split(';').filter(|f| *f == "tree_walk").count())
        .max()
        .expect("samples under tree_workload");
    // tree_walk(6) recurses to depth 0: seven tree_walk frames at the bottom.
    assert!(deepest >= 5, "deepest recursion seen: {deepest} tree_walk frames");
    assert!(deepest <= 7, "never deeper than the real recursion: {deepest}");
}

#[test]
fn sigkill_mid_run_leaves_a_readable_file() {
    let guest = build_test_guest();
    let plugin = build_plugin();
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("qperf.bin");
    let args = format!(
        "out={},freq=2000,callchain=fp,{}",
        out.display(),
        text_filter(&guest)
    );
    let mut qemu = QemuGuest::start(&guest.bin, &plugin, &args, RUN_TIMEOUT);
    qemu.wait_for(PROMPT, 1);
    qemu.send("bench 400\n");
    qemu.wait_for("BENCH_START", 1);
    std::thread::sleep(Duration::from_millis(400));
    qemu.kill();
    let exit = qemu.wait_exit();
    assert!(!exit.status.success(), "killed, not exited");
    assert!(
        !exit.console.contains("BENCH_END"),
        "killed before the bench finished"
    );
    assert!(
        !sidecar_path(&out).exists(),
        "no atexit after SIGKILL, so no sidecar"
    );

    let bytes = std::fs::read(&out).expect("qperf.bin survives the kill");
    let (records, report) = read_file(&out).expect("read the killed file");
    assert_eq!(report.version, Some(FormatVersion::V3));
    assert!(records.len() >= 50, "samples up to the kill: {}", records.len());
    let encoded: usize = records
        .iter()
        .map(|r| {
            let mut b = Vec::new();
            encode_v3(r, &mut b);
            b.len()
        })
        .sum();
    // Complete records up to the kill; anything after them is reported, byte-exact.
    match report.end {
        ReadEnd::CleanEof => assert_eq!(encoded, bytes.len()),
        ReadEnd::Truncated { offset, bytes_lost } => {
            assert_eq!(offset as usize, encoded);
            assert_eq!(offset + bytes_lost, bytes.len() as u64);
        }
        other => panic!("unexpected end after SIGKILL: {other:?}"),
    }

    // Cut the last record short by 3 bytes: the reader says where and how much.
    let last_len = {
        let mut b = Vec::new();
        encode_v3(records.last().expect("a record"), &mut b);
        b.len()
    };
    let cut = dir.path().join("cut.bin");
    std::fs::write(&cut, &bytes[..encoded - 3]).expect("write the cut copy");
    let (cut_records, cut_report) = read_file(&cut).expect("read the cut copy");
    assert_eq!(cut_records.len(), records.len() - 1);
    assert_eq!(
        cut_report.end,
        ReadEnd::Truncated {
            offset: (encoded - last_len) as u64,
            bytes_lost: (last_len - 3) as u64
        }
    );
}

#[test]
fn invalid_arguments_stop_qemu_with_a_clear_message() {
    let guest = build_test_guest();
    let plugin = build_plugin();
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("qperf.bin");
    let qemu = QemuGuest::start(
        &guest.bin,
        &plugin,
        &format!("out={},freq=0", out.display()),
        Duration::from_secs(30),
    );
    let exit = qemu.wait_exit();
    assert_eq!(exit.status.code(), Some(1), "{}", exit.stderr);
    assert!(
        exit.stderr.contains("freq=0: must be at least 1"),
        "stderr: {}",
        exit.stderr
    );
    assert!(!exit.stderr.contains("panicked"), "no panic: {}", exit.stderr);
    assert!(
        !Path::new(&out).exists(),
        "nothing is created for a rejected argument list"
    );
}

#[test]
fn a_dropped_stream_does_not_stop_the_file_output() {
    let guest = build_test_guest();
    let plugin = build_plugin();
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("qperf.bin");
    let socket = dir.path().join("stream.sock");
    let listener = UnixListener::bind(&socket).expect("bind");
    let reader = std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().expect("the plugin connects");
        let mut first = [0u8; 64];
        conn.read_exact(&mut first).expect("some records arrive");
        // perfscope goes away mid-run.
    });
    let args = format!(
        "out={},freq=2000,stream={},{}",
        out.display(),
        socket.display(),
        text_filter(&guest)
    );
    let run = run_bench(&guest.bin, &plugin, &args, 50, RUN_TIMEOUT);
    reader.join().expect("reader");
    assert!(
        run.exit.status.success(),
        "QEMU survives the closed socket: {}",
        run.exit.stderr
    );
    let (records, report) = read_file(&out).expect("read qperf.bin");
    assert_eq!(report.end, ReadEnd::CleanEof);
    let summary = PluginSummary::read(&sidecar_path(&out))
        .expect("sidecar")
        .expect("sidecar exists");
    assert_eq!(
        summary.samples(),
        Some(records.len() as u64),
        "the file got every sample"
    );
    assert_eq!(summary.get("stream_errors"), Some("1"), "{}", run.exit.stderr);
}
