use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::*;
use crate::model::hash::{ROOT_PATH_HASH, child_path_hash};
use crate::model::profile::test_support::profile_from;
use crate::model::{PhaseMarkers, Selection};

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

fn snapshot_of(stacks: &[Stack]) -> Snapshot {
    let p = profile_from(stacks);
    Snapshot::from_profile(&p, Selection::all(), PhaseMarkers::default())
}

fn ctx<'a>(snapshot: &'a Snapshot, theme: &'a Theme) -> ViewContext<'a> {
    ViewContext {
        snapshot,
        theme,
        focused: false,
    }
}

fn render(view: &mut CallTreeView, ctx: &ViewContext, w: u16, h: u16) -> Buffer {
    let mut buf = Buffer::empty(Rect::new(0, 0, w, h));
    view.render(buf.area, &mut buf, ctx);
    buf
}

fn lines(buf: &Buffer) -> Vec<String> {
    let area = buf.area;
    (0..area.height)
        .map(|y| (0..area.width).map(|x| buf[(x, y)].symbol()).collect::<String>())
        .collect()
}

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

#[test]
fn print() {
    let s = snapshot_of(&STACKS);
    let theme = Theme::default();
    let c = ctx(&s, &theme);
    let mut v = CallTreeView::new();
    for l in lines(&render(&mut v, &c, 80, 12)) {
        println!("{l}|");
    }
    for l in lines(&render(&mut v, &c, 40, 12)) {
        println!("{l}|");
    }
    v.handle(Action::ToggleBottomUp, &c);
    for l in lines(&render(&mut v, &c, 80, 12)) {
        println!("{l}|");
    }
    panic!();
}
