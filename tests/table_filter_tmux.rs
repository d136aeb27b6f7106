//! Issue 25: the Tables view panicked (`min > max` in views/table.rs) when a `/` filter
//! matched no row. In a real 80×24 terminal (tmux), over a live `syscalls` session on real
//! tracefs as root: the filter that matches nothing keeps the table's title and header and
//! says there are no rows, every key of the view leaves it so, Esc brings the rows back,
//! and `q` ends the run with its verdict's exit code.

mod common;

use std::time::Duration;

use common::host::ensure_tracefs;
use common::tmux::live_syscalls_tables;

const WAIT: Duration = Duration::from_secs(25);
const NO_ROWS: &str = "no rows match /zzz_matches_nothing/";

/// Lines of the screen that are a syscall's row (`│read(0)   …`).
fn syscall_rows(screen: &str) -> usize {
    screen
        .lines()
        .filter_map(|l| l.strip_prefix('│')?.split_whitespace().next())
        .filter(|name| name.ends_with(')') && name.contains('('))
        .count()
}

fn alive(screen: &str) -> bool {
    !screen.contains("perfscope-exit=") && !screen.contains("panicked")
}

#[test]
fn a_filter_matching_no_row_survives_every_key_of_the_tables_view() {
    ensure_tracefs();
    let dir = tempfile::tempdir().unwrap();
    let tmux = live_syscalls_tables("perfscope-table-filter", dir.path(), WAIT);
    tmux.keys(&["/"]);
    tmux.literal("zzz_matches_nothing");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("the filter matching nothing", WAIT, |s| {
        s.contains(NO_ROWS) || !alive(s)
    });
    assert!(alive(&screen), "{screen}");
    assert!(screen.contains("calls"), "the header stays:\n{screen}");
    assert!(!screen.contains("read(0)"), "{screen}");
    // Every key of the Tables view and the global keys that keep it on screen, with the
    // live session redrawing in between (the offenders pane and the help open and close).
    let keys = [
        "s", "s", "S", "o", "Down", "o", "Up", "Down", "Left", "Right", "PPage", "NPage", "Home", "End",
        "Enter", "n", "N", "Space", "Space", "w", "d", "a", "r", "+", "-", "]", "[", "?", "Escape", "BSpace",
        "Tab", "BTab",
    ];
    for key in keys {
        tmux.keys(&[key]);
        std::thread::sleep(Duration::from_millis(150));
        let screen = tmux.screen();
        assert!(alive(&screen), "after {key}:\n{screen}");
    }
    let screen = tmux.wait_for("still no rows after every key", WAIT, |s| {
        s.contains(NO_ROWS) || !alive(s)
    });
    assert!(alive(&screen), "{screen}");
    // Esc clears the filter: the rows are back (in the order the keys sorted them).
    tmux.keys(&["Escape"]);
    tmux.wait_for("the rows back", WAIT, |s| {
        !s.contains(NO_ROWS) && syscall_rows(s) >= 5
    });
    tmux.keys(&["q"]);
    let screen = tmux.wait_for("the exit", WAIT, |s| s.contains("perfscope-exit="));
    // 3 only if the kernel lost events under the machine's load: the verdict says so.
    assert!(
        screen.contains("perfscope-exit=0") || screen.contains("perfscope-exit=3"),
        "{screen}"
    );
    assert!(!screen.contains("panicked"), "{screen}");
}
