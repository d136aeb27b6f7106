use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::*;
use crate::config::Theme;
use crate::model::sample_list::test_support::profile_from;
use crate::model::{PhaseMarkers, Selection};
use crate::views::test_support::{ctx, lines, render, snapshot_of};

const LONG: &str = "alloc::vec::Vec<T>::extend_from_slice_with_a_long_tail";

const STACKS: [(&[&str], u64, Option<u64>); 8] = [
    (&["main", "work", "leaf"], 80, None),
    (&["main", "work", "hash_block"], 50, None),
    (&["main", "io", "read"], 30, None),
    (&["main", "work"], 20, None),
    (&["main", "idle"], 11, None),
    (&["main", "io"], 6, None),
    (&["main", "work", LONG], 2, None),
    (&["main", "work", "tiny"], 1, None),
];

/// 200 samples: every function's percent is half its weight.
fn snapshot() -> Snapshot {
    snapshot_of(&STACKS)
}

fn names(view: &mut HotspotsView, snapshot: &Snapshot) -> Vec<String> {
    view.visible_frames(snapshot)
        .into_iter()
        .map(|f| snapshot.frames.name(f).to_string())
        .collect()
}

fn frame(snapshot: &Snapshot, name: &str) -> FrameId {
    snapshot.frames.get(name).expect("frame in the fixture")
}

#[test]
fn table_at_80_columns() {
    let s = snapshot();
    let theme = Theme::default();
    let c = ctx(&s, &theme, true);
    let mut v = HotspotsView::new();
    let screen = lines(&render(&mut v, &c, 80, 24));
    let blank = format!("│{}│", " ".repeat(78));
    assert_eq!(
        screen[..12],
        [
            "┌ Hotspots ────────────────────────────────────────────────────────────────────┐",
            "│function                                            self▼  self%  total total%│",
            "│leaf                                      ████████     80  40.0%     80  40.0%│",
            "│hash_block                                █████        50  25.0%     50  25.0%│",
            "│read                                      ███          30  15.0%     30  15.0%│",
            "│work                                      ██           20  10.0%    153  76.5%│",
            "│idle                                      █▏           11   5.5%     11   5.5%│",
            "│io                                        ▋             6   3.0%     36  18.0%│",
            "│Vec::extend_from_slice_with_a_long_tail   ▎             2   1.0%      2   1.0%│",
            "│tiny                                      ▏             1   0.5%      1   0.5%│",
            "│main                                                    0   0.0%    200 100.0%│",
            blank.as_str(),
        ]
    );
    assert!(screen[12..22].iter().all(|l| *l == blank));
    assert_eq!(
        screen[22],
        "│9 functions                                                                   │"
    );
    assert_eq!(screen[23], format!("└{}┘", "─".repeat(78)));
}

#[test]
fn narrow_table_drops_columns_and_keeps_names() {
    let s = snapshot();
    let theme = Theme::default();
    let c = ctx(&s, &theme, true);
    let mut v = HotspotsView::new();
    v.handle(Action::SortNext, &c);
    assert_eq!(
        lines(&render(&mut v, &c, 40, 8)),
        [
            "┌ Hotspots ────────────────────────────┐",
            "│function            self  self%  tot%▼│",
            "│main                   0   0.0% 100.0%│",
            "│work                  20  10.0%  76.5%│",
            "│leaf                  80  40.0%  40.0%│",
            "│hash_block            50  25.0%  25.0%│",
            "│9 functions                           │",
            "└──────────────────────────────────────┘",
        ]
    );
    assert_eq!(
        lines(&render(&mut v, &c, 24, 4)),
        [
            "┌ Hotspots ────────────┐",
            "│function         tot%▼│",
            "│leaf             40.0%│",
            "└──────────────────────┘",
        ]
    );
}

#[test]
fn tiny_areas_do_not_panic() {
    let s = snapshot();
    let theme = Theme::default();
    let c = ctx(&s, &theme, true);
    let mut v = HotspotsView::new();
    assert_eq!(
        lines(&render(&mut v, &c, 10, 3)),
        ["┌ Hotspot┐", "│leaf    │", "└────────┘"]
    );
    render(&mut v, &c, 0, 5);
    render(&mut v, &c, 5, 0);
    render(&mut v, &c, 1, 1);
    // Moving after a render into nothing still works.
    v.handle(Action::PageDown, &c);
    assert_eq!(v.selected(), Some(frame(&s, "main")));
}

