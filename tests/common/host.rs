//! Helpers for the host tests (tests/host_cli.rs, tests/host_tmux.rs): build the C
//! fixtures of tests/fixtures/host/ with gcc, make sure tracefs is mounted, run the
//! perfscope binary, and read what it printed and wrote — perf-prof text tables, the
//! lost-event lines of stderr, the `artifacts:` block, hotspots.csv and
//! folded stacks.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// perfscope's syscalls columns: perf-prof's seven, then the percentiles.
pub const SYSCALL_COLUMNS: [&str; 11] = [
    "syscalls",
    "calls",
    "total(us)",
    "min(us)",
    "avg(us)",
    "max(us)",
    "err",
    "p50(us)",
    "p95(us)",
    "p99(us)",
    "p99.9(us)",
];

/// `gcc -O1 -g -fno-omit-frame-pointer <extra> -o dir/name tests/fixtures/host/name.c`.
pub fn build_fixture(dir: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/host")
        .join(format!("{name}.c"));
    let exe = dir.join(name);
    let out = Command::new("gcc")
        .args(["-O1", "-g", "-fno-omit-frame-pointer"])
        .args(extra)
        .arg("-o")
        .arg(&exe)
        .arg(&source)
        .output()
        .expect("gcc must be installed for the host tests (apt-get install gcc libc6-dev)");
    assert!(
        out.status.success(),
        "gcc failed on {}:\n{}",
        source.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

/// Mount tracefs at /sys/kernel/tracing unless it is there; panics when it cannot be.
pub fn ensure_tracefs() {
    let root = Path::new("/sys/kernel/tracing");
    if root.join("events").is_dir() {
        return;
    }
    let out = Command::new("mount")
        .args(["-t", "tracefs", "nodev", "/sys/kernel/tracing"])
        .output()
        .expect("run mount");
    assert!(
        out.status.success() && root.join("events").is_dir(),
        "tracefs is not mounted and `mount -t tracefs nodev /sys/kernel/tracing` failed (run as root): {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Run the perfscope binary in `cwd` to its end.
pub fn perfscope(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_perfscope"))
        .current_dir(cwd)
        .args(args)
        .output()
        .expect("run perfscope")
}

/// Run perfscope and insist that it succeeded; returns (stdout, stderr).
pub fn perfscope_ok(cwd: &Path, args: &[&str]) -> (String, String) {
    let out = perfscope(cwd, args);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success() || only_lost_records(out.status.code(), &stderr),
        "perfscope {args:?} failed ({}):\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    (stdout, stderr)
}

/// Exit 3 (finished but incomplete) whose only reason is records the kernel ring lost: a
/// busy 2-core machine may overrun a ring, which the tests of what was read accept (the
/// exit-code tests pin the code itself).
pub fn only_lost_records(code: Option<i32>, stderr: &str) -> bool {
    let mut reasons = stderr
        .lines()
        .filter(|l| l.starts_with("perfscope: incomplete: "))
        .peekable();
    code == Some(3)
        && reasons.peek().is_some()
        && reasons.all(|l| l.contains("the source lost") && l.contains("records"))
}

/// A background process, killed and reaped on drop.
pub struct Background(pub Child);

impl Background {
    pub fn start(exe: &Path, args: &[&str]) -> Background {
        let child = Command::new(exe)
            .args(args)
            .stdout(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("start {}: {e}", exe.display()));
        Background(child)
    }

    pub fn pid(&self) -> u32 {
        self.0.id()
    }

    /// The ids of its threads now (from /proc/PID/task), waiting up to 5 s for `want`.
    pub fn threads(&self, want: usize) -> Vec<u32> {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let mut tids: Vec<u32> = std::fs::read_dir(format!("/proc/{}/task", self.pid()))
                .map(|dir| {
                    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                        .collect()
                })
                .unwrap_or_default();
            tids.sort_unstable();
            if tids.len() >= want || Instant::now() > deadline {
                return tids;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// What an analyzer run's stderr says: as perf-prof, nothing but the per-interval
/// `<time> <analyzer>: lost N events (T total)` lines and, for exit 3, the reason line
/// (there is no closing summary any more: stderr is for errors and lost events only).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TraceSummary {
    pub lost: u64,
}

pub fn trace_summary(stderr: &str, analyzer: &str) -> TraceSummary {
    let marker = format!(" {analyzer}: lost ");
    let mut lost = 0;
    for line in stderr.lines() {
        if line.starts_with("perfscope: incomplete: ") && line.contains(" lost ") {
            continue;
        }
        let Some(at) = line.find(&marker) else {
            panic!("stderr has more than lost-event lines: {line:?}\n{stderr}");
        };
        // "… lost N events (T total)": T is the run's total so far.
        let total = line[at..]
            .rsplit_once('(')
            .and_then(|(_, t)| t.split_whitespace().next())
            .and_then(|t| t.parse::<u64>().ok())
            .unwrap_or_else(|| panic!("unexpected lost line: {line}"));
        lost = lost.max(total);
    }
    TraceSummary { lost }
}

/// One perf-prof text table: the header line as printed, its column names, and the rows
/// split on whitespace (cells of names without spaces line up with the column names:
/// `start => end` is three columns, as each row's `a => b`).
#[derive(Clone, Debug)]
pub struct TextTable {
    pub header: String,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl TextTable {
    pub fn column(&self, name: &str) -> usize {
        self.columns
            .iter()
            .position(|c| c == name)
            .unwrap_or_else(|| panic!("no column {name} in {:?}", self.header))
    }

    /// The rows whose `key_column` cell is `key`.
    pub fn rows_where<'a>(
        &'a self,
        key_column: &str,
        key: &'a str,
    ) -> impl Iterator<Item = &'a Vec<String>> + 'a {
        let at = self.column(key_column);
        self.rows
            .iter()
            .filter(move |row| row.get(at).map(String::as_str) == Some(key))
    }

    /// A number in `row` under `column`.
    pub fn number(&self, row: &[String], column: &str) -> u64 {
        let cell = &row[self.column(column)];
        cell.parse()
            .unwrap_or_else(|_| panic!("{column} of {row:?} is not a number"))
    }

    /// The sum of `column` over the rows whose `key_column` is `key`.
    pub fn sum_where(&self, key_column: &str, key: &str, column: &str) -> u64 {
        self.rows_where(key_column, key)
            .map(|row| self.number(row, column))
            .sum()
    }
}

/// Every table of an analyzer's stdout: a header line followed by a line of dashes starts
/// one; its rows run until the next line that is not a row (a time stamp line, an event
/// line, a title).
pub fn text_tables(stdout: &str) -> Vec<TextTable> {
    let lines: Vec<&str> = stdout.lines().collect();
    let mut tables = Vec::new();
    let mut i = 0;
    while i + 1 < lines.len() {
        let dashes = lines[i + 1];
        // task-state's first column is two wide (`St`, `--`).
        if !dashes.starts_with("--") || dashes.chars().any(|c| c != '-' && c != ' ') {
            i += 1;
            continue;
        }
        let header = lines[i].to_string();
        let columns: Vec<String> = header.split_whitespace().map(str::to_string).collect();
        let mut rows = Vec::new();
        i += 2;
        // A row starts with a cell, never with a date (the stamp line of the next table).
        while i < lines.len() && !lines[i].trim().is_empty() && !starts_with_date(lines[i]) {
            rows.push(lines[i].split_whitespace().map(str::to_string).collect());
            i += 1;
        }
        tables.push(TextTable {
            header,
            columns,
            rows,
        });
    }
    tables
}

/// `2026-12-03 13:06:16.846588 …`: the wall-clock prefix of perf-prof's lines.
pub fn starts_with_date(line: &str) -> bool {
    let b = line.as_bytes();
    b.len() >= 11 && b[4] == b'-' && b[7] == b'-' && b[10] == b' ' && b[..4].iter().all(u8::is_ascii_digit)
}

/// The path a batch run lists for `key` in its `artifacts:` block.
pub fn artifact(stdout: &str, cwd: &Path, key: &str) -> PathBuf {
    let path = stdout
        .lines()
        .skip_while(|l| l.trim() != "artifacts:")
        .find_map(|l| {
            let mut words = l.split_whitespace();
            (words.next() == Some(key)).then(|| words.next()).flatten()
        })
        .unwrap_or_else(|| panic!("no `{key}` in the artifacts block of:\n{stdout}"));
    cwd.join(path)
}

/// One function row of hotspots.csv.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hotspot {
    pub name: String,
    pub self_samples: u64,
    pub total_samples: u64,
}

/// The `function` rows of hotspots.csv, in file order.
pub fn hotspots(csv: &Path) -> Vec<Hotspot> {
    let text = std::fs::read_to_string(csv).unwrap_or_else(|e| panic!("{}: {e}", csv.display()));
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("kind,name,samples,percent,self,self_percent,total,total_percent"),
        "hotspots.csv header"
    );
    lines
        .filter_map(|line| {
            let rest = line.strip_prefix("function,\"")?;
            // The name is quoted (it may hold commas); the numbers follow the closing quote.
            let (name, numbers) = rest.rsplit_once("\",")?;
            let cells: Vec<&str> = numbers.split(',').collect();
            Some(Hotspot {
                name: name.replace("\"\"", "\""),
                self_samples: cells[2].parse().ok()?,
                total_samples: cells[4].parse().ok()?,
            })
        })
        .collect()
}

/// stack.folded as stack → samples (the file merges identical stacks already).
pub fn folded(path: &Path) -> BTreeMap<String, u64> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .map(|line| {
            let (stack, count) = line
                .rsplit_once(' ')
                .unwrap_or_else(|| panic!("folded line without a count: {line}"));
            (stack.to_string(), count.parse().expect("folded count"))
        })
        .collect()
}
