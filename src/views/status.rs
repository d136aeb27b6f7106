//! The status line: where the data comes from, how fast it arrives, what was lost, which
//! window and mode the views show, and how long a frame took — one line, most important
//! first, so it survives 80 columns.

use std::time::Duration;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;

use crate::config::Theme;
use crate::engine::Snapshot;
use crate::model::TimeWindow;

use super::text::{display_width, truncate_end, truncate_middle};

/// What the app adds to the snapshot's own facts.
#[derive(Clone, Debug, Default)]
pub struct StatusInfo {
    pub frozen: bool,
    pub refresh: Duration,
    pub frame_time: Duration,
    /// The full-screen instance, when one is cycled to.
    pub instance: Option<String>,
    /// The active view's hint (search matches, sort).
    pub hint: Option<String>,
    /// A message (export written, bad regex); shown instead of the hint.
    pub message: Option<String>,
}

/// "all", "0.087s–1.646s", "≥0.087s": seconds on the sample clock from `origin_ns`.
pub fn window_label(window: &TimeWindow, origin_ns: u64) -> String {
    let seconds = |ns: u64| format!("{:.3}s", ns.saturating_sub(origin_ns) as f64 / 1e9);
    match (window.start_ns, window.stop_ns) {
        (None, None) => "all".into(),
        (Some(a), Some(b)) => format!("{}–{}", seconds(a), seconds(b)),
        (Some(a), None) => format!("≥{}", seconds(a)),
        (None, Some(b)) => format!("<{}", seconds(b)),
    }
}

/// Human count: 1234 → "1234", 1234567 → "1.23M".
pub fn count_label(n: u64) -> String {
    match n {
        0..=99_999 => n.to_string(),
        100_000..=9_999_999 => format!("{:.1}k", n as f64 / 1e3),
        _ => format!("{:.2}M", n as f64 / 1e6),
    }
}

/// How much a part of the status line matters: the least important go first when the
/// line does not fit (0 always stays, cut at the end if need be).
type Priority = u8;

/// The parts of the status line in display order, each with its style and priority.
/// Every figure carries its label: `samples`, `samples/s`, `lost`, `window`, `refresh`,
/// `frame`.
pub fn status_parts(snapshot: &Snapshot, info: &StatusInfo, theme: &Theme) -> Vec<(String, Style, Priority)> {
    let stats = &snapshot.stats;
    let mut parts = Vec::new();
    let state = if info.frozen {
        "FROZEN".to_string()
    } else if !stats.finished {
        if snapshot.generation == 0 {
            "loading"
        } else {
            "live"
        }
        .to_string()
    } else {
        "done".to_string()
    };
    parts.push((format!(" {state} "), theme.status_accent, 0));
    if let Some(waiting) = stats.waiting.as_ref().filter(|_| !stats.finished) {
        // Nothing moves until it comes: the first thing to read.
        parts.push((waiting.text(), theme.warning.patch(theme.status), 1));
    }
    if let Some(m) = info.message.as_ref().or(info.hint.as_ref()) {
        // The message matters most after the state: put it second.
        parts.push((m.clone(), theme.status_accent, 1));
    }
    let count = if let Some(analysis) = snapshot.analysis.as_ref().filter(|_| stats.samples == 0) {
        // An analyzer session: its input is events, not stack samples; the selection's
        // share when a window, a reset or a mode narrows what the views count.
        if analysis.events == stats.events {
            format!("{} events", count_label(stats.events))
        } else {
            format!(
                "{}/{} events",
                count_label(analysis.events),
                count_label(stats.events)
            )
        }
    } else if stats.samples == 0 && stats.events > 0 {
        format!("{} events", count_label(stats.events))
    } else {
        format!("{} samples", count_label(stats.samples))
    };
    parts.push((count, theme.status, 0));
    let live = !stats.finished;
    if live && stats.samples > 0 {
        // The engine averages it over the last second.
        parts.push((format!("{:.0} samples/s", stats.samples_per_sec), theme.status, 3));
    }
    if stats.lost > 0 || stats.dropped > 0 {
        parts.push((
            format!(
                "lost {} · dropped {}",
                count_label(stats.lost),
                count_label(stats.dropped)
            ),
            theme.warning.patch(theme.status),
            1,
        ));
    }
    if let Some(callchain) = &stats.callchain {
        // How the stacks are collected and whether perfscope or the user chose it; a
        // default that found nothing to unwind with is a warning.
        let style = if callchain.by_default() && callchain.method == "leaf" {
            theme.warning.patch(theme.status)
        } else {
            theme.status
        };
        parts.push((callchain.status_text(), style, 3));
    }
    if let Some(stops) = stats.unwind_stops.filter(|s| s.total() > 0) {
        // The plugin says it once QEMU has exited: how whole the DWARF stacks are.
        let cut = stops.total() - stops.end;
        let style = if cut * 10 > stops.total() {
            theme.warning.patch(theme.status)
        } else {
            theme.status
        };
        parts.push((stops.describe(), style, 3));
    }
    if let Some(copies) = &stats.stack_copies {
        // `--call-graph dwarf`: the bandwidth the stack copies take through the rings,
        // and whether the rings kept up (a full ring loses whole samples).
        let style = if copies.lost_records > 0 {
            theme.warning.patch(theme.status)
        } else {
            theme.status
        };
        parts.push((copies.status_text(), style, 3));
    }
    let mut window = format!(
        "window {}",
        window_label(&snapshot.selection.window, snapshot.time_origin_ns)
    );
    if let Some(f) = &snapshot.selection.focus {
        window.push_str(&format!(" · focus {}", f.pattern()));
    }
    if let Some(i) = &info.instance {
        window.push_str(&format!(" · {i}"));
    }
    parts.push((window, theme.status, 2));
    // The live mode and refresh mean nothing once the source has finished.
    if live {
        parts.push((
            format!(
                "{} · refresh {}ms",
                snapshot.mode.label(),
                info.refresh.as_millis()
            ),
            theme.status,
            4,
        ));
    }
    parts.push((truncate_middle(&stats.source, 40).into_owned(), theme.status, 5));
    parts.push((
        format!("frame {:.1}ms", info.frame_time.as_secs_f64() * 1e3),
        theme.status,
        6,
    ));
    parts
}

