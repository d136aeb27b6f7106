//! The values a hostile user types: numbers at type limits, times past any clock, lists
//! backwards, paths that are devices, links, FIFOs or not there, selectors and regular
//! expressions that do not compile, names that are paths, escape sequences.
//!
//! Paths are relative to the sandbox's working directory (sandbox.rs makes each of them),
//! or absolute special files; `@asset/NAME` is a copy of the repository's `assets/NAME` (a
//! real qperf.bin, a real ELF) in the sandbox, spelled so a saved input replays anywhere.

use super::grammar::Kind;

pub const SECONDS: &[&str] = &[
    "0",
    "-1",
    "0.5",
    "1",
    "1e19",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551615",
    "4611686018",
    "4611686019",
    "NaN",
    "inf",
    "-inf",
    "1e-12",
    "5e-324",
    "1e309",
    "",
    " ",
    "1s",
    "0x10",
];

pub const THRESHOLDS: &[&str] = &[
    "1ms",
    "0",
    "-1ms",
    "1e30s",
    "18446744073709551615ns",
    "18446744073709551616",
    "nan",
    "1s",
    "99999999999h",
    "1",
    "",
    "ms",
    "1.5us",
];

pub const NUMBERS: &[&str] = &[
    "0",
    "-1",
    "1",
    "2",
    "3",
    "255",
    "256",
    "1000",
    "65536",
    "2147483647",
    "2147483648",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "1e20",
    "-0",
    "NaN",
    "inf",
    "0x10",
    "",
    "1.5",
    "99999999999999999999999999",
];

pub const CPUS: &[&str] = &[
    "5-2",
    "0-4294967295",
    "-1",
    "0,0,0",
    "1024",
    "",
    "0-1",
    "0",
    ",",
    "0-",
    "4294967296",
    "a",
];

pub const PIDS: &[&str] = &[
    "a",
    "-1",
    "0",
    "999999",
    "1,,2",
    "4294967295",
    "1",
    "2147483648",
    ",",
    "1,1",
];

pub const PATHS: &[&str] = &[
    "/dev/zero",
    "full",
    "/dev/null",
    "missing",
    "link-dir",
    "link-dir/x",
    "dangling",
    "file-link",
    ".",
    "..",
    "fifo",
    "empty",
    "no/such/dir/x",
    "/proc/self/mem",
    "out",
    "out/perf",
    "s.db",
    "@asset/tinyk-riscv64.qperf.bin",
    "@asset/tinyk-riscv64.elf",
    "@asset/tinyk-riscv64.console.txt",
    "@asset/tinyk-riscv64.folded",
];

pub const EVENTS: &[&str] = &[
    "sched:sched_switch",
    "*:*",
    "::",
    "sched:sched_switch//num=/",
    "sched:sched_switch/prev_pid>/",
    "sched:sched_switch//key=nosuch/",
    "sched:sched_switch//num=prev_pid/",
    "raw_syscalls:sys_enter,raw_syscalls:sys_exit",
    "kmem:kmalloc//ptr=ptr/size=bytes_alloc/stack/",
    "sched:sched_wakeup//exec=printf(\"%s%n\", comm)/",
    "uprobe:/dev/zero:main",
    "%s%n",
    "\u{1b}]2;PWNED\u{7}",
    "sched:*",
    "sched:sched_switch/(((((((((((((((((((((1)))))))))))))))))))))/",
];

pub const REGEXES: &[&str] = &["[", "(", "a{99999999}", ".*", "(?i)x", "\\", "", "main"];

pub const ARCHES: &[&str] = &[
    "../../..",
    "/abs",
    "riscv64",
    "x86_64",
    "",
    "..",
    "a/b",
    "loongarch64",
    "aarch64",
    ".",
];

pub const QUERIES: &[&str] = &[
    "SELECT 1",
    "VACUUM INTO 'escaped.db'",
    "ATTACH 'escaped.db' AS x",
    "DROP TABLE samples",
    "PRAGMA journal_mode=WAL",
    "SELECT * FROM samples",
    "SELECT zeroblob(2000000000)",
    "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM r) SELECT count(*) FROM r",
    "",
];

/// Anything: what goes where the kind is unknown, and now and then anywhere.
pub const TEXT: &[&str] = &[
    "",
    "-",
    "--",
    "-1",
    "\u{1b}[2J",
    "%n",
    "\u{202e}",
    "=",
    "default",
    "vim",
    "dark",
    "x",
];

/// Workloads after `--`: none that does harm, some that cannot run.
pub const WORKLOADS: &[&[&str]] = &[
    &["true"],
    &["sleep", "5"],
    &["./missing"],
    &["/dev/zero"],
    &["sh", "-c", "exit 7"],
    &["sh", "-c", "kill -SEGV $$"],
];

pub fn pool(kind: Kind) -> &'static [&'static str] {
    match kind {
        Kind::Seconds => SECONDS,
        Kind::Threshold => THRESHOLDS,
        Kind::Number => NUMBERS,
        Kind::Cpus => CPUS,
        Kind::Pids => PIDS,
        Kind::Path => PATHS,
        Kind::Event => EVENTS,
        Kind::Regex => REGEXES,
        Kind::Arch => ARCHES,
        Kind::Query => QUERIES,
        Kind::Text => TEXT,
    }
}
