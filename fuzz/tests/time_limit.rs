//! The smoke runner's per-execution time limit on the real binary: an execution past it
//! ends the run with exit 1, and its input is on disk (`slow-<hash>`) — the session_db
//! input that ran 20 s could not be recovered before there was one.

use std::process::Command;

#[test]
fn an_execution_past_the_limit_ends_the_run_with_its_input_saved() {
    let artifacts = tempfile::tempdir().unwrap();
    // Every session_db execution writes and reports a SQLite session: far past 1 ms.
    let o = Command::new(env!("CARGO_BIN_EXE_fuzz_smoke"))
        .args(["--seconds", "0", "--time-limit", "0.001", "--artifacts"])
        .arg(artifacts.path())
        .arg("session_db")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(
        stderr
            .starts_with("fuzz_smoke: session_db: an execution ran past the limit of 1ms\n  input saved to "),
        "{stderr}"
    );
    let saved: Vec<_> = std::fs::read_dir(artifacts.path().join("session_db"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(saved.len(), 1, "{saved:?}");
    let name = saved[0].file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with("slow-"), "{name}");
    // The first seed ran first: the found-… edit script of fuzz/seeds/session_db/.
    let first_seed = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("seeds/session_db/found-layout-error-without-the-file.edits"),
    )
    .unwrap();
    assert_eq!(std::fs::read(&saved[0]).unwrap(), first_seed);
    assert!(
        stderr.contains(&format!("--replay {} session_db", saved[0].display())),
        "{stderr}"
    );
}

#[test]
fn a_bad_time_limit_is_a_usage_error() {
    for bad in ["0", "-1", "NaN", "ten"] {
        let o = Command::new(env!("CARGO_BIN_EXE_fuzz_smoke"))
            .args(["--time-limit", bad, "selector"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{bad}");
        assert!(
            String::from_utf8_lossy(&o.stderr)
                .starts_with("fuzz_smoke: --time-limit needs a number of seconds")
        );
    }
}
