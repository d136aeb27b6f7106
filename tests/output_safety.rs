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

/// Wait (on the file, not the clock) until `db` holds committed samples.
fn until_samples_in(db: &Path) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let n = rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .and_then(|c| c.query_row("SELECT COUNT(*) FROM samples", [], |r| r.get::<_, i64>(0)))
            .unwrap_or(0);
        if n > 0 {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no sample committed to {}",
            db.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

fn recorder(db: &Path, out: &Path, seconds: &str) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_perfscope"))
        .args(["top", "--no-tui", "--duration", seconds, "--record"])
        .arg(db)
        .arg("--out")
        .arg(out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// `--record X --force` while another perfscope records X is refused (the file's lock),
/// and the first recording goes on to a whole session.
#[test]
fn a_session_being_recorded_is_not_taken_by_a_second_recorder() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let first = recorder(&db, &dir.path().join("o1"), "4");
    until_samples_in(&db);
    let o = perfscope(&[
        "top",
        "--no-tui",
        "--duration",
        "0.2",
        "--record",
        db.to_str().unwrap(),
        "--force",
        "--out",
        dir.path().join("o2").to_str().unwrap(),
    ]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("being recorded by another perfscope"), "{err}");
    let o = first.wait_with_output().unwrap();
    assert!(matches!(o.status.code(), Some(0 | 3)), "{}", text(&o.stderr));
    assert!(!text(&o.stderr).contains("not recorded"), "{}", text(&o.stderr));
    let replay = perfscope(&[
        "report",
        db.to_str().unwrap(),
        "--out",
        dir.path().join("o3").to_str().unwrap(),
    ]);
    assert!(
        !text(&replay.stderr).contains("did not finish"),
        "{}",
        text(&replay.stderr)
    );
}

/// A recorder whose file another process replaced does not report success.
#[test]
fn a_recorder_whose_file_was_replaced_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let child = recorder(&db, &dir.path().join("o"), "3");
    until_samples_in(&db);
    let other = dir.path().join("other.db");
    std::fs::write(&other, "").unwrap();
    std::fs::rename(&other, &db).unwrap();
    let o = child.wait_with_output().unwrap();
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(err.contains("was replaced by another process"), "{err}");
}

/// `--force` onto a disk too small for the new recording leaves the old session whole.
#[test]
fn force_on_a_full_disk_keeps_the_previous_session() {
    // A small first session, recorded anywhere, copied onto a disk with room for it and
    // 512 KiB more: a system-wide recording of seconds does not fit there.
    let out = tempfile::tempdir().unwrap();
    let first = out.path().join("first.db");
    let o = perfscope(&[
        "top",
        "--no-tui",
        "--duration",
        "0.3",
        "--record",
        first.to_str().unwrap(),
        "--out",
        out.path().join("a").to_str().unwrap(),
    ]);
    assert!(matches!(o.status.code(), Some(0 | 3)), "{}", text(&o.stderr));
    let before = std::fs::read(&first).unwrap();
    let fs = tempfile::tempdir().unwrap();
    let kib = before.len() / 1024 + 512;
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", &format!("size={kib}k"), "tmpfs"])
        .arg(fs.path())
        .status()
        .unwrap();
    assert!(mounted.success(), "mounting a small tmpfs needs root");
    struct Unmount<'a>(&'a Path);
    impl Drop for Unmount<'_> {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(self.0).status();
        }
    }
    let _unmount = Unmount(fs.path());
    let db = fs.path().join("s.db");
    std::fs::write(&db, &before).unwrap();
    let o = perfscope(&[
        "top",
        "--no-tui",
        "--duration",
        "8",
        "--record",
        db.to_str().unwrap(),
        "--force",
        "--out",
        out.path().join("b").to_str().unwrap(),
        "--",
        "sh",
        "-c",
        "i=0; while [ $i -lt 3000000 ]; do i=$((i+1)); done",
    ]);
    let err = text(&o.stderr);
    // Out of room before it started (1) or while it ran (3): never a clean exit.
    match o.status.code() {
        Some(3) => assert!(err.contains("not recorded"), "{err}"),
        Some(1) => {}
        code => panic!("{code:?}: {err}"),
    }
    assert!(err.contains("full") || err.contains("No space left"), "{err}");
    assert_eq!(
        std::fs::read(&db).unwrap(),
        before,
        "the old session is as it was"
    );
    let left: Vec<_> = std::fs::read_dir(fs.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["s.db"], "no half recording left");
}

