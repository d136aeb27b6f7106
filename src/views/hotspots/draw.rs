//! Drawing the hotspot table: which columns fit the width, the header with the sort
//! indicator, one row of names, numbers and a self-% bar, and the footer line. When the
//! source knows where frames run, perf top's `[k]`/`[.]` mark precedes the name and a
//! shared-object (module) column follows it.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;

use super::rows::{RowShape, SortColumn};
use crate::config::Theme;
use crate::model::hotspots::percent;
use crate::model::{FrameTable, Hotspot};
use crate::views::text::{display_width, fit_name, truncate_end, truncate_path};

/// A column of the table.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Column {
    /// `[k]` kernel, `[.]` user.
    Mark,
    Name,
    /// The shared object (DSO) the function is in.
    Module,
    Bar,
    SelfSamples,
    SelfPercent,
    TotalSamples,
    TotalPercent,
}

/// Names narrower than this make the table drop optional columns.
const MIN_NAME_WIDTH: u16 = 12;
/// With a module column, names get at least this much before the bar stays.
const MIN_NAME_WIDTH_WITH_MODULE: u16 = 24;
const MARK_WIDTH: u16 = 3; // "[k]"
/// The module column's width when space is short (`[kernel.kallsyms]` fits).
const MODULE_WIDTH: u16 = 18;
/// The bar grows into spare width up to this.
const MAX_BAR_WIDTH: u16 = 40;
const PERCENT_WIDTH: u16 = 6; // "100.0%"
const BAR_WIDTH: u16 = 8;
/// Wide enough for "total▼".
const MIN_SAMPLES_WIDTH: u16 = 6;
const EIGHTHS: [char; 8] = ['▏', '▎', '▍', '▌', '▋', '▊', '▉', '█'];

/// Columns placed on a row: `(column, x offset, width)`.
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnLayout {
    pub columns: Vec<(Column, u16, u16)>,
}

impl ColumnLayout {
    /// The columns that fit `width` for rows of `shape`; the name takes what the others
    /// leave, up to its widest (spare width widens the bar, then stays at the right, so
    /// names and numbers stay close). Optional columns go first to last: bar, total
    /// samples, module, self samples, then the percent the table is not sorted by.
    pub fn fit(width: u16, max_weight: u64, sort: SortColumn, shape: RowShape) -> Self {
        let samples = (max_weight.to_string().len() as u16).max(MIN_SAMPLES_WIDTH);
        let mut front = Vec::new();
        if shape.marks {
            front.push((Column::Mark, MARK_WIDTH));
        }
        let mut module =
            (shape.module_width > 0).then_some((Column::Module, shape.module_width.min(MODULE_WIDTH)));
        let min_name = if module.is_some() {
            MIN_NAME_WIDTH_WITH_MODULE
        } else {
            MIN_NAME_WIDTH
        };
        let mut numbers = vec![
            (Column::Bar, BAR_WIDTH),
            (Column::SelfSamples, samples),
            (Column::SelfPercent, PERCENT_WIDTH),
            (Column::TotalSamples, samples),
            (Column::TotalPercent, PERCENT_WIDTH),
        ];
        let used = |cols: &[(Column, u16)]| cols.iter().map(|(_, w)| w + 1).sum::<u16>();
        let others = |numbers: &[(Column, u16)], module: Option<(Column, u16)>| {
            used(numbers) + used(&front) + module.map_or(0, |(_, w)| w + 1)
        };
        let (other_percent, sort_percent) = match sort {
            SortColumn::TotalWeight => (Column::SelfPercent, Column::TotalPercent),
            SortColumn::SelfWeight | SortColumn::Name => (Column::TotalPercent, Column::SelfPercent),
        };
        for drop in [
            Column::Bar,
            Column::TotalSamples,
            Column::Module,
            Column::SelfSamples,
            other_percent,
            sort_percent,
        ] {
            let threshold = if module.is_some() {
                min_name
            } else {
                MIN_NAME_WIDTH
            };
            if width.saturating_sub(others(&numbers, module)) >= threshold {
                break;
            }
            if drop == Column::Module {
                module = None;
            }
            numbers.retain(|(c, _)| *c != drop);
        }
        let mut name_width = width.saturating_sub(others(&numbers, module));
        // Spare width: the module column gets its widest, the bar grows, the rest stays
        // at the right instead of between the names and their numbers.
        let wanted_name = shape.name_width.max(MIN_NAME_WIDTH);
        if shape.name_width > 0 && name_width > wanted_name {
            let mut spare = name_width - wanted_name;
            if let Some((_, w)) = &mut module {
                let grow = shape.module_width.saturating_sub(*w).min(spare);
                *w += grow;
                spare -= grow;
            }
            if let Some((_, w)) = numbers.iter_mut().find(|(c, _)| *c == Column::Bar) {
                let grow = MAX_BAR_WIDTH.saturating_sub(*w).min(spare);
                *w += grow;
            }
            name_width = wanted_name;
        }
        let mut columns = Vec::new();
        let mut x = 0;
        for (c, w) in front {
            columns.push((c, x, w));
            x += w + 1;
        }
        columns.push((Column::Name, x, name_width));
        x += name_width;
        for (c, w) in module.into_iter().chain(numbers) {
            columns.push((c, x + 1, w));
            x += w + 1;
        }
        ColumnLayout { columns }
    }

    pub fn has(&self, column: Column) -> bool {
        self.columns.iter().any(|&(c, _, _)| c == column)
    }
}

