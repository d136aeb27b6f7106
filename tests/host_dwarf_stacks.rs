//! `--call-graph dwarf` on real perf_event: programs built without frame pointers (a C
//! one, `gcc -O2 -fomit-frame-pointer -fasynchronous-unwind-tables`, and a Rust one,
//! `rustc -C opt-level=2 -C force-frame-pointers=no -g`) are profiled by `top --no-tui`
//! and `profile`; their hot leaf's samples must sit under the whole chain of named callers
//! with dwarf, and not with fp on the same binary. The fixtures are built from
//! tests/fixtures/host/ into target/tmp/ by the tests themselves.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, MutexGuard, OnceLock};

use common::host::{artifact, folded, perfscope, perfscope_ok};

/// One perf session at a time: two CPUs, and each run samples at 997 Hz.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn fixtures_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("host-dwarf-fixtures");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn source(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/host")
        .join(name)
}

fn run_ok(command: &mut Command, what: &str) {
    let out = command
        .output()
        .unwrap_or_else(|e| panic!("{what} must be installed for these tests: {e}"));
    assert!(
        out.status.success(),
        "{what} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The C fixture: main → outer → middle → hot_leaf, no frame pointers.
fn c_fixture() -> &'static Path {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| {
        let exe = fixtures_dir().join("nofp");
        run_ok(
            Command::new("gcc")
                .args([
                    "-O2",
                    "-fomit-frame-pointer",
                    "-fasynchronous-unwind-tables",
                    "-o",
                ])
                .arg(&exe)
                .arg(source("nofp.c")),
            "gcc",
        );
        // What makes fp fail: none of the chain's functions keeps rbp as a frame pointer.
        for function in ["main", "outer", "middle", "hot_leaf"] {
            let out = Command::new("objdump")
                .arg(format!("--disassemble={function}"))
                .arg(&exe)
                .output();
            if let Ok(out) = out {
                let text = String::from_utf8_lossy(&out.stdout);
                assert!(
                    !text.contains("%rsp,%rbp"),
                    "{function} was built with a frame pointer:\n{text}"
                );
            }
        }
        exe
    })
}

/// The Rust fixture: main → run → outer → middle → hot_leaf, release, no frame pointers.
fn rust_fixture() -> &'static Path {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| {
        let exe = fixtures_dir().join("nofp_rust");
        let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
        run_ok(
            Command::new(rustc)
                .args([
                    "--edition",
                    "2021",
                    "-C",
                    "opt-level=2",
                    "-C",
                    "force-frame-pointers=no",
                    "-g",
                    "-o",
                ])
                .arg(&exe)
                .arg(source("nofp_rust.rs")),
            "rustc",
        );
        exe
    })
}

/// `perfscope top --no-tui --call-graph MODE -- EXE 1.5` in a fresh directory: its
/// stack.folded and its stdout.
fn top(exe: &Path, call_graph: &str) -> (BTreeMap<String, u64>, String) {
    let dir = tempfile::tempdir().unwrap();
    let exe = exe.to_str().unwrap();
    let (stdout, _) = perfscope_ok(
        dir.path(),
        &[
            "top",
            "--no-tui",
            "--call-graph",
            call_graph,
            "--duration",
            "10",
            "--out",
            "out",
            "--",
            exe,
            "1.5",
        ],
    );
    // The run's facts say how its chains were found.
    let stats = std::fs::read_to_string(artifact(&stdout, dir.path(), "resolve_stats")).unwrap();
    let stats: serde_json::Value = serde_json::from_str(&stats).unwrap();
    assert_eq!(stats["callchain"]["method"], call_graph, "{stats:#}");
    (folded(&artifact(&stdout, dir.path(), "folded")), stdout)
}

/// Of the samples whose user leaf is `leaf` (kernel frames may follow it: an interrupt
/// taken there), how many lie under `chain` (which ends with `leaf`), and how many there
/// are.
fn leaf_under_chain(stacks: &BTreeMap<String, u64>, root: &str, leaf: &str, chain: &str) -> (u64, u64) {
    let mut under = 0;
    let mut all = 0;
    for (stack, &n) in stacks {
        let frames: Vec<&str> = stack.split(';').collect();
        let Some(at) = frames.iter().position(|f| *f == leaf) else {
            continue;
        };
        all += n;
        let user = frames[..=at].join(";");
        if frames[0] == root && user.ends_with(chain) {
            under += n;
        }
    }
    (under, all)
}

