//! `heatmap.csv`: the Latency view's heatmap as data — a row per time column × latency
//! range, from the first to the last range any column uses (the span the view draws),
//! zeros included so the grid is whole. Times are on the sample clock (the clock of
//! offenders.json's `time_ns` and report.json's window), in ns; ranges are the
//! heatmap's power-of-two `[low, high)` bounds in the analysis's unit (`latency_low_ns`
//! for durations, `value_low` for a num-dist of plain numbers).

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::model::heatmap::LatencyHeatmap;
use crate::model::units::ValueUnit;

use super::ExportError;
use super::layout::OutputLayout;
use super::stage::Stage;

/// What the reports say of the heatmap written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeatmapSummary {
    pub columns: usize,
    pub column_ns: u64,
    /// Latency ranges from the lowest to the highest used.
    pub ranges: usize,
    /// Latencies counted.
    pub total: u64,
    pub csv: PathBuf,
}

impl HeatmapSummary {
    pub fn to_json(&self) -> Value {
        json!({
            "columns": self.columns,
            "column_ns": self.column_ns,
            "ranges": self.ranges,
            "total": self.total,
            "csv": self.csv.display().to_string(),
        })
    }
}

/// The CSV of `map`, its ranges in `unit`; `None` when nothing was counted.
pub fn render(map: &LatencyHeatmap, unit: ValueUnit) -> Option<String> {
    let (low_row, high_row) = map.rows_used()?;
    let range = |bound: &str| match unit {
        ValueUnit::Nanoseconds => format!("latency_{bound}_ns"),
        ValueUnit::Number => format!("value_{bound}"),
    };
    let mut csv = format!(
        "time_start_ns,time_end_ns,{},{},count\n",
        range("low"),
        range("high")
    );
    for column in 0..map.columns {
        let start = map.start_ns + map.column_ns * column as u64;
        let end = start + map.column_ns;
        for row in low_row..=high_row {
            let (low, high) = LatencyHeatmap::row_bounds(row);
            csv.push_str(&format!(
                "{start},{end},{low},{high},{}\n",
                map.count(column, row)
            ));
        }
    }
    Some(csv)
}

/// Write heatmap.csv into the work directory when `map` counted anything; `None` (and
/// nothing written) otherwise.
pub fn write(
    map: &LatencyHeatmap,
    unit: ValueUnit,
    layout: &OutputLayout,
    stage: &Stage,
    files: &mut Vec<(String, PathBuf)>,
) -> Result<Option<HeatmapSummary>, ExportError> {
    let (Some(csv), Some((low_row, high_row))) = (render(map, unit), map.rows_used()) else {
        return Ok(None);
    };
    let path = layout.heatmap_csv();
    stage.write(&path, csv.as_bytes())?;
    files.push(("heatmap_csv".into(), path.clone()));
    Ok(Some(HeatmapSummary {
        columns: map.columns,
        column_ns: map.column_ns,
        ranges: high_row - low_row + 1,
        total: map.total(),
        csv: path,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::LatencyHistogram;

    /// Two columns of 500 ns from 1000 ns: 3 latencies of 5 µs in the first, one of
    /// 20 µs in the second.
    fn known_map() -> LatencyHeatmap {
        let mut map = LatencyHeatmap::new(1_000, 2_000, 2);
        let mut fast = LatencyHistogram::new();
        (0..3).for_each(|_| fast.record(5_000)); // [4096, 8192): row 13
        let mut slow = LatencyHistogram::new();
        slow.record(20_000); // [16384, 32768): row 15
        map.add(1_100, &fast);
        map.add(1_900, &slow);
        map
    }

    #[test]
    fn each_column_has_a_row_per_range_with_its_count() {
        let csv = render(&known_map(), ValueUnit::Nanoseconds).unwrap();
        assert_eq!(
            csv,
            "time_start_ns,time_end_ns,latency_low_ns,latency_high_ns,count\n\
             1000,1500,4096,8192,3\n\
             1000,1500,8192,16384,0\n\
             1000,1500,16384,32768,0\n\
             1500,2000,4096,8192,0\n\
             1500,2000,8192,16384,0\n\
             1500,2000,16384,32768,1\n"
        );
    }

    #[test]
    fn plain_numbers_name_no_unit_and_an_empty_map_writes_nothing() {
        let csv = render(&known_map(), ValueUnit::Number).unwrap();
        assert_eq!(
            csv.lines().next(),
            Some("time_start_ns,time_end_ns,value_low,value_high,count")
        );
        assert_eq!(
            render(&LatencyHeatmap::new(0, 10, 1), ValueUnit::Nanoseconds),
            None
        );

        let dir = tempfile::tempdir().unwrap();
        let layout = OutputLayout::new(dir.path(), "x86_64").unwrap();
        let stage = Stage::begin(dir.path(), &layout.work_dir).unwrap();
        let mut files = Vec::new();
        let empty = write(
            &LatencyHeatmap::new(0, 10, 1),
            ValueUnit::Nanoseconds,
            &layout,
            &stage,
            &mut files,
        )
        .unwrap();
        assert_eq!((empty, files.len()), (None, 0));
        let summary = write(&known_map(), ValueUnit::Nanoseconds, &layout, &stage, &mut files)
            .unwrap()
            .unwrap();
        assert_eq!(
            (summary.columns, summary.column_ns, summary.ranges, summary.total),
            (2, 500, 3, 4)
        );
        stage.commit(OutputLayout::owns).unwrap();
        let written = std::fs::read_to_string(layout.heatmap_csv()).unwrap();
        assert_eq!(Some(written), render(&known_map(), ValueUnit::Nanoseconds));
        assert_eq!(files, [("heatmap_csv".to_string(), layout.heatmap_csv())]);
    }
}
