//! Guest user space on real QEMU: the riscv64 test kernel runs `user N` in U-mode, a program
//! with its own ELF (tests/guest/riscv64/user.c, linked at 0x40400000). Those samples are
//! `[user]`, never kernel names; given `--user-elf` (on `qemu` or on `report`) they are named
//! by the user program's own symbols, under `[user]`. A run almost all in user space with
//! nothing to name it is `incomplete` (exit 3: the kernel ELF names under a tenth of it),
//! with every artifact written and a warning that says to give --user-elf.

mod common;

use std::path::Path;
use std::process::Command;

use common::guest::{GuestArch, build_test_guest_for};
use common::plugin::{output_ok, perfscope_qemu};
use common::profile::folded_lines;
use perfscope::sources::qperf_file::read_file;

/// Workload-window stacks → (samples whose leaf frame is `leaf`, all samples).
fn leaf_share(folded: &Path, leaf: &str) -> (u64, u64) {
    let lines = folded_lines(folded);
    let total = lines.iter().map(|(_, n)| n).sum();
    let hits = lines
        .iter()
        .filter(|(s, _)| s.rsplit(';').next() == Some(leaf))
        .map(|(_, n)| n)
        .sum();
    (hits, total)
}

#[test]
fn user_mode_samples_are_user_space_and_named_by_the_user_elf() {
    let g = build_test_guest_for(GuestArch::Riscv64);
    let user_elf_path = g.user_elf.clone().expect("riscv64 builds user.elf");
    let user_elf = user_elf_path.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = |name: &str| dir.path().join(name);
    let qemu = |out: &Path| {
        let mut command = perfscope_qemu(&g, out);
        command
            .args([
                "--freq",
                "1000",
                "--callchain",
                "fp",
                "--shell-prefix",
                "starry:~# ",
            ])
            .args(["--workload", "user 40000", "--start-marker", "USER_START"])
            .args(["--stop-marker", "USER_END", "--timeout", "90"]);
        command
    };

    // Without --user-elf: the region, never a kernel name; the run is incomplete.
    let plain = out("plain");
    let o = qemu(&plain).output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("are not in") && stderr.contains("--user-elf"),
        "{stderr}"
    );
    let q = plain.join("perf/riscv64/latest/qperf");
    let (user, total) = leaf_share(&q.join("stack.workload.folded"), "[user]");
    eprintln!("user 40000 without --user-elf: {user} of {total} workload samples are [user]");
    assert!(total >= 100, "{total} workload samples");
    assert!(user * 10 >= total * 8, "{user} of {total} samples in user space");
    // They really ran at the user program's addresses, in U-mode.
    let (records, _) = read_file(q.join("qperf.bin")).unwrap();
    let at_user = records
        .iter()
        .filter(|r| (0x4040_0000..0x4050_0000).contains(&r.pc))
        .count();
    assert!(at_user as u64 >= user, "{at_user} pcs in user.elf's range");
    let all = std::fs::read_to_string(q.join("stack.folded")).unwrap();
    assert!(!all.contains("user_hot"), "no user name without the user ELF");

    // The same recording through `report --user-elf`: named by user.elf, under [user].
    let named = out("named");
    let qperf_bin = q.join("qperf.bin");
    output_ok(
        Command::new(env!("CARGO_BIN_EXE_perfscope"))
            .arg("report")
            .arg(&qperf_bin)
            .arg("--elf")
            .arg(&g.elf)
            .args(["--user-elf", user_elf, "--out"])
            .arg(&named),
        "perfscope report --user-elf",
    );
    let folded = std::fs::read_to_string(named.join("perf/riscv64/latest/qperf/stack.folded")).unwrap();
    let user_hot: u64 = folded
        .lines()
        .filter(|l| l.starts_with("[user];user_hot "))
        .filter_map(|l| l.rsplit_once(' ')?.1.parse::<u64>().ok())
        .sum();
    eprintln!("report --user-elf: {user_hot} samples in [user];user_hot");
    assert!(
        user_hot * 10 >= user * 7,
        "{user_hot} of {user} user samples in user_hot"
    );
    assert!(!folded.lines().any(|l| l.contains("kmain;user_hot")), "{folded}");

    // And live, with --user-elf on `qemu`.
    let live = out("live");
    output_ok(
        qemu(&live).args(["--user-elf", user_elf]),
        "perfscope qemu --user-elf",
    );
    let workload = live.join("perf/riscv64/latest/qperf/stack.workload.folded");
    let (hot, total) = leaf_share(&workload, "user_hot");
    eprintln!("user 40000 with --user-elf: {hot} of {total} workload samples in user_hot");
    assert!(hot * 10 >= total * 6, "{hot} of {total} in user_hot");
    let report = std::fs::read_to_string(live.join("perf/riscv64/latest/report.json")).unwrap();
    assert!(report.contains(user_elf), "report.json names the user ELF given");
}
