//! Screen tests of the flamegraph: pinned text of a fixed profile at 80×24 and 40×10,
//! styles of the selected and matching cells, and areas too small to hold anything.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use regex::Regex;

use super::tests_keys::{FIXTURE, snapshot};
use super::{FlameGraphView, FlameState, render_flamegraph};
use crate::config::{Action, Theme};
use crate::engine::Snapshot;
use crate::model::hash::fnv1a;
use crate::views::{View, ViewContext};

fn ctx<'a>(snapshot: &'a Snapshot, theme: &'a Theme) -> ViewContext<'a> {
    ViewContext {
        snapshot,
        theme,
        focused: true,
        keys: crate::config::keymap::Keymap::standard(),
    }
}

fn draw(view: &mut FlameGraphView, c: &ViewContext, w: u16, h: u16) -> Buffer {
    let mut buf = Buffer::empty(Rect::new(0, 0, w, h));
    view.render(buf.area, &mut buf, c);
    buf
}

fn lines(buf: &Buffer) -> Vec<String> {
    let a = buf.area;
    (a.top()..a.bottom())
        .map(|y| {
            let row: String = (a.left()..a.right()).map(|x| buf[(x, y)].symbol()).collect();
            row.trim_end().to_string()
        })
        .collect()
}

#[test]
fn screen_80x24() {
    let (s, theme) = (snapshot(FIXTURE), Theme::default());
    let c = ctx(&s, &theme);
    let mut v = FlameGraphView::new();
    v.handle(Action::Down, &c);
    let text = lines(&draw(&mut v, &c, 80, 24));
    let mut expected = vec![
        "all".to_string(),
        "boot            main".into(),
        "init            alloc   idle            work".into(),
        "                leaf                    leaf                    other".into(),
    ];
    expected.resize(23, String::new());
    expected.push("main · total 80 (80.0%) · self 10 (10.0%) · depth 1".into());
    assert_eq!(text, expected);
}

#[test]
fn screen_40x10_zoomed_and_searched() {
    let (s, theme) = (snapshot(FIXTURE), Theme::default());
    let c = ctx(&s, &theme);
    let mut v = FlameGraphView::new();
    for a in [Action::Down, Action::Down, Action::ZoomIn, Action::Down] {
        v.handle(a, &c);
    }
    v.search(Some(&Regex::new("^other$").unwrap()), &c);
    let buf = draw(&mut v, &c, 40, 10);
    assert_eq!(buf[(0, 2)].bg, theme.selected.bg.unwrap(), "leaf is selected");
    assert_eq!(buf[(30, 2)].bg, theme.search_match.bg.unwrap(), "other matches");
    let text = lines(&buf);
    let mut expected = vec![
        "zoom: all › main › work".to_string(),
        "work".into(),
        "leaf                          other".into(),
    ];
    expected.resize(9, String::new());
    expected.push("leaf · total 30 (30.0%) · self 30 (30.0…".into());
    assert_eq!(text, expected);
}

#[test]
fn cell_styles_mark_selection_and_matches() {
    let (s, theme) = (snapshot(FIXTURE), Theme::default());
    let c = ctx(&s, &theme);
    let mut v = FlameGraphView::new();
    v.handle(Action::Down, &c); // main, row 1 from x 16
    v.search(Some(&Regex::new("^leaf$").unwrap()), &c);
    let buf = draw(&mut v, &c, 80, 24);
    assert_eq!(buf[(16, 1)].bg, theme.selected.bg.unwrap());
    assert_eq!(buf[(78, 1)].bg, theme.selected.bg.unwrap());
    assert_eq!(buf[(79, 1)].bg, theme.text.bg.unwrap_or_default(), "separator");
    // Both leaf cells (row 3, under alloc at x 16 and under work at x 40) are matches.
    assert_eq!(buf[(16, 3)].bg, theme.search_match.bg.unwrap());
    assert_eq!(buf[(40, 3)].bg, theme.search_match.bg.unwrap());
    // Other frames keep their name colour; the separator column is plain text.
    let boot = theme.frame_style(fnv1a(b"boot"), false);
    assert_eq!(buf[(0, 1)].bg, boot.bg.unwrap());
    assert_eq!(buf[(15, 1)].bg, theme.text.bg.unwrap_or_default());
    let other = theme.frame_style(fnv1a(b"other"), true);
    assert_eq!(buf[(64, 3)].bg, other.bg.unwrap());
}

#[test]
fn merged_cells_read_plus_n_in_dim() {
    let stacks: Vec<(&[&str], u64, Option<u64>)> = vec![
        (&["main", "big"], 96, None),
        (&["main", "t1"], 1, None),
        (&["main", "t2"], 1, None),
        (&["main", "t3"], 1, None),
        (&["main", "t4"], 1, None),
    ];
    let (s, theme) = (snapshot(&stacks), Theme::default());
    let c = ctx(&s, &theme);
    let mut v = FlameGraphView::new();
    let buf = draw(&mut v, &c, 20, 5);
    // 4 children of 0.2 columns each share one column at x 19, shown as "+".
    assert_eq!(lines(&buf)[2], "big                +");
    assert_eq!(buf[(19, 2)].fg, theme.dim.fg.unwrap());
    let buf = draw(&mut v, &c, 60, 5);
    assert_eq!(lines(&buf)[2], format!("big{}+4", " ".repeat(55)));
}