#[test]
fn selected_row_uses_the_selection_style() {
    let s = snapshot();
    let theme = Theme::default();
    let c = ctx(&s, &theme, true);
    let mut v = HotspotsView::new();
    v.handle(Action::Down, &c);
    let buf = render(&mut v, &c, 80, 24);
    let selected_bg = theme.selected.bg.expect("theme has a selection colour");
    for x in 1..79 {
        assert_eq!(buf[(x, 3)].bg, selected_bg, "hash_block row, x={x}");
        assert_ne!(buf[(x, 2)].bg, selected_bg, "leaf row, x={x}");
    }
    assert_eq!(buf[(1, 1)].fg, theme.header.fg.expect("header colour"));
    // The bar of an unselected row is drawn in the bar colour.
    assert_eq!(buf[(43, 2)].fg, theme.bar.fg.expect("bar colour"));
}

#[test]
fn sort_cycles_self_total_name_and_reverses() {
    let s = snapshot();
    let theme = Theme::default();
    let c = ctx(&s, &theme, true);
    let mut v = HotspotsView::new();
    let by_self = [
        "leaf",
        "hash_block",
        "read",
        "work",
        "idle",
        "io",
        LONG,
        "tiny",
        "main",
    ];
    assert_eq!(names(&mut v, &s), by_self);
    assert_eq!(
        v.hint(crate::config::keymap::Keymap::standard()).as_deref(),
        Some("sorted by self")
    );
    v.handle(Action::SortNext, &c);
    assert_eq!(v.sort(), (SortColumn::TotalWeight, false));
    assert_eq!(
        names(&mut v, &s),
        [
            "main",
            "work",
            "leaf",
            "hash_block",
            "io",
            "read",
            "idle",
            LONG,
            "tiny"
        ]
    );
    v.handle(Action::SortNext, &c);
    assert_eq!(
        names(&mut v, &s),
        [
            LONG,
            "hash_block",
            "idle",
            "io",
            "leaf",
            "main",
            "read",
            "tiny",
            "work"
        ]
    );
    let header = lines(&render(&mut v, &c, 80, 5))[1].clone();
    assert!(header.starts_with("│function▼ "), "{header}");
    v.handle(Action::SortNext, &c);
    assert_eq!(names(&mut v, &s), by_self);
    v.handle(Action::SortReverse, &c);
    let mut reversed = by_self.to_vec();
    reversed.reverse();
    assert_eq!(names(&mut v, &s), reversed);
    assert_eq!(
        v.hint(crate::config::keymap::Keymap::standard()).as_deref(),
        Some("sorted by self (reversed)")
    );
    let header = lines(&render(&mut v, &c, 80, 5))[1].clone();
    assert!(header.contains(" self▲ "), "{header}");
}

#[test]
fn search_filters_rows_and_the_footer_counts_them() {
    let s = snapshot();
    let theme = Theme::default();
    let c = ctx(&s, &theme, true);
    let mut v = HotspotsView::new();
    let re = Regex::new("^(leaf|read|io)$").expect("valid regex");
    assert_eq!(v.search(Some(&re), &c), Effect::None);
    assert_eq!(names(&mut v, &s), ["leaf", "read", "io"]);
    let screen = lines(&render(&mut v, &c, 60, 8));
    assert_eq!(
        screen[6],
        "│filter: ^(leaf|read|io)$ · 3 of 9                         │"
    );
    v.handle(Action::ClearSearch, &c);
    assert_eq!(names(&mut v, &s).len(), 9);
}

#[test]
fn percent_limit_hides_rows_below_the_sort_column_percent() {
    let s = snapshot();
    let theme = Theme::default();
    let c = ctx(&s, &theme, true);
    let mut v = HotspotsView::new();
    v.handle(Action::PercentUp, &c);
    assert_eq!(v.limit_percent(), 0.1);
    // main has no self weight: 0% self.
    assert!(!names(&mut v, &s).contains(&"main".to_string()));
    v.handle(Action::PercentUp, &c);
    v.handle(Action::PercentUp, &c);
    assert_eq!(v.limit_percent(), 1.0);
    assert_eq!(
        names(&mut v, &s),
        ["leaf", "hash_block", "read", "work", "idle", "io", LONG]
    );
    assert_eq!(
        v.hint(crate::config::keymap::Keymap::standard()).as_deref(),
        Some("sorted by self · limit 1%")
    );
    let screen = lines(&render(&mut v, &c, 40, 12));
    assert_eq!(screen[10], "│limit 1% · 2 hidden                   │");
    // Sorted by total the limit reads total %: main is back, io stays.
    v.handle(Action::SortNext, &c);
    v.handle(Action::PercentUp, &c);
    v.handle(Action::PercentUp, &c);
    assert_eq!(v.limit_percent(), 5.0);
    assert_eq!(
        names(&mut v, &s),
        ["main", "work", "leaf", "hash_block", "io", "read", "idle"]
    );
    // The top step stays put.
    v.handle(Action::PercentUp, &c);
    assert_eq!(v.limit_percent(), 5.0);
    for _ in 0..10 {
        v.handle(Action::PercentDown, &c);
    }
    assert_eq!(v.limit_percent(), 0.0);
    assert_eq!(names(&mut v, &s).len(), 9);
}

