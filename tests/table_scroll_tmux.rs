//! Issue 26: the Tables view scrolls sideways by whole columns. In a real 80×24 terminal
//! (tmux), over a live `syscalls` session on real tracefs as root: the syscalls table is
//! 157 columns wide; Right moves one column on with the key column frozen, every
//! value on screen sits whole under its column's name (right-aligned, as perf-prof prints
//! it: a cut number would end at the screen's edge instead), Left comes back, and `s`
//! names the column it sorts by.

mod common;

use std::time::Duration;

use common::host::{SYSCALL_COLUMNS, ensure_tracefs};
use common::tmux::live_syscalls_tables;

const WAIT: Duration = Duration::from_secs(25);

/// The words of a line, each with the cell it ends at (tmux draws a character a cell).
fn words(line: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut end = 0;
    for (cell, c) in line.chars().enumerate() {
        if c.is_whitespace() || c == '│' {
            if !word.is_empty() {
                out.push((end, std::mem::take(&mut word)));
            }
        } else {
            word.push(c);
            end = cell + 1;
        }
    }
    if !word.is_empty() {
        out.push((end, word));
    }
    out
}

/// The table's header words, and each row's words, as on screen.
type Words = Vec<(usize, String)>;

fn table(screen: &str) -> (Words, Vec<Words>) {
    let lines: Vec<&str> = screen.lines().collect();
    // The column names are the line above perf-prof's dash line.
    let dashes = lines
        .iter()
        .position(|l| l.trim_start_matches('│').starts_with("----"))
        .unwrap_or_else(|| panic!("no dash line:\n{screen}"));
    let header = dashes - 1;
    let rows = lines[header + 2..]
        .iter()
        .map(|l| words(l))
        .take_while(|w| {
            w.first()
                .is_some_and(|(_, name)| name.ends_with(')') && name.contains('('))
        })
        .collect();
    (words(lines[header]), rows)
}

/// The column names on screen when every name is whole and every value of every row ends
/// where a column's name ends; else what is wrong. (A frame may be caught half drawn:
/// callers wait for a screen that holds.)
fn whole_columns(screen: &str) -> Result<Vec<String>, String> {
    let (header, rows) = table(screen);
    if let Some((_, name)) = header
        .iter()
        .find(|(_, name)| !SYSCALL_COLUMNS.contains(&name.as_str()))
    {
        return Err(format!("a cut column name {name:?}"));
    }
    if rows.is_empty() {
        return Err("no rows".into());
    }
    for row in &rows {
        for (end, value) in &row[1..] {
            if !header[1..].iter().any(|(e, _)| e == end) {
                return Err(format!("{value:?} ends at {end}, under no column"));
            }
        }
    }
    Ok(header.into_iter().map(|(_, n)| n).collect())
}

/// Whether the screen shows whole columns starting with `first`.
fn shows(screen: &str, first: &[&str]) -> bool {
    whole_columns(screen).is_ok_and(|names| names.len() >= first.len() && names[..first.len()] == *first)
}

#[test]
fn the_tables_view_scrolls_by_whole_columns_with_the_key_frozen() {
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    let tmux = live_syscalls_tables("perfscope-table-scroll", dir.path(), WAIT);
    // At 80 columns: the key, calls, total(us) and more, all whole, but not the last.
    let screen = tmux.wait_for("the table's first columns, whole", WAIT, |s| {
        s.contains("read(0)") && shows(s, &["syscalls", "calls", "total(us)"])
    });
    assert!(
        !screen.contains("p99.9(us)"),
        "the table is wider than 80:\n{screen}"
    );

    // Right: the key stays, the next column comes first.
    tmux.keys(&["Right"]);
    tmux.wait_for("one column on, whole, the key kept", WAIT, |s| {
        s.contains("read(0)") && shows(s, &["syscalls", "total(us)"])
    });

    // Past the end, Right stays on the last columns, the last of them whole.
    for _ in 0..12 {
        tmux.keys(&["Right"]);
    }
    let screen = tmux.wait_for("the last column, whole, the key kept", WAIT, |s| {
        s.contains("read(0)")
            && whole_columns(s)
                .is_ok_and(|names| names[0] == "syscalls" && names.last().is_some_and(|n| n == "p99.9(us)"))
    });
    let far = whole_columns(&screen).unwrap();
    for _ in 0..3 {
        tmux.keys(&["Right"]);
    }
    std::thread::sleep(Duration::from_millis(300));
    let still = tmux.wait_for("the same columns", WAIT, |s| whole_columns(s).is_ok());
    assert_eq!(whole_columns(&still).unwrap(), far, "{still}");

    // Left all the way: back to the start.
    for _ in 0..12 {
        tmux.keys(&["Left"]);
    }
    tmux.wait_for("back to the first columns", WAIT, |s| {
        shows(s, &["syscalls", "calls", "total(us)"])
    });

    tmux.keys(&["s", "s"]);
    tmux.wait_for("the sort named", WAIT, |s| s.contains("sorted by calls"));
    tmux.keys(&["q"]);
    let screen = tmux.wait_for("the exit", WAIT, |s| s.contains("perfscope-exit="));
    assert!(
        screen.contains("perfscope-exit=0") || screen.contains("perfscope-exit=3"),
        "{screen}"
    );
}
