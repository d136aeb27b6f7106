//! `--impl pair` output: one line per first event (`unpaired N`) and per pair
//! (`paired N`), each with the wall-clock prefix.

use super::WallClock;
use crate::analyzers::multi_trace::PairTable;
use crate::model::text::escape_controls;

pub fn pair_lines(table: &PairTable, wall: &WallClock) -> String {
    let prefix = wall.prefix();
    let mut out = String::new();
    for row in &table.rows {
        out.push_str(&prefix);
        match &row.second {
            Some(second) => out.push_str(&format!(
                "{} {} paired {}\n",
                escape_controls(&row.first),
                escape_controls(second),
                row.count
            )),
            None => out.push_str(&format!(
                "{} unpaired {}\n",
                escape_controls(&row.first),
                row.count
            )),
        }
    }
    out
}