#[test]
fn enter_shows_the_selected_function() {
    let s = snapshot();
    let theme = Theme::default();
    let c = ctx(&s, &theme, true);
    let mut v = HotspotsView::new();
    v.handle(Action::Down, &c);
    v.handle(Action::Down, &c);
    assert_eq!(
        v.handle(Action::Activate, &c),
        Effect::ShowFunction(frame(&s, "read"))
    );
    v.handle(Action::Bottom, &c);
    assert_eq!(v.selected(), Some(frame(&s, "main")));
    v.handle(Action::Top, &c);
    v.handle(Action::Up, &c);
    assert_eq!(v.selected(), Some(frame(&s, "leaf")));
    assert_eq!(v.handle(Action::ZoomIn, &c), Effect::None);
}

#[test]
fn selection_follows_its_function_into_a_new_snapshot_and_stays_visible() {
    let s = snapshot();
    let theme = Theme::default();
    let c = ctx(&s, &theme, true);
    let mut v = HotspotsView::new();
    v.handle(Action::Bottom, &c);
    // 4 body rows (y 2..6): the last row scrolls into view.
    let buf = render(&mut v, &c, 40, 8);
    let screen = lines(&buf);
    assert!(screen[5].starts_with("│main "), "{screen:?}");
    assert!(screen[2].starts_with("│io "), "{screen:?}");
    assert_eq!(buf[(2, 5)].bg, theme.selected.bg.expect("selection colour"));
    for _ in 0..4 {
        v.handle(Action::Up, &c);
    }
    assert_eq!(v.selected(), Some(frame(&s, "idle")));
    let screen = lines(&render(&mut v, &c, 40, 8));
    assert!(screen[2].starts_with("│idle "), "scrolled up: {screen:?}");

    // A bigger profile (the same frames first, as a live frame table only grows) where
    // idle is now the hottest self function.
    let mut stacks = STACKS.to_vec();
    stacks.push((&["main", "idle"], 500, None));
    stacks.push((&["main", "new_function"], 7, None));
    let p = profile_from(&stacks);
    let bigger = Snapshot {
        generation: 2,
        ..crate::engine::testing::snapshot_with(&p, Selection::all(), PhaseMarkers::default())
    };
    let c2 = ctx(&bigger, &theme, true);
    v.snapshot_changed(&c2);
    assert_eq!(
        v.selected().map(|f| bigger.frames.name(f).to_string()),
        Some("idle".to_string())
    );
    let buf = render(&mut v, &c2, 40, 8);
    let screen = lines(&buf);
    assert!(screen[2].starts_with("│idle "), "{screen:?}");
    assert_eq!(buf[(2, 2)].bg, theme.selected.bg.expect("selection colour"));
    assert!(screen[3].starts_with("│leaf "), "{screen:?}");
}

#[test]
fn a_filtered_out_selection_moves_to_a_visible_row() {
    let s = snapshot();
    let theme = Theme::default();
    let c = ctx(&s, &theme, true);
    let mut v = HotspotsView::new();
    v.handle(Action::Bottom, &c);
    let re = Regex::new("^(leaf|read)$").expect("valid regex");
    v.search(Some(&re), &c);
    assert_eq!(v.selected(), Some(frame(&s, "read")));
    assert_eq!(
        v.handle(Action::Activate, &c),
        Effect::ShowFunction(frame(&s, "read"))
    );
    let nothing = Regex::new("^nothing$").expect("valid regex");
    v.search(Some(&nothing), &c);
    assert_eq!(v.selected(), None);
    assert_eq!(v.handle(Action::Activate, &c), Effect::None);
}

#[test]
fn mouse_selects_activates_and_scrolls() {
    let s = snapshot();
    let theme = Theme::default();
    let c = ctx(&s, &theme, true);
    let mut v = HotspotsView::new();
    let area = Rect::new(10, 5, 40, 8); // 4 body rows at y 7..11
    let mut buf = Buffer::empty(Rect::new(0, 0, 60, 20));
    v.render(area, &mut buf, &c);
    assert_eq!(v.click(20, 9, false, &c), Effect::None);
    assert_eq!(v.selected(), Some(frame(&s, "read")));
    assert_eq!(
        v.click(20, 8, true, &c),
        Effect::ShowFunction(frame(&s, "hash_block"))
    );
    // Outside the body (the header row) nothing happens.
    assert_eq!(v.click(20, 6, true, &c), Effect::None);
    assert_eq!(v.selected(), Some(frame(&s, "hash_block")));
    // The wheel scrolls the rows; the selection is dragged along to stay on screen.
    v.scroll(3, &c);
    assert_eq!(v.selected(), Some(frame(&s, "work")));
    v.render(area, &mut buf, &c);
    assert_eq!(buf[(11, 7)].symbol(), "w");
    v.scroll(100, &c);
    v.render(area, &mut buf, &c);
    assert_eq!(buf[(11, 10)].symbol(), "m", "the last row ends the page");
    v.scroll(-100, &c);
    v.render(area, &mut buf, &c);
    assert_eq!(buf[(11, 7)].symbol(), "l");
}

