//! Nothing is written where it must not be (issue 25 §4), on the real binary: a linked
//! directory under `--out` is refused and its target untouched, an architecture name that
//! is a path is refused, and many exports into one `--out` at once each succeed and leave a
//! whole set.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn asset(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets").join(name)
}

fn perfscope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_perfscope"))
        .args(args)
        .output()
        .expect("run perfscope")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn report_args<'a>(folded: &'a Path, out: &'a Path) -> Vec<&'a str> {
    vec![
        "report",
        "--folded",
        folded.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]
}

#[test]
fn a_linked_latest_or_perf_directory_is_refused_and_its_target_kept() {
    let dir = tempfile::tempdir().unwrap();
    let folded = dir.path().join("x.folded");
    std::fs::write(&folded, "main;a 3\nmain;b 2\n").unwrap();
    let victim = dir.path().join("victim");
    std::fs::create_dir_all(&victim).unwrap();
    std::fs::write(victim.join("report.json"), "keep").unwrap();
    std::fs::write(victim.join("hotspots.csv"), "keep").unwrap();
    for (name, link_at) in [("latest", "perf/unknown/latest"), ("perf", "perf")] {
        let out = dir.path().join(format!("out-{name}"));
        let link = out.join(link_at);
        std::fs::create_dir_all(link.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        for open in [false, true] {
            let o = if open {
                perfscope(&[
                    "open",
                    folded.to_str().unwrap(),
                    "--no-tui",
                    "--out",
                    out.to_str().unwrap(),
                ])
            } else {
                perfscope(&report_args(&folded, &out))
            };
            let err = text(&o.stderr);
            assert_eq!(o.status.code(), Some(1), "{name} open={open}: {err}");
            assert!(err.contains("symbolic link"), "{err}");
        }
        assert_eq!(
            std::fs::read_to_string(victim.join("report.json")).unwrap(),
            "keep"
        );
        assert_eq!(
            std::fs::read_dir(&victim).unwrap().count(),
            2,
            "nothing added to the victim"
        );
    }
}

#[test]
fn an_architecture_name_that_is_a_path_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    for arch in ["/abs", "../../..", "a/b"] {
        let o = perfscope(&[
            "report",
            asset("tinyk-riscv64.qperf.bin").to_str().unwrap(),
            "--elf",
            asset("tinyk-riscv64.elf").to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--arch",
            arch,
        ]);
        assert_eq!(o.status.code(), Some(2), "{arch}: {}", text(&o.stderr));
        assert!(text(&o.stderr).contains("not a name"), "{}", text(&o.stderr));
    }
    assert!(!out.exists(), "nothing written");
    assert!(!dir.path().join("abs").exists());
}

/// The default `--out` is shared by every run in a directory: thirty exports at once all
/// succeed, and `latest/` is one whole set (every file its report lists is there).
#[test]
fn thirty_exports_into_one_out_at_once_each_succeed_and_leave_a_whole_set() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let inputs: Vec<PathBuf> = (0..30)
        .map(|i| {
            let f = dir.path().join(format!("p{i}.folded"));
            std::fs::write(&f, format!("main;run_{i} {}\nmain;common 5\n", i + 1)).unwrap();
            f
        })
        .collect();
    let children: Vec<_> = inputs
        .iter()
        .map(|f| {
            Command::new(env!("CARGO_BIN_EXE_perfscope"))
                .args(report_args(f, &out))
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    }
    let latest = out.join("perf/unknown/latest");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(latest.join("report.json")).unwrap()).unwrap();
    for (label, path) in report["artifacts"].as_object().unwrap() {
        assert!(Path::new(path.as_str().unwrap()).exists(), "{label} missing");
    }
    // The set is one run's: its folded file has that run's function.
    let functions = report["hotspots"]["top_functions"].to_string();
    let folded = std::fs::read_to_string(latest.join("qperf/stack.folded")).unwrap();
    let run = folded
        .lines()
        .find_map(|l| l.strip_prefix("main;run_"))
        .and_then(|rest| rest.split(' ').next())
        .expect("a run's function");
    assert!(
        functions.contains(&format!("run_{run}")),
        "{functions} vs run_{run}"
    );
    let left: Vec<_> = std::fs::read_dir(latest.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["latest"], "no staging directory left");
}

/// One policy for every file perfscope writes: `-o FILE` and `--flame-graph NAME` refuse
/// a symbolic link there — dangling or not — and never create or touch its target.
#[test]
fn o_and_flame_graph_files_refuse_links_and_never_create_their_targets() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "keep").unwrap();
    let link = dir.path().join("log");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let dangling = dir.path().join("dangling");
    let target = dir.path().join("made-by-a-link");
    std::os::unix::fs::symlink(&target, &dangling).unwrap();
    for o_file in [&link, &dangling] {
        let o = perfscope(&[
            "top",
            "--no-tui",
            "--duration",
            "0.2",
            "-o",
            o_file.to_str().unwrap(),
            "--out",
            dir.path().join("out").to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
        assert!(text(&o.stderr).contains("symbolic link"), "{}", text(&o.stderr));
    }
    // --flame-graph NAME writes NAME.folded.
    let folded_link = dir.path().join("fg.folded");
    std::os::unix::fs::symlink(&target, &folded_link).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_perfscope"))
        .current_dir(dir.path())
        .args([
            "profile",
            "--no-tui",
            "--duration",
            "0.3",
            "-g",
            "--flame-graph",
            "fg",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("symbolic link"), "{}", text(&o.stderr));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
    assert!(!target.exists(), "a dangling link's target was created");
}