/// Write `text` into `width` cells at `(x, y)`, right-aligned or left-aligned.
fn put(buf: &mut Buffer, x: u16, y: u16, width: u16, text: &str, right: bool, style: Style) {
    if width == 0 {
        return;
    }
    let text = truncate_end(text, width as usize);
    let pad = (width as usize).saturating_sub(display_width(&text));
    let line = if right {
        format!("{}{}", " ".repeat(pad), text)
    } else {
        format!("{}{}", text, " ".repeat(pad))
    };
    buf.set_stringn(x, y, line, width as usize, style);
}

/// The header row; the active sort column carries ▼ (high first / A→Z) or ▲ (reversed).
pub fn draw_header(
    buf: &mut Buffer,
    area: Rect,
    layout: &ColumnLayout,
    sort: SortColumn,
    reversed: bool,
    theme: &Theme,
) {
    buf.set_style(area, theme.header);
    let arrow = if reversed { "▲" } else { "▼" };
    for &(column, x, width) in &layout.columns {
        let (label, active) = match column {
            Column::Mark => ("", false),
            Column::Name => ("function", sort == SortColumn::Name),
            Column::Module => ("shared object", false),
            Column::Bar => ("", false),
            Column::SelfSamples => ("self", sort == SortColumn::SelfWeight),
            Column::SelfPercent => ("self%", false),
            Column::TotalSamples => ("total", sort == SortColumn::TotalWeight),
            Column::TotalPercent => ("total%", false),
        };
        let text = if active {
            format!("{label}{arrow}")
        } else {
            label.to_string()
        };
        let right = !matches!(column, Column::Name | Column::Module | Column::Mark);
        put(buf, area.x + x, area.y, width, &text, right, theme.header);
    }
    // Without the self samples column the self % column shows where self sorting is.
    if sort == SortColumn::SelfWeight
        && !layout.has(Column::SelfSamples)
        && let Some(&(_, x, width)) = layout.columns.iter().find(|(c, _, _)| *c == Column::SelfPercent)
    {
        put(
            buf,
            area.x + x,
            area.y,
            width,
            &format!("self%{arrow}"),
            true,
            theme.header,
        );
    }
    if sort == SortColumn::TotalWeight
        && !layout.has(Column::TotalSamples)
        && let Some(&(_, x, width)) = layout.columns.iter().find(|(c, _, _)| *c == Column::TotalPercent)
    {
        put(
            buf,
            area.x + x,
            area.y,
            width,
            &format!("tot%{arrow}"),
            true,
            theme.header,
        );
    }
}

/// `fraction` (0..=1) of `width` cells in eighth blocks.
pub fn bar(fraction: f64, width: u16) -> String {
    let eighths = (fraction.clamp(0.0, 1.0) * f64::from(width) * 8.0).round() as usize;
    let mut s = "█".repeat(eighths / 8);
    let rest = eighths % 8;
    if rest > 0 {
        s.push(EIGHTHS[rest - 1]);
    }
    s
}

/// What one row needs besides the hotspot itself.
pub struct RowContext<'a> {
    pub frames: &'a FrameTable,
    pub total_weight: u64,
    /// The largest self weight: a full bar.
    pub max_self: u64,
    pub selected: bool,
    pub theme: &'a Theme,
}

pub fn draw_row(buf: &mut Buffer, area: Rect, layout: &ColumnLayout, row: &Hotspot, ctx: &RowContext) {
    let theme = ctx.theme;
    let base = if ctx.selected { theme.selected } else { theme.text };
    buf.set_style(area, base);
    let pick = |style: Style| if ctx.selected { theme.selected } else { style };
    for &(column, x, width) in &layout.columns {
        let x = area.x + x;
        match column {
            Column::Mark => {
                let mark = ctx.frames.kind(row.frame).mark();
                put(buf, x, area.y, width, mark, false, pick(theme.dim));
            }
            Column::Module => {
                let module = ctx.frames.module(row.frame).unwrap_or("");
                let module = truncate_path(module, width as usize);
                put(buf, x, area.y, width, &module, false, pick(theme.dim));
            }
            Column::Name => {
                let name = ctx.frames.name(row.frame);
                let name = fit_name(name, width as usize);
                put(buf, x, area.y, width, &name, false, base);
            }
            Column::Bar => {
                let fraction = if ctx.max_self == 0 {
                    0.0
                } else {
                    row.self_weight as f64 / ctx.max_self as f64
                };
                put(
                    buf,
                    x,
                    area.y,
                    width,
                    &bar(fraction, width),
                    false,
                    pick(theme.bar),
                );
            }
            Column::SelfSamples => {
                put(buf, x, area.y, width, &row.self_weight.to_string(), true, base);
            }
            Column::SelfPercent => {
                let p = format!("{:.1}%", percent(row.self_weight, ctx.total_weight));
                put(buf, x, area.y, width, &p, true, base);
            }
            Column::TotalSamples => {
                let t = row.total_weight.to_string();
                put(buf, x, area.y, width, &t, true, pick(theme.dim));
            }
            Column::TotalPercent => {
                let p = format!("{:.1}%", percent(row.total_weight, ctx.total_weight));
                put(buf, x, area.y, width, &p, true, pick(theme.dim));
            }
        }
    }
}

/// A dim line of text cut to the area.
pub fn draw_line(buf: &mut Buffer, area: Rect, text: &str, style: Style) {
    put(buf, area.x, area.y, area.width, text, false, style);
}
