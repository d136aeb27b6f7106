//! The hostile-argument generator: whole command lines of the real `perfscope` binary —
//! every subcommand and flag its `--help` lists, with values at type limits, paths that are
//! devices, links, FIFOs or missing, selectors and expressions that do not compile — run
//! in a sandbox and held to what a script may trust:
//!
//! - it ends: a run still going after 1 s gets SIGINT and must be gone 6 s later (a QEMU
//!   run's stop grace is 5 s);
//! - it dies of no signal but the SIGINT it was sent (a command that has not yet started
//!   taking it as a request to stop ends by its default action: ended, as asked), and
//!   exits 0, 1, 2 or 3 (never 101, a panic), with no panic on stderr; a failure (1, 2, 3)
//!   says why on stderr (or in `-o FILE`, where it goes then);
//! - it allocates no more than 4 GiB of address space (RLIMIT_AS: past it an allocation
//!   fails and the run aborts, a signal death);
//! - it writes nothing outside its working directory but through a directory the command
//!   line names, and never through a file's symlink (sandbox.rs).
//!
//! An input is the argument list, NUL-separated. The smoke runner generates lists from the
//! grammar (`generate`); libFuzzer mutates the seeds' bytes. The binary is `PERFSCOPE_BIN`,
//! else the workspace's `target/debug/perfscope` (scripts/test.sh builds it first); a run
//! without one fails loudly.

mod grammar;
mod sandbox;
mod values;

use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::mutate::Rng;

use grammar::{Kind, Subcommand};
use sandbox::Sandbox;

/// How long a run goes before it gets SIGINT.
const RUN_FOR: Duration = Duration::from_secs(1);
/// How long it has to end after SIGINT.
const END_WITHIN: Duration = Duration::from_secs(6);
/// The address space a run may use.
const ADDRESS_SPACE: u64 = 4 << 30;

pub const DICTIONARY: &[&[u8]] = &[
    b"\0--duration\0",
    b"\0-m\0",
    b"\0--out\0",
    b"\0-o\0",
    b"\0--arch\0",
    b"\0-e\0",
    b"\0-p\0",
    b"\0-C\0",
    b"\0--no-tui\0",
    b"\0--record\0",
    b"\0--force\0",
    b"\0--follow\0",
    b"\0/dev/zero\0",
    b"\0link-dir\0",
    b"\0dangling\0",
    b"\0fifo\0",
    b"\09223372036854775807\0",
    b"\0@asset/tinyk-riscv64.qperf.bin\0",
    b"\0@asset/tinyk-riscv64.elf\0",
];

/// The cases a person found by hand (issue 25), each a seed.
pub fn generated_seeds() -> Vec<Vec<u8>> {
    const QPERF: &str = "@asset/tinyk-riscv64.qperf.bin";
    const ELF: &str = "@asset/tinyk-riscv64.elf";
    let cases: &[&[&str]] = &[
        &["top", "--no-tui", "--duration", "9223372036854775807"],
        &["top", "--no-tui", "--duration", "18446744073709551615"],
        &["top", "--no-tui", "--duration", "1e19"],
        &["top", "--no-tui", "-m", "9223372036854775808", "--duration", "1"],
        &["trace", "-e", "sched:sched_switch", "-C", "5-2"],
        &["syscalls", "-p", "a"],
        &["syscalls", "-p", "999999"],
        &["report", "--top", "0", "--out", "out", QPERF, "--elf", ELF],
        &["report", "--focus", "[", "--out", "out", QPERF, "--elf", ELF],
        &["qemu", "--freq", "0", "--kernel", ELF],
        &["report", "--folded", "/dev/zero", "--out", "out"],
        &["report", "--out", "out", "--kallsyms", "/dev/zero", QPERF],
        &["report", "--out", "out", "fifo", "--elf", ELF],
        &["open", "--follow", "missing.qperf.bin", "--elf", ELF, "--no-tui"],
        &["num-dist", "-e", "*:*"],
        &["report", "--out", "link-dir", QPERF, "--elf", ELF],
        &[
            "report", "--arch", "../../..", "--out", "out", QPERF, "--elf", ELF,
        ],
        &["report", "--arch", "/abs", "--out", "out", QPERF, "--elf", ELF],
        &["profile", "-o", "dangling", "-F", "997", "--duration", "0.5"],
        &["profile", "-o", "file-link", "-F", "997", "--duration", "0.5"],
        &["profile", "-g", "--flame-graph", "dangling", "--duration", "0.5"],
        &["sql", "missing.db", "SELECT 1"],
        &["top", "--no-tui", "--duration", "0.3", "--record", "s.db"],
        &["open", "/dev/zero", "--no-tui"],
    ];
    cases.iter().map(|args| encode(args)).collect()
}

