//! `--callchain dwarf` on real QEMU: the test kernel built without frame pointers
//! (`FRAME_POINTERS=no`, a normal `-g` build whose `.debug_frame` describes its frames) is
//! unwound by the plugin with that call-frame information, on riscv64, loongarch64 and
//! x86_64. The frame-pointer walk on the same kernel cannot give those paths.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::arch_suite::FULL_PATH;
use common::guest::{GuestArch, TestGuest, build_test_guest_without_frame_pointers};
use common::plugin::{PROMPT, QemuGuest, build_plugin, output_ok, perfscope_qemu};
use common::profile::{folded_lines, read_json};
use perfscope::sources::qemu::plugin_args::kernel_text_of;

/// `perfscope qemu --callchain <callchain>` on `arch`'s frame-pointer-less kernel with
/// `bench 300` between the markers; the run's directory.
fn run(arch: GuestArch, callchain: &str, out: &Path) -> PathBuf {
    run_with(arch, callchain, &[], out)
}

fn run_with(arch: GuestArch, callchain: &str, extra: &[&str], out: &Path) -> PathBuf {
    let g = build_test_guest_without_frame_pointers(arch);
    output_ok(
        perfscope_qemu(&g, out)
            .args(["--freq", "997", "--callchain", callchain])
            .args(["--shell-prefix", "starry:~# ", "--workload", "bench 300"])
            .args(["--start-marker", "BENCH_START", "--stop-marker", "BENCH_END"])
            .args(["--timeout", "90"])
            .args(extra),
        &format!("perfscope qemu --callchain {callchain}"),
    );
    out.join(format!("perf/{}/latest", arch.name()))
}

/// mix_leaf's two real callers' whole paths.
const SORT_PATH: &str = "kmain;run_bench;sort_workload;mix_leaf";

/// (mix_leaf samples in the workload window, those on one of its full named paths).
fn mix_leaf_paths(latest: &Path) -> (u64, u64) {
    let lines = folded_lines(&latest.join("qperf/stack.workload.folded"));
    let mix = lines
        .iter()
        .filter(|(s, _)| s.ends_with(";mix_leaf") || s == "mix_leaf");
    let total = mix.clone().map(|(_, n)| n).sum();
    let full = mix
        .filter(|(s, _)| s.ends_with(FULL_PATH) || s.ends_with(SORT_PATH))
        .map(|(_, n)| n)
        .sum();
    (total, full)
}

fn assert_dwarf_gives_full_paths_where_fp_cannot(arch: GuestArch) {
    let dir = tempfile::tempdir().unwrap();
    let dwarf = run(arch, "dwarf", &dir.path().join("dwarf"));
    let (mix, full) = mix_leaf_paths(&dwarf);
    let stats = read_json(&dwarf.join("qperf/resolve.stats.json"));
    let stops = &stats["unwind_stops"];
    let others: Vec<(String, u64)> = folded_lines(&dwarf.join("qperf/stack.workload.folded"))
        .into_iter()
        .filter(|(s, _)| s.ends_with("mix_leaf") && !s.ends_with(FULL_PATH) && !s.ends_with(SORT_PATH))
        .collect();
    eprintln!(
        "{} --callchain dwarf: {full} of {mix} mix_leaf samples on their full paths; unwind stops {stops}; others {others:?}",
        arch.name()
    );
    assert!(mix >= 100, "{mix} mix_leaf samples");
    assert!(full * 100 >= mix * 95, "{full} of {mix} on the full path");
    assert_eq!(stats["callchain"]["method"], "dwarf", "{stats:#}");
    // Every unwind's end is counted; in the kernel nearly all reach the outermost frame
    // (the firmware's samples before it are leaves outside the kernel text).
    let counted: u64 = [
        "end",
        "cfi_missing",
        "bad_read",
        "depth_limit",
        "left_kernel_text",
    ]
    .iter()
    .map(|k| {
        stops[k]
            .as_u64()
            .unwrap_or_else(|| panic!("unwind_stops.{k}: {stats:#}"))
    })
    .sum();
    let records = read_json(&dwarf.join("report.json"))["input"]["records"]
        .as_u64()
        .unwrap();
    let summary = std::fs::read_to_string(dwarf.join("qperf/qperf.summary.txt")).unwrap();
    let idle: u64 = summary
        .lines()
        .find_map(|l| l.strip_prefix("idle_samples = "))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no idle_samples in {summary}"));
    assert_eq!(counted + idle, records, "one stop per sample that ran code");
    let in_kernel = counted - stops["left_kernel_text"].as_u64().unwrap();
    assert!(stops["end"].as_u64().unwrap() * 100 >= in_kernel * 95, "{stops}");
    assert_eq!(stops["depth_limit"], 0, "{stops}");
    assert!(summary.contains("callchain_method = dwarf\n"), "{summary}");

    let fp = run(arch, "fp", &dir.path().join("fp"));
    let (fp_mix, fp_full) = mix_leaf_paths(&fp);
    eprintln!(
        "{} --callchain fp on the same kernel: {fp_full} of {fp_mix}",
        arch.name()
    );
    assert!(fp_mix >= 100, "{fp_mix} mix_leaf samples with fp");
    assert!(
        fp_full * 2 < fp_mix,
        "without frame pointers fp cannot: {fp_full} of {fp_mix}"
    );
}

