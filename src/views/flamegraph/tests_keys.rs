//! Key-sequence tests of the flamegraph view: actions in, state and effects out.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use regex::Regex;

use super::FlameGraphView;
use super::state::active_trie;
use crate::config::{Action, Theme};
use crate::engine::Snapshot;
use crate::model::sample_list::test_support::profile_from;
use crate::model::{PhaseMarkers, Selection};
use crate::views::{Effect, View, ViewContext};

type Stacks<'a> = &'a [(&'a [&'a str], u64, Option<u64>)];

/// 100 samples: main 80 (work 40 = leaf 30 + other 10, idle 20, alloc;leaf 10, self 10),
/// boot;init 20.
pub(super) const FIXTURE: Stacks<'static> = &[
    (&["main", "work", "leaf"], 30, Some(1)),
    (&["main", "work", "other"], 10, Some(2)),
    (&["main", "idle"], 20, Some(3)),
    (&["main", "alloc", "leaf"], 10, Some(4)),
    (&["main"], 10, Some(5)),
    (&["boot", "init"], 20, Some(6)),
];

pub(super) fn snapshot(stacks: Stacks) -> Snapshot {
    let p = profile_from(stacks);
    crate::engine::testing::snapshot_with(&p, Selection::all(), PhaseMarkers::default())
}

fn ctx<'a>(snapshot: &'a Snapshot, theme: &'a Theme) -> ViewContext<'a> {
    ViewContext {
        snapshot,
        theme,
        focused: true,
        keys: crate::config::keymap::Keymap::standard(),
    }
}

/// The selected path, root first ("" for the root).
fn selected(view: &FlameGraphView, s: &Snapshot) -> String {
    let trie = active_trie(s, view.state().is_inverted()).expect("trie built");
    path(s, trie, view.state().selected(trie))
}

fn zoomed(view: &FlameGraphView, s: &Snapshot) -> String {
    let trie = active_trie(s, view.state().is_inverted()).expect("trie built");
    path(s, trie, view.state().zoom(trie))
}

fn path(s: &Snapshot, trie: &crate::model::StackTrie, n: crate::model::NodeId) -> String {
    trie.path(n)
        .iter()
        .map(|&f| s.frames.name(f))
        .collect::<Vec<_>>()
        .join(";")
}

fn press_all(view: &mut FlameGraphView, actions: &[Action], c: &ViewContext) {
    for &a in actions {
        assert_eq!(view.handle(a, c), Effect::None, "{a:?}");
    }
}

fn rendered(view: &mut FlameGraphView, c: &ViewContext, w: u16, h: u16) -> Buffer {
    let mut buf = Buffer::empty(Rect::new(0, 0, w, h));
    view.render(buf.area, &mut buf, c);
    buf
}

#[test]
fn arrows_walk_parents_children_and_rows() {
    let (s, theme) = (snapshot(FIXTURE), Theme::default());
    let c = ctx(&s, &theme);
    let mut v = FlameGraphView::new();
    rendered(&mut v, &c, 80, 24);
    assert_eq!(selected(&v, &s), "");
    press_all(&mut v, &[Action::Down], &c);
    assert_eq!(selected(&v, &s), "main");
    press_all(&mut v, &[Action::Down, Action::Child], &c);
    assert_eq!(selected(&v, &s), "main;work;leaf");
    press_all(&mut v, &[Action::Up], &c);
    assert_eq!(selected(&v, &s), "main;work");
    // Row 2 is init | alloc | idle | work: left crosses from main's children into boot's.
    press_all(&mut v, &[Action::Left], &c);
    assert_eq!(selected(&v, &s), "main;idle");
    press_all(&mut v, &[Action::Left, Action::Left], &c);
    assert_eq!(selected(&v, &s), "boot;init");
    press_all(&mut v, &[Action::Left], &c);
    assert_eq!(selected(&v, &s), "boot;init", "nothing left of the first cell");
    press_all(&mut v, &[Action::NextSibling], &c);
    assert_eq!(selected(&v, &s), "boot;init", "siblings stay under one parent");
    press_all(&mut v, &[Action::Right, Action::NextSibling], &c);
    assert_eq!(selected(&v, &s), "main;idle");
    press_all(&mut v, &[Action::PrevSibling, Action::PrevSibling], &c);
    assert_eq!(selected(&v, &s), "main;alloc");
    press_all(&mut v, &[Action::Top], &c);
    assert_eq!(selected(&v, &s), "");
    press_all(&mut v, &[Action::Bottom], &c);
    assert_eq!(selected(&v, &s), "main;work;leaf");
    press_all(&mut v, &[Action::Parent, Action::Parent, Action::Parent], &c);
    assert_eq!(selected(&v, &s), "");
}

