use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::*;
use crate::model::hash::{ROOT_PATH_HASH, child_path_hash};
use crate::views::test_support::{ctx, lines, render, snapshot_of};

type Stack = (&'static [&'static str], u64, Option<u64>);

/// 100 samples: percents equal weights.
const STACKS: [Stack; 7] = [
    (&["main", "work", "leaf"], 50, None),
    (&["main", "work", "hash_block"], 20, None),
    (&["main", "work"], 5, None),
    (&["main", "io", "read"], 15, None),
    (&["main", "io"], 3, None),
    (&["main", "idle"], 5, None),
    (&["other", "leaf"], 2, None),
];

/// The identifier path of a root-first list of names.
fn path(names: &[&str]) -> Vec<u64> {
    let mut hash = ROOT_PATH_HASH;
    names
        .iter()
        .map(|n| {
            hash = child_path_hash(hash, crate::model::hash::fnv1a(n.as_bytes()));
            hash
        })
        .collect()
}

fn regex(pattern: &str) -> Regex {
    Regex::new(pattern).expect("valid regex")
}

/// Names of the visible lines, indented two spaces per level.
fn outline(v: &CallTreeView, s: &Snapshot) -> Vec<String> {
    let trie = if v.is_bottom_up() {
        s.inverted.as_deref().expect("inverted trie")
    } else {
        &s.trie
    };
    v.visible_paths()
        .iter()
        .map(|p| {
            let indent = "  ".repeat(p.len() - 1);
            let name = match p.last() {
                Some(&SYNTHETIC_ID) => "…".to_string(),
                Some(&h) => trie
                    .find_path(h)
                    .and_then(|n| trie.node(n).frame())
                    .map_or("?".to_string(), |f| s.frames.name(f).to_string()),
                None => String::new(),
            };
            format!("{indent}{name}")
        })
        .collect()
}

#[test]
fn top_down_at_80_columns_opens_the_hottest_path() {
    let s = snapshot_of(&STACKS);
    let theme = Theme::default();
    let c = ctx(&s, &theme, false);
    let mut v = CallTreeView::new();
    let blank = format!("│{}│", " ".repeat(78));
    assert_eq!(
        lines(&render(&mut v, &c, 80, 12)),
        [
            "┌ Call tree · top-down ────────────────────────────────────────────────────────┐",
            "│  function                                         total%  total  self%   self│",
            "│▼ main                                              98.0%     98   0.0%      0│",
            "│  ▼ work                                            75.0%     75   5.0%      5│",
            "│      leaf                                          50.0%     50  50.0%     50│",
            "│      hash_block                                    20.0%     20  20.0%     20│",
            "│  ▶ io                                              18.0%     18   3.0%      3│",
            "│    idle                                             5.0%      5   5.0%      5│",
            "│▶ other                                              2.0%      2   0.0%      0│",
            blank.as_str(),
            blank.as_str(),
            "└──────────────────────────────────────────────────────────────────────────────┘",
        ]
    );
    assert_eq!(v.selected_path(), path(&["main"]));
    assert_eq!(
        v.hint(crate::config::keymap::Keymap::standard()).as_deref(),
        Some("top-down")
    );
}

#[test]
fn narrow_tree_keeps_the_percent_columns() {
    let s = snapshot_of(&STACKS);
    let theme = Theme::default();
    let c = ctx(&s, &theme, false);
    let mut v = CallTreeView::new();
    assert_eq!(
        lines(&render(&mut v, &c, 40, 6)),
        [
            "┌ Call tree · top-down ────────────────┐",
            "│  function               total%  self%│",
            "│▼ main                    98.0%   0.0%│",
            "│  ▼ work                  75.0%   5.0%│",
            "│      leaf                50.0%  50.0%│",
            "└──────────────────────────────────────┘",
        ]
    );
    assert_eq!(
        lines(&render(&mut v, &c, 24, 4)),
        [
            "┌ Call tree · top-down ┐",
            "│  function      total%│",
            "│▼ main           98.0%│",
            "└──────────────────────┘",
        ]
    );
}

#[test]
fn tiny_areas_do_not_panic() {
    let s = snapshot_of(&STACKS);
    let theme = Theme::default();
    let c = ctx(&s, &theme, false);
    let mut v = CallTreeView::new();
    assert_eq!(
        lines(&render(&mut v, &c, 10, 3)),
        ["┌ Call tr┐", "│▼ main  │", "└────────┘"]
    );
    render(&mut v, &c, 0, 5);
    render(&mut v, &c, 5, 0);
    render(&mut v, &c, 3, 3);
    v.handle(Action::Bottom, &c);
    assert_eq!(v.selected_path(), path(&["other"]));
    // Too narrow for numbers: names only, scrolled to keep the selection in view.
    let screen = lines(&render(&mut v, &c, 14, 8));
    assert_eq!(screen[2], "│      leaf  │");
    assert_eq!(screen[6], "│▶ other     │");
}