/// Command lines that work, to start from: the acceptance catalogue's perf-prof lines
/// (tests/catalogue/commands.txt) and these for the recorded inputs and QEMU.
const RECORDED_BASES: &[&str] = &[
    "report --out out @asset/tinyk-riscv64.qperf.bin --elf @asset/tinyk-riscv64.elf",
    "report --out out --folded @asset/tinyk-riscv64.folded",
    "open @asset/tinyk-riscv64.qperf.bin --elf @asset/tinyk-riscv64.elf --no-tui --out out",
    "open @asset/tinyk-riscv64.folded --no-tui",
    "diff @asset/tinyk-riscv64.folded @asset/tinyk-riscv64.folded",
    "qemu --kernel @asset/tinyk-riscv64.elf --no-tui --out out --timeout 3",
    "top --no-tui --duration 0.5 --record s.db",
    "profile -F 997 --duration 0.5",
];

fn bases() -> &'static [Vec<String>] {
    static BASES: OnceLock<Vec<Vec<String>>> = OnceLock::new();
    BASES.get_or_init(|| {
        let catalogue = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/catalogue/commands.txt");
        let catalogue = std::fs::read_to_string(&catalogue)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", catalogue.display()));
        catalogue
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .chain(RECORDED_BASES.iter().copied())
            .map(perfscope::model::text::shell_words)
            .filter(|words| !words.is_empty())
            .collect()
    })
}

/// A command line with hostile values: mostly a working one (a catalogue line) with a
/// flag or two added or changed — one bad value among sane ones reaches past the argument
/// parser — now and then one made from the grammar alone.
pub fn generate(rng: &mut Rng) -> Vec<u8> {
    let grammar = grammar();
    let mut args: Vec<String> = if rng.chance(5) {
        let sub = &grammar[rng.below(grammar.len())];
        let mut args = vec![sub.name.clone()];
        for &kind in &sub.positionals {
            if !rng.chance(4) {
                args.push(value(rng, kind, &[]));
            }
        }
        args
    } else {
        let bases = bases();
        bases[rng.below(bases.len())].clone()
    };
    let Some(sub) = grammar.iter().find(|s| s.name == args[0]) else {
        return encode(&args);
    };
    // Flags go before a workload's `--`.
    let end = args.iter().position(|a| a == "--").unwrap_or(args.len());
    let mut workload = args.split_off(end);
    let edits = if rng.chance(8) {
        4 + rng.below(8)
    } else {
        1 + rng.below(2)
    };
    for _ in 0..edits {
        if sub.flags.is_empty() {
            break;
        }
        let flag = &sub.flags[rng.below(sub.flags.len())];
        let at = args.iter().position(|a| *a == flag.spelling);
        match (at, flag.kind) {
            // A flag the line has: a hostile value in place of its own.
            (Some(at), Some(kind)) if at + 1 < args.len() && rng.chance(2) => {
                args[at + 1] = value(rng, kind, &flag.choices);
            }
            // Dropped: what was required may now be missing.
            (Some(at), kind) if rng.chance(4) => {
                let n = if kind.is_some() { 2 } else { 1 };
                args.drain(at..(at + n).min(args.len()));
            }
            _ => {
                args.push(flag.spelling.clone());
                if let Some(kind) = flag.kind {
                    args.push(value(rng, kind, &flag.choices));
                }
            }
        }
    }
    // Live commands stop by themselves sooner than by the SIGINT, now and then.
    if rng.chance(3) && sub.flags.iter().any(|f| f.spelling == "--duration") {
        args.extend(["--duration".into(), "0.3".into()]);
    }
    if workload.is_empty() && rng.chance(6) {
        let chosen = values::WORKLOADS[rng.below(values::WORKLOADS.len())];
        workload = std::iter::once("--")
            .chain(chosen.iter().copied())
            .map(str::to_string)
            .collect();
    }
    args.append(&mut workload);
    encode(&args)
}

