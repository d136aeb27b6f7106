//! Helpers the view tests share: a snapshot from named stacks, a context, rendering into
//! a fresh buffer, and the buffer as text.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use crate::config::Theme;
use crate::live::Snapshot;
use crate::model::profile::test_support::profile_from;
use crate::model::{PhaseMarkers, Selection};

use super::{View, ViewContext};

/// A snapshot of `(root-first frames, weight, time_ns)` samples, everything selected.
pub fn snapshot_of(stacks: &[(&[&str], u64, Option<u64>)]) -> Snapshot {
    Snapshot::from_profile(&profile_from(stacks), Selection::all(), PhaseMarkers::default())
}

/// An empty snapshot carrying analyzer tables.
pub fn snapshot_with_tables(tables: Vec<crate::live::TextTable>) -> Snapshot {
    let mut snapshot = snapshot_of(&[]);
    snapshot.tables = std::sync::Arc::new(tables);
    snapshot
}

pub fn ctx<'a>(snapshot: &'a Snapshot, theme: &'a Theme, focused: bool) -> ViewContext<'a> {
    ViewContext {
        snapshot,
        theme,
        focused,
    }
}

/// Draw `view` into a `w`×`h` buffer.
pub fn render(view: &mut dyn View, ctx: &ViewContext, w: u16, h: u16) -> Buffer {
    let mut buf = Buffer::empty(Rect::new(0, 0, w, h));
    view.render(buf.area, &mut buf, ctx);
    buf
}

/// Every row, cell by cell (trailing blanks kept).
pub fn lines(buf: &Buffer) -> Vec<String> {
    let area = buf.area;
    (0..area.height)
        .map(|y| (0..area.width).map(|x| buf[(x, y)].symbol()).collect::<String>())
        .collect()
}

/// Every row as text, trailing blanks removed.
pub fn rows(buf: &Buffer) -> Vec<String> {
    let area = buf.area;
    (area.top()..area.bottom())
        .map(|y| {
            let mut row = String::new();
            let mut x = area.left();
            while x < area.right() {
                let symbol = buf[(x, y)].symbol();
                row.push_str(symbol);
                // A wide character covers the next cell: skip what it hides.
                x += super::text::display_width(symbol).max(1) as u16;
            }
            row.trim_end().to_string()
        })
        .collect()
}

/// The buffer as one string, a line per row.
pub fn text(buf: &Buffer) -> String {
    rows(buf).join("\n")
}