#[test]
fn selection_and_search_matches_have_their_styles() {
    let s = snapshot_of(&STACKS);
    let theme = Theme::default();
    let c = ctx(&s, &theme, false);
    let mut v = CallTreeView::new();
    v.search(Some(&regex("^hash")), &c);
    assert_eq!(
        v.hint(crate::config::keymap::Keymap::standard()).as_deref(),
        Some("top-down · 1 match")
    );
    let buf = render(&mut v, &c, 80, 12);
    let selected = theme.selected.bg.expect("selection colour");
    let matched = theme.search_match.bg.expect("match colour");
    for x in 1..79 {
        assert_eq!(buf[(x, 2)].bg, selected, "main row x={x}");
    }
    // "hash_block" at x 7..17 on row 5; its numbers and other rows are not highlighted.
    for x in 7..17 {
        assert_eq!(buf[(x, 5)].bg, matched, "hash_block x={x}");
        assert_ne!(buf[(x, 4)].bg, matched, "leaf x={x}");
    }
    assert_ne!(buf[(60, 5)].bg, matched);
    v.handle(Action::ClearSearch, &c);
    let buf = render(&mut v, &c, 80, 12);
    assert_ne!(buf[(8, 5)].bg, matched);
    assert_eq!(
        v.hint(crate::config::keymap::Keymap::standard()).as_deref(),
        Some("top-down")
    );
}

#[test]
fn expand_collapse_and_activate() {
    let s = snapshot_of(&STACKS);
    let theme = Theme::default();
    let c = ctx(&s, &theme, false);
    let mut v = CallTreeView::new();
    for _ in 0..4 {
        v.handle(Action::Down, &c);
    }
    assert_eq!(v.selected_path(), path(&["main", "io"]));
    v.handle(Action::Expand, &c);
    assert!(v.is_open(&path(&["main", "io"])));
    assert_eq!(
        outline(&v, &s),
        [
            "main",
            "  work",
            "    leaf",
            "    hash_block",
            "  io",
            "    read",
            "  idle",
            "other"
        ]
    );
    v.handle(Action::Collapse, &c);
    assert!(!v.is_open(&path(&["main", "io"])));
    // Left on a closed node goes to its parent; Activate toggles it.
    v.handle(Action::Left, &c);
    assert_eq!(v.selected_path(), path(&["main"]));
    v.handle(Action::Activate, &c);
    assert_eq!(outline(&v, &s), ["main", "other"]);
    v.handle(Action::Activate, &c);
    assert_eq!(outline(&v, &s).len(), 7);
    v.handle(Action::Bottom, &c);
    v.handle(Action::Right, &c);
    assert_eq!(outline(&v, &s)[6..], ["other", "  leaf"]);
    v.handle(Action::PageUp, &c);
    assert_eq!(v.selected_path(), path(&["main"]));
    v.handle(Action::PageDown, &c);
    assert_eq!(v.selected_path(), path(&["other", "leaf"]));
    v.handle(Action::Top, &c);
    v.handle(Action::Up, &c);
    assert_eq!(v.selected_path(), path(&["main"]));
}

#[test]
fn closed_nodes_hold_only_a_placeholder() {
    let s = snapshot_of(&STACKS);
    let theme = Theme::default();
    let c = ctx(&s, &theme, false);
    let mut v = CallTreeView::new();
    v.handle(Action::Top, &c);
    let main = &v.items[0];
    assert_eq!(*main.identifier(), path(&["main"])[0]);
    let io = main
        .children()
        .iter()
        .find(|i| *i.identifier() == path(&["main", "io"])[1])
        .expect("io item");
    assert_eq!(io.children().len(), 1);
    assert_eq!(*io.children()[0].identifier(), SYNTHETIC_ID);
    let idle = &main.children()[2];
    assert!(idle.children().is_empty(), "a leaf has no marker child");
}

