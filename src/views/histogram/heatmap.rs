//! The Latency view's heatmap pane (`m`): x = time, y = power-of-two latency ranges (the
//! longest at the top), cell shade = how many latencies fell there — trace2heatmap.pl's
//! picture of perf-prof's `--heatmap` file, drawn live from the snapshot. Shades are on a
//! log scale so a rare slow outlier still shows next to thousands of fast ones.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use crate::config::Theme;
use crate::model::heatmap::LatencyHeatmap;
use crate::model::units::ValueUnit;

/// Empty, then light to full.
pub const SHADES: [char; 5] = [' ', '░', '▒', '▓', '█'];

/// Left axis: "16.8ms " fits in 8 columns.
const AXIS_WIDTH: u16 = 8;

/// Draw `map` into `area` (already framed), its ranges labelled in `unit`. `origin_ns` is
/// the sample-clock time shown as 0 s on the time axis.
pub fn render_heatmap(
    area: Rect,
    buf: &mut Buffer,
    map: &LatencyHeatmap,
    unit: ValueUnit,
    origin_ns: u64,
    theme: &Theme,
) {
    let Some((low_row, high_row)) = map.rows_used() else {
        return;
    };
    if area.width <= AXIS_WIDTH + 1 || area.height < 2 {
        return;
    }
    let plot_height = (area.height - 1) as usize;
    let plot_width = (area.width - AXIS_WIDTH) as usize;
    let rows = high_row - low_row + 1;
    // More ranges than lines: neighbours share a line (the label is the lower bound).
    let per_line = rows.div_ceil(plot_height);
    let lines = rows.div_ceil(per_line);
    let cell = |x: usize, line: usize| -> u64 {
        let first_col = x * map.columns / plot_width;
        let last_col = ((x + 1) * map.columns / plot_width).max(first_col + 1);
        let first_row = low_row + line * per_line;
        let last_row = (first_row + per_line).min(high_row + 1);
        (first_col..last_col)
            .flat_map(|c| (first_row..last_row).map(move |r| (c, r)))
            .fold(0u64, |a, (c, r)| a.saturating_add(map.count(c, r)))
    };
    let counts: Vec<Vec<u64>> = (0..lines)
        .map(|line| (0..plot_width).map(|x| cell(x, line)).collect())
        .collect();
    let max = counts.iter().flatten().copied().max().unwrap_or(0).max(1);
    let shade = |n: u64| {
        if n == 0 {
            return SHADES[0];
        }
        let level = ((n as f64).ln_1p() / (max as f64).ln_1p() * 4.0).ceil() as usize;
        SHADES[level.clamp(1, 4)]
    };
    // The longest latencies on top.
    let top = area.y + (plot_height - lines) as u16;
    for (i, line) in counts.iter().enumerate().rev() {
        let y = top + (lines - 1 - i) as u16;
        let (low, _) = LatencyHeatmap::row_bounds(low_row + i * per_line);
        let label = format!("{:>7} ", unit.format_short(low));
        buf.set_stringn(area.x, y, label, AXIS_WIDTH as usize, theme.dim);
        let text: String = line.iter().map(|&n| shade(n)).collect();
        buf.set_stringn(area.x + AXIS_WIDTH, y, text, plot_width, theme.bar);
    }
    let seconds = |t: u64| t.saturating_sub(origin_ns) as f64 / 1e9;
    let start = format!("{:.1}s", seconds(map.start_ns));
    let end = format!("{:.1}s", seconds(map.end_ns()));
    let axis_y = area.bottom() - 1;
    buf.set_stringn(area.x + AXIS_WIDTH, axis_y, &start, plot_width, theme.dim);
    if plot_width > start.len() + end.len() {
        let x = area.right() - end.len() as u16;
        buf.set_string(x, axis_y, &end, theme.dim);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::LatencyHistogram;

    fn screen(buf: &Buffer) -> Vec<String> {
        (0..buf.area.height)
            .map(|y| (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect())
            .collect()
    }

    #[test]
    fn slow_latencies_draw_above_fast_ones_in_their_time_column() {
        let mut map = LatencyHeatmap::new(0, 1_000_000_000, 10);
        let mut fast = LatencyHistogram::new();
        for _ in 0..1000 {
            fast.record(5_000); // row 13: [4.1us, 8.2us)
        }
        let mut slow = LatencyHistogram::new();
        slow.record(20_000_000); // row 25: [16.8ms, 33.6ms)
        map.add(50_000_000, &fast); // column 0
        map.add(950_000_000, &slow); // column 9
        let area = Rect::new(0, 0, 28, 14);
        let mut buf = Buffer::empty(area);
        render_heatmap(area, &mut buf, &map, ValueUnit::Nanoseconds, 0, &Theme::default());
        let lines = screen(&buf);
        // 13 ranges (13..=25) in 13 lines, the slowest at the top, then the time axis.
        assert!(lines[0].starts_with(" 16.8ms "), "{lines:#?}");
        assert!(lines[12].starts_with(" 4.10us "), "{lines:#?}");
        // 20 columns over 10: two screen columns each; the full shade for 1000 latencies.
        assert_eq!(&lines[12][8..], "██                  ", "{lines:#?}");
        // One latency of 1000 max: the lightest shade that shows, in the last column.
        assert_eq!(
            lines[0].chars().skip(8).collect::<String>(),
            "                  ░░"
        );
        assert!(
            lines[13].contains("0.0s") && lines[13].ends_with("1.0s"),
            "{lines:#?}"
        );
        // The same ranges as plain numbers (num-dist of a count): no time unit on the axis.
        let mut buf = Buffer::empty(area);
        render_heatmap(area, &mut buf, &map, ValueUnit::Number, 0, &Theme::default());
        let lines = screen(&buf);
        assert!(lines[0].starts_with("  16.8M "), "{lines:#?}");
        assert!(lines[12].starts_with("   4096 "), "{lines:#?}");
        assert!(
            !lines
                .iter()
                .take(13)
                .any(|l| l.contains("ns") || l.contains("us"))
        );
    }
}
