//! The histogram view: the latency series of the snapshot's analysis (syscalls, run delay,
//! event pairs) in a list — sorted by any column (`s` cycles name, calls, total, p99, max;
//! `S` reverses) and filtered by the search regex — and for the selected one a summary
//! (count, min, avg, p50, p95, p99, p99.9, max, total, err, than) above one horizontal
//! bar per power-of-two range, perf-prof style — every figure and range in the series'
//! unit (a duration; a plain number for num-dist's counts and sizes).
//!
//! The view owns only its selection, sort, filter and scroll offsets; the numbers come
//! from the typed rows in the snapshot.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use regex::Regex;

use crate::config::{Action, KeyContext, Theme};
use crate::engine::Snapshot;
use crate::model::LatencyHistogram;
use crate::model::present::LatencySeries;
use crate::model::units::ValueUnit;
use crate::views::text::{display_width, truncate_middle};
use crate::views::{Effect, View, ViewContext};

use super::widgets::bars::{centered_hint, frame, horizontal_bar, scaled_eighths};
use heatmap::render_heatmap;

mod heatmap;

const EMPTY_HINT: &str =
    "no latency data: run `perfscope syscalls` / `rundelay` / `multi-trace` (host sources)";

const HEATMAP_EMPTY_HINT: &str =
    "no latencies over time yet: a latency analysis (multi-trace, rundelay, syscalls) fills it";

const HEATMAP_MIXED_HINT: &str = "no heatmap: the events' values have different units (a duration, a number)";

/// Below this inner width the series list goes on top instead of on the left.
const SIDE_LIST_MIN_WIDTH: u16 = 60;

/// What the series list is sorted by.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum SeriesSort {
    /// The analyzer's own order (perf-prof's table order).
    #[default]
    Table,
    Name,
    Calls,
    Total,
    P99,
    Max,
}

impl SeriesSort {
    const ALL: [SeriesSort; 6] = [
        SeriesSort::Table,
        SeriesSort::Name,
        SeriesSort::Calls,
        SeriesSort::Total,
        SeriesSort::P99,
        SeriesSort::Max,
    ];

    pub fn label(self) -> &'static str {
        match self {
            SeriesSort::Table => "table order",
            SeriesSort::Name => "name",
            SeriesSort::Calls => "calls",
            SeriesSort::Total => "total",
            SeriesSort::P99 => "p99",
            SeriesSort::Max => "max",
        }
    }

    fn next(self) -> Self {
        let i = Self::ALL.iter().position(|s| *s == self).unwrap_or(0);
        Self::ALL[(i + 1) % Self::ALL.len()]
    }
}

/// The series the view lists: filtered, then sorted (largest first for numbers).
fn listed<'a>(
    snapshot: &'a Snapshot,
    sort: SeriesSort,
    reversed: bool,
    filter: Option<&Regex>,
) -> Vec<&'a LatencySeries> {
    let Some(analysis) = &snapshot.analysis else {
        return Vec::new();
    };
    let mut series: Vec<&LatencySeries> = analysis
        .series
        .iter()
        .filter(|s| filter.is_none_or(|r| r.is_match(&s.label())))
        .collect();
    let key = |s: &LatencySeries| -> u64 {
        let h = &s.stats.histogram;
        match sort {
            SeriesSort::Calls => s.stats.calls(),
            SeriesSort::Total => s.stats.total_ns(),
            SeriesSort::P99 => h.percentile(99.0).unwrap_or(0),
            SeriesSort::Max => h.max().unwrap_or(0),
            SeriesSort::Table | SeriesSort::Name => 0,
        }
    };
    match sort {
        SeriesSort::Table => {}
        SeriesSort::Name => series.sort_by_key(|s| s.label()),
        _ => series.sort_by(|a, b| key(b).cmp(&key(a)).then_with(|| a.label().cmp(&b.label()))),
    }
    if reversed {
        series.reverse();
    }
    series
}