#[test]
fn zoom_in_out_and_reset() {
    let (s, theme) = (snapshot(FIXTURE), Theme::default());
    let c = ctx(&s, &theme);
    let mut v = FlameGraphView::new();
    press_all(&mut v, &[Action::Down, Action::Down, Action::ZoomIn], &c);
    assert_eq!(zoomed(&v, &s), "main;work");
    assert!(v.state().is_zoomed());
    press_all(&mut v, &[Action::Up], &c);
    assert_eq!(selected(&v, &s), "main;work", "the zoom root is the top");
    press_all(&mut v, &[Action::Down, Action::ZoomOut], &c);
    assert_eq!(zoomed(&v, &s), "main");
    assert_eq!(
        selected(&v, &s),
        "main;work;leaf",
        "zooming out keeps the selection"
    );
    press_all(&mut v, &[Action::Back], &c);
    assert_eq!(zoomed(&v, &s), "");
    assert!(!v.state().is_zoomed());
    press_all(&mut v, &[Action::Activate], &c);
    assert_eq!(zoomed(&v, &s), "main;work;leaf");
    press_all(&mut v, &[Action::ZoomReset], &c);
    assert_eq!(zoomed(&v, &s), "");
    assert_eq!(selected(&v, &s), "main;work;leaf");
}

#[test]
fn search_counts_and_cycles_matches() {
    let (s, theme) = (snapshot(FIXTURE), Theme::default());
    let c = ctx(&s, &theme);
    let mut v = FlameGraphView::new();
    assert_eq!(v.hint(crate::config::keymap::Keymap::standard()), None);
    let re = Regex::new("^leaf$").unwrap();
    assert_eq!(v.search(Some(&re), &c), Effect::None);
    assert_eq!(
        v.hint(crate::config::keymap::Keymap::standard()).as_deref(),
        Some("match 40.0% · 2 frames")
    );
    press_all(&mut v, &[Action::NextMatch], &c);
    assert_eq!(selected(&v, &s), "main;alloc;leaf");
    assert_eq!(
        v.hint(crate::config::keymap::Keymap::standard()).as_deref(),
        Some("match 40.0% · 1/2")
    );
    press_all(&mut v, &[Action::NextMatch], &c);
    assert_eq!(selected(&v, &s), "main;work;leaf");
    assert_eq!(
        v.hint(crate::config::keymap::Keymap::standard()).as_deref(),
        Some("match 40.0% · 2/2")
    );
    press_all(&mut v, &[Action::NextMatch], &c);
    assert_eq!(selected(&v, &s), "main;alloc;leaf", "wraps around");
    press_all(&mut v, &[Action::PrevMatch], &c);
    assert_eq!(selected(&v, &s), "main;work;leaf");

    // A match outside the zoomed subtree zooms out to the common ancestor.
    press_all(
        &mut v,
        &[Action::Top, Action::Down, Action::Left, Action::ZoomIn],
        &c,
    );
    assert_eq!(zoomed(&v, &s), "boot");
    press_all(&mut v, &[Action::NextMatch], &c);
    assert_eq!(zoomed(&v, &s), "");
    assert_eq!(selected(&v, &s), "main;alloc;leaf");

    // Back clears the search before it zooms out.
    press_all(&mut v, &[Action::ZoomIn, Action::Back], &c);
    assert_eq!(v.hint(crate::config::keymap::Keymap::standard()), None);
    assert_eq!(zoomed(&v, &s), "main;alloc;leaf");
    press_all(&mut v, &[Action::Back], &c);
    assert_eq!(zoomed(&v, &s), "main;alloc");

    let none = Regex::new("nope").unwrap();
    assert_eq!(
        v.search(Some(&none), &c),
        Effect::Message("no frame matches /nope/".into())
    );
    assert_eq!(
        v.hint(crate::config::keymap::Keymap::standard()).as_deref(),
        Some("match 0.0% · 0 frames")
    );
    assert_eq!(v.search(None, &c), Effect::None);
    assert_eq!(v.hint(crate::config::keymap::Keymap::standard()), None);
}