#[test]
fn empty_snapshot_says_so() {
    let p = profile_from(&[]);
    let s = crate::engine::testing::snapshot_with(&p, Selection::all(), PhaseMarkers::default());
    let theme = Theme::default();
    let c = ctx(&s, &theme, true);
    let mut v = HotspotsView::new();
    let screen = lines(&render(&mut v, &c, 30, 5));
    assert_eq!(screen[2], "│no samples yet              │");
    assert_eq!(v.handle(Action::Activate, &c), Effect::None);
    v.handle(Action::Down, &c);
    v.scroll(1, &c);
}

#[test]
fn bars_use_eighth_blocks_and_columns_fill_the_width() {
    assert_eq!(draw::bar(1.0, 4), "████");
    assert_eq!(draw::bar(0.5, 4), "██");
    assert_eq!(draw::bar(1.0 / 32.0, 4), "▏");
    assert_eq!(draw::bar(0.0, 4), "");
    assert_eq!(draw::bar(2.0, 2), "██", "clamped");
    for width in [0u16, 5, 10, 24, 40, 78, 200] {
        let layout = draw::ColumnLayout::fit(
            width,
            123_456_789,
            SortColumn::SelfWeight,
            rows::RowShape::default(),
        );
        let end = layout.columns.last().map_or(0, |&(_, x, w)| x + w);
        assert!(end <= width.max(1) || width == 0, "width {width}: {layout:?}");
        if width >= 40 {
            assert_eq!(end, width, "the name column takes the rest");
        }
    }
}

/// A host-like profile: a command-name root over user code calling into the kernel.
fn host_snapshot() -> Snapshot {
    use crate::model::{FrameKind, FrameOrigin};
    let mut p = crate::model::sample_list::SampleList::new(crate::model::ProfileInfo::default());
    let origins = [
        ("hot", FrameKind::Pseudo, None),
        ("main", FrameKind::User, Some("hot")),
        ("hot_leaf", FrameKind::User, Some("hot")),
        ("clock_gettime", FrameKind::User, Some("libc.so.6")),
        ("do_syscall_64", FrameKind::Kernel, Some("[kernel.kallsyms]")),
    ];
    for (name, kind, module) in origins {
        p.frames.intern_from(name, None, FrameOrigin::new(kind, module));
    }
    let mut s = profile_from(&[]);
    std::mem::swap(&mut s.frames, &mut p.frames);
    let instance = s.instance(crate::model::Instance::unknown());
    for (stack, weight) in [
        (&["hot", "main", "hot_leaf"][..], 90),
        (&["hot", "main", "clock_gettime", "do_syscall_64"][..], 10),
    ] {
        let stack = s.intern_named_stack(stack);
        s.push_sample(crate::model::Sample {
            time_ns: None,
            instance,
            weight,
            stack,
            meta: crate::model::SampleMeta::default(),
        });
    }
    crate::engine::testing::snapshot_of_list(&s)
}

#[test]
fn marks_and_modules_are_shown_and_the_width_is_not_wasted() {
    let s = host_snapshot();
    let theme = Theme::default();
    let c = ctx(&s, &theme, true);
    let mut v = HotspotsView::new();
    let screen = lines(&render(&mut v, &c, 120, 8));
    assert_eq!(
        screen[1].trim_end_matches('│').trim_end(),
        "│    function      shared object                                               self▼  self%  total total%"
    );
    assert!(
        screen[2].starts_with("│[.] hot_leaf      hot               ████"),
        "{screen:#?}"
    );
    assert!(
        screen
            .iter()
            .any(|l| l.starts_with("│[k] do_syscall_64 [kernel.kallsyms] ")),
        "{screen:#?}"
    );
}

#[test]
fn a_command_name_root_does_not_top_the_total_sort() {
    let s = host_snapshot();
    let theme = Theme::default();
    let c = ctx(&s, &theme, true);
    let mut v = HotspotsView::new();
    v.handle(Action::SortNext, &c);
    assert_eq!(v.sort().0, SortColumn::TotalWeight);
    let order = names(&mut v, &s);
    assert_eq!(order.first().map(String::as_str), Some("main"), "{order:?}");
    assert_eq!(order.last().map(String::as_str), Some("hot"), "{order:?}");
}
