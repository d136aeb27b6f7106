use std::sync::Arc;

use ratatui::buffer::Buffer;

use super::*;
use crate::config::Theme;
use crate::engine::Snapshot;
use crate::model::sample_list::test_support::profile_from;
use crate::model::{PhaseMarkers, Selection};
use crate::views::test_support::{ctx, render, rows, text};

/// `n` lines "line NN", every seventh one an error, then a shell prompt.
fn log_of(n: usize) -> ConsoleLog {
    let mut log = ConsoleLog::new();
    for i in 0..n {
        if i % 7 == 3 {
            log.push_line(Some(i as u64), &format!("line {i:02}: error: disk {i} failed"));
        } else {
            log.push_line(Some(i as u64), &format!("line {i:02}: ok"));
        }
    }
    log.push_bytes(None, b"starry:~# ");
    log
}

fn snapshot_with(log: ConsoleLog) -> Snapshot {
    let p = profile_from(&[(&["main"], 1, Some(5))]);
    let mut s = crate::engine::testing::snapshot_with(&p, Selection::all(), PhaseMarkers::default());
    s.console = Arc::new(log);
    s
}

fn draw(view: &mut ConsoleView, snapshot: &Snapshot, w: u16, h: u16) -> Buffer {
    let theme = Theme::builtin_dark();
    render(view, &ctx(snapshot, &theme, false), w, h)
}

fn press(view: &mut ConsoleView, snapshot: &Snapshot, action: Action) -> Effect {
    let theme = Theme::builtin_dark();
    view.handle(action, &ctx(snapshot, &theme, false))
}

fn search(view: &mut ConsoleView, snapshot: &Snapshot, pattern: Option<&str>) -> Effect {
    let theme = Theme::builtin_dark();
    let ctx = ViewContext {
        snapshot,
        theme: &theme,
        focused: false,
        keys: crate::config::keymap::Keymap::standard(),
    };
    let re = pattern.map(|p| Regex::new(p).unwrap());
    view.search(re.as_ref(), &ctx)
}

#[test]
fn follows_the_tail_at_80x24() {
    let snap = snapshot_with(log_of(40));
    let mut view = ConsoleView::new();
    let buf = draw(&mut view, &snap, 80, 24);
    assert_eq!(
        text(&buf),
        format!(
            "┌ console · 40 lines {}┐\n│line 20: ok                                                                   │
│line 21: ok                                                                   │
│line 22: ok                                                                   │
│line 23: ok                                                                   │
│line 24: error: disk 24 failed                                                │
│line 25: ok                                                                   │
│line 26: ok                                                                   │
│line 27: ok                                                                   │
│line 28: ok                                                                   │
│line 29: ok                                                                   │
│line 30: ok                                                                   │
│line 31: error: disk 31 failed                                                │
│line 32: ok                                                                   │
│line 33: ok                                                                   │
│line 34: ok                                                                   │
│line 35: ok                                                                   │
│line 36: ok                                                                   │
│line 37: ok                                                                   │
│line 38: error: disk 38 failed                                                │
│line 39: ok                                                                   │\n│starry:~#{}│\n│following · 40 lines{}│\n└{}┘",
            "─".repeat(58),
            " ".repeat(69),
            " ".repeat(58),
            "─".repeat(78)
        )
    );
    let theme = Theme::builtin_dark();
    assert_eq!(buf[(1, 22)].fg, theme.dim.fg.unwrap());
    // New lines arrive: still at the tail.
    let snap = snapshot_with(log_of(45));
    let buf = draw(&mut view, &snap, 80, 24);
    assert_eq!(rows(&buf)[20], format!("│line 44: ok{}│", " ".repeat(67)));
    assert_eq!(rows(&buf)[21], format!("│starry:~#{}│", " ".repeat(69)));
}