#[test]
fn focus_names_the_selected_function_exactly() {
    let s = snapshot(&[(&["main", "std::vec::Vec<T>::push"], 3, None)]);
    let theme = Theme::default();
    let c = ctx(&s, &theme);
    let mut v = FlameGraphView::new();
    assert_eq!(
        v.handle(Action::Focus, &c),
        Effect::Message("select a function to focus on".into())
    );
    press_all(&mut v, &[Action::Down, Action::Down], &c);
    assert_eq!(
        v.handle(Action::Focus, &c),
        Effect::SetFocus(Some(r"^std::vec::Vec<T>::push$".into()))
    );
    let pattern = Regex::new(r"^std::vec::Vec<T>::push$").unwrap();
    assert!(pattern.is_match("std::vec::Vec<T>::push"));
    assert_eq!(v.handle(Action::Unfocus, &c), Effect::SetFocus(None));

    let dotted = snapshot(&[(&["a.b"], 1, None)]);
    let c = ctx(&dotted, &theme);
    let mut v = FlameGraphView::new();
    press_all(&mut v, &[Action::Down], &c);
    assert_eq!(
        v.handle(Action::Focus, &c),
        Effect::SetFocus(Some(r"^a\.b$".into()))
    );
}

#[test]
fn inverted_toggle_selects_the_same_function() {
    let (s, theme) = (snapshot(FIXTURE), Theme::default());
    let c = ctx(&s, &theme);
    let mut v = FlameGraphView::new();
    press_all(
        &mut v,
        &[Action::Down, Action::Down, Action::ZoomIn, Action::Down],
        &c,
    );
    assert_eq!(selected(&v, &s), "main;work;leaf");
    press_all(&mut v, &[Action::ToggleInverted], &c);
    assert!(v.state().is_inverted());
    assert_eq!(
        selected(&v, &s),
        "leaf",
        "the leaf at depth 1 of the inverted trie"
    );
    assert_eq!(zoomed(&v, &s), "");
    // Callers below: the widest caller of leaf is work (30 of 40).
    press_all(&mut v, &[Action::Down], &c);
    assert_eq!(selected(&v, &s), "leaf;work");
    press_all(&mut v, &[Action::ToggleInverted], &c);
    assert!(!v.state().is_inverted());
    // work is not at depth 1 of the icicle: its shallowest node is chosen.
    assert_eq!(selected(&v, &s), "main;work");
}

#[test]
fn inverted_waits_for_its_trie() {
    let theme = Theme::default();
    let mut pending = snapshot(FIXTURE);
    let built = pending.inverted.take().expect("from_profile builds it");
    let c = ctx(&pending, &theme);
    let mut v = FlameGraphView::new();
    press_all(&mut v, &[Action::Down, Action::Down], &c);
    assert_eq!(selected(&v, &pending), "main;work");
    press_all(&mut v, &[Action::ToggleInverted], &c);
    assert!(v.wants_inverted());
    let buf = rendered(&mut v, &c, 40, 5);
    let first: String = (0..40).map(|x| buf[(x, 0)].symbol()).collect();
    assert_eq!(first.trim_end(), "building inverted view…");
    // Keys do nothing meanwhile; the old state holds.
    press_all(&mut v, &[Action::Down, Action::ZoomIn], &c);

    let mut ready = pending.clone();
    ready.inverted = Some(built);
    ready.generation += 1;
    let c = ctx(&ready, &theme);
    v.snapshot_changed(&c);
    // work has no self weight, so it is no leaf: its shallowest inverted node is chosen.
    assert_eq!(selected(&v, &ready), "leaf;work");

    // Toggling back while waiting restores the icicle state untouched.
    let c = ctx(&pending, &theme);
    let mut v = FlameGraphView::new();
    press_all(&mut v, &[Action::Down, Action::Down, Action::ZoomIn], &c);
    press_all(&mut v, &[Action::ToggleInverted, Action::ToggleInverted], &c);
    assert!(!v.wants_inverted());
    assert_eq!(
        (selected(&v, &pending), zoomed(&v, &pending)),
        ("main;work".into(), "main;work".into())
    );
}