const SEPARATOR: &str = " │ ";

/// The parts that fit `width`: the least important are dropped first (the last of
/// equals first); what stays keeps its order.
fn fitting_parts(mut parts: Vec<(String, Style, Priority)>, width: usize) -> Vec<(String, Style, Priority)> {
    let needed = |parts: &[(String, Style, Priority)]| {
        parts.iter().map(|(t, _, _)| display_width(t)).sum::<usize>()
            + display_width(SEPARATOR) * parts.len().saturating_sub(1)
    };
    while needed(&parts) > width {
        let Some((drop, _)) = parts
            .iter()
            .enumerate()
            .filter(|(_, (_, _, p))| *p > 0)
            .max_by_key(|(i, (_, _, p))| (*p, *i))
        else {
            break;
        };
        parts.remove(drop);
    }
    parts
}

/// Draw the status line: the parts that fit, separated by " │ ".
pub fn render_status(area: Rect, buf: &mut Buffer, snapshot: &Snapshot, info: &StatusInfo, theme: &Theme) {
    if area.width == 0 || area.height == 0 {
        return;
    }
    buf.set_style(area, theme.status);
    let mut x = area.x;
    let end = area.x + area.width;
    let parts = fitting_parts(status_parts(snapshot, info, theme), area.width as usize);
    for (i, (text, style, _)) in parts.into_iter().enumerate() {
        let sep = if i == 0 { "" } else { SEPARATOR };
        let room = (end - x) as usize;
        let need = display_width(sep) + display_width(&text);
        if need > room {
            // Only the parts that always stay can be too long: cut the last with an
            // ellipsis; then stop.
            if room > display_width(sep) + 3 {
                let (nx, _) = buf.set_stringn(x, area.y, sep, room, theme.status);
                let cut = truncate_end(&text, (end - nx) as usize);
                buf.set_stringn(nx, area.y, &cut, (end - nx) as usize, style);
            }
            break;
        }
        let (nx, _) = buf.set_stringn(x, area.y, sep, room, theme.status);
        let (nx, _) = buf.set_stringn(nx, area.y, &text, (end - nx) as usize, style);
        x = nx;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::sample_list::test_support::profile_from;
    use crate::model::{PhaseMarkers, Selection};

    fn line(buf: &Buffer, y: u16) -> String {
        (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect()
    }

    #[test]
    fn shows_state_counts_window_mode_and_fits_80_columns() {
        let p = profile_from(&[(&["a"], 3, Some(87_000_000)), (&["b"], 1, Some(1_646_000_000))]);
        let mut snap = crate::engine::testing::snapshot_with(
            &p,
            Selection::window(TimeWindow::new(Some(87_000_000), Some(1_646_000_000))),
            PhaseMarkers::default(),
        );
        snap.stats.source = "assets/tinyk-riscv64.qperf.bin".into();
        snap.stats.lost = 12;
        let info = StatusInfo {
            refresh: Duration::from_millis(1000),
            frame_time: Duration::from_micros(2500),
            ..StatusInfo::default()
        };
        let theme = Theme::default();
        let mut buf = Buffer::empty(Rect::new(0, 0, 80, 1));
        render_status(buf.area, &mut buf, &snap, &info, &theme);
        assert_eq!(
            line(&buf, 0),
            " done  │ 2 samples │ lost 12 · dropped 0 │ window 0.087s–1.646s                 "
        );
        let mut wide = Buffer::empty(Rect::new(0, 0, 120, 1));
        render_status(wide.area, &mut wide, &snap, &info, &theme);
        assert!(
            line(&wide, 0).contains("│ assets/tinyk-riscv64.qperf.bin │ frame 2.5ms"),
            "{}",
            line(&wide, 0)
        );
        assert_eq!(buf[(1, 0)].style().fg, theme.status_accent.fg);
        let mut narrow = Buffer::empty(Rect::new(0, 0, 5, 1));
        render_status(narrow.area, &mut narrow, &snap, &info, &theme);
        assert_eq!(line(&narrow, 0), " don…");
    }

    /// A live session at 80 columns: every figure labelled, whole fields dropped from the
    /// least important (frame time, source) instead of one cut in the middle.
    #[test]
    fn a_live_line_labels_its_figures_and_drops_whole_fields_to_fit() {
        let p = profile_from(&[(&["a"], 761, Some(1))]);
        let mut snap = crate::engine::testing::snapshot_with(&p, Selection::all(), PhaseMarkers::default());
        snap.stats.finished = false;
        snap.stats.samples = 761;
        snap.stats.samples_per_sec = 522.4;
        snap.stats.source = "host cpu-clock".into();
        snap.generation = 3;
        let info = StatusInfo {
            refresh: Duration::from_millis(1000),
            frame_time: Duration::from_micros(300),
            hint: Some("sorted by self".into()),
            ..StatusInfo::default()
        };
        let theme = Theme::default();
        let mut buf = Buffer::empty(Rect::new(0, 0, 80, 1));
        render_status(buf.area, &mut buf, &snap, &info, &theme);
        assert_eq!(
            line(&buf, 0),
            " live  │ sorted by self │ 761 samples │ 522 samples/s │ window all              "
        );
        let mut wide = Buffer::empty(Rect::new(0, 0, 140, 1));
        render_status(wide.area, &mut wide, &snap, &info, &theme);
        assert_eq!(
            line(&wide, 0).trim_end(),
            " live  │ sorted by self │ 761 samples │ 522 samples/s │ window all │ accumulate · refresh 1000ms │ host cpu-clock │ frame 0.3ms"
        );
    }

    #[test]
    fn counts_are_short() {
        assert_eq!(count_label(1503), "1503");
        assert_eq!(count_label(250_000), "250.0k");
        assert_eq!(count_label(12_345_678), "12.35M");
    }

    #[test]
    fn an_analyzer_session_counts_events_not_samples() {
        let mut snap = crate::views::test_support::snapshot_of(&[]);
        snap.stats.events = 2_000;
        snap.stats.finished = true;
        let theme = Theme::builtin_dark();
        let parts = status_parts(&snap, &StatusInfo::default(), &theme);
        assert_eq!(parts[1].0, "2000 events", "{parts:?}");
    }

    #[test]
    fn a_dwarf_run_says_how_whole_its_stacks_are_and_warns_when_many_were_cut() {
        let mut snap = crate::views::test_support::snapshot_of(&[]);
        snap.stats.finished = true;
        let theme = Theme::builtin_dark();
        let mut stops = crate::model::facts::UnwindStops {
            end: 97,
            cfi_missing: 3,
            ..Default::default()
        };
        snap.stats.unwind_stops = Some(stops);
        let parts = status_parts(&snap, &StatusInfo::default(), &theme);
        let part = parts
            .iter()
            .find(|(t, _, _)| t.starts_with("unwinds:"))
            .expect("{parts:?}");
        assert_eq!(part.0, "unwinds: 97% whole · 3% no CFI");
        assert_eq!(part.1, theme.status);
        stops.cfi_missing = 40;
        snap.stats.unwind_stops = Some(stops);
        let parts = status_parts(&snap, &StatusInfo::default(), &theme);
        let part = parts.iter().find(|(t, _, _)| t.starts_with("unwinds:")).unwrap();
        assert_eq!(
            part.1,
            theme.warning.patch(theme.status),
            "a third cut: a warning"
        );
    }

    #[test]
    fn a_qemu_session_says_its_callchain_and_warns_when_the_default_found_no_stacks() {
        let theme = Theme::builtin_dark();
        let mut snap = crate::views::test_support::snapshot_of(&[]);
        let mut callchain = crate::model::facts::CallchainFacts {
            method: "dwarf".into(),
            chosen_by: "default".into(),
            reason: "kernel.elf keeps no frame pointers and has .debug_frame".into(),
        };
        snap.stats.callchain = Some(callchain.clone());
        let parts = status_parts(&snap, &StatusInfo::default(), &theme);
        let part = parts
            .iter()
            .find(|(t, _, _)| t.starts_with("callchain"))
            .expect("{parts:?}");
        assert_eq!(
            (part.0.as_str(), part.1),
            ("callchain dwarf (default)", theme.status)
        );
        callchain.method = "leaf".into();
        snap.stats.callchain = Some(callchain.clone());
        let parts = status_parts(&snap, &StatusInfo::default(), &theme);
        let part = parts.iter().find(|(t, _, _)| t.starts_with("callchain")).unwrap();
        assert_eq!(part.1, theme.warning.patch(theme.status), "no stacks by default");
        callchain.chosen_by = "--callchain".into();
        snap.stats.callchain = Some(callchain);
        let parts = status_parts(&snap, &StatusInfo::default(), &theme);
        let part = parts.iter().find(|(t, _, _)| t.starts_with("callchain")).unwrap();
        assert_eq!(
            (part.0.as_str(), part.1),
            ("callchain leaf (--callchain)", theme.status)
        );
    }

    #[test]
    fn a_dwarf_session_shows_its_stack_copy_bandwidth_and_losses() {
        let theme = Theme::builtin_dark();
        let mut snap = crate::views::test_support::snapshot_of(&[]);
        let mut copies = crate::model::stack_copies::StackCopies {
            stack_bytes: 8192,
            bytes_per_sec: 8.5 * 1024.0 * 1024.0,
            ..Default::default()
        };
        snap.stats.stack_copies = Some(copies);
        let parts = status_parts(&snap, &StatusInfo::default(), &theme);
        let part = parts
            .iter()
            .find(|(t, _, _)| t.starts_with("stacks "))
            .expect("{parts:?}");
        assert_eq!(
            (part.0.as_str(), part.1),
            ("stacks 8.5 MiB/s · lost 0", theme.status)
        );
        copies.lost_records = 12;
        snap.stats.stack_copies = Some(copies);
        let parts = status_parts(&snap, &StatusInfo::default(), &theme);
        let part = parts.iter().find(|(t, _, _)| t.starts_with("stacks ")).unwrap();
        assert_eq!(
            (part.0.as_str(), part.1),
            ("stacks 8.5 MiB/s · lost 12", theme.warning.patch(theme.status))
        );
        // Without dwarf there is no such part.
        snap.stats.stack_copies = None;
        let parts = status_parts(&snap, &StatusInfo::default(), &theme);
        assert!(!parts.iter().any(|(t, _, _)| t.starts_with("stacks ")));
    }
}
