//! `kvm-exit` end to end on real tracefs (as root). This host runs no VM of its own: the
//! run must say so once on stdout (perf-prof prints nothing; its harness fails on any
//! stderr line) and exit 0. A VM the test starts (tests/fixtures/host/kvm_guest.c: a
//! real-mode guest doing N port writes) must then show N I/O exits — where the kernel's
//! KVM fires kvm:kvm_exit for them; a software KVM (kvm_pvm, this machine) emulates the
//! guest without a VM exit, and the run must still say it saw none.

mod common;

use std::path::Path;
use std::process::Command;

use common::host::{build_fixture, ensure_tracefs, perfscope};

const NOTICE: &str =
    "kvm-exit: no VM exit seen: no VM is running here, or its exits do not reach kvm:kvm_exit\n";

fn kvm_tracepoints() -> bool {
    Path::new("/sys/kernel/tracing/events/kvm/kvm_exit").is_dir()
}

/// (stdout, stderr, exit code) of `perfscope ARGS` run to its end.
fn run(args: &[&str]) -> (String, String, Option<i32>) {
    let dir = tempfile::tempdir().unwrap();
    let out = perfscope(dir.path(), args);
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code(),
    )
}

#[test]
fn with_no_vm_it_runs_says_so_once_on_stdout_and_exits_0() {
    ensure_tracefs();
    for args in [
        &["kvm-exit", "-i", "300", "--duration", "1.5"][..],
        &[
            "kvm-exit",
            "-C",
            "0-1",
            "--perins",
            "--filter",
            "exit_reason==30",
            "--duration",
            "1",
        ][..],
    ] {
        let (stdout, stderr, code) = run(args);
        if !kvm_tracepoints() {
            assert_eq!(code, Some(1), "{args:?}: {stderr}");
            assert!(stderr.contains("the kvm module is not loaded"), "{stderr}");
            continue;
        }
        assert_eq!(
            (code, stderr.as_str()),
            (Some(0), ""),
            "{args:?}\nstdout:\n{stdout}"
        );
        // Four prints (-i 300 over 1.5 s, and the end) and one notice: nothing else.
        assert_eq!(stdout, NOTICE, "{args:?}");
    }
}

#[test]
fn a_vm_started_by_the_test_has_its_io_exits_counted_or_none_seen() {
    ensure_tracefs();
    if !kvm_tracepoints() || !Path::new("/dev/kvm").exists() {
        let (_, stderr, code) = run(&["kvm-exit", "--duration", "0.5"]);
        assert!(code == Some(1) || stderr.is_empty(), "{stderr}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let guest = build_fixture(dir.path(), "kvm_guest", &[]);
    const EXITS: u32 = 1000;
    let tracer = std::thread::spawn(|| run(&["kvm-exit", "--duration", "3"]));
    // The guest waits 1.5 s for the tracer to be on.
    let child = Command::new(&guest)
        .args([EXITS.to_string(), "1500".into()])
        .output()
        .expect("run the guest");
    let (stdout, stderr, code) = tracer.join().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&child.stdout).trim(),
        EXITS.to_string(),
        "the guest served its port writes: {}",
        String::from_utf8_lossy(&child.stderr)
    );
    assert_eq!((code, stderr.as_str()), (Some(0), ""), "stdout:\n{stdout}");
    if stdout == NOTICE {
        // This kernel's KVM emulated the guest: no kvm:kvm_exit fired (see the module doc).
        return;
    }
    let rows: Vec<(String, u64)> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("----"))
        .skip(1)
        .filter(|l| !l.is_empty())
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w[0].to_string(), w[1].parse().unwrap())
        })
        .collect();
    let io: u64 = rows
        .iter()
        .filter(|(r, _)| r == "IO_INSTRUCTION" || r == "EXIT_IOIO")
        .map(|r| r.1)
        .sum();
    assert_eq!(io, u64::from(EXITS), "{stdout}");
    // The hlt ends the run in user space: no entry closes it.
    assert!(
        rows.iter().all(|(r, _)| r != "HLT" && r != "EXIT_HLT"),
        "{stdout}"
    );
}