#[test]
fn bottom_up_toggle_and_a_missing_inverted_trie() {
    let s = snapshot_of(&STACKS);
    let theme = Theme::default();
    let c = ctx(&s, &theme, false);
    let mut v = CallTreeView::new();
    v.handle(Action::Down, &c);
    v.handle(Action::ToggleBottomUp, &c);
    assert!(v.is_bottom_up());
    assert_eq!(
        v.hint(crate::config::keymap::Keymap::standard()).as_deref(),
        Some("bottom-up")
    );
    let screen = lines(&render(&mut v, &c, 80, 8));
    assert_eq!(
        screen[..6],
        [
            "┌ Call tree · bottom-up ───────────────────────────────────────────────────────┐",
            "│  function                                                       total%  total│",
            "│▼ leaf                                                            52.0%     52│",
            "│  ▼ work                                                          50.0%     50│",
            "│      main                                                        50.0%     50│",
            "│    other                                                          2.0%      2│",
        ]
    );
    assert_eq!(v.selected_path(), path(&["leaf"]));
    // Back to top-down: its own selection and open nodes are where they were.
    v.handle(Action::ToggleBottomUp, &c);
    assert_eq!(v.selected_path(), path(&["main", "work"]));

    let pending = Snapshot {
        inverted: None,
        ..snapshot_of(&STACKS)
    };
    let c2 = ctx(&pending, &theme, false);
    v.handle(Action::ToggleBottomUp, &c2);
    let screen = lines(&render(&mut v, &c2, 40, 4));
    assert_eq!(screen[1], "│building bottom-up view…              │");
    assert_eq!(v.handle(Action::Down, &c2), Effect::None);
    assert_eq!(v.handle(Action::NextMatch, &c2), Effect::None);
}

#[test]
fn next_match_opens_ancestors_and_wraps() {
    let s = snapshot_of(&STACKS);
    let theme = Theme::default();
    let c = ctx(&s, &theme, false);
    let mut v = CallTreeView::new();
    v.search(Some(&regex("^read$")), &c);
    assert!(!v.is_open(&path(&["main", "io"])));
    assert_eq!(v.handle(Action::NextMatch, &c), Effect::None);
    assert_eq!(v.selected_path(), path(&["main", "io", "read"]));
    assert_eq!(v.selected_frame(&s), s.frames.get("read"));
    assert!(v.is_open(&path(&["main", "io"])));
    let screen = lines(&render(&mut v, &c, 80, 12));
    assert!(screen[7].starts_with("│      read "), "{screen:?}");

    // Two leaf nodes, in display order: main;work;leaf then other;leaf.
    v.search(Some(&regex("^leaf$")), &c);
    assert_eq!(v.match_count(), 2);
    v.handle(Action::NextMatch, &c);
    assert_eq!(v.selected_path(), path(&["other", "leaf"]));
    assert!(v.is_open(&path(&["other"])));
    v.handle(Action::NextMatch, &c);
    assert_eq!(v.selected_path(), path(&["main", "work", "leaf"]));
    v.handle(Action::PrevMatch, &c);
    assert_eq!(v.selected_path(), path(&["other", "leaf"]));
    v.handle(Action::PrevMatch, &c);
    assert_eq!(v.selected_path(), path(&["main", "work", "leaf"]));

    v.search(Some(&regex("nothing")), &c);
    assert_eq!(
        v.handle(Action::NextMatch, &c),
        Effect::Message("no match for nothing".into())
    );
    assert_eq!(v.selected_path(), path(&["main", "work", "leaf"]));
}

#[test]
fn open_nodes_and_selection_survive_a_bigger_snapshot() {
    let s = snapshot_of(&STACKS);
    let theme = Theme::default();
    let c = ctx(&s, &theme, false);
    let mut v = CallTreeView::new();
    v.search(Some(&regex("^read$")), &c);
    v.handle(Action::NextMatch, &c);
    v.handle(Action::ClearSearch, &c);
    assert_eq!(v.selected_path(), path(&["main", "io", "read"]));

    let mut stacks = STACKS.to_vec();
    stacks.push((&["main", "io", "write"], 40, None));
    stacks.push((&["main", "io", "read", "copy"], 10, None));
    stacks.push((&["third"], 1, None));
    let bigger = Snapshot {
        generation: 2,
        ..snapshot_of(&stacks)
    };
    let c2 = ctx(&bigger, &theme, false);
    v.snapshot_changed(&c2);
    assert_eq!(v.selected_path(), path(&["main", "io", "read"]));
    assert!(v.is_open(&path(&["main", "io"])));
    assert!(v.is_open(&path(&["main", "work"])));
    assert_eq!(
        outline(&v, &bigger),
        [
            "main",
            "  work",
            "    leaf",
            "    hash_block",
            "  io",
            "    write",
            "    read",
            "  idle",
            "other",
            "third",
        ]
    );
    let buf = render(&mut v, &c2, 80, 14);
    let screen = lines(&buf);
    assert!(screen[8].starts_with("│    ▶ read "), "{screen:?}");
    assert_eq!(buf[(10, 8)].bg, theme.selected.bg.expect("selection colour"));
}

