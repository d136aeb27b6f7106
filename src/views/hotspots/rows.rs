//! Which hotspot rows the table shows and in what order: sort column and direction, the
//! name filter and the percent limit. Pure functions over a snapshot's [`Hotspots`].

use regex::Regex;

use crate::model::{FrameKind, FrameTable, Hotspot, Hotspots};
use crate::views::text::display_width;

/// Steps of the percent limit (PercentUp / PercentDown walk through them).
pub const PERCENT_LIMITS: [f64; 6] = [0.0, 0.1, 0.5, 1.0, 2.0, 5.0];

/// The column rows are sorted by. Self and self % order rows alike, so they share one.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum SortColumn {
    #[default]
    SelfWeight,
    TotalWeight,
    Name,
}

impl SortColumn {
    /// SortNext's cycle: self → total → name → self.
    pub fn next(self) -> Self {
        match self {
            SortColumn::SelfWeight => SortColumn::TotalWeight,
            SortColumn::TotalWeight => SortColumn::Name,
            SortColumn::Name => SortColumn::SelfWeight,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            SortColumn::SelfWeight => "self",
            SortColumn::TotalWeight => "total",
            SortColumn::Name => "name",
        }
    }
}

/// How the rows are picked and ordered.
#[derive(Clone, Debug, Default)]
pub struct RowQuery {
    pub sort: SortColumn,
    /// Flip the natural order (weights high→low, names A→Z).
    pub reversed: bool,
    /// Index into [`PERCENT_LIMITS`].
    pub limit: usize,
    pub filter: Option<Regex>,
}

impl RowQuery {
    pub fn limit_percent(&self) -> f64 {
        PERCENT_LIMITS[self.limit.min(PERCENT_LIMITS.len() - 1)]
    }

    /// The percent the limit compares: the sort column's, self % when sorted by name.
    fn limited_weight(&self, row: &Hotspot) -> u64 {
        match self.sort {
            SortColumn::TotalWeight => row.total_weight,
            SortColumn::SelfWeight | SortColumn::Name => row.self_weight,
        }
    }
}

/// The rows on screen.
#[derive(Clone, Debug, Default)]
pub struct VisibleRows {
    /// Indices into `Hotspots::rows`, in display order.
    pub order: Vec<usize>,
    /// Rows that pass the filter but fall under the percent limit.
    pub hidden: usize,
    /// All rows of the snapshot.
    pub total: usize,
}

/// Pick and order the rows of `hotspots` for `query`.
pub fn visible_rows(hotspots: &Hotspots, frames: &FrameTable, query: &RowQuery) -> VisibleRows {
    let limit = query.limit_percent();
    let mut hidden = 0;
    let mut order: Vec<usize> = Vec::with_capacity(hotspots.rows.len());
    for (i, row) in hotspots.rows.iter().enumerate() {
        if let Some(re) = &query.filter
            && !re.is_match(frames.name(row.frame))
        {
            continue;
        }
        if hotspots.percent(query.limited_weight(row)) < limit {
            hidden += 1;
            continue;
        }
        order.push(i);
    }
    let rows = &hotspots.rows;
    let is_pseudo = |row: &Hotspot| frames.kind(row.frame) == FrameKind::Pseudo;
    // Ties break on the other weight and then the name, so the order is total and stable
    // from one snapshot to the next.
    order.sort_by(|&a, &b| {
        let (a, b) = (&rows[a], &rows[b]);
        let by_name = || frames.name(a.frame).cmp(frames.name(b.frame));
        match query.sort {
            SortColumn::SelfWeight => b
                .self_weight
                .cmp(&a.self_weight)
                .then(b.total_weight.cmp(&a.total_weight))
                .then_with(by_name),
            // A command-name root holds all of its process's samples: it would top the
            // total column without being code. Pseudo frames go after the functions.
            SortColumn::TotalWeight => is_pseudo(a)
                .cmp(&is_pseudo(b))
                .then(b.total_weight.cmp(&a.total_weight))
                .then(b.self_weight.cmp(&a.self_weight))
                .then_with(by_name),
            SortColumn::Name => by_name(),
        }
    });
    if query.reversed {
        order.reverse();
    }
    VisibleRows {
        order,
        hidden,
        total: rows.len(),
    }
}

/// What the rows hold, beyond the numbers: it decides the name-side columns and how wide.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct RowShape {
    /// Some frame's kind is known: show the `[k]`/`[.]` mark.
    pub marks: bool,
    /// The widest module name (0: no module column).
    pub module_width: u16,
    /// The widest function name.
    pub name_width: u16,
}

/// The widths the name-side columns need for the rows in `order` (indices into
/// `hotspots.rows`): the widest name and module, and whether any kind is known.
pub fn row_shape(frames: &FrameTable, hotspots: &Hotspots, order: &[usize]) -> RowShape {
    let mut shape = RowShape::default();
    for &i in order {
        let Some(row) = hotspots.rows.get(i) else { continue };
        let frame = row.frame;
        shape.marks |= frames.kind(frame).mark() != "";
        let name = display_width(frames.name(frame)).min(usize::from(u16::MAX)) as u16;
        shape.name_width = shape.name_width.max(name);
        if let Some(module) = frames.module(frame) {
            let module = display_width(module).min(usize::from(u16::MAX)) as u16;
            shape.module_width = shape.module_width.max(module);
        }
    }
    shape
}