/// Latency histograms of the snapshot.
#[derive(Debug, Default)]
pub struct HistogramView {
    sort: SeriesSort,
    reversed: bool,
    filter: Option<Regex>,
    selected: usize,
    /// Name and instance of the selected series: the list may reorder between snapshots.
    selected_key: Option<(String, Option<String>)>,
    list_top: usize,
    bar_offset: usize,
    /// Where the list was drawn (for clicks) and how many bar rows fit (for paging).
    list_area: Rect,
    bar_rows: usize,
    /// `m`: the latency heatmap over time instead of the histograms.
    heatmap: bool,
}

/// The list label of a series: "read(0) · 1234 bash".
fn series_label(series: &LatencySeries) -> String {
    series.label()
}

/// The summary as (label, value) pairs: the distribution's, then the analyzer's counters,
/// each value in the series' unit.
fn summary_items(series: &LatencySeries) -> Vec<(String, String)> {
    let stats = &series.stats;
    let mut items: Vec<(String, String)> = histogram_items(&stats.histogram, series.unit)
        .into_iter()
        .map(|(label, value)| (label.to_string(), value))
        .collect();
    items.push(("total".into(), series.unit.format(stats.total_ns())));
    if series.counts_errors {
        items.push(("err".into(), stats.errors.to_string()));
    }
    if stats.than > 0 {
        items.push((
            "than".into(),
            format!("{} ({}%)", stats.than, stats.than_percent()),
        ));
    }
    items
}

/// The distribution's own summary as (label, value) pairs, values in `unit`.
fn histogram_items(h: &LatencyHistogram, unit: ValueUnit) -> Vec<(&'static str, String)> {
    let value = |v: Option<u64>| v.map(|v| unit.format(v)).unwrap_or_else(|| "-".into());
    let p = |q: f64| value(h.percentile(q));
    vec![
        ("count", h.count().to_string()),
        ("min", value(h.min())),
        (
            "avg",
            h.mean()
                .map(|m| unit.format_mean(m))
                .unwrap_or_else(|| "-".into()),
        ),
        ("p50", p(50.0)),
        ("p95", p(95.0)),
        ("p99", p(99.0)),
        ("p99.9", p(99.9)),
        ("max", value(h.max())),
    ]
}

/// "[ 16.4us, 32.8us)", "[  4096,   8192)": bounds in `unit`, right-aligned so the column
/// lines up.
pub fn range_label(low: u64, high: u64, unit: ValueUnit) -> String {
    format!("[{:>6}, {:>6})", unit.format_short(low), unit.format_short(high))
}

impl HistogramView {
    pub fn new() -> Self {
        Self::default()
    }

