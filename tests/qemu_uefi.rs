//! `perfscope qemu --arch x86_64 --uefi` end to end on real QEMU: the test kernel's UEFI
//! image (kernel.efi) booted by OVMF from Debian's `ovmf` package (copied into a
//! `TGOS_OVMF_DIR`, as the reference tooling takes it) as the system partition's
//! BOOTX64.EFI, sampled with perfscope's plugin from the firmware's reset onward. OVMF's
//! samples are `[firmware]`, never kernel names; the workload is named from kernel.elf.
//! QEMU, OVMF or gcc missing fails these tests.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

use common::guest::{TestGuest, build_test_guest_efi, symbol_address};
use common::plugin::perfscope_qemu;
use common::profile::{
    MARKER_LATENCY_SAMPLES, folded_leaves, folded_lines, read_json, samples_before_the_start_marker,
    samples_outside,
};
use perfscope::sources::qperf_file::{ReadEnd, read_file};

/// Debian's `ovmf` package: the code/vars pairs, 4 MiB flash first.
const DEBIAN_OVMF: [(&str, &str); 2] = [
    (
        "/usr/share/OVMF/OVMF_CODE_4M.fd",
        "/usr/share/OVMF/OVMF_VARS_4M.fd",
    ),
    ("/usr/share/OVMF/OVMF_CODE.fd", "/usr/share/OVMF/OVMF_VARS.fd"),
];

/// The bench's call path to its hottest leaf (kernel.c), under kmain.
const FULL_PATH: &str = "run_bench;hash_workload;hash_block;mix_leaf";

/// A `TGOS_OVMF_DIR` holding Debian's firmware as `code.fd` and `vars.fd`.
fn ovmf_dir() -> tempfile::TempDir {
    let (code, vars) = DEBIAN_OVMF
        .into_iter()
        .find(|(code, vars)| Path::new(code).is_file() && Path::new(vars).is_file())
        .expect("no OVMF in /usr/share/OVMF: run scripts/install-test-deps.sh (installs ovmf)");
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(code, dir.path().join("code.fd")).unwrap();
    std::fs::copy(vars, dir.path().join("vars.fd")).unwrap();
    dir
}

fn perfscope_qemu_uefi(guest: &TestGuest, ovmf: &Path, out: &Path, extra: &[&str]) -> Output {
    perfscope_qemu(guest, out)
        .env("TGOS_OVMF_DIR", ovmf)
        .arg("--uefi")
        .args(extra)
        .output()
        .unwrap()
}

fn string_array(value: &toml::Value) -> Vec<String> {
    value
        .as_array()
        .expect("an array")
        .iter()
        .map(|v| v.as_str().expect("a string").to_string())
        .collect()
}

