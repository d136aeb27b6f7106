//! The hostile-argument generator's judge fails when it should: a fake `perfscope`
//! (PERFSCOPE_BIN) that panics, writes through a link out of its sandbox, ignores SIGINT
//! or fails without a word is each a finding, replayed from one saved input.

use std::os::unix::fs::PermissionsExt;
use std::process::Command;

/// Replay the input `report out` against a fake binary running `script`; the run's stderr
/// and exit code.
fn judge(script: &str) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("perfscope");
    std::fs::write(&fake, format!("#!/bin/sh\n{script}\n")).unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let input = dir.path().join("input");
    std::fs::write(&input, b"report\0out").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_fuzz_smoke"))
        .env("PERFSCOPE_BIN", &fake)
        .args(["--artifacts"])
        .arg(dir.path().join("artifacts"))
        .arg("--replay")
        .arg(&input)
        .arg("hostile_args")
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn a_clean_run_is_no_finding() {
    let (code, stderr) = judge("echo fine; exit 0");
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn a_panic_is_a_finding() {
    let (code, stderr) = judge("echo \"thread 'main' panicked at src/x.rs:1:1\" >&2; exit 101");
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("'report' 'out' panicked"), "{stderr}");
}

#[test]
fn an_exit_code_off_the_table_is_a_finding() {
    let (code, stderr) = judge("echo bad >&2; exit 7");
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("'report' 'out' exited 7"), "{stderr}");
}

#[test]
fn writing_through_a_file_link_is_a_finding() {
    let (code, stderr) = judge("echo x >> file-link; exit 0");
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("wrote where it must not"), "{stderr}");
    assert!(stderr.contains("victim/keep was written"), "{stderr}");
}

#[test]
fn writing_above_the_working_directory_is_a_finding() {
    let (code, stderr) = judge("mkdir ../../../perf; exit 0");
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("wrote where it must not"), "{stderr}");
}

#[test]
fn a_failure_without_a_word_is_a_finding() {
    let (code, stderr) = judge("exit 1");
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("exited 1 without a word on stderr"), "{stderr}");
}

#[test]
fn a_run_that_ignores_sigint_is_a_finding() {
    let (code, stderr) = judge("trap '' INT; sleep 30");
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("still ran 6s after SIGINT"), "{stderr}");
}

#[test]
fn a_crash_by_another_signal_is_a_finding() {
    let (code, stderr) = judge("kill -SEGV $$");
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("died of signal 11"), "{stderr}");
}
