//! Hostile input to the host subcommands, on the real binary (issue 11): no panic on any
//! width or duration a user can type, unknown event names rejected at once and quoted
//! once, refused events explained and skipped, `cpus=` honoured, and no escape sequence
//! from an alias or a command name reaching the terminal.

mod common;

use std::process::Output;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use common::host::{ensure_tracefs, perfscope};

/// One test at a time: they share 2 CPUs.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn stderr_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Exit code 101 is Rust's panic; anything that panicked says so on stderr.
fn assert_no_panic(out: &Output, what: &str) {
    let stderr = stderr_of(out);
    let head: String = stderr.chars().take(600).collect();
    assert!(
        out.status.code() != Some(101) && !stderr.contains("panicked"),
        "{what} panicked ({}):\n{head}",
        out.status
    );
}

/// A name longer than `fmt`'s width limit (65,535).
fn long(c: char) -> String {
    std::iter::repeat_n(c, 70_000).collect()
}

#[test]
fn an_alias_past_the_fmt_width_limit_prints_its_table() {
    let _serial = serial();
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    let alias = long('A');
    let selector = format!("sched:sched_stat_runtime//top-by=runtime/alias={alias}/");
    let out = perfscope(
        dir.path(),
        &["top", "-e", &selector, "--no-tui", "--duration", "1", "-i", "400"],
    );
    assert_no_panic(&out, "top with a 70k alias");
    assert!(out.status.success(), "{}", stderr_of(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.lines().any(|l| l.contains(&alias)),
        "the alias heads its column"
    );

    let selector = format!("sched:sched_wakeup//alias={alias}/");
    let out = perfscope(
        dir.path(),
        &[
            "multi-trace",
            "-e",
            &selector,
            "-e",
            "sched:sched_switch",
            "--no-tui",
            "--duration",
            "1",
        ],
    );
    assert_no_panic(&out, "multi-trace with a 70k alias");
    assert!(out.status.success(), "{}", stderr_of(&out));
}

#[test]
fn a_caret_past_the_fmt_width_limit_points_at_the_error() {
    let _serial = serial();
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    let filter = vec!["prev_pid==1"; 6_000].join("&&");
    let selector = format!("sched:sched_switch/{filter}/foo/");
    let out = perfscope(
        dir.path(),
        &["top", "-e", &selector, "--no-tui", "--duration", "1"],
    );
    assert_no_panic(&out, "a selector error at column 77,995");
    assert_eq!(out.status.code(), Some(2), "a usage error");
    let stderr = stderr_of(&out);
    assert!(stderr.contains("unknown attribute 'foo'"), "{}", &stderr[..200]);
    let lines: Vec<&str> = stderr.lines().collect();
    let quoted = lines
        .iter()
        .position(|l| l.trim() == selector)
        .expect("the selector quoted");
    let caret = lines[quoted + 1].find('^').expect("a caret under it");
    assert_eq!(caret, lines[quoted].find("/foo/").unwrap() + 1, "under foo");
}

#[test]
fn a_duration_too_long_for_a_clock_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = perfscope(
        dir.path(),
        &[
            "qemu",
            "--no-tui",
            "--arch",
            "riscv64",
            "--kernel",
            "/nonexistent",
            "--timeout",
            "1e20",
        ],
    );
    assert_no_panic(&out, "qemu --timeout 1e20");
    assert!(stderr_of(&out).contains("--timeout"), "{}", stderr_of(&out));
    for duration in ["1e20", "1e300"] {
        let out = perfscope(dir.path(), &["top", "--no-tui", "--duration", duration]);
        assert_no_panic(&out, "--duration {duration}");
        assert!(!out.status.success());
        let stderr = stderr_of(&out);
        assert!(
            stderr.contains("--duration") && stderr.contains("seconds"),
            "{stderr}"
        );
    }
}

/// Run `top -e selector` to its error; returns (stderr, seconds it took).
fn rejected(selector: &str) -> (String, f64) {
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let out = perfscope(
        dir.path(),
        &["top", "-e", selector, "--no-tui", "--duration", "1"],
    );
    let took = started.elapsed().as_secs_f64();
    assert_no_panic(&out, "an unknown event");
    assert_eq!(out.status.code(), Some(2), "a usage error: {}", stderr_of(&out));
    (stderr_of(&out), took)
}

