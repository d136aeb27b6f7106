//! What every writer promises, checked on the real binary: an error says its OS cause once,
//! a failed export leaves no half file, nothing outside the output is written through a
//! symbolic link, a session file is not replaced without `--force`, and hostile or thin
//! profiles still give every artifact with honest totals.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use common::tmux::TmuxSession;

fn perfscope_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_perfscope"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run perfscope")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn asset(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets")
        .join(name)
        .display()
        .to_string()
}

/// Every regular file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(files_under(&p));
        } else {
            out.push(p);
        }
    }
    out
}

fn qperf_dir(out: &Path) -> PathBuf {
    out.join("perf/unknown/latest/qperf")
}

/// A tmpfs of `kib` KiB mounted on a fresh directory; unmounted on drop.
struct SmallFs {
    dir: tempfile::TempDir,
}

impl SmallFs {
    fn mount(kib: u64) -> SmallFs {
        let dir = tempfile::tempdir().unwrap();
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={kib}k"), "tmpfs"])
            .arg(dir.path())
            .status()
            .expect("run mount");
        assert!(
            status.success(),
            "this test needs root to mount a small tmpfs (a full disk is what it checks)"
        );
        SmallFs { dir }
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

/// A full disk fails the export with the OS error said once, and leaves the previous
/// export's set whole: the new set replaces it only once it is complete (issue 25).
#[test]
fn a_full_disk_is_said_once_and_leaves_the_previous_set_whole() {
    let work = tempfile::tempdir().unwrap();
    let small = work.path().join("small.folded");
    std::fs::write(&small, "main;a 3\nmain;b 2\n").unwrap();
    let folded = work.path().join("big.folded");
    let text: String = (0..1000)
        .map(|i| {
            format!(
                "main;worker_{i};leaf_function_with_a_long_name_{i} {}\n",
                1 + i % 7
            )
        })
        .collect();
    std::fs::write(&folded, text).unwrap();
    let fs = SmallFs::mount(160);
    let out = fs.dir.path().join("o");
    let report = |input: &std::path::Path| {
        perfscope_in(
            work.path(),
            &[
                "report",
                "--folded",
                input.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
            ],
        )
    };
    let first = report(&small);
    assert!(first.status.success(), "{}", stderr(&first));
    let before: Vec<(std::path::PathBuf, Vec<u8>)> = files_under(&out)
        .into_iter()
        .map(|f| {
            let bytes = std::fs::read(&f).unwrap();
            (f, bytes)
        })
        .collect();
    assert!(before.len() > 5, "{before:?}");
    let o = report(&folded);
    let err = stderr(&o);
    assert!(!o.status.success(), "a full disk must fail the report:\n{err}");
    assert_eq!(
        err.matches("os error 28").count(),
        1,
        "the OS error is said once:\n{err}"
    );
    assert_eq!(
        err.matches("No space left on device").count(),
        1,
        "the OS error is said once:\n{err}"
    );
    let after = files_under(&out);
    assert_eq!(after.len(), before.len(), "no file added or removed: {after:?}");
    for (f, bytes) in &before {
        assert_eq!(&std::fs::read(f).unwrap(), bytes, "{} changed", f.display());
    }
}

#[test]
fn no_error_message_in_the_tree_repeats_its_cause() {
    // thiserror prints a `#[source]` (or `#[from]`, or a field named `source`) again after
    // the message in every error chain (`{:#}`), so formatting it into the message too says
    // the OS error twice. The one pattern: a `cause` field formatted in the message.
    let mut offenders = Vec::new();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for file in files_under(&src) {
        if file.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let t = line.trim();
            let here = || format!("{}:{}: {t}", file.display(), i + 1);
            if t.starts_with("#[source]") {
                offenders.push(here());
            }
            if t.contains("#[error(") {
                // The whole attribute, which rustfmt may spread over several lines.
                let end = (i..lines.len())
                    .find(|&j| lines[j].trim_end().ends_with(")]"))
                    .unwrap_or(i);
                let attribute = lines[i..=end].join(" ");
                if attribute.contains("{source}") || attribute.contains("{source:") {
                    offenders.push(here());
                }
            }
            // `#[from]` is fine only behind `#[error(transparent)]`, which prints nothing itself.
            if t.contains("#[from]") {
                let before = lines[i.saturating_sub(2)..i].join(" ");
                if !before.contains("#[error(transparent)]") {
                    offenders.push(here());
                }
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "error types that would say their cause twice (use a `cause` field, no #[source]):\n{}",
        offenders.join("\n")
    );
}

#[test]
fn a_profile_with_no_frame_above_min_percent_still_writes_every_artifact() {
    let work = tempfile::tempdir().unwrap();
    let text: String = (1..=400).map(|i| format!("root{i};leaf 1\n")).collect();
    std::fs::write(work.path().join("f.folded"), text).unwrap();
    let o = perfscope_in(work.path(), &["report", "--folded", "f.folded", "--out", "o"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let q = qperf_dir(&work.path().join("o"));
    for name in ["stack.folded", "flamegraph.svg", "profile.pb.gz", "summary.txt"] {
        let len = std::fs::metadata(q.join(name))
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .len();
        assert!(len > 0, "{name} is empty");
    }
    for name in ["report.json", "report.md", "hotspots.csv"] {
        assert!(q.parent().unwrap().join(name).is_file(), "{name} missing");
    }
    let svg = std::fs::read_to_string(q.join("flamegraph.svg")).unwrap();
    // The root keeps the real total and what was cut is one bar that says so.
    assert!(svg.contains("<title>all (400 samples, 100%)</title>"), "{svg}");
    assert!(svg.contains("[400 frames below 0.3%]"), "{svg}");
}

#[test]
fn the_tui_export_key_writes_a_profile_with_no_frame_above_min_percent() {
    let work = tempfile::tempdir().unwrap();
    let text: String = (1..=400).map(|i| format!("root{i};leaf 1\n")).collect();
    std::fs::write(work.path().join("f.folded"), text).unwrap();
    let command = format!(
        "{} open f.folded --out o; echo perfscope-exit=$?; sleep 60",
        env!("CARGO_BIN_EXE_perfscope")
    );
    let tmux = TmuxSession::start("perfscope-thin-export", 100, 30, work.path(), &command);
    let wait = Duration::from_secs(20);
    // Export what is on screen once the file is read whole (an `e` pressed while it loads
    // exports the part read so far).
    tmux.wait_for("the whole file on the flamegraph", wait, |s| {
        s.contains("Flamegraph") && s.contains("400 samples") && s.contains("done")
    });
    tmux.keys(&["e"]);
    let screen = tmux.wait_for("the export message", wait, |s| {
        s.contains("exported") || s.contains("failed") || s.contains("cannot")
    });
    assert!(screen.contains("exported"), "{screen}");
    let svg = std::fs::read_to_string(qperf_dir(&work.path().join("o")).join("flamegraph.svg"))
        .unwrap_or_else(|e| panic!("no SVG ({e}); screen:\n{screen}"));
    assert!(svg.contains("[400 frames below 0.3%]"), "{svg}");
    tmux.keys(&["q"]);
    let screen = tmux.wait_for("perfscope to exit", wait, |s| s.contains("perfscope-exit="));
    assert!(screen.contains("perfscope-exit=0"), "{screen}");
}

/// The total an SVG's root claims, from `<title>all (N samples, 100%)</title>`.
fn svg_root_total(svg: &str) -> u64 {
    let at = svg.find("<title>all (").expect("a root frame");
    let rest = &svg[at + "<title>all (".len()..];
    rest[..rest.find(' ').unwrap()].replace(',', "").parse().unwrap()
}

#[test]
fn flamegraph_totals_are_the_real_totals_and_the_svg_is_bounded() {
    let work = tempfile::tempdir().unwrap();
    // 1,431 samples in a few fat stacks and 4 thin ones below 0.3 %.
    let mut text = String::from("main;work;hot 1000\nmain;idle 431\n");
    for i in 0..4 {
        text.push_str(&format!("rare_{i};deeper 1\n"));
    }
    std::fs::write(work.path().join("p.folded"), &text).unwrap();
    let o = perfscope_in(work.path(), &["report", "--folded", "p.folded", "--out", "o"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let svg = std::fs::read_to_string(qperf_dir(&work.path().join("o")).join("flamegraph.svg")).unwrap();
    assert_eq!(svg_root_total(&svg), 1435, "the root must hold every sample");
    assert!(
        svg.contains("<title>hot (1,000 samples, 69.69%)</title>"),
        "{svg}"
    );
    // A fluid width (the Search button stays on screen in a narrow window).
    assert!(!svg.contains("width=\"3200\""), "fixed 3,200 px SVG");
    assert!(
        svg.contains("var fluiddrawing = true;"),
        "the SVG should fill its window"
    );

    // A 10,000-deep stack: the SVG is cut at a stated depth, not 160 MB.
    let deep: Vec<String> = (0..10_000).map(|i| format!("f{i}")).collect();
    std::fs::write(work.path().join("deep.folded"), format!("{} 5\n", deep.join(";"))).unwrap();
    let o = perfscope_in(work.path(), &["report", "--folded", "deep.folded", "--out", "d"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let path = qperf_dir(&work.path().join("d")).join("flamegraph.svg");
    let len = std::fs::metadata(&path).unwrap().len();
    assert!(len < 2_000_000, "the deep SVG is {len} bytes");
    let svg = std::fs::read_to_string(&path).unwrap();
    assert_eq!(svg_root_total(&svg), 5);
    assert!(
        svg.contains("stacks cut at depth 512"),
        "the SVG must state its limit"
    );
    assert!(svg.contains("<title>f510 "), "frames up to the limit are drawn");
    assert!(!svg.contains("<title>f600 "), "frames past the limit are not");
    // The differential graph of two deep profiles is cut the same way.
    let deeper: Vec<String> = (0..10_000).map(|i| format!("f{i}")).collect();
    std::fs::write(
        work.path().join("deep2.folded"),
        format!("{} 9\n", deeper.join(";")),
    )
    .unwrap();
    let o = perfscope_in(
        work.path(),
        &["diff", "deep.folded", "deep2.folded", "--out", "dd"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let path = work.path().join("dd/flamegraph.diff.svg");
    let len = std::fs::metadata(&path).unwrap().len();
    assert!(len < 2_000_000, "the deep differential SVG is {len} bytes");
    let svg = std::fs::read_to_string(&path).unwrap();
    assert!(
        svg.contains("stacks cut at depth 512"),
        "the SVG must state its limit"
    );
    // The folded file keeps everything.
    let folded = std::fs::read_to_string(qperf_dir(&work.path().join("d")).join("stack.folded")).unwrap();
    assert!(folded.contains(";f9999 5"));
}

#[test]
fn folded_counts_that_overflow_are_refused_naming_the_line() {
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("max.folded"), "a;b 18446744073709551615\n").unwrap();
    let o = perfscope_in(work.path(), &["report", "--folded", "max.folded", "--out", "o"]);
    assert!(!o.status.success(), "u64::MAX samples must be refused");
    assert!(stderr(&o).contains("line 1"), "{}", stderr(&o));

    std::fs::write(
        work.path().join("sum.folded"),
        "a;b 5000000000000000000\n# fine so far\na;c 5000000000000000000\n",
    )
    .unwrap();
    let o = perfscope_in(work.path(), &["report", "--folded", "sum.folded", "--out", "o"]);
    assert!(!o.status.success(), "a total past 2^63 must be refused");
    let err = stderr(&o);
    assert!(err.contains("line 3") && err.contains("total"), "{err}");
    assert!(!err.contains("panicked"), "{err}");

    // The largest total pprof holds is fine, however deep the stacks (no sum wraps).
    std::fs::write(
        work.path().join("edge.folded"),
        "a;b;c;d 4611686018427387904\nx;b;b;b 4611686018427387903\n",
    )
    .unwrap();
    let o = perfscope_in(work.path(), &["report", "--folded", "edge.folded", "--out", "e"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("9223372036854775807 samples"), "{out}");
    let bytes = std::fs::read(qperf_dir(&work.path().join("e")).join("profile.pb.gz")).unwrap();
    let profile = perfscope::export::pprof::decode(&bytes).unwrap();
    let values: Vec<i64> = profile.sample.iter().map(|s| s.value[0]).collect();
    assert!(values.iter().all(|&v| v > 0), "{values:?}");
    assert_eq!(values.iter().map(|&v| v as i128).sum::<i128>(), i64::MAX as i128);
}

#[test]
fn an_elf_given_as_qperf_bin_is_refused_up_front() {
    let work = tempfile::tempdir().unwrap();
    let elf = asset("tinyk-riscv64.elf");
    let o = perfscope_in(work.path(), &["report", &elf, "--elf", &elf, "--out", "o"]);
    assert!(!o.status.success(), "an ELF is not a sample file");
    let err = stderr(&o);
    assert!(err.contains("is an ELF file, not a qperf.bin"), "{err}");
    assert!(!work.path().join("o").exists(), "nothing may be written for it");

    // Following a file that is being written checks it the same way.
    let o = perfscope_in(
        work.path(),
        &["open", &elf, "--elf", &elf, "--follow", "--no-tui", "--out", "f"],
    );
    assert!(!o.status.success(), "an ELF is not a sample file");
    assert!(
        stderr(&o).contains("is an ELF file, not a qperf.bin"),
        "{}",
        stderr(&o)
    );
}

/// A victim file outside the output and a symlink to it at `link`.
fn plant_link(work: &Path, link: &Path) -> PathBuf {
    let victim = work.join("victim");
    std::fs::write(&victim, "precious").unwrap();
    std::fs::create_dir_all(link.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&victim, link).unwrap();
    victim
}

#[test]
fn diff_refuses_to_write_through_a_symlink() {
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("a.folded"), "main;x 3\n").unwrap();
    std::fs::write(work.path().join("b.folded"), "main;x 1\nmain;y 2\n").unwrap();
    let victim = plant_link(work.path(), &work.path().join("D/diff.csv"));
    let o = perfscope_in(work.path(), &["diff", "a.folded", "b.folded", "--out", "D"]);
    assert!(!o.status.success(), "writing through a link must fail");
    assert!(stderr(&o).contains("symbolic link"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(victim).unwrap(), "precious");
}

#[test]
fn report_and_open_exports_never_write_through_a_symlink() {
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("p.folded"), "main;x 3\nmain;y 1\n").unwrap();
    for (command, out) in [("report", "R"), ("open", "O")] {
        let link = qperf_dir(&work.path().join(out)).join("profile.pb.gz");
        let victim = plant_link(work.path(), &link);
        let args = match command {
            "open" => vec!["open", "p.folded", "--no-tui", "--out", out],
            _ => vec!["report", "--folded", "p.folded", "--out", out],
        };
        let o = perfscope_in(work.path(), &args);
        assert!(o.status.success(), "{command}: {}", stderr(&o));
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious", "{command}");
        let written = std::fs::symlink_metadata(&link).unwrap();
        assert!(
            written.is_file() && written.len() > 0,
            "{command}: a new file replaces the link"
        );
    }
}

#[test]
fn record_refuses_an_existing_session_without_force() {
    let work = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec![
            "top",
            "--no-tui",
            "--duration",
            "0.5",
            "--record",
            "s.db",
            "--out",
            "o",
        ];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--", "sleep", "0.2"]);
        perfscope_in(work.path(), &args)
    };
    let o = run(&[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let first = std::fs::read(work.path().join("s.db")).unwrap();

    let o = run(&[]);
    assert!(
        !o.status.success(),
        "an existing session must not be replaced silently"
    );
    let err = stderr(&o);
    assert!(err.contains("already exists") && err.contains("--force"), "{err}");
    assert_eq!(
        std::fs::read(work.path().join("s.db")).unwrap(),
        first,
        "untouched"
    );

    // A symlink at the session path is refused even with --force.
    std::fs::rename(work.path().join("s.db"), work.path().join("keep.db")).unwrap();
    std::os::unix::fs::symlink(work.path().join("keep.db"), work.path().join("s.db")).unwrap();
    let o = run(&["--force"]);
    assert!(!o.status.success(), "a link at the session path must be refused");
    assert!(stderr(&o).contains("symbolic link"), "{}", stderr(&o));
    assert_eq!(std::fs::read(work.path().join("keep.db")).unwrap(), first);
    std::fs::remove_file(work.path().join("s.db")).unwrap();
    std::fs::rename(work.path().join("keep.db"), work.path().join("s.db")).unwrap();

    let o = run(&["--force"]);
    assert!(o.status.success(), "--force replaces it: {}", stderr(&o));
}