#[test]
fn ovmf_boots_kernel_efi_and_its_samples_are_firmware_never_kernel_names() {
    let guest = build_test_guest_efi();
    let ovmf = ovmf_dir();
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let o = perfscope_qemu_uefi(
        &guest,
        ovmf.path(),
        dir.path(),
        &[
            "--freq",
            "1000",
            "--callchain",
            "fp",
            "--shell-prefix",
            "starry:~# ",
            "--workload",
            "bench 300",
            "--start-marker",
            "BENCH_START",
            "--stop-marker",
            "BENCH_END",
            "--timeout",
            "120",
        ],
    );
    let wall = started.elapsed();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "perfscope qemu --uefi failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // efi_main ran (it says where OVMF put the image), then the kernel's shell.
    assert!(stdout.contains("tinyk-efi: image at 0x"), "{stdout}");
    assert!(
        stdout.contains("tinyk: x86_64 kernel running at 0xffffffff8010"),
        "{stdout}"
    );
    assert!(stdout.contains("BENCH_END result="), "{stdout}");

    let latest = dir.path().join("perf/x86_64/latest");
    let q = latest.join("qperf");
    // The boot files, as the reference lays them out, and the command that used them.
    let esp_boot_file = q.join("starryos.esp/EFI/BOOT/BOOTX64.EFI");
    assert_eq!(
        std::fs::read(&esp_boot_file).unwrap(),
        std::fs::read(&guest.bin).unwrap(),
        "{} is kernel.efi",
        esp_boot_file.display()
    );
    assert!(q.join("starryos.vars.fd").is_file());
    let toml: toml::Table = std::fs::read_to_string(q.join("qemu.toml"))
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(toml["uefi"].as_bool(), Some(true));
    let args = string_array(&toml["args"]);
    let drives: Vec<&str> = args
        .windows(2)
        .filter(|w| w[0] == "-drive")
        .map(|w| w[1].as_str())
        .collect();
    assert_eq!(
        drives,
        [
            format!(
                "if=pflash,format=raw,unit=0,readonly=on,file={}",
                ovmf.path().join("code.fd").display()
            ),
            format!(
                "if=pflash,format=raw,unit=1,file={}",
                q.join("starryos.vars.fd").display()
            ),
            format!("format=raw,file=fat:rw:{}", q.join("starryos.esp").display()),
        ]
    );
    assert!(!args.iter().any(|a| a == "-kernel"), "{args:?}");

    // The window and the workload, named from kernel.elf.
    let report = read_json(&latest.join("report.json"));
    assert_eq!(report["result"], "ok", "{report:#}");
    assert_eq!(report["hotspots"]["top_functions"][0]["function"], "mix_leaf");
    let window = read_json(&q.join("window.json"));
    assert_eq!(window["stop_method"], "qmp_quit", "{window:#}");
    let start_sec = window["start_time"].as_f64().expect("BENCH_START caught");
    assert!(window["stop_time"].as_f64().expect("BENCH_END caught") > start_sec);
    let leaves = folded_leaves(&q.join("stack.workload.folded"));
    assert_eq!(leaves[0].0, "mix_leaf", "{leaves:?}");
    let workload = folded_lines(&q.join("stack.workload.folded"));
    let outside = samples_outside(&q.join("stack.workload.folded"), "run_bench");
    assert!(
        outside <= 2 * MARKER_LATENCY_SAMPLES,
        "{outside} workload samples outside the bench: {workload:?}"
    );
    let early = samples_before_the_start_marker(&q.join("stack.boot.folded"), "run_bench");
    assert!(
        early <= MARKER_LATENCY_SAMPLES,
        "{early} bench samples before BENCH_START"
    );
    let mix = leaves[0].1;
    let on_path: u64 = workload
        .iter()
        .filter(|(s, _)| s.ends_with(FULL_PATH) && s.split(';').any(|f| f == "kmain"))
        .map(|(_, n)| n)
        .sum();
    assert!(
        on_path * 10 >= mix * 9,
        "{on_path} of {mix} mix_leaf samples have {FULL_PATH}"
    );

    // Every sample before the kernel's first is OVMF's (or efi_main's, at the address OVMF
    // loaded it): from its flash and from RAM, where its drivers run.
    let (records, end) = read_file(q.join("qperf.bin")).unwrap();
    assert_eq!(end.end, ReadEnd::CleanEof);
    let image = symbol_address(&guest.elf, "_stext")..symbol_address(&guest.elf, "_end");
    let first_kernel = records
        .iter()
        .position(|r| image.contains(&r.pc))
        .expect("samples in the kernel");
    let (boot, kernel_run) = records.split_at(first_kernel);
    let flash = |pc: u64| (0xff00_0000..0x1_0000_0000).contains(&pc);
    let in_flash = boot.iter().filter(|r| flash(r.pc)).count() as u64;
    let in_ram = boot.len() as u64 - in_flash;
    assert!(
        in_flash > 0 && in_ram > 0,
        "OVMF sampled: {in_flash} in its flash, {in_ram} in RAM"
    );
    assert!(
        boot.iter().all(|r| !image.contains(&r.pc)),
        "the split is at the first kernel sample"
    );
    // Once the kernel runs, every sample is the kernel's at its linked address.
    let strays: Vec<String> = kernel_run
        .iter()
        .filter(|r| !image.contains(&r.pc))
        .map(|r| format!("{:#x}", r.pc))
        .collect();
    assert!(
        strays.is_empty(),
        "samples outside the kernel after it ran: {strays:?}"
    );

    let stats = read_json(&q.join("resolve.stats.json"));
    assert_eq!(
        stats["kernel_alias"],
        serde_json::Value::Null,
        "no alias under UEFI: {stats:#}"
    );
    assert_eq!(stats["aliased_frames"], 0, "{stats:#}");
    let outside_kernel = &stats["outside_kernel"];
    assert_eq!(outside_kernel["firmware_frames"], boot.len() as u64, "{stats:#}");
    assert_eq!(outside_kernel["user_frames"], 0, "{stats:#}");
    assert_eq!(outside_kernel["unknown_frames"], 0, "{stats:#}");
    // In the artifacts: OVMF is one `[firmware]` frame, alone; every kernel-named sample is
    // one of the kernel's (so no OVMF sample got a kernel name).
    let (mut named_firmware, mut named_kernel) = (0, 0);
    for variant in ["boot", "workload", "post"] {
        let folded = q.join(format!("stack.{variant}.folded"));
        if variant == "post" && !folded.exists() {
            continue; // no sample after the stop marker
        }
        for (stack, n) in folded_lines(&folded) {
            if stack.contains("[firmware]") {
                assert_eq!(stack, "[firmware]", "firmware alone, in {variant}");
                named_firmware += n;
            } else {
                assert!(!stack.starts_with('['), "{stack} in {variant}");
                named_kernel += n;
            }
        }
    }
    assert_eq!(named_firmware, boot.len() as u64);
    assert_eq!(named_kernel, kernel_run.len() as u64);
    // The saved run, read again by `perfscope report`, knows from its qemu.toml that it
    // booted through UEFI: no alias there either.
    let again = dir.path().join("again");
    let report = Command::new(env!("CARGO_BIN_EXE_perfscope"))
        .arg("report")
        .arg(q.join("qperf.bin"))
        .arg("--elf")
        .arg(&guest.elf)
        .arg("--out")
        .arg(&again)
        .output()
        .unwrap();
    assert!(
        report.status.success(),
        "{}",
        String::from_utf8_lossy(&report.stderr)
    );
    let again_stats = read_json(&again.join("perf/x86_64/latest/qperf/resolve.stats.json"));
    assert_eq!(
        again_stats["kernel_alias"],
        serde_json::Value::Null,
        "{again_stats:#}"
    );
    assert_eq!(again_stats["outside_kernel"], stats["outside_kernel"]);
    let first_kernel_sec = kernel_run[0].elapsed_ns.expect("v3 timestamps") as f64 / 1e9;
    eprintln!(
        "perfscope qemu --uefi: {wall:?} wall; the kernel's first sample at {first_kernel_sec:.2} s, \
         BENCH_START at {start_sec:.2} s; {} samples, {} in OVMF ({:.1} %: {in_flash} in its flash, \
         {in_ram} in RAM), mix_leaf {mix} with {on_path} on the full path",
        records.len(),
        boot.len(),
        100.0 * boot.len() as f64 / records.len() as f64
    );
}

#[test]
fn a_tgos_ovmf_dir_without_the_firmware_or_another_arch_is_refused_before_qemu() {
    let guest = build_test_guest_efi();
    let empty = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let o = perfscope_qemu_uefi(&guest, empty.path(), out.path(), &["--timeout", "30"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success(),
        "an empty TGOS_OVMF_DIR was accepted: {stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "TGOS_OVMF_DIR={} has no code.fd and vars.fd",
            empty.path().display()
        )) && stderr.contains("apt-get install ovmf"),
        "{stderr}"
    );
    let written: Vec<PathBuf> = std::fs::read_dir(out.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(written.is_empty(), "nothing is written: {written:?}");

    let ovmf = ovmf_dir();
    let mut riscv = Command::new(env!("CARGO_BIN_EXE_perfscope"));
    let o = riscv
        .env("TGOS_OVMF_DIR", ovmf.path())
        .args(["qemu", "--no-tui", "--arch", "riscv64", "--uefi", "--kernel"])
        .arg(&guest.bin)
        .arg("--elf")
        .arg(&guest.elf)
        .arg("--out")
        .arg(out.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        stderr.contains("there is no UEFI firmware for riscv64 here"),
        "{stderr}"
    );
}