#[test]
fn an_unknown_event_name_is_rejected_at_once_and_quoted_once() {
    let _serial = serial();
    ensure_tracefs();
    // The whole run, a debug binary's start included, well under a second (it was 19 s
    // for 100k characters); the check itself is timed in the commit message.
    let limit = Duration::from_secs(1).as_secs_f64();
    let name: String = std::iter::repeat_n('a', 100_000).collect();
    let (stderr, took) = rejected(&format!("sched:{name}"));
    assert!(took < limit, "{took:.2} s to reject a 100k-character name");
    assert_eq!(stderr.matches(&name).count(), 1, "the name is quoted once");
    assert!(
        stderr.contains("255"),
        "says the kernel's limit: {}",
        &stderr[..300]
    );
    let system: String = std::iter::repeat_n('s', 300).collect();
    let (stderr, _) = rejected(&format!("{system}:sched_switch"));
    assert!(stderr.contains("255"), "{stderr}");
    // Under the limit, unknown: named, with its caret, as fast.
    let name: String = std::iter::repeat_n('b', 255).collect();
    let (stderr, took) = rejected(&format!("sched:{name}"));
    assert!(took < limit, "{took:.2} s to reject a 255-character name");
    assert!(stderr.contains("unknown event 'sched:bbb"), "{stderr}");
}

/// perf_event_open refuses to sample this tracepoint to everyone, root included (its
/// samples would raise it again): the event a root user meets the refusal with.
const UNSAMPLEABLE: &str = "irq_vectors:irq_work_exit";

fn is_root() -> bool {
    // SAFETY: no arguments, cannot fail.
    unsafe { libc::geteuid() == 0 }
}

#[test]
fn root_refused_an_event_is_told_why_and_the_others_still_run() {
    let _serial = serial();
    ensure_tracefs();
    assert!(is_root(), "the host tests run as root");
    assert!(
        std::path::Path::new("/sys/kernel/tracing/events/irq_vectors/irq_work_exit").is_dir(),
        "this test needs the x86 tracepoint {UNSAMPLEABLE}"
    );
    let dir = tempfile::tempdir().unwrap();
    let out = perfscope(
        dir.path(),
        &["top", "-e", UNSAMPLEABLE, "--no-tui", "--duration", "1"],
    );
    let stderr = stderr_of(&out);
    assert_eq!(out.status.code(), Some(1), "nothing could be opened: {stderr}");
    assert!(
        !stderr.contains("run as root"),
        "root is told to run as root: {stderr}"
    );
    assert!(
        stderr.contains("refused every event") && stderr.contains("does not apply"),
        "{stderr}"
    );

    // Among others: skipped with one warning, the rest runs.
    let selector = format!("{UNSAMPLEABLE},irq_vectors:irq_work_entry,sched:sched_switch");
    let out = perfscope(
        dir.path(),
        &["top", "-e", &selector, "--no-tui", "--duration", "1"],
    );
    let stderr = stderr_of(&out);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stderr.matches("skipped").count(), 1, "one warning: {stderr}");
    assert!(
        stderr.contains("skipped 1 event") && stderr.contains(UNSAMPLEABLE),
        "{stderr}"
    );
    assert_eq!(stderr.matches("irq_work_entry").count(), 0, "it opened: {stderr}");

    // A wildcard over a system that holds it: the rest of the system is opened.
    let out = perfscope(
        dir.path(),
        &["top", "-e", "irq_vectors:*", "--no-tui", "--duration", "1"],
    );
    let stderr = stderr_of(&out);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stderr.matches("skipped").count(), 1, "one warning: {stderr}");
    assert!(
        stderr.contains("skipped 1 event") && stderr.contains(UNSAMPLEABLE),
        "{stderr}"
    );
    let header = String::from_utf8_lossy(&out.stdout);
    assert!(
        header.contains("IRQ_WORK_ENTRY"),
        "the other events have their columns:\n{header}"
    );
}