    fn listed<'a>(&self, snapshot: &'a Snapshot) -> Vec<&'a LatencySeries> {
        listed(snapshot, self.sort, self.reversed, self.filter.as_ref())
    }

    /// The index of the selected series, clamped to the snapshot.
    fn current(&self, series: &[&LatencySeries]) -> Option<usize> {
        if series.is_empty() {
            None
        } else {
            Some(self.selected.min(series.len() - 1))
        }
    }

    fn select(&mut self, index: usize, series: &[&LatencySeries]) {
        let Some(last) = series.len().checked_sub(1) else {
            return;
        };
        let index = index.min(last);
        if index != self.selected {
            self.bar_offset = 0;
        }
        self.selected = index;
        self.selected_key = Some((series[index].name.clone(), series[index].instance.clone()));
    }

    fn render_list(&mut self, area: Rect, buf: &mut Buffer, series: &[&LatencySeries], theme: &Theme) {
        self.list_area = area;
        let rows = area.height as usize;
        if rows == 0 || area.width == 0 {
            return;
        }
        let selected = self.selected.min(series.len() - 1);
        if selected < self.list_top {
            self.list_top = selected;
        } else if selected >= self.list_top + rows {
            self.list_top = selected + 1 - rows;
        }
        self.list_top = self.list_top.min(series.len().saturating_sub(rows));
        for (row, (i, s)) in series
            .iter()
            .enumerate()
            .skip(self.list_top)
            .take(rows)
            .enumerate()
        {
            let y = area.y + row as u16;
            let style = if i == selected { theme.selected } else { theme.text };
            buf.set_style(Rect::new(area.x, y, area.width, 1), style);
            let label = series_label(s);
            let label = truncate_middle(&label, area.width as usize);
            buf.set_stringn(area.x, y, &label, area.width as usize, style);
        }
    }

    fn render_detail(&mut self, area: Rect, buf: &mut Buffer, series: &LatencySeries, theme: &Theme) {
        let h = &series.stats.histogram;
        if area.width == 0 || area.height == 0 {
            self.bar_rows = 0;
            return;
        }
        let width = area.width as usize;
        // The summary flows over as many lines as the width needs.
        let mut y = area.y;
        let mut x = 0usize;
        for (label, value) in summary_items(series) {
            let item_width = display_width(&label) + 1 + display_width(&value);
            if x > 0 && x + 2 + item_width > width {
                y += 1;
                x = 0;
                if y >= area.bottom() {
                    break;
                }
            }
            if x > 0 {
                x += 2;
            }
            let (after_label, _) = buf.set_stringn(
                area.x + x as u16,
                y,
                format!("{label} "),
                width.saturating_sub(x),
                theme.dim,
            );
            let used = (after_label - area.x) as usize;
            buf.set_stringn(after_label, y, &value, width.saturating_sub(used), theme.text);
            x += item_width;
        }
        let first_bar_y = y.saturating_add(1);
        let rows = area.bottom().saturating_sub(first_bar_y) as usize;
        self.bar_rows = rows;
        let buckets = h.log2_buckets();
        self.bar_offset = self.bar_offset.min(buckets.len().saturating_sub(rows));
        let max = buckets.iter().map(|b| b.2).max().unwrap_or(0);
        let count_width = max.to_string().len().max(5);
        for (row, &(low, high, count)) in buckets.iter().skip(self.bar_offset).take(rows).enumerate() {
            let y = first_bar_y + row as u16;
            let label = range_label(low, high, series.unit);
            let head = format!("{label} {count:>count_width$} ");
            let (bar_x, _) = buf.set_stringn(area.x, y, &head, width, theme.text);
            let bar_cells = area.right().saturating_sub(bar_x) as usize;
            let eighths = scaled_eighths(count, max, bar_cells);
            buf.set_stringn(bar_x, y, horizontal_bar(eighths), bar_cells, theme.bar);
        }
    }
}

impl View for HistogramView {
    fn key_context(&self) -> KeyContext {
        KeyContext::Histogram
    }

    fn render(&mut self, area: Rect, buf: &mut Buffer, ctx: &ViewContext) {
        let theme = ctx.theme;
        if self.heatmap {
            let analysis = ctx.snapshot.analysis.as_ref();
            let map = analysis.and_then(|a| a.heatmap.as_deref());
            // The engine builds a heatmap only for rows of one unit.
            let unit = analysis.and_then(|a| a.info.schema.shared_unit());
            let title = match (map, unit) {
                (Some(map), Some(ValueUnit::Number)) => {
                    format!(" value heatmap · every series · {} values ", map.total())
                }
                (Some(map), _) => format!(" latency heatmap · every pair · {} latencies ", map.total()),
                (None, _) => " latency heatmap ".to_string(),
            };
            let inner = frame(area, buf, theme, ctx.focused, &title);
            match (map, unit) {
                (Some(map), Some(unit)) => {
                    render_heatmap(inner, buf, map, unit, ctx.snapshot.time_origin_ns, theme)
                }
                (_, None) if analysis.is_some() => centered_hint(inner, buf, HEATMAP_MIXED_HINT, theme.dim),
                _ => centered_hint(inner, buf, HEATMAP_EMPTY_HINT, theme.dim),
            }
            return;
        }
        let series = self.listed(ctx.snapshot);
        let series = series.as_slice();
        let inner = frame(area, buf, theme, ctx.focused, " latency histograms ");
        let Some(selected) = self.current(series) else {
            self.list_area = Rect::default();
            centered_hint(inner, buf, EMPTY_HINT, theme.dim);
            return;
        };
        if inner.width == 0 || inner.height == 0 {
            return;
        }
        let (list, detail) = if inner.width >= SIDE_LIST_MIN_WIDTH {
            let longest = series
                .iter()
                .map(|s| display_width(&series_label(s)))
                .max()
                .unwrap_or(0) as u16;
            let list_width = longest.clamp(12, inner.width / 3);
            let separator_x = inner.x + list_width;
            for y in inner.y..inner.bottom() {
                buf.set_string(separator_x, y, "│", theme.border);
            }
            (
                Rect::new(inner.x, inner.y, list_width, inner.height),
                Rect::new(
                    separator_x + 1,
                    inner.y,
                    inner.right() - separator_x - 1,
                    inner.height,
                ),
            )
        } else {
            let list_rows = (series.len() as u16).min((inner.height / 4).max(1));
            (
                Rect::new(inner.x, inner.y, inner.width, list_rows),
                Rect::new(
                    inner.x,
                    inner.y + list_rows,
                    inner.width,
                    inner.height - list_rows,
                ),
            )
        };
        self.render_list(list, buf, series, theme);
        self.render_detail(detail, buf, series[selected], theme);
    }

