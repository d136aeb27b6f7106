//! Per-instance panes: the hotspot table or the flamegraph of each CPU / vCPU / thread
//! side by side, a compact one-line-per-instance grid when there are too many for panes,
//! and Enter to show one instance full-screen.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::{Block, Borders, Widget};

use crate::config::{Action, KeyContext};
use crate::model::aggregate::InstanceSlice;
use crate::model::hotspots::percent;
use crate::views::ViewKind;

use super::flamegraph::{FlameState, render_flamegraph};
use super::text::{display_width, fit_name, truncate_middle};
use super::{Effect, View, ViewContext};

/// Smallest pane worth drawing, in cells.
const MIN_PANE_WIDTH: u16 = 28;
const MIN_PANE_HEIGHT: u16 = 6;
/// Width of one entry of the compact grid.
const COMPACT_WIDTH: u16 = 40;

/// The grid of instances.
pub struct InstancesView {
    base: ViewKind,
    selected: usize,
    /// Pane rectangles of the last draw, in instance order (for clicks).
    panes: Vec<Rect>,
    /// Columns of the last layout (for Up/Down).
    columns: usize,
    scroll: usize,
}

impl Default for InstancesView {
    fn default() -> Self {
        Self::new()
    }
}

/// How the panes are arranged.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum GridLayout {
    /// `columns × rows` panes, each at least the minimum size.
    Panes { columns: usize, rows: usize },
    /// One line per instance in `columns` columns.
    Compact { columns: usize },
}

/// Pick the layout: the pane grid with the biggest panes that still fit, else compact.
pub fn grid_layout(instances: usize, area: Rect) -> GridLayout {
    let n = instances.max(1);
    let mut best: Option<(usize, usize, u32)> = None;
    for columns in 1..=n {
        let rows = n.div_ceil(columns);
        let w = area.width / columns as u16;
        let h = area.height / rows as u16;
        if w >= MIN_PANE_WIDTH && h >= MIN_PANE_HEIGHT {
            // Terminal cells are about twice as tall as wide: weigh height double.
            let score = u32::from(w).min(u32::from(h) * 2);
            if best.is_none_or(|(_, _, s)| score > s) {
                best = Some((columns, rows, score));
            }
        }
    }
    match best {
        Some((columns, rows, _)) => GridLayout::Panes { columns, rows },
        None => GridLayout::Compact {
            columns: (area.width / COMPACT_WIDTH).max(1) as usize,
        },
    }
}

impl InstancesView {
    pub fn new() -> Self {
        Self {
            base: ViewKind::Hotspots,
            selected: 0,
            panes: Vec::new(),
            columns: 1,
            scroll: 0,
        }
    }

    /// Which view each pane shows (the view the split was asked from).
    pub fn set_base(&mut self, base: ViewKind) {
        self.base = base;
    }

    pub fn selected(&self) -> usize {
        self.selected
    }

    fn pane(
        &self,
        slice: &InstanceSlice,
        total: u64,
        area: Rect,
        buf: &mut Buffer,
        ctx: &ViewContext,
        selected: bool,
    ) {
        let theme = ctx.theme;
        let title = format!(
            " {} · {} ({:.1}%) ",
            slice.label,
            slice.trie.total_weight(),
            percent(slice.trie.total_weight(), total)
        );
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(if selected {
                theme.border_focused
            } else {
                theme.border
            })
            .title(truncate_middle(&title, area.width.saturating_sub(2) as usize).into_owned())
            .title_style(if selected { theme.title } else { theme.dim });
        let inner = block.inner(area);
        block.render(area, buf);
        match self.base {
            ViewKind::Flamegraph => {
                let state = FlameState::default();
                render_flamegraph(&slice.trie, &ctx.snapshot.frames, &state, inner, buf, theme);
            }
            _ => {
                for (row, h) in slice.hotspots.rows.iter().take(inner.height as usize).enumerate() {
                    let y = inner.y + row as u16;
                    let pct = format!("{:5.1}% ", slice.hotspots.percent(h.self_weight));
                    let (x, _) = buf.set_stringn(inner.x, y, &pct, inner.width as usize, theme.dim);
                    let room = (inner.x + inner.width).saturating_sub(x) as usize;
                    let name = fit_name(ctx.snapshot.frames.name(h.frame), room);
                    buf.set_stringn(x, y, &name, room, theme.text);
                }
            }
        }
    }

