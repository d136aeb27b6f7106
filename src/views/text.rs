//! Text that fits a width, for the views: it lives in [`crate::model::fit`] so the
//! exports cut names with the same functions (the SVG flamegraph's frame labels).

pub use crate::model::fit::{
    display_width, fit_name, shortest_name, skip_columns, truncate_end, truncate_middle, truncate_path,
    wrap_columns,
};