fn value(rng: &mut Rng, kind: Kind, choices: &[String]) -> String {
    if !choices.is_empty() && rng.chance(2) {
        return choices[rng.below(choices.len())].clone();
    }
    let pool = if rng.chance(8) {
        values::TEXT
    } else {
        values::pool(kind)
    };
    let mut v = pool[rng.below(pool.len())].to_string();
    if rng.chance(30) {
        // A long one: names, paths and lines past any sane length.
        v = v.repeat(1 + rng.below(5000));
    }
    v
}

fn encode<S: AsRef<str>>(args: &[S]) -> Vec<u8> {
    args.iter()
        .map(|a| a.as_ref().as_bytes())
        .collect::<Vec<_>>()
        .join(&0u8)
}

/// The argument list of `input`, `@asset/NAME` naming the sandbox's copy in `assets`.
fn decode(input: &[u8], assets: &Path) -> Vec<std::ffi::OsString> {
    use std::os::unix::ffi::OsStrExt;
    input
        .split(|&b| b == 0)
        .map(|arg| match arg.strip_prefix(b"@asset/") {
            Some(name) => assets.join(std::ffi::OsStr::from_bytes(name)).into_os_string(),
            None => std::ffi::OsStr::from_bytes(arg).to_os_string(),
        })
        .collect()
}

/// The binary under test.
pub fn binary() -> PathBuf {
    let bin = std::env::var_os("PERFSCOPE_BIN").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/debug/perfscope"),
        PathBuf::from,
    );
    assert!(
        bin.is_file(),
        "the hostile_args target runs the perfscope binary, and {} is not there: \
         `cargo build --bin perfscope` first, or set PERFSCOPE_BIN",
        bin.display()
    );
    bin
}

fn grammar() -> &'static [Subcommand] {
    static GRAMMAR: OnceLock<Vec<Subcommand>> = OnceLock::new();
    GRAMMAR.get_or_init(|| grammar::discover(&binary()))
}

