//! Every flag that takes seconds goes through one bounded parser (src/cli/units.rs): a
//! value past 4611686018 s (146 years), negative or not a number is a usage error — exit 2,
//! one sentence naming the range, no panic — and the largest value taken runs.

use std::process::{Command, Output};

fn perfscope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_perfscope"))
        .args(args)
        .output()
        .expect("cannot run perfscope")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const POSITIVE: &str = "not a number of seconds above 0 and at most 4611686018 (146 years)";
const FROM_ZERO: &str = "not a number of seconds from 0 to 4611686018 (146 years)";

#[test]
fn duration_past_the_limit_is_a_usage_error_with_one_message() {
    // 2^63 - 1, 2^63, 1e19 and u64::MAX: each panicked adding to an Instant, or was
    // refused as "at most 18446744073709551615 (got 18446744073709552000)".
    for value in [
        "9223372036854775807",
        "9223372036854775808",
        "1e19",
        "18446744073709551615",
    ] {
        let o = perfscope(&["top", "--no-tui", "--duration", value]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{value}: {err}");
        assert_eq!(
            err.lines().next().unwrap_or_default(),
            format!("error: invalid value '{value}' for '--duration <S>': {POSITIVE}"),
        );
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn every_seconds_flag_refuses_what_it_cannot_count() {
    let dir = tempfile::tempdir().unwrap();
    let folded = dir.path().join("x.folded");
    std::fs::write(&folded, "a;b 3\n").unwrap();
    let folded = folded.to_str().unwrap();
    let cases: [(&[&str], &str, &str); 7] = [
        (&["top", "--no-tui", "--duration"], "--duration <S>", POSITIVE),
        (
            &["qemu", "--kernel", "k", "--timeout"],
            "--timeout <S>",
            FROM_ZERO,
        ),
        (
            &["qemu", "--kernel", "k", "--workload-timeout"],
            "--workload-timeout <S>",
            POSITIVE,
        ),
        (
            &["open", folded, "--sliding-seconds"],
            "--sliding-seconds <S>",
            POSITIVE,
        ),
        (
            &["report", "--folded", folded, "--start-sec"],
            "--start-sec <S>",
            FROM_ZERO,
        ),
        (
            &["report", "--folded", folded, "--stop-sec"],
            "--stop-sec <S>",
            FROM_ZERO,
        ),
        (
            &["syscalls", "--no-tui", "--duration"],
            "--duration <S>",
            POSITIVE,
        ),
    ];
    for (args, flag, range) in cases {
        for value in ["1e19", "-1", "NaN", "4611686019"] {
            let mut line = args.to_vec();
            line.push(value);
            let o = perfscope(&line);
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(2), "{line:?}: {err}");
            assert_eq!(
                err.lines().next().unwrap_or_default(),
                format!("error: invalid value '{value}' for '{flag}': {range}"),
                "{line:?}"
            );
        }
    }
}

#[test]
fn the_largest_duration_taken_runs_and_ends_with_its_workload() {
    let dir = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_perfscope"))
        .args(["top", "--no-tui", "--duration", "4611686018", "--", "true"])
        .current_dir(dir.path())
        .output()
        .expect("cannot run perfscope");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!stderr(&o).contains("panicked"));
}

/// The feeds' deadline is `now + duration` only when the clock can count it: a library
/// caller's `Duration::MAX` (past anything the command line takes) panicked adding to an
/// Instant; it is no deadline, and the session ends with its workload.
#[test]
fn a_duration_past_the_clock_is_no_deadline_for_a_feed() {
    use std::time::{Duration, Instant};

    use perfscope::feeds::host::options::{HostRunOptions, HostTarget, RingOptions, SamplingOptions};
    use perfscope::feeds::host::sampling_feed::HostSampleFeed;
    use perfscope::feeds::{Feed, FeedStatus};
    use perfscope::symbols::host::RootFrame;

    let dir = tempfile::tempdir().unwrap();
    let run = HostRunOptions {
        target: HostTarget {
            workload: vec!["true".into()],
            ..HostTarget::default()
        },
        ring: RingOptions::default(),
        record: None,
        duration: Some(Duration::MAX),
        out: dir.path().join("out"),
        exit_after: None,
    };
    let sampling = SamplingOptions {
        freq_hz: 99,
        callchain: false,
        call_graph: Default::default(),
        user_only: false,
        kernel_only: false,
        exclude_self: false,
        inline_frames: false,
        root: RootFrame::Comm,
        sample_lines: false,
    };
    let mut feed = HostSampleFeed::start(&run, &sampling).expect("sampling (run as root)");
    let started = Instant::now();
    let mut updates = Vec::new();
    while feed.poll(&mut updates).expect("the feed runs") != FeedStatus::Finished {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the session did not end with `true`"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