#[test]
fn tiny_and_empty_areas_do_not_panic() {
    let (s, theme) = (snapshot(FIXTURE), Theme::default());
    let c = ctx(&s, &theme);
    let mut v = FlameGraphView::new();
    for a in [Action::Down, Action::Down, Action::ZoomIn] {
        v.handle(a, &c);
    }
    let text = lines(&draw(&mut v, &c, 10, 3));
    // The breadcrumb keeps both ends: the zoom root is the part that matters.
    assert_eq!(text, ["zoom:…work", "work", "work · to…"]);
    let text = lines(&draw(&mut v, &c, 10, 1));
    assert_eq!(text, ["work"]);
    for (w, h) in [(0, 10), (10, 0), (0, 0), (1, 1), (2, 2)] {
        let mut buf = Buffer::empty(Rect::new(0, 0, w, h));
        v.render(buf.area, &mut buf, &c);
        for a in [
            Action::Down,
            Action::Left,
            Action::Right,
            Action::PageDown,
            Action::Bottom,
        ] {
            v.handle(a, &c);
        }
        v.click(0, 0, true, &c);
        v.scroll(5, &c);
    }
    let empty = snapshot(&[]);
    let c = ctx(&empty, &theme);
    let mut v = FlameGraphView::new();
    assert_eq!(lines(&draw(&mut v, &c, 30, 3))[0], "no samples yet");
}

#[test]
fn panes_draw_another_trie_with_their_own_state() {
    let (s, theme) = (snapshot(FIXTURE), Theme::default());
    let slice = &s.instances[0];
    let mut state = FlameState::new();
    let main = slice.trie.children(crate::model::NodeId::ROOT).nth(1).unwrap();
    state.zoom_to(&slice.trie, main);
    let mut buf = Buffer::empty(Rect::new(0, 0, 30, 4));
    render_flamegraph(&slice.trie, &s.frames, &state, buf.area, &mut buf, &theme);
    assert_eq!(
        lines(&buf),
        [
            "zoom: all › main",
            "main",
            "a…c idle   work",
            "main · total 80 (80.0%) · sel…",
        ]
    );
}

#[test]
fn big_counts_are_grouped() {
    use super::render::group_thousands;
    assert_eq!(group_thousands(0), "0");
    assert_eq!(group_thousands(999), "999");
    assert_eq!(group_thousands(1000), "1,000");
    assert_eq!(group_thousands(1_234_567), "1,234,567");
}

/// A StarryOS frame as rustc-demangle names it: 125 columns.
const WRITE_AT: &str = "<ax_fs_ng::file::handle::FileHandle<ax_sync::mutex::RawMutex> as ax_io::Write>::write_at::<&mut dyn starry_kernel::file::ReadBuf>";

/// At 100 columns the long Rust frame's cell sheds generics and module paths but keeps
/// `write_at`; selected, its full name wraps over the detail lines with its numbers.
#[test]
fn long_rust_names_keep_their_method_and_the_detail_their_whole_name() {
    let stacks: Vec<(&[&str], u64, Option<u64>)> = vec![
        (&["kmain", "sys_write", WRITE_AT], 60, None),
        (&["kmain", "idle"], 40, None),
    ];
    let (s, theme) = (snapshot(&stacks), Theme::default());
    let c = ctx(&s, &theme);
    let mut v = FlameGraphView::new();
    let text = lines(&draw(&mut v, &c, 100, 12));
    // idle sorts first: the long frame's cell is columns 40..100.
    assert_eq!(
        text[3],
        format!("{}<FileHandle<…> as Write>::write_at::<…>", " ".repeat(40))
    );
    // Narrower: the same cell cut in the middle, the method kept.
    let text = lines(&draw(&mut v, &c, 40, 12));
    assert_eq!(text[3], format!("{}<FileHandle …::write_at", " ".repeat(16)));
    for _ in 0..3 {
        v.handle(Action::Down, &c);
    }
    let text = lines(&draw(&mut v, &c, 100, 12));
    // lines() trims the row: the 100th character is a space.
    assert_eq!(text[10], WRITE_AT[..100].trim_end());
    assert_eq!(
        text[11],
        format!(
            "{} · total 60 (60.0%) · self 60 (60.0%) · depth 3",
            &WRITE_AT[100..]
        )
    );
    // The cell above the detail lines still shows the shortened name.
    assert!(
        text[3].ends_with("<FileHandle<…> as Write>::write_at::<…>"),
        "{text:?}"
    );
}