#[test]
fn a_vanished_selection_falls_back_to_its_ancestor() {
    let s = snapshot_of(&STACKS);
    let theme = Theme::default();
    let c = ctx(&s, &theme, false);
    let mut v = CallTreeView::new();
    v.handle(Action::Down, &c);
    v.handle(Action::Down, &c);
    assert_eq!(v.selected_path(), path(&["main", "work", "leaf"]));
    let smaller = Snapshot {
        generation: 2,
        ..snapshot_of(&[(&["main", "work", "hash_block"], 3, None)])
    };
    let c2 = ctx(&smaller, &theme, false);
    v.snapshot_changed(&c2);
    assert_eq!(v.selected_path(), path(&["main", "work"]));
}

#[test]
fn children_are_capped_with_a_more_item() {
    let names: Vec<String> = (0..250).map(|i| format!("f{i:03}")).collect();
    let frames: Vec<[&str; 2]> = names.iter().map(|n| ["main", n.as_str()]).collect();
    let stacks: Vec<(&[&str], u64, Option<u64>)> = frames
        .iter()
        .enumerate()
        .map(|(i, f)| (&f[..], 1000 - i as u64, None))
        .collect();
    let s = snapshot_of(&stacks);
    let theme = Theme::default();
    let c = ctx(&s, &theme, false);
    let mut v = CallTreeView::new();
    v.handle(Action::Top, &c);
    let visible = outline(&v, &s);
    assert_eq!(visible.len(), 1 + CHILD_CAP + 1);
    assert_eq!(visible[1], "  f000");
    assert_eq!(visible[CHILD_CAP], "  f199");
    assert_eq!(visible[CHILD_CAP + 1], "  …");
    // The rest weighs 800 + … + 751 of 221 625.
    let rest: u64 = (750..800).sum();
    let total: u64 = (751..=1000).sum();
    let expected = format!("… 50 more ({:.1}%)", rest as f64 * 100.0 / total as f64);
    v.handle(Action::Bottom, &c);
    let screen = lines(&render(&mut v, &c, 60, 6));
    assert!(screen[4].contains(&expected), "{screen:?}");
    // Opening "… more" shows the rest.
    v.handle(Action::Activate, &c);
    assert_eq!(outline(&v, &s).len(), 1 + 250);

    // A match beyond the cap raises it.
    let mut w = CallTreeView::new();
    w.search(Some(&regex("^f240$")), &c);
    w.handle(Action::NextMatch, &c);
    assert_eq!(w.selected_path(), path(&["main", "f240"]));
    assert!(outline(&w, &s).contains(&"  f240".to_string()));
}

#[test]
fn mouse_selects_toggles_and_scrolls() {
    let s = snapshot_of(&STACKS);
    let theme = Theme::default();
    let c = ctx(&s, &theme, false);
    let mut v = CallTreeView::new();
    let area = Rect::new(5, 3, 60, 6); // tree rows at y 5..9
    let mut buf = Buffer::empty(Rect::new(0, 0, 80, 20));
    v.render(area, &mut buf, &c);
    assert_eq!(v.click(20, 6, false, &c), Effect::None);
    assert_eq!(v.selected_path(), path(&["main", "work"]));
    v.click(20, 6, true, &c);
    assert!(!v.is_open(&path(&["main", "work"])));
    assert_eq!(outline(&v, &s), ["main", "  work", "  io", "  idle", "other"]);
    assert_eq!(v.click(2, 6, false, &c), Effect::None, "outside the tree");
    v.render(area, &mut buf, &c);
    v.scroll(2, &c);
    v.render(area, &mut buf, &c);
    assert_eq!(buf[(10, 5)].symbol(), "i", "io is now the first line");
    v.scroll(-5, &c);
    v.render(area, &mut buf, &c);
    assert_eq!(buf[(8, 5)].symbol(), "m");
}

#[test]
fn empty_snapshot_says_so() {
    let s = snapshot_of(&[]);
    let theme = Theme::default();
    let c = ctx(&s, &theme, false);
    let mut v = CallTreeView::new();
    let screen = lines(&render(&mut v, &c, 30, 4));
    assert_eq!(screen[1], "│no samples yet              │");
    assert_eq!(v.handle(Action::Activate, &c), Effect::None);
    v.handle(Action::Down, &c);
}
