//! Helpers the view tests share: a snapshot from named stacks (built by the engine, as
//! production builds it), a context, rendering into a fresh buffer, and the buffer as text.

use std::sync::Arc;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use crate::config::Theme;
use crate::engine::testing::snapshot_of_list;
use crate::engine::{AnalysisView, Snapshot};
use crate::model::analysis::{AnalysisInfo, AnalysisSchema, SyscallsSchema};
use crate::model::present::AnalysisTable;
use crate::model::sample_list::test_support::profile_from;

use super::{View, ViewContext};

/// A snapshot of `(root-first frames, weight, time_ns)` samples, everything selected.
pub fn snapshot_of(stacks: &[(&[&str], u64, Option<u64>)]) -> Snapshot {
    snapshot_of_list(&profile_from(stacks))
}

/// An empty snapshot carrying an analyzer table (or no analysis at all).
pub fn snapshot_with_table(table: Option<AnalysisTable>) -> Snapshot {
    let mut snapshot = snapshot_of(&[]);
    snapshot.analysis = table.map(|table| {
        Arc::new(AnalysisView {
            info: Arc::new(AnalysisInfo {
                name: "syscalls".into(),
                schema: AnalysisSchema::Syscalls(SyscallsSchema {
                    perins: false,
                    than_ns: None,
                }),
            }),
            events: 0,
            series: Vec::new(),
            table,
            offenders: Default::default(),
            heatmap: None,
        })
    });
    snapshot
}

pub fn ctx<'a>(snapshot: &'a Snapshot, theme: &'a Theme, focused: bool) -> ViewContext<'a> {
    ViewContext {
        snapshot,
        theme,
        focused,
        keys: crate::config::keymap::Keymap::standard(),
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