/// `setpriv` to nobody: the refusals a user meets at kernel.perf_event_paranoid 2.
#[test]
fn a_user_is_pointed_at_what_works_at_their_paranoid_level() {
    let _serial = serial();
    let paranoid: i32 = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(
        paranoid, 2,
        "this test pins the messages of paranoid 2 (Debian's default)"
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let as_nobody = |args: &[&str]| {
        std::process::Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(env!("CARGO_BIN_EXE_perfscope"))
            .args(args)
            .current_dir(dir.path())
            .output()
            .expect("setpriv (util-linux) runs perfscope as nobody")
    };
    // System-wide: not at paranoid 2; the message says what does work.
    let out = as_nobody(&["top", "--no-tui", "--duration", "1", "--out", "o"]);
    let stderr = stderr_of(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("CPU-wide") && stderr.contains("--user-only") && stderr.contains("-p PID"),
        "{stderr}"
    );
    // A workload of one's own with kernel samples: told to add --user-only.
    let out = as_nobody(&["top", "--no-tui", "--duration", "1", "--out", "o", "--", "true"]);
    let stderr = stderr_of(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("kernel samples") && stderr.contains("--user-only"),
        "{stderr}"
    );
    // And what it says works, works.
    let out = as_nobody(&[
        "top",
        "--no-tui",
        "--user-only",
        "--duration",
        "1",
        "--out",
        "o",
        "--",
        "sh",
        "-c",
        "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done",
    ]);
    assert!(out.status.success(), "{}", stderr_of(&out));
}

/// `top -- timeout 3 ./busy`: the busy grandchild is what is profiled, by default.
#[test]
fn a_workload_is_followed_into_its_children_by_default() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    common::host::build_fixture(dir.path(), "hot", &[]);
    let run = |extra: &[&str]| {
        let mut args = vec!["top", "--no-tui", "--duration", "4", "--out", "out"];
        args.extend_from_slice(extra);
        args.extend(["--", "timeout", "3", "./hot", "1.5"]);
        let (stdout, _) = common::host::perfscope_ok(dir.path(), &args);
        let spots = common::host::hotspots(&common::host::artifact(&stdout, dir.path(), "hotspots_csv"));
        spots
            .iter()
            .find(|h| h.name == "hot_leaf")
            .map_or(0, |h| h.self_samples)
    };
    // 1.5 s of CPU at 997 Hz: ~1,500 samples; a shared 2-core machine gets a good part.
    let followed = run(&[]);
    assert!(followed > 100, "only {followed} hot_leaf samples under timeout");
    let alone = run(&["--no-inherit"]);
    assert_eq!(alone, 0, "--no-inherit watches timeout alone");
}

/// The CPU keys (`key=_cpu`) of the rows `top -e SELECTOR` printed.
fn cpu_keys(stdout: &str) -> Vec<u32> {
    let mut keys: Vec<u32> = stdout
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("_CPU"))
        .skip(1)
        .filter_map(|l| l.split_whitespace().next()?.parse().ok())
        .collect();
    keys.sort_unstable();
    keys.dedup();
    keys
}

#[test]
fn cpus_in_a_selector_opens_the_event_on_those_cpus_only() {
    let _serial = serial();
    ensure_tracefs();
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    assert_eq!(
        online.trim(),
        "0-1",
        "this test is written for the 2-CPU test machine"
    );
    let dir = tempfile::tempdir().unwrap();
    let top = |selector: &str| {
        perfscope(
            dir.path(),
            &["top", "-e", selector, "--no-tui", "--duration", "1"],
        )
    };
    let out = top("sched:sched_switch//cpus=1/key=_cpu/");
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert_eq!(
        cpu_keys(&String::from_utf8_lossy(&out.stdout)),
        [1],
        "only CPU 1 recorded"
    );
    // And the other CPU alone.
    let out = top("sched:sched_switch//cpus=0/key=_cpu/");
    assert_eq!(cpu_keys(&String::from_utf8_lossy(&out.stdout)), [0]);
    for missing in ["cpus=4294967295", "cpus=2", "cpus=1-7"] {
        let out = top(&format!("sched:sched_switch//{missing}/"));
        let stderr = stderr_of(&out);
        assert_eq!(out.status.code(), Some(1), "{missing}: {stderr}");
        assert!(
            stderr.contains("does not exist") && stderr.contains("online: 0-1"),
            "{missing}: {stderr}"
        );
    }
}

/// A terminal command hidden in a name: OSC 2 sets the window title.
const TITLE_ESCAPE: &str = "\u{1b}]2;PWNED\u{7}";

/// The hot fixture under a name that is a terminal command (its comm is that name).
fn evil_workload(dir: &std::path::Path) -> String {
    let hot = common::host::build_fixture(dir, "hot", &[]);
    let evil = dir.join(TITLE_ESCAPE);
    std::os::unix::fs::symlink(&hot, &evil).unwrap();
    format!("./{TITLE_ESCAPE}")
}

#[test]
fn escape_codes_in_aliases_and_thread_names_print_as_text() {
    let _serial = serial();
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    let evil = evil_workload(dir.path());
    let selector = "sched:sched_stat_runtime//top-by=runtime/alias=\u{1b}[32mrt/";
    let out = perfscope(dir.path(), &["top", "-e", selector, "--no-tui", "--", &evil, "1"]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        !stdout.contains('\u{1b}') && !stdout.contains('\u{7}'),
        "raw escape in:\n{stdout:?}"
    );
    assert!(stdout.contains("\\e]2;PWNED\\x07"), "the comm as text:\n{stdout}");
    assert!(
        stdout.contains("\\e[32MRT"),
        "the alias as text (the header upper-cased):\n{stdout}"
    );

    let selector = "sched:sched_wakeup//alias=\u{1b}[31mwake/";
    let out = perfscope(
        dir.path(),
        &[
            "multi-trace",
            "-e",
            selector,
            "-e",
            "sched:sched_switch",
            "--no-tui",
            "--duration",
            "1",
        ],
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains('\u{1b}'), "raw escape in:\n{stdout:?}");
    assert!(stdout.contains("\\e[31mwake"), "{stdout}");
}