/// Hot leaf samples under their chain, for dwarf and for fp, on the same binary.
fn dwarf_and_fp_shares(exe: &Path, root: &str, leaf: &str, chain: &str) {
    let (dwarf, stdout) = top(exe, "dwarf");
    let (under, all) = leaf_under_chain(&dwarf, root, leaf, chain);
    // 1.5 s of one spinning thread at 997 Hz: ~1500, fewer on a shared machine.
    assert!(all >= 300, "only {all} {leaf} samples with dwarf: {dwarf:#?}");
    assert!(
        under * 10 >= all * 9,
        "dwarf: only {under} of {all} {leaf} samples under {chain}: {dwarf:#?}"
    );
    // The closing summary says what the stack copies cost.
    let summary = stdout
        .lines()
        .find(|l| l.starts_with("stack copies: "))
        .unwrap_or_else(|| panic!("no stack copies line:\n{stdout}"));
    assert!(summary.contains(" × 8192 bytes = "), "{summary}");
    assert!(summary.contains("records lost"), "{summary}");

    let (fp, stdout) = top(exe, "fp");
    let (fp_under, fp_all) = leaf_under_chain(&fp, root, leaf, chain);
    assert!(fp_all >= 300, "only {fp_all} {leaf} samples with fp: {fp:#?}");
    // Frame pointers cannot name the callers of a program built without them.
    assert!(
        fp_under * 10 <= fp_all,
        "fp put {fp_under} of {fp_all} {leaf} samples under {chain}: {fp:#?}"
    );
    assert!(
        !stdout.contains("stack copies: "),
        "fp copies no stacks:\n{stdout}"
    );
}

#[test]
fn dwarf_puts_a_c_programs_hot_leaf_under_its_callers_and_fp_does_not() {
    let _serial = serial();
    dwarf_and_fp_shares(c_fixture(), "nofp", "hot_leaf", ";main;outer;middle;hot_leaf");
}

#[test]
fn dwarf_puts_a_rust_programs_hot_leaf_under_its_callers_and_fp_does_not() {
    let _serial = serial();
    dwarf_and_fp_shares(
        rust_fixture(),
        "nofp_rust",
        "nofp_rust::hot_leaf",
        ";nofp_rust::main;nofp_rust::run;nofp_rust::outer;nofp_rust::middle;nofp_rust::hot_leaf",
    );
}

#[test]
fn profile_takes_a_dwarf_size_and_folds_the_whole_chain() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let exe = c_fixture().to_str().unwrap();
    let out = perfscope(
        dir.path(),
        &[
            "profile",
            "-F",
            "997",
            "--call-graph",
            "dwarf,16384",
            "--flame-graph",
            "cpu",
            "--",
            exe,
            "1",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.code() == Some(0) || common::host::only_lost_records(out.status.code(), &stderr),
        "{stderr}"
    );
    let text = std::fs::read_to_string(dir.path().join("cpu.folded")).unwrap();
    let stacks: BTreeMap<String, u64> = text
        .lines()
        .map(|l| {
            let (stack, n) = l.rsplit_once(' ').unwrap();
            (stack.to_string(), n.parse().unwrap())
        })
        .collect();
    let (under, all) = leaf_under_chain(&stacks, "nofp", "hot_leaf", ";main;outer;middle;hot_leaf");
    assert!(all >= 200, "only {all} hot_leaf samples: {stacks:#?}");
    assert!(under * 10 >= all * 9, "{under} of {all}: {stacks:#?}");
}

#[test]
fn a_bad_dwarf_size_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    for (size, says) in [("dwarf,1001", "multiple of 8"), ("dwarf,65536", "65528")] {
        let out = perfscope(
            dir.path(),
            &["top", "--no-tui", "--call-graph", size, "--", "true"],
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{size}: {stderr}");
        assert!(
            stderr.contains(says) && stderr.contains("--call-graph"),
            "{size}: {stderr}"
        );
    }
}