#[test]
fn scrolling_up_pauses_and_counts_new_lines_until_bottom() {
    let snap = snapshot_with(log_of(40));
    let mut view = ConsoleView::new();
    draw(&mut view, &snap, 80, 24);
    press(&mut view, &snap, Action::Up);
    press(&mut view, &snap, Action::Up);
    // 41 rows, 21 per page: the tail starts at row 20, two up is row 18.
    assert_eq!(view.top, 18);
    let buf = draw(&mut view, &snap, 80, 24);
    assert_eq!(rows(&buf)[1], format!("│line 18: ok{}│", " ".repeat(67)));
    assert_eq!(rows(&buf)[22], format!("│↓ 2 more lines{}│", " ".repeat(64)));
    // Five lines arrive: the view stays put and says so.
    let snap = snapshot_with(log_of(45));
    let buf = draw(&mut view, &snap, 80, 24);
    assert_eq!(rows(&buf)[1], format!("│line 18: ok{}│", " ".repeat(67)));
    assert_eq!(rows(&buf)[22], format!("│↓ 5 new lines{}│", " ".repeat(65)));
    let theme = Theme::builtin_dark();
    assert_eq!(buf[(1, 22)].bg, theme.status_accent.bg.unwrap());
    // Bottom resumes following.
    press(&mut view, &snap, Action::Bottom);
    let buf = draw(&mut view, &snap, 80, 24);
    assert_eq!(rows(&buf)[21], format!("│starry:~#{}│", " ".repeat(69)));
    assert_eq!(
        rows(&buf)[22],
        format!("│following · 45 lines{}│", " ".repeat(58))
    );
    // Top goes to the first line; PageDown pages by a page minus one; Down at the end follows.
    press(&mut view, &snap, Action::Top);
    assert_eq!((view.top, view.follow), (0, false));
    press(&mut view, &snap, Action::PageDown);
    assert_eq!(view.top, 20);
    press(&mut view, &snap, Action::PageDown);
    assert_eq!((view.top, view.follow), (25, true));
    // The wheel scrolls too.
    let theme = Theme::builtin_dark();
    let ctx = ViewContext {
        snapshot: &snap,
        theme: &theme,
        focused: false,
        keys: crate::config::keymap::Keymap::standard(),
    };
    view.scroll(-3, &ctx);
    assert_eq!((view.top, view.follow), (22, false));
    view.scroll(3, &ctx);
    assert!(view.follow);
}

#[test]
fn search_highlights_and_jumps_between_matching_lines() {
    let snap = snapshot_with(log_of(40));
    let mut view = ConsoleView::new();
    draw(&mut view, &snap, 80, 24);
    assert_eq!(search(&mut view, &snap, Some("err[a-z]+")), Effect::None);
    // Errors are on lines 3, 10, 17, 24, 31, 38; the newest on screen is current.
    assert_eq!(
        view.hint(crate::config::keymap::Keymap::standard()).as_deref(),
        Some("match 6/6")
    );
    assert!(view.follow);
    let buf = draw(&mut view, &snap, 80, 24);
    let theme = Theme::builtin_dark();
    // "line 24: error: …" is row 5; "error" spans columns 10..15.
    assert_eq!(
        buf[(9, 5)].bg,
        theme.text.bg.unwrap_or(ratatui::style::Color::Reset)
    );
    for x in 10..15 {
        assert_eq!(buf[(x, 5)].bg, theme.search_match.bg.unwrap(), "column {x}");
    }
    assert_ne!(buf[(15, 5)].bg, theme.search_match.bg.unwrap());
    // Next wraps to the first match and scrolls it into view (centred: top = 3 - 10 → 0).
    press(&mut view, &snap, Action::NextMatch);
    assert_eq!(
        view.hint(crate::config::keymap::Keymap::standard()).as_deref(),
        Some("match 1/6")
    );
    assert_eq!((view.top, view.follow), (0, false));
    let buf = draw(&mut view, &snap, 80, 24);
    assert_eq!(buf[(10, 4)].bg, theme.search_match.bg.unwrap());
    // Next again: line 10 is already visible, no scroll.
    press(&mut view, &snap, Action::NextMatch);
    assert_eq!(
        view.hint(crate::config::keymap::Keymap::standard()).as_deref(),
        Some("match 2/6")
    );
    assert_eq!(view.top, 0);
    press(&mut view, &snap, Action::PrevMatch);
    press(&mut view, &snap, Action::PrevMatch);
    assert_eq!(
        view.hint(crate::config::keymap::Keymap::standard()).as_deref(),
        Some("match 6/6")
    );
    assert_eq!(view.top, 20);
    // New matching lines are searched as they arrive.
    let more = snapshot_with(log_of(50));
    let theme = Theme::builtin_dark();
    view.snapshot_changed(&ViewContext {
        snapshot: &more,
        theme: &theme,
        focused: false,
        keys: crate::config::keymap::Keymap::standard(),
    });
    assert_eq!(
        view.hint(crate::config::keymap::Keymap::standard()).as_deref(),
        Some("match 6/7")
    );
    assert_eq!(
        search(&mut view, &more, Some("nothing here")),
        Effect::Message("no console line matches /nothing here/".into())
    );
    assert_eq!(
        view.hint(crate::config::keymap::Keymap::standard()).as_deref(),
        Some("no match")
    );
    press(&mut view, &more, Action::ClearSearch);
    assert_eq!(view.hint(crate::config::keymap::Keymap::standard()), None);
}