#[test]
fn riscv64_dwarf_unwinds_a_kernel_without_frame_pointers() {
    assert_dwarf_gives_full_paths_where_fp_cannot(GuestArch::Riscv64);
}

#[test]
fn x86_64_dwarf_unwinds_a_kernel_without_frame_pointers() {
    assert_dwarf_gives_full_paths_where_fp_cannot(GuestArch::X86_64);
}

#[test]
fn loongarch64_dwarf_unwinds_a_kernel_without_frame_pointers() {
    assert_dwarf_gives_full_paths_where_fp_cannot(GuestArch::Loongarch64);
}

/// insn mode samples every instruction, also inside prologues and epilogues, where only
/// the per-instruction CFI rows say where the return address is.
#[test]
fn riscv64_dwarf_in_insn_mode_follows_the_rules_instruction_by_instruction() {
    let dir = tempfile::tempdir().unwrap();
    let latest = run_with(GuestArch::Riscv64, "dwarf", &["--mode", "insn"], dir.path());
    let (mix, full) = mix_leaf_paths(&latest);
    let lines = folded_lines(&latest.join("qperf/stack.workload.folded"));
    let hash_block: u64 = lines
        .iter()
        .filter(|(s, _)| s.ends_with(";hash_block"))
        .map(|(_, n)| n)
        .sum();
    let hash_block_full: u64 = lines
        .iter()
        .filter(|(s, _)| s.ends_with("kmain;run_bench;hash_workload;hash_block"))
        .map(|(_, n)| n)
        .sum();
    eprintln!("riscv64 insn+dwarf: mix_leaf {full} of {mix}, hash_block {hash_block_full} of {hash_block}");
    assert!(mix >= 100 && full * 100 >= mix * 95, "{full} of {mix}");
    assert!(
        hash_block_full * 100 >= hash_block * 95,
        "{hash_block_full} of {hash_block}"
    );
}