    fn handle(&mut self, action: Action, ctx: &ViewContext) -> Effect {
        match action {
            Action::ToggleHeatmap => {
                self.heatmap = !self.heatmap;
                return Effect::None;
            }
            Action::SortNext => {
                self.sort = self.sort.next();
                self.reversed = false;
                return Effect::Message(format!("sorted by {}", self.sort.label()));
            }
            Action::SortReverse => {
                self.reversed = !self.reversed;
                return Effect::None;
            }
            Action::ClearSearch => return self.search(None, ctx),
            _ => {}
        }
        let series = self.listed(ctx.snapshot);
        let series = series.as_slice();
        let Some(current) = self.current(series) else {
            return Effect::None;
        };
        let page = self.bar_rows.max(1);
        match action {
            Action::Up => self.select(current.saturating_sub(1), series),
            Action::Down => self.select(current + 1, series),
            Action::Top => self.select(0, series),
            Action::Bottom => self.select(usize::MAX, series),
            Action::PageDown => self.bar_offset += page,
            Action::PageUp => self.bar_offset = self.bar_offset.saturating_sub(page),
            _ => {}
        }
        Effect::None
    }

    fn click(&mut self, column: u16, row: u16, _double: bool, ctx: &ViewContext) -> Effect {
        let a = self.list_area;
        if column >= a.x && column < a.right() && row >= a.y && row < a.bottom() {
            let index = self.list_top + (row - a.y) as usize;
            let series = self.listed(ctx.snapshot);
            let series = series.as_slice();
            if index < series.len() {
                self.select(index, series);
            }
        }
        Effect::None
    }

    fn scroll(&mut self, lines: i32, ctx: &ViewContext) {
        let series = self.listed(ctx.snapshot);
        let series = series.as_slice();
        if let Some(current) = self.current(series) {
            let target = current as i64 + lines as i64;
            self.select(target.max(0) as usize, series);
        }
    }

    fn search(&mut self, pattern: Option<&Regex>, ctx: &ViewContext) -> Effect {
        self.filter = pattern.cloned();
        self.snapshot_changed(ctx);
        let shown = self.listed(ctx.snapshot).len();
        match &self.filter {
            Some(r) => Effect::Message(format!("{shown} series match /{}/", r.as_str())),
            None => Effect::None,
        }
    }

    fn hint(&self, _keys: &crate::config::keymap::Keymap) -> Option<String> {
        let mut parts = Vec::new();
        if self.heatmap {
            parts.push("heatmap".to_string());
        }
        if self.sort != SeriesSort::Table || self.reversed {
            parts.push(format!(
                "sort {}{}",
                self.sort.label(),
                if self.reversed { " ↑" } else { "" }
            ));
        }
        if let Some(r) = &self.filter {
            parts.push(format!("filter /{}/", r.as_str()));
        }
        (!parts.is_empty()).then(|| parts.join(" · "))
    }

    fn snapshot_changed(&mut self, ctx: &ViewContext) {
        let series = self.listed(ctx.snapshot);
        let found = self.selected_key.as_ref().and_then(|(name, instance)| {
            series
                .iter()
                .position(|s| &s.name == name && &s.instance == instance)
        });
        if let Some(i) = found {
            self.selected = i;
        }
    }
}

#[cfg(test)]
mod tests;