#[test]
fn long_lines_are_cut_and_tabs_expand() {
    let mut log = ConsoleLog::new();
    log.push_line(None, "a\tb");
    log.push_line(None, "a very long console line that does not fit");
    log.push_line(None, "日本語のテキスト");
    let snap = snapshot_with(log);
    let mut view = ConsoleView::new();
    let buf = draw(&mut view, &snap, 20, 6);
    assert_eq!(
        text(&buf),
        "\
┌ console · 3 line…┐
│a       b         │
│a very long conso…│
│日本語のテキスト  │
│following · 3 lin…│
└──────────────────┘"
    );
    let buf = draw(&mut view, &snap, 12, 6);
    assert_eq!(rows(&buf)[3], "│日本語の… │");
    for (w, h) in [(10, 3), (0, 5), (5, 0), (1, 1), (2, 2), (3, 3), (80, 3)] {
        draw(&mut view, &snap, w, h);
    }
}

#[test]
fn an_empty_console_says_where_one_comes_from() {
    let snap = snapshot_with(ConsoleLog::new());
    let mut view = ConsoleView::new();
    let buf = draw(&mut view, &snap, 90, 5);
    assert_eq!(
        rows(&buf)[2],
        "│    no console: this source has none (`perfscope qemu` shows the guest console here)    │"
    );
    assert_eq!(press(&mut view, &snap, Action::Up), Effect::None);
    assert!(view.follow);
    draw(&mut view, &snap, 10, 3);
    draw(&mut view, &snap, 0, 0);
}

#[test]
fn a_long_console_shows_the_lines_kept_under_their_numbers() {
    // A log keeping one chunk (1024 lines) besides the one being filled: of 3000 lines,
    // 1024.. are kept.
    let mut log = ConsoleLog::keeping(1);
    for i in 0..3000 {
        let text = if i % 500 == 0 {
            format!("line {i}: panic")
        } else {
            format!("line {i}")
        };
        log.push_line(None, &text);
    }
    assert_eq!(log.first(), 1024);
    let snap = snapshot_with(log);
    let mut view = ConsoleView::new();
    let buf = draw(&mut view, &snap, 80, 24);
    assert!(
        rows(&buf)[0].contains("console · 3000 lines, the newest 1976 kept"),
        "{}",
        rows(&buf)[0]
    );
    // Top goes to the oldest kept line, which is drawn with its own text.
    press(&mut view, &snap, Action::Top);
    assert_eq!(view.top, 1024);
    let buf = draw(&mut view, &snap, 80, 24);
    assert_eq!(rows(&buf)[1], format!("│line 1024{}│", " ".repeat(69)));
    // Scrolling up past it stays there.
    press(&mut view, &snap, Action::PageUp);
    let buf = draw(&mut view, &snap, 80, 24);
    assert_eq!(view.top, 1024);
    assert_eq!(rows(&buf)[1], format!("│line 1024{}│", " ".repeat(69)));
    // Only kept lines match: 1500, 2000, 2500 (0, 500 and 1000 were dropped).
    search(&mut view, &snap, Some("panic"));
    assert_eq!(
        view.hint(crate::config::keymap::Keymap::standard()).as_deref(),
        Some("match 1/3")
    );
    press(&mut view, &snap, Action::PrevMatch);
    assert_eq!(
        view.hint(crate::config::keymap::Keymap::standard()).as_deref(),
        Some("match 3/3")
    );
}

#[test]
fn matches_on_dropped_lines_are_forgotten() {
    let mut log = ConsoleLog::keeping(1);
    for i in 0..1100 {
        log.push_line(None, &format!("line {i}: panic"));
    }
    let snap = snapshot_with(log.clone());
    let mut view = ConsoleView::new();
    draw(&mut view, &snap, 80, 24);
    search(&mut view, &snap, Some("panic"));
    assert_eq!(
        view.hint(crate::config::keymap::Keymap::standard()).as_deref(),
        Some("match 1100/1100")
    );
    // 1000 more lines: the first chunk (0..1024) leaves the log, and its matches the view.
    for i in 1100..2100 {
        log.push_line(None, &format!("line {i}: ok"));
    }
    assert_eq!(log.first(), 1024);
    let snap = snapshot_with(log);
    let theme = Theme::builtin_dark();
    view.snapshot_changed(&ViewContext {
        snapshot: &snap,
        theme: &theme,
        focused: false,
        keys: crate::config::keymap::Keymap::standard(),
    });
    assert_eq!(
        view.hint(crate::config::keymap::Keymap::standard()).as_deref(),
        Some("match 76/76")
    );
    press(&mut view, &snap, Action::NextMatch);
    assert_eq!(
        view.hint(crate::config::keymap::Keymap::standard()).as_deref(),
        Some("match 1/76")
    );
    let buf = draw(&mut view, &snap, 80, 24);
    assert!(text(&buf).contains("line 1024: panic"));
}
