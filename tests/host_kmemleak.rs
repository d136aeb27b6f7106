//! kmemleak and kmemprof end to end on real tracefs and perf_event (as root).
//!
//! Kernel: a fixture opens N pipes and holds them while kmemleak watches it (`-p`): the
//! report must list the two allocations behind each pipe (`alloc_pipe_info`'s kmalloc of
//! its `pipe_inode_info` and of its buffers), exactly N objects each, under stacks that
//! name `alloc_pipe_info`; the control closes its pipes at once and leaves none. kmemprof
//! over the closing fixture pairs each of those allocations with its free.
//!
//! User space: a fixture mallocs and frees in a loop (`churn`) and keeps a known number
//! of blocks (`keep_forever`); kmemleak over uretprobe:malloc / uprobe:free must report
//! exactly those, under a stack that names `keep_forever`, and nothing of `churn`.

mod common;

use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use common::host::{Background, build_fixture, ensure_tracefs, perfscope, perfscope_ok, trace_summary};

static SERIAL: Mutex<()> = Mutex::new(());

/// One at a time: each watches the whole kernel's allocator.
fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

const PIPES: u64 = 40;
const LIBC: &str = "/lib/x86_64-linux-gnu/libc.so.6";

/// One `Leak of B bytes in N objects allocated from:` group (or, without sizes,
/// `N objects allocated from:`) and its frames' function names, leaf first.
#[derive(Debug)]
struct Group {
    bytes: u64,
    objects: u64,
    functions: Vec<String>,
}

fn groups(stdout: &str) -> Vec<Group> {
    let mut out: Vec<Group> = Vec::new();
    for line in stdout.lines() {
        if let Some(rest) = line.strip_suffix(" objects allocated from:") {
            let words: Vec<&str> = rest.split_whitespace().collect();
            let (bytes, objects) = match words.as_slice() {
                ["Leak", "of", b, "bytes", "in", n] => (b.parse().unwrap(), n.parse().unwrap()),
                [n] => (0, n.parse().unwrap()),
                _ => panic!("unexpected group line {line}"),
            };
            out.push(Group {
                bytes,
                objects,
                functions: Vec::new(),
            });
        } else if let (Some(frame), Some(group)) = (line.strip_prefix("    "), out.last_mut()) {
            // `%016x name+0xoff (module)`
            let name = frame.split_whitespace().nth(1).unwrap_or("");
            group
                .functions
                .push(name.split('+').next().unwrap_or(name).to_string());
        }
    }
    out
}

/// Groups whose stack calls `function` right above the allocator (frame 1): the
/// allocations `function` made itself, not the slab's bookkeeping under it.
fn made_by<'a>(groups: &'a [Group], function: &str) -> Vec<&'a Group> {
    groups
        .iter()
        .filter(|g| g.functions.get(1).is_some_and(|f| f == function))
        .collect()
}

/// kmemleak (or kmemprof) over the pipes fixture, run with `-p` for 4 s; stdout.
fn watch_pipes(dir: &Path, close: bool, args: &[&str]) -> String {
    let exe = build_fixture(dir, "pipes", &[]);
    let n = PIPES.to_string();
    // The pause covers perfscope's start (the debug build takes ~3 s on a loaded 2-core
    // machine before its events are open; 1.5 s lost the pipes 2 runs in 3).
    let mut fixture_args = vec![n.as_str(), "5000"];
    if close {
        fixture_args.push("close");
    }
    let holder = Background::start(&exe, &fixture_args);
    let pid = holder.pid().to_string();
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--no-tui", "-m", "256", "-p", &pid, "--duration", "8"]);
    let (stdout, stderr) = perfscope_ok(dir, &all);
    assert_eq!(trace_summary(&stderr, args[0]).lost, 0, "{stderr}");
    drop(holder);
    stdout
}

#[test]
fn kmemleak_reports_the_kernel_memory_of_pipes_held_open() {
    let _serial = serial();
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    let stdout = watch_pipes(
        dir.path(),
        false,
        &[
            "kmemleak",
            "--alloc",
            "kmem:kmalloc//ptr=ptr/size=bytes_alloc/stack/",
            "--free",
            "kmem:kfree//ptr=ptr/",
        ],
    );
    assert!(stdout.contains("\nKMEMLEAK STATS:\nTOTAL alloc "), "{stdout}");
    assert!(stdout.contains("\nLEAKED BYTES REPORT:\n"), "{stdout}");
    let groups = groups(&stdout);
    let pipes = made_by(&groups, "alloc_pipe_info");
    // pipe_inode_info and its buffer array: two allocation sites, N each.
    assert_eq!(pipes.len(), 2, "{stdout}");
    for group in &pipes {
        assert_eq!(group.objects, PIPES, "{group:?}\n{stdout}");
        assert_eq!(group.bytes % PIPES, 0, "one size per site: {group:?}");
        assert!(group.bytes >= PIPES * 64, "{group:?}");
        assert!(
            group.functions.iter().any(|f| f == "do_pipe2"),
            "the syscall is on the stack: {group:?}"
        );
    }
    // The report is sorted by bytes, largest first.
    let bytes: Vec<u64> = groups.iter().map(|g| g.bytes).collect();
    assert!(bytes.windows(2).all(|w| w[0] >= w[1]), "{bytes:?}");
}