#[test]
fn selection_and_zoom_survive_a_bigger_snapshot() {
    let theme = Theme::default();
    let small = snapshot(FIXTURE);
    let c = ctx(&small, &theme);
    let mut v = FlameGraphView::new();
    press_all(
        &mut v,
        &[
            Action::Down,
            Action::ZoomIn,
            Action::Down,
            Action::Down,
            Action::Right,
        ],
        &c,
    );
    assert_eq!(selected(&v, &small), "main;work;other");
    assert_eq!(zoomed(&v, &small), "main");

    // More samples and new stacks renumber the nodes; the paths stay.
    let mut more = FIXTURE.to_vec();
    more.insert(0, (&["aaa", "x"], 500, Some(7)));
    more.push((&["main", "work", "other", "deeper"], 40, Some(8)));
    let big = snapshot(&more);
    let c = ctx(&big, &theme);
    v.snapshot_changed(&c);
    assert_eq!(selected(&v, &big), "main;work;other");
    assert_eq!(zoomed(&v, &big), "main");
    press_all(&mut v, &[Action::Down], &c);
    assert_eq!(selected(&v, &big), "main;work;other;deeper");

    // The selected path vanishes: its nearest surviving ancestor is selected.
    let gone = snapshot(&[(&["main", "work", "leaf"], 3, None), (&["main", "idle"], 1, None)]);
    let c = ctx(&gone, &theme);
    v.snapshot_changed(&c);
    assert_eq!(selected(&v, &gone), "main;work");
    assert_eq!(zoomed(&v, &gone), "main");
}

#[test]
fn search_follows_a_new_snapshot() {
    let theme = Theme::default();
    let small = snapshot(FIXTURE);
    let c = ctx(&small, &theme);
    let mut v = FlameGraphView::new();
    v.search(Some(&Regex::new("^leaf$").unwrap()), &c);
    press_all(&mut v, &[Action::NextMatch, Action::NextMatch], &c);
    assert_eq!(
        v.hint(crate::config::keymap::Keymap::standard()).as_deref(),
        Some("match 40.0% · 2/2")
    );
    let mut more = FIXTURE.to_vec();
    more.push((&["boot", "leaf"], 100, None));
    let big = snapshot(&more);
    let c = ctx(&big, &theme);
    v.snapshot_changed(&c);
    // 140 of 200 samples now contain leaf; the cursor still points at main;work;leaf.
    assert_eq!(
        v.hint(crate::config::keymap::Keymap::standard()).as_deref(),
        Some("match 70.0% · 3/3")
    );
    assert_eq!(selected(&v, &big), "main;work;leaf");
}

#[test]
fn mouse_selects_zooms_and_scrolls() {
    let (s, theme) = (snapshot(FIXTURE), Theme::default());
    let c = ctx(&s, &theme);
    let mut v = FlameGraphView::new();
    rendered(&mut v, &c, 80, 24);
    // Row 2 (y 2) x 70: main's children at 80 columns are alloc 8, idle 16, work 32 from x 16.
    assert_eq!(v.click(70, 2, false, &c), Effect::None);
    assert_eq!(selected(&v, &s), "main;work");
    v.click(5, 1, true, &c);
    assert_eq!(zoomed(&v, &s), "boot");
    assert_eq!(selected(&v, &s), "boot");
    // The breadcrumb (row 0 while zoomed) zooms out.
    rendered(&mut v, &c, 80, 24);
    v.click(3, 0, false, &c);
    assert!(!v.state().is_zoomed());

    // The wheel scrolls a deep graph, within its rows.
    let deep: Vec<&str> = ["f0", "f1", "f2", "f3", "f4", "f5", "f6", "f7", "f8", "f9"].to_vec();
    let s = snapshot(&[(&deep, 1, None)]);
    let c = ctx(&s, &theme);
    let mut v = FlameGraphView::new();
    rendered(&mut v, &c, 20, 6); // 5 graph rows of 11
    v.scroll(3, &c);
    assert_eq!(v.state().scroll(), 3);
    v.scroll(100, &c);
    assert_eq!(v.state().scroll(), 6);
    v.scroll(-100, &c);
    assert_eq!(v.state().scroll(), 0);
    // Keyboard movement brings the selection back into view.
    press_all(&mut v, &[Action::Bottom], &c);
    rendered(&mut v, &c, 20, 6);
    assert_eq!(v.state().scroll(), 6);
}

#[test]
fn a_match_too_narrow_for_a_cell_is_zoomed_into_view() {
    let s = snapshot(&[
        (&["main", "big"], 998, None),
        (&["main", "tiny1", "x"], 1, None),
        (&["main", "tiny2"], 1, None),
    ]);
    let theme = Theme::default();
    let c = ctx(&s, &theme);
    let mut v = FlameGraphView::new();
    rendered(&mut v, &c, 80, 24);
    v.search(Some(&Regex::new("^tiny1$").unwrap()), &c);
    press_all(&mut v, &[Action::NextMatch], &c);
    // Under main the pair shares one "+2" column, so the match itself is zoomed.
    assert_eq!(selected(&v, &s), "main;tiny1");
    assert_eq!(zoomed(&v, &s), "main;tiny1");
    press_all(&mut v, &[Action::Down], &c);
    assert_eq!(selected(&v, &s), "main;tiny1;x");
}