/// A kernel ELF without call-frame information is refused before QEMU starts, saying why.
#[test]
fn dwarf_without_call_frame_information_is_refused_before_qemu() {
    let g = build_test_guest_without_frame_pointers(GuestArch::Riscv64);
    let dir = tempfile::tempdir().unwrap();
    let stripped = dir.path().join("stripped.elf");
    let status = Command::new("riscv64-unknown-elf-objcopy")
        .args(["--remove-section", ".debug_frame"])
        .arg(&g.elf)
        .arg(&stripped)
        .status()
        .expect("riscv64-unknown-elf-objcopy: run scripts/install-test-deps.sh");
    assert!(status.success());
    let without_cfi = TestGuest { elf: stripped, ..g };
    let o = perfscope_qemu(&without_cfi, &dir.path().join("out"))
        .args(["--callchain", "dwarf", "--workload", "bench 1", "--timeout", "30"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{stderr}");
    assert!(stderr.contains("has no .eh_frame or .debug_frame"), "{stderr}");
    assert!(!stderr.contains("OpenSBI"), "QEMU never started: {stderr}");
    assert!(
        !dir.path()
            .join("out/perf/riscv64/latest/qperf/qperf.bin")
            .exists()
    );
}

/// `VmHWM` (peak resident set) of a QEMU that loaded the plugin with `callchain=dwarf,cfi=ELF`
/// and booted the frame-pointer-less riscv64 kernel to its prompt.
fn qemu_peak_rss_kib(guest: &TestGuest, cfi: &Path, out: &Path) -> u64 {
    let text = kernel_text_of(&guest.elf).unwrap().expect("a .text section");
    let args = format!(
        "out={},freq=997,callchain=dwarf,cfi={},filter_start={:#x},filter_end={:#x}",
        out.display(),
        cfi.display(),
        text.start,
        text.end
    );
    let mut qemu = QemuGuest::start_guest(guest, &build_plugin(), &args, Duration::from_secs(60));
    qemu.wait_for(PROMPT, 1);
    let status = std::fs::read_to_string(format!("/proc/{}/status", qemu.pid())).unwrap();
    qemu.send("exit\n");
    let exit = qemu.wait_exit();
    assert!(exit.status.success(), "{}", exit.stderr);
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no VmHWM in {status}"))
}

/// The plugin reads the kernel ELF's headers and CFI section, not the whole file: a kernel
/// ELF 256 MiB larger (debug info, as a StarryOS debug build carries ~300 MB of it) leaves
/// QEMU's resident set where it was.
#[test]
fn riscv64_dwarf_keeps_only_the_cfi_of_a_large_elf_in_memory() {
    let g = build_test_guest_without_frame_pointers(GuestArch::Riscv64);
    let dir = tempfile::tempdir().unwrap();
    let pad = dir.path().join("pad.bin");
    const PAD_MIB: u64 = 256;
    let file = std::fs::File::create(&pad).unwrap();
    // Non-zero bytes: nothing along the way may treat the section as empty or sparse.
    let chunk = vec![0x5au8; 1 << 20];
    let mut writer = std::io::BufWriter::new(file);
    for _ in 0..PAD_MIB {
        std::io::Write::write_all(&mut writer, &chunk).unwrap();
    }
    drop(writer);
    let big = dir.path().join("kernel-big.elf");
    let status = Command::new("riscv64-unknown-elf-objcopy")
        .arg("--add-section")
        .arg(format!(".debug_pad={}", pad.display()))
        .arg(&g.elf)
        .arg(&big)
        .status()
        .expect("riscv64-unknown-elf-objcopy: run scripts/install-test-deps.sh");
    assert!(status.success());
    std::fs::remove_file(&pad).unwrap();
    let big_size = std::fs::metadata(&big).unwrap().len();
    assert!(big_size > PAD_MIB << 20, "{big_size}");
    let small = qemu_peak_rss_kib(&g, &g.elf, &dir.path().join("small.bin"));
    let large = qemu_peak_rss_kib(&g, &big, &dir.path().join("large.bin"));
    eprintln!("QEMU peak RSS: {small} KiB with the kernel ELF, {large} KiB with it {PAD_MIB} MiB larger");
    // The padding is 262144 KiB: a plugin that read the file would add all of it.
    assert!(
        large < small + (PAD_MIB << 10) / 8,
        "{large} KiB against {small} KiB: the plugin kept the ELF in memory"
    );
}