/// The TUI draws a name that is a terminal command as text: the raw bytes perfscope
/// writes to the terminal (tmux pipe-pane) never hold the escape, the screen shows it
/// spelled out.
#[test]
fn the_tui_draws_an_escape_code_in_a_thread_name_as_text() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let evil = evil_workload(dir.path());
    let script = dir.path().join("run.sh");
    // Through a script: tmux's own command line would mangle the control characters.
    std::fs::write(
        &script,
        format!(
            "exec '{}' top --view flamegraph --root comm -- '{evil}' 30\n",
            env!("CARGO_BIN_EXE_perfscope")
        ),
    )
    .unwrap();
    let tmux = common::tmux::TmuxSession::start("escape", 120, 30, dir.path(), "sh run.sh");
    let raw = dir.path().join("raw.out");
    let pipe = format!("cat >> '{}'", raw.display());
    let piped = tmux.tmux(&["pipe-pane", "-o", "-t", &tmux.name, &pipe]);
    assert!(piped.status.success(), "tmux pipe-pane");
    tmux.wait_for("the comm spelled out", Duration::from_secs(20), |s| {
        s.contains("\\e]2;PWNED\\x07")
    });
    tmux.keys(&["q"]);
    std::thread::sleep(Duration::from_millis(500));
    let bytes = std::fs::read(&raw).unwrap();
    let has = |needle: &[u8]| bytes.windows(needle.len()).any(|w| w == needle);
    assert!(has(b"\\e]2;PWNED"), "the pipe saw the drawn text");
    assert!(!has(b"\x1b]2;PWNED"), "the escape reached the terminal raw");
    assert!(!has(b"]2;PWNED\x07"), "the bell reached the terminal raw");
}

/// Followed children run on both CPUs, so their samples land on both CPU rings: the
/// session hands them over in time order across the rings (a child's mmap, read from one
/// ring, reaches the symbolizer before its samples from the other).
#[test]
fn followed_children_on_two_cpus_drain_in_time_order() {
    use perfscope::feeds::host::options::{HostRunOptions, HostTarget, RingOptions, SamplingOptions};
    use perfscope::feeds::host::raw::RawItem;
    use perfscope::feeds::host::sampling::SampleSession;
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let hot = common::host::build_fixture(dir.path(), "hot", &[]);
    let run = HostRunOptions {
        target: HostTarget {
            workload: vec![
                "sh".into(),
                "-c".into(),
                format!("{0} 1 & {0} 1; wait", hot.display()),
            ],
            inherit: true,
            ..HostTarget::default()
        },
        ring: RingOptions::default(),
        record: None,
        duration: None,
        out: dir.path().join("out"),
        exit_after: None,
    };
    let sampling = SamplingOptions {
        freq_hz: 997,
        callchain: false,
        call_graph: Default::default(),
        user_only: false,
        kernel_only: false,
        exclude_self: false,
        inline_frames: false,
        root: perfscope::symbols::host::RootFrame::Comm,
        sample_lines: false,
    };
    let mut session = SampleSession::open(&run, &sampling).expect("sampling (run as root)");
    let mut items = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    // Long polls: each drain then finds both rings holding samples.
    while session.pump(Duration::from_millis(300), &mut items).unwrap() {
        assert!(Instant::now() < deadline, "the workload did not end");
    }
    let samples: Vec<(u64, u32)> = items
        .iter()
        .filter_map(|i| match i {
            RawItem::Sample(s) => Some((s.time_ns, s.cpu)),
            _ => None,
        })
        .collect();
    let cpus: std::collections::BTreeSet<u32> = samples.iter().map(|s| s.1).collect();
    // Two children of 1 s wall time at 997 Hz: ~2,000 samples on an idle machine, fewer
    // beside other busy processes (465 beside two busy loops); enough to see the order.
    assert!(samples.len() > 200, "{} samples", samples.len());
    assert_eq!(cpus.len(), 2, "two busy children use both CPUs");
    let backwards = samples.windows(2).filter(|w| w[1].0 < w[0].0).count();
    assert_eq!(backwards, 0, "{backwards} samples older than the one before them");
}