    fn compact(
        &mut self,
        slices: &[InstanceSlice],
        total: u64,
        area: Rect,
        buf: &mut Buffer,
        ctx: &ViewContext,
        columns: usize,
    ) {
        let theme = ctx.theme;
        let rows = area.height.max(1) as usize;
        // Keep the selected entry on screen.
        let per_screen = rows * columns;
        if self.selected < self.scroll {
            self.scroll = self.selected / columns * columns;
        } else if self.selected >= self.scroll + per_screen {
            self.scroll = (self.selected / columns + 1).saturating_sub(rows) * columns;
        }
        let width = area.width / columns as u16;
        for (i, slice) in slices.iter().enumerate().skip(self.scroll).take(per_screen) {
            let k = i - self.scroll;
            let (r, c) = (k / columns, k % columns);
            let rect = Rect::new(
                area.x + c as u16 * width,
                area.y + r as u16,
                width.saturating_sub(1),
                1,
            );
            self.panes[i] = rect;
            let top = slice
                .hotspots
                .rows
                .first()
                .map(|h| ctx.snapshot.frames.name(h.frame))
                .unwrap_or("");
            let head = format!(
                "{:<10} {:5.1}% ",
                slice.label,
                percent(slice.trie.total_weight(), total)
            );
            let style = if i == self.selected {
                theme.selected
            } else {
                theme.text
            };
            let (x, _) = buf.set_stringn(
                rect.x,
                rect.y,
                truncate_middle(&head, rect.width as usize),
                rect.width as usize,
                style,
            );
            let room = (rect.x + rect.width).saturating_sub(x) as usize;
            if room > 0 && display_width(top) > 0 {
                buf.set_stringn(
                    x,
                    rect.y,
                    fit_name(top, room),
                    room,
                    if i == self.selected {
                        theme.selected
                    } else {
                        theme.dim
                    },
                );
            }
        }
    }
}

impl View for InstancesView {
    fn key_context(&self) -> KeyContext {
        KeyContext::Instances
    }

    fn render(&mut self, area: Rect, buf: &mut Buffer, ctx: &ViewContext) {
        let slices = ctx.snapshot.instances.clone();
        self.panes = vec![Rect::default(); slices.len()];
        if area.width == 0 || area.height == 0 {
            return;
        }
        if slices.is_empty() {
            let text = if ctx.snapshot.instance_labels.len() > 1 {
                "splitting per instance…"
            } else {
                "one instance only: nothing to split (CPU, vCPU or thread)"
            };
            buf.set_stringn(
                area.x + 1,
                area.y,
                text,
                area.width.saturating_sub(1) as usize,
                ctx.theme.dim,
            );
            return;
        }
        self.selected = self.selected.min(slices.len() - 1);
        let total = ctx.snapshot.trie.total_weight();
        match grid_layout(slices.len(), area) {
            GridLayout::Panes { columns, rows } => {
                self.columns = columns;
                let w = area.width / columns as u16;
                let h = area.height / rows as u16;
                for (i, slice) in slices.iter().enumerate() {
                    let (r, c) = (i / columns, i % columns);
                    // The last column and row take the rounding remainder.
                    let x = area.x + c as u16 * w;
                    let y = area.y + r as u16 * h;
                    let width = if c + 1 == columns {
                        area.x + area.width - x
                    } else {
                        w
                    };
                    let height = if r + 1 == rows {
                        area.y + area.height - y
                    } else {
                        h
                    };
                    let rect = Rect::new(x, y, width, height);
                    self.panes[i] = rect;
                    self.pane(slice, total, rect, buf, ctx, i == self.selected);
                }
            }
            GridLayout::Compact { columns } => {
                self.columns = columns;
                self.compact(&slices, total, area, buf, ctx, columns);
            }
        }
    }

    fn handle(&mut self, action: Action, ctx: &ViewContext) -> Effect {
        let n = ctx.snapshot.instances.len();
        if n == 0 {
            return Effect::None;
        }
        let cols = self.columns.max(1);
        match action {
            Action::Left | Action::PrevSibling => self.selected = self.selected.saturating_sub(1),
            Action::Right | Action::NextSibling => self.selected = (self.selected + 1).min(n - 1),
            Action::Up => self.selected = self.selected.saturating_sub(cols),
            Action::Down => self.selected = (self.selected + cols).min(n - 1),
            Action::Top => self.selected = 0,
            Action::Bottom => self.selected = n - 1,
            Action::Activate | Action::ZoomIn => {
                return Effect::ShowInstance(ctx.snapshot.instances[self.selected].id);
            }
            _ => {}
        }
        Effect::None
    }

    fn click(&mut self, column: u16, row: u16, double: bool, ctx: &ViewContext) -> Effect {
        let hit = self
            .panes
            .iter()
            .position(|r| column >= r.x && column < r.x + r.width && row >= r.y && row < r.y + r.height);
        if let Some(i) = hit {
            self.selected = i;
            if double {
                return self.handle(Action::Activate, ctx);
            }
        }
        Effect::None
    }

