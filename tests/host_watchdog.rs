//! `watchdog` end to end (as root): the kernel's watchdog hrtimer is found on every CPU
//! it watches (`== collect all N watchdog hrtimer`, N = the chosen CPUs ∩
//! /proc/sys/kernel/watchdog_cpumask, within one watchdog period), a healthy machine gets
//! no lockup warning, and with no hardware PMU the run says on stdout what it checks
//! instead of NMIs. Nothing on stderr, exit 0. Each watched CPU is kept busy by a pinned
//! spinner: this kind of kernel delivers no tracepoint sample from an idle CPU, so an
//! idle CPU's watchdog expiries go unseen (perf-prof could not find its timer either).

mod common;

use std::process::{Child, Command};

use common::host::{build_fixture, ensure_tracefs, perfscope_ok};

fn cpu_list(text: &str) -> Vec<u32> {
    text.trim()
        .split(',')
        .filter(|p| !p.is_empty())
        .flat_map(|part| match part.split_once('-') {
            Some((a, b)) => (a.parse().unwrap()..=b.parse().unwrap()).collect::<Vec<u32>>(),
            None => vec![part.parse().unwrap()],
        })
        .collect()
}

fn watched(chosen: &[u32]) -> usize {
    let mask = std::fs::read_to_string("/proc/sys/kernel/watchdog_cpumask").unwrap();
    cpu_list(&mask).iter().filter(|c| chosen.contains(c)).count()
}

fn run(args: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let (stdout, stderr) = perfscope_ok(dir.path(), args);
    assert_eq!(stderr, "", "{args:?}");
    stdout
}

#[test]
fn every_watched_cpus_watchdog_timer_is_found_and_a_healthy_machine_gets_no_warning() {
    ensure_tracefs();
    let thresh: u64 = std::fs::read_to_string("/proc/sys/kernel/watchdog_thresh")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // The watchdog hrtimer fires every 2 × thresh / 5 s: one period and a half.
    let seconds = format!("{}", thresh * 2 * 3 / 10 + 1);
    let online = cpu_list(&std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap());
    let no_pmu = !std::path::Path::new("/sys/bus/event_source/devices/cpu").exists();
    let dir = tempfile::tempdir().unwrap();
    let spinner = build_fixture(dir.path(), "getppid_burst", &[]);
    let spin_ms = format!("{}", (thresh * 2 * 3 / 10 + 2) * 1000 / 2);
    for (args, chosen) in [
        (
            vec!["watchdog", "-F", "10", "--duration", &seconds],
            online.clone(),
        ),
        (
            vec!["watchdog", "-C", "1", "-F", "5", "--duration", &seconds],
            vec![1],
        ),
    ] {
        // getppid_burst CPU 0 MS 0: spins 2 × MS pinned to CPU, no call.
        let spinners: Vec<Child> = online
            .iter()
            .map(|cpu| {
                Command::new(&spinner)
                    .args([&cpu.to_string(), "0", &spin_ms, "0"])
                    .spawn()
                    .unwrap()
            })
            .collect();
        let stdout = run(&args);
        for mut s in spinners {
            assert!(s.wait().unwrap().success());
        }
        let mut lines = stdout.lines();
        if no_pmu {
            assert!(
                lines
                    .next()
                    .unwrap()
                    .starts_with("watchdog: no hardware PMU here"),
                "{stdout}"
            );
        }
        let rest: Vec<&str> = lines.collect();
        let collect = format!(" == collect all {} watchdog hrtimer", watched(&chosen));
        assert_eq!(rest.len(), 1, "{args:?}:\n{stdout}");
        assert!(
            rest[0].ends_with(&collect),
            "{args:?}: {:?} wants {collect:?}",
            rest[0]
        );
        assert!(!stdout.contains("WILL:"), "{stdout}");
    }
}