#[test]
fn kmemleak_reports_nothing_of_pipes_closed_at_once() {
    let _serial = serial();
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    let stdout = watch_pipes(
        dir.path(),
        true,
        &[
            "kmemleak",
            "-e",
            "kmem:kmalloc//ptr=ptr/size=bytes_alloc/",
            "-e",
            "kmem:kfree",
            "-g",
        ],
    );
    // The allocations were seen (2 per pipe at least) and every one of them freed.
    let total = stdout
        .lines()
        .find_map(|l| l.strip_prefix("TOTAL alloc "))
        .unwrap_or_else(|| panic!("no TOTAL line:\n{stdout}"));
    let allocs: u64 = total.split_whitespace().next().unwrap().parse().unwrap();
    assert!(allocs >= 2 * PIPES, "{stdout}");
    assert!(
        made_by(&groups(&stdout), "alloc_pipe_info").is_empty(),
        "{stdout}"
    );
}

#[test]
fn kmemprof_pairs_each_pipe_allocation_with_its_free() {
    let _serial = serial();
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    let stdout = watch_pipes(
        dir.path(),
        true,
        &[
            "kmemprof",
            "-e",
            "kmem:kmalloc//size=bytes_alloc/stack/",
            "-e",
            "kmem:kfree//stack/",
            "-k",
            "ptr",
        ],
    );
    assert!(stdout.contains("\nkmem:kmalloc => kmem:kfree\n"), "{stdout}");
    // `Allocate B (p%) bytes on N (p%) objects:` then its stack; the same for `Free`.
    let lists = |verb: &str| -> Vec<(u64, Vec<String>)> {
        let mut out: Vec<(u64, Vec<String>)> = Vec::new();
        let mut current: Option<usize> = None;
        for line in stdout.lines() {
            if let Some(rest) = line.strip_prefix(&format!("{verb} ")) {
                let objects = rest.split(" bytes on ").nth(1).unwrap();
                out.push((objects.split(' ').next().unwrap().parse().unwrap(), Vec::new()));
                current = Some(out.len() - 1);
            } else if let (Some(frame), Some(i)) = (line.strip_prefix("    "), current) {
                let name = frame.split_whitespace().nth(1).unwrap_or("");
                out[i].1.push(name.split('+').next().unwrap().to_string());
            } else {
                current = None;
            }
        }
        out
    };
    let allocated: u64 = lists("Allocate")
        .iter()
        .filter(|(_, f)| f.get(1).is_some_and(|f| f == "alloc_pipe_info"))
        .map(|(n, _)| n)
        .sum();
    assert_eq!(allocated, 2 * PIPES, "{stdout}");
    let freed: u64 = lists("Free")
        .iter()
        .filter(|(_, f)| f.iter().any(|f| f == "pipe_release"))
        .map(|(n, _)| n)
        .sum();
    assert!(freed >= 2 * PIPES, "{stdout}");
}

#[test]
fn kmemleak_over_malloc_uprobes_finds_the_blocks_a_program_keeps() {
    let _serial = serial();
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    build_fixture(dir.path(), "leaky", &[]);
    const LEAKS: u64 = 7;
    let (stdout, stderr) = perfscope_ok(
        dir.path(),
        &[
            "kmemleak",
            "--no-tui",
            "-m",
            "256",
            "-e",
            &format!("uretprobe:{LIBC}:malloc//ptr=ret/stack/"),
            "-e",
            &format!("uprobe:{LIBC}:free//ptr=arg1/"),
            "--",
            "./leaky",
            &LEAKS.to_string(),
            "500",
        ],
    );
    assert_eq!(trace_summary(&stderr, "kmemleak").lost, 0, "{stderr}");
    let groups = groups(&stdout);
    let kept: Vec<&Group> = groups
        .iter()
        .filter(|g| g.functions.first().is_some_and(|f| f == "keep_forever"))
        .collect();
    assert_eq!(kept.len(), 1, "{stdout}");
    assert_eq!(kept[0].objects, LEAKS, "{stdout}");
    assert_eq!(
        kept[0].functions.get(1).map(String::as_str),
        Some("main"),
        "{stdout}"
    );
    assert!(
        !groups.iter().any(|g| g.functions.iter().any(|f| f == "churn")),
        "every block churn mallocs it frees:\n{stdout}"
    );
    // 1000 mallocs of churn and the kept ones, at least, and churn's 1000 frees.
    let total = stdout
        .lines()
        .find_map(|l| l.strip_prefix("TOTAL alloc "))
        .unwrap_or_else(|| panic!("no TOTAL line:\n{stdout}"));
    let numbers: Vec<u64> = total.split(" free ").map(|n| n.trim().parse().unwrap()).collect();
    assert!(numbers[0] >= 1000 + LEAKS && numbers[1] >= 1000, "{stdout}");
    let reported: u64 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("KMEMLEAK REPORT: "))
        .unwrap_or_else(|| panic!("no KMEMLEAK REPORT line:\n{stdout}"))
        .parse()
        .unwrap();
    assert_eq!(
        reported,
        groups.iter().map(|g| g.objects).sum::<u64>(),
        "{stdout}"
    );
}

#[test]
fn bad_kmem_command_lines_say_what_to_do_and_fail() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let out = perfscope(dir.path(), args);
        assert!(!out.status.success(), "{args:?} succeeded");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let stderr = run(&["kmemleak", "--no-tui", "--duration", "1"]);
    assert!(
        stderr.contains("kmemleak needs alloc and free events"),
        "{stderr}"
    );
    let stderr = run(&["kmemleak", "--no-tui", "-e", "kmem:kmalloc"]);
    assert!(stderr.contains("add the free events"), "{stderr}");
    ensure_tracefs();
    let stderr = run(&[
        "kmemleak",
        "--no-tui",
        "--alloc",
        "kmem:kmalloc//ptr=no_such_field/",
        "--free",
        "kmem:kfree",
    ]);
    assert!(stderr.contains("no_such_field"), "{stderr}");
    let stderr = run(&["kmemprof", "--no-tui", "-e", "kmem:kfree", "-e", "kmem:kfree"]);
    assert!(stderr.contains("size attribute is not set"), "{stderr}");
}