    fn hint(&self, keys: &crate::config::keymap::Keymap) -> Option<String> {
        let show = keys.label(KeyContext::Instances, Action::Activate);
        Some(format!("per instance · {show} shows one full-screen"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Theme;
    use crate::engine::Snapshot;
    use crate::engine::testing::snapshot_of_list;
    use crate::model::sample_list::SampleList;
    use crate::model::{Instance, InstanceId, ProfileInfo, Sample, SampleMeta};
    use crate::views::test_support;

    /// `cpus` CPUs; CPU i has i+1 samples in `work_i` and one in `idle`.
    fn snapshot(cpus: u32) -> Snapshot {
        let mut p = SampleList::new(ProfileInfo::default());
        for c in 0..cpus {
            let inst = p.instance(Instance::cpu(c));
            let work = p.intern_named_stack(&["main", &format!("work_{c}")]);
            let idle = p.intern_named_stack(&["idle"]);
            for (stack, weight) in [(work, u64::from(c) + 1), (idle, 1)] {
                p.push_sample(Sample {
                    time_ns: None,
                    instance: inst,
                    weight,
                    stack,
                    meta: SampleMeta::default(),
                });
            }
        }
        snapshot_of_list(&p)
    }

    fn text(buf: &Buffer, y: u16) -> String {
        (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect()
    }

    #[test]
    fn layout_prefers_big_panes_then_goes_compact() {
        let area = Rect::new(0, 0, 80, 22);
        assert_eq!(grid_layout(1, area), GridLayout::Panes { columns: 1, rows: 1 });
        assert_eq!(grid_layout(4, area), GridLayout::Panes { columns: 2, rows: 2 });
        assert_eq!(grid_layout(6, area), GridLayout::Panes { columns: 2, rows: 3 });
        assert_eq!(grid_layout(64, area), GridLayout::Compact { columns: 2 });
        assert_eq!(
            grid_layout(3, Rect::new(0, 0, 20, 5)),
            GridLayout::Compact { columns: 1 }
        );
    }

    #[test]
    fn four_cpus_get_four_panes_with_their_own_hotspots() {
        let snap = snapshot(4);
        let theme = Theme::default();
        let ctx = test_support::ctx(&snap, &theme, true);
        let mut view = InstancesView::new();
        let mut buf = Buffer::empty(Rect::new(0, 0, 80, 22));
        view.render(buf.area, &mut buf, &ctx);
        assert_eq!(
            text(&buf, 0),
            format!(
                "┌ CPU 0 · 2 (14.3%) {}┐┌ CPU 1 · 3 (21.4%) {}┐",
                "─".repeat(19),
                "─".repeat(19)
            )
        );
        assert_eq!(&text(&buf, 1)[..40].trim_end(), &"│ 50.0% idle");
        assert!(text(&buf, 11).contains("CPU 2 · 4") && text(&buf, 11).contains("CPU 3 · 5"));
        assert!(text(&buf, 12).contains("80.0% work_3"), "{}", text(&buf, 12));
        // The selected pane has the focused border.
        assert_eq!(buf[(0, 0)].style().fg, theme.border_focused.fg);
        assert_eq!(buf[(40, 0)].style().fg, theme.border.fg);
        // Right, Down → CPU 3; Enter shows it full-screen.
        view.handle(Action::Right, &ctx);
        view.handle(Action::Down, &ctx);
        assert_eq!(view.selected(), 3);
        assert_eq!(
            view.handle(Action::Activate, &ctx),
            Effect::ShowInstance(InstanceId(3))
        );
        // A click selects the pane under it; a double click opens it.
        view.click(5, 12, false, &ctx);
        assert_eq!(view.selected(), 2);
        assert_eq!(view.click(5, 12, true, &ctx), Effect::ShowInstance(InstanceId(2)));
    }

    #[test]
    fn many_instances_use_the_compact_grid_and_flamegraph_panes_draw() {
        let snap = snapshot(40);
        let theme = Theme::default();
        let ctx = test_support::ctx(&snap, &theme, true);
        let mut view = InstancesView::new();
        let mut buf = Buffer::empty(Rect::new(0, 0, 80, 10));
        view.render(buf.area, &mut buf, &ctx);
        assert!(
            text(&buf, 0).starts_with("CPU 0        0.2% idle"),
            "{}",
            text(&buf, 0)
        );
        assert_eq!(buf[(0, 0)].style().bg, theme.selected.bg);
        // Moving past the screen scrolls.
        view.handle(Action::Bottom, &ctx);
        view.render(buf.area, &mut buf, &ctx);
        assert!((0..10).any(|y| text(&buf, y).contains("CPU 39")));
        // Flamegraph panes.
        let snap = snapshot(2);
        let ctx = test_support::ctx(&snap, &theme, true);
        let mut view = InstancesView::new();
        view.set_base(ViewKind::Flamegraph);
        let mut buf = Buffer::empty(Rect::new(0, 0, 80, 12));
        view.render(buf.area, &mut buf, &ctx);
        let all: String = (0..12).map(|y| text(&buf, y)).collect();
        assert!(all.contains("work_1") && all.contains("main"), "{all}");
        // Tiny areas do not panic.
        let mut tiny = Buffer::empty(Rect::new(0, 0, 3, 1));
        view.render(tiny.area, &mut tiny, &ctx);
        view.render(Rect::new(0, 0, 0, 0), &mut tiny, &ctx);
    }
}