/// Names come from binaries, guests and session files: an escape sequence in one never
/// reaches the terminal raw — not in report's summary, report.md, or `sql --csv`.
#[test]
fn escape_sequences_in_names_are_spelled_out_everywhere_they_are_printed() {
    let dir = tempfile::tempdir().unwrap();
    let evil = "\u{1b}[2J\u{1b}[31mevil";
    let folded = dir.path().join("x.folded");
    std::fs::write(&folded, format!("main;{evil} 5\nmain;ok 1\n")).unwrap();
    let out = dir.path().join("out");
    let o = perfscope(&report_args(&folded, &out));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        !o.stdout.contains(&0x1b),
        "raw escape in the summary: {}",
        text(&o.stdout)
    );
    assert!(
        text(&o.stdout).contains("\\e[2J\\e[31mevil"),
        "{}",
        text(&o.stdout)
    );
    let md = std::fs::read(out.join("perf/unknown/latest/report.md")).unwrap();
    assert!(!md.contains(&0x1b), "raw escape in report.md");
    // A program whose name is an escape sequence, recorded: its command-name root frame.
    let program = dir.path().join(evil);
    std::fs::copy("/bin/sh", &program).unwrap();
    let db = dir.path().join("s.db");
    let o = perfscope(&[
        "top",
        "--no-tui",
        "--record",
        db.to_str().unwrap(),
        "--out",
        dir.path().join("o2").to_str().unwrap(),
        "--",
        program.to_str().unwrap(),
        "-c",
        "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done",
    ]);
    assert!(matches!(o.status.code(), Some(0 | 3)), "{}", text(&o.stderr));
    assert!(
        !o.stdout.contains(&0x1b),
        "raw escape in top's summary: {}",
        text(&o.stdout)
    );
    let o = perfscope(&["sql", "--csv", db.to_str().unwrap(), "SELECT name FROM frames"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(!o.stdout.contains(&0x1b), "raw escape in sql --csv");
    assert!(text(&o.stdout).contains("\\e[2J"), "{}", text(&o.stdout));
}

/// `sql` on a session: read only, and only the session — no `VACUUM INTO`, no `ATTACH`; a
/// finished session is one file, so reading it leaves no `-wal`/`-shm` and works from
/// read-only media.
#[test]
fn sql_reaches_no_other_file_and_leaves_nothing_beside_a_finished_session() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let o = perfscope(&[
        "top",
        "--no-tui",
        "--duration",
        "0.3",
        "--record",
        db.to_str().unwrap(),
        "--out",
        dir.path().join("o").to_str().unwrap(),
    ]);
    assert!(matches!(o.status.code(), Some(0 | 3)), "{}", text(&o.stderr));
    let copy = dir.path().join("copy.db");
    for query in [
        format!("VACUUM INTO '{}'", copy.display()),
        format!("ATTACH '{}' AS x", copy.display()),
    ] {
        let o = perfscope(&["sql", db.to_str().unwrap(), &query]);
        assert_ne!(o.status.code(), Some(0), "{query}");
        assert!(!copy.exists(), "{query} wrote {}", copy.display());
    }
    let o = perfscope(&["sql", db.to_str().unwrap(), "SELECT COUNT(*) FROM samples"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["o", "s.db"], "nothing beside the session");
    // Read-only media: a read-only bind mount of the directory.
    let ro = tempfile::tempdir().unwrap();
    let mount = |args: &[&str]| Command::new("mount").args(args).status().unwrap().success();
    assert!(mount(&[
        "--bind",
        dir.path().to_str().unwrap(),
        ro.path().to_str().unwrap()
    ]));
    assert!(mount(&["-o", "remount,ro,bind", ro.path().to_str().unwrap()]));
    let o = perfscope(&[
        "sql",
        ro.path().join("s.db").to_str().unwrap(),
        "SELECT COUNT(*) FROM samples",
    ]);
    let _ = Command::new("umount").arg(ro.path()).status();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
}