/// Run one command line in a fresh sandbox; panic (a finding) when it breaks a rule.
pub fn run(input: &[u8]) {
    if input.is_empty() || input.len() > 1 << 20 {
        return;
    }
    let sandbox = Sandbox::new();
    let args = decode(input, &sandbox.assets());
    let (stdout, stderr) = (sandbox.io().join("stdout"), sandbox.io().join("stderr"));
    let mut command = Command::new(binary());
    command
        .args(&args)
        .current_dir(sandbox.work())
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&stdout).unwrap())
        .stderr(std::fs::File::create(&stderr).unwrap());
    // SAFETY: setrlimit, signal and sigprocmask are async-signal-safe; nothing else runs
    // between fork and exec.
    unsafe {
        command.pre_exec(|| {
            // As a terminal's command starts: SIGINT not ignored (a shell's background job
            // — this runner started with `&` — passes SIGINT on ignored), none blocked.
            for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                libc::signal(signal, libc::SIG_DFL);
            }
            let mut none: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut none);
            libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
            let limit = libc::rlimit {
                rlim_cur: ADDRESS_SPACE,
                rlim_max: ADDRESS_SPACE,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let Ok(mut child) = command.spawn() else {
        // An argument the kernel refuses (too long for execve): nothing of perfscope's ran.
        return;
    };
    let started = Instant::now();
    let mut interrupted = None;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        match interrupted {
            None if started.elapsed() > RUN_FOR => {
                // SAFETY: kill(2) on our own child.
                unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
                interrupted = Some(Instant::now());
            }
            Some(at) if at.elapsed() > END_WITHIN => {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "perfscope {} still ran {END_WITHIN:?} after SIGINT; stderr: {}",
                    shown(&args),
                    tail(&stderr)
                );
            }
            _ => {}
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let said = tail(&stderr);
    let line = shown(&args);
    // Ended by the SIGINT it was sent (a command still in its start, before it takes
    // signals as a request to stop: opening a FIFO nobody writes): ended, as asked. Any
    // other signal is a crash (SIGSEGV, SIGABRT of a failed allocation, …).
    if let Some(signal) = status.signal()
        && !(signal == libc::SIGINT && interrupted.is_some())
    {
        panic!("perfscope {line} died of signal {signal}; stderr: {said}");
    }
    assert!(
        !said.contains("panicked at") && !said.contains("RUST_BACKTRACE"),
        "perfscope {line} panicked: {said}"
    );
    if let Some(code) = status.code() {
        assert!(
            (0..=3).contains(&code),
            "perfscope {line} exited {code}; stderr: {said}"
        );
        let output_file = args.iter().any(|a| a == "-o" || a == "--output");
        assert!(
            code == 0 || output_file || !said.trim().is_empty(),
            "perfscope {line} exited {code} without a word on stderr"
        );
    }
    let through_link_dir = args.iter().any(|a| a.as_encoded_bytes().starts_with(b"link-dir"));
    let parents_named = output_paths(&args).map(parents_up).max().unwrap_or(0);
    let absolute_outputs: Vec<std::path::PathBuf> = output_paths(&args)
        .filter(|p| p.starts_with(b"/"))
        .map(|p| std::path::PathBuf::from(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(p)))
        .collect();
    let escapes = sandbox.escapes(through_link_dir, parents_named, &absolute_outputs);
    assert!(
        escapes.is_empty(),
        "perfscope {line} wrote where it must not: {escapes:?}"
    );
}

/// The command line as a shell would take it back (for a finding's message).
fn shown(args: &[std::ffi::OsString]) -> String {
    args.iter()
        .map(|a| {
            let a = a.to_string_lossy();
            let a: String = a.chars().take(80).collect();
            format!("'{}'", a.replace('\'', "'\\''"))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The last 4 KiB of a file, as text.
fn tail(path: &Path) -> String {
    let mut bytes = Vec::new();
    if let Ok(mut file) = std::fs::File::open(path) {
        use std::io::Seek;
        let len = file.metadata().map_or(0, |m| m.len());
        let _ = file.seek(std::io::SeekFrom::Start(len.saturating_sub(4096)));
        let _ = file.read_to_end(&mut bytes);
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The flags whose value is where perfscope writes.
const OUTPUT_FLAGS: &[&[u8]] = &[
    b"--out",
    b"-o",
    b"--output",
    b"--record",
    b"--flame-graph",
    b"--heatmap",
];

/// The values of the output flags on the command line (`--out X` and `--out=X`).
fn output_paths(args: &[std::ffi::OsString]) -> impl Iterator<Item = &[u8]> {
    let bytes: Vec<&[u8]> = args.iter().map(|a| a.as_encoded_bytes()).collect();
    let mut out = Vec::new();
    for (i, arg) in bytes.iter().enumerate() {
        for flag in OUTPUT_FLAGS {
            if arg == flag
                && let Some(value) = bytes.get(i + 1)
            {
                out.push(*value);
            } else if let Some(value) = arg.strip_prefix(*flag).and_then(|v| v.strip_prefix(b"=")) {
                out.push(value);
            }
        }
    }
    out.into_iter()
}

/// How many directories above the working directory `path` names by its leading `..`s
/// (`..` and `../x` are 1, `../../x` 2): an output there is where the user asked for it.
fn parents_up(path: &[u8]) -> usize {
    path.split(|&b| b == b'/')
        .take_while(|part| *part == b"..")
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<std::ffi::OsString> {
        line.split(' ').map(Into::into).collect()
    }

    #[test]
    fn only_an_output_flag_names_where_the_user_asked_to_write() {
        let up = |line: &str| output_paths(&args(line)).map(parents_up).max().unwrap_or(0);
        assert_eq!(up("top --out .."), 1);
        assert_eq!(up("report x --out=../../y"), 2);
        assert_eq!(up("trace -o ../x --record ../../../s.db"), 3);
        // A path elsewhere (--arch, an input) reaches nowhere by itself.
        assert_eq!(up("report ../../x --arch ../../.."), 0);
        assert_eq!(up("report --out"), 0);
    }
}
