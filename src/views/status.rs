//! The status line: where the data comes from, how fast it arrives, what was lost, which
//! window and mode the views show, and how long a frame took — one line, most important
//! first, so it survives 80 columns: the least important fields go whole, then a message
//! gives up the middles of its paths (then its end) rather than its place.

use std::time::Duration;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;

use crate::config::Theme;
use crate::engine::Snapshot;
use crate::model::TimeWindow;

use super::message::Message;
use super::text::{display_width, truncate_end, truncate_path};

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
    pub message: Option<Message>,
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

/// A message's priority: after the state, before the window (fields of a larger number go
/// whole before a message is shortened).
const MESSAGE: Priority = 1;

/// One field of the status line.
#[derive(Clone, Debug, PartialEq)]
pub struct Part {
    pub text: String,
    pub style: Style,
    pub priority: Priority,
    /// The message this part shows, which can shorten itself to the room left.
    pub message: Option<Message>,
}

impl Part {
    fn new(text: String, style: Style, priority: Priority) -> Self {
        Self {
            text,
            style,
            priority,
            message: None,
        }
    }
}

/// The parts of the status line in display order, each with its style and priority.
/// Every figure carries its label: `samples`, `samples/s`, `lost`, `window`, `refresh`,
/// `frame`.
pub fn status_parts(snapshot: &Snapshot, info: &StatusInfo, theme: &Theme) -> Vec<Part> {
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
    parts.push(Part::new(format!(" {state} "), theme.status_accent, 0));
    if let Some(waiting) = stats.waiting.as_ref().filter(|_| !stats.finished) {
        // Nothing moves until it comes: the first thing to read.
        parts.push(Part::new(waiting.text(), theme.warning.patch(theme.status), 1));
    }
    // The message matters most after the state: put it second.
    let message = info
        .message
        .clone()
        .or_else(|| info.hint.clone().map(Message::from));
    if let Some(m) = message {
        parts.push(Part {
            text: m.to_string(),
            style: theme.status_accent,
            priority: MESSAGE,
            message: Some(m),
        });
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
    parts.push(Part::new(count, theme.status, 0));
    let live = !stats.finished;
    if live && stats.samples > 0 {
        // The engine averages it over the last second.
        parts.push(Part::new(
            format!("{:.0} samples/s", stats.samples_per_sec),
            theme.status,
            3,
        ));
    }
    // The session's verdict, as the exit code and the reports will say it: what is
    // missing (warning style), or only what was rebuilt or left unnamed.
    if let Some(text) = snapshot.verdict.status_text(count_label) {
        let style = if snapshot.verdict.is_complete() {
            theme.status
        } else {
            theme.warning.patch(theme.status)
        };
        parts.push(Part::new(text, style, 1));
    }
    if let Some(callchain) = &stats.callchain {
        // How the stacks are collected and whether perfscope or the user chose it; a
        // default that found nothing to unwind with is a warning.
        let style = if callchain.by_default() && callchain.method == "leaf" {
            theme.warning.patch(theme.status)
        } else {
            theme.status
        };
        parts.push(Part::new(callchain.status_text(), style, 3));
    }
    if let Some(stops) = stats.unwind_stops.filter(|s| s.total() > 0) {
        // The plugin says it once QEMU has exited: how whole the DWARF stacks are.
        let cut = stops.total() - stops.end;
        let style = if cut * 10 > stops.total() {
            theme.warning.patch(theme.status)
        } else {
            theme.status
        };
        parts.push(Part::new(stops.describe(), style, 3));
    }
    if let Some(copies) = &stats.stack_copies {
        // `--call-graph dwarf`: the bandwidth the stack copies take through the rings,
        // and whether the rings kept up (a full ring loses whole samples).
        let style = if copies.lost_records > 0 {
            theme.warning.patch(theme.status)
        } else {
            theme.status
        };
        parts.push(Part::new(copies.status_text(), style, 3));
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
    parts.push(Part::new(window, theme.status, 2));
    // The live mode and refresh mean nothing once the source has finished.
    if live {
        parts.push(Part::new(
            format!(
                "{} · refresh {}ms",
                snapshot.mode.label(),
                info.refresh.as_millis()
            ),
            theme.status,
            4,
        ));
    }
    parts.push(Part::new(
        truncate_path(&stats.source, 40).into_owned(),
        theme.status,
        5,
    ));
    parts.push(Part::new(
        format!("frame {:.1}ms", info.frame_time.as_secs_f64() * 1e3),
        theme.status,
        6,
    ));
    parts
}

const SEPARATOR: &str = " │ ";

/// A message is shortened to no fewer columns than this; below, it goes whole.
const MIN_MESSAGE_COLUMNS: usize = 16;

fn needed(parts: &[Part]) -> usize {
    parts.iter().map(|p| display_width(&p.text)).sum::<usize>()
        + display_width(SEPARATOR) * parts.len().saturating_sub(1)
}

/// The least important part of a priority above `above` (the last of equals).
fn least_important(parts: &[Part], above: Priority) -> Option<usize> {
    parts
        .iter()
        .enumerate()
        .filter(|(_, p)| p.priority > above)
        .max_by_key(|(i, p)| (p.priority, *i))
        .map(|(i, _)| i)
}

/// Shorten the message to the room the other parts leave; whether it then fits.
fn shorten_message(parts: &mut [Part], width: usize) -> bool {
    let Some(part) = parts.iter().position(|p| p.message.is_some()) else {
        return false;
    };
    let others = needed(parts) - display_width(&parts[part].text);
    let room = width.saturating_sub(others);
    if room < MIN_MESSAGE_COLUMNS {
        return false;
    }
    if let Some(message) = &parts[part].message {
        parts[part].text = message.fit(room);
    }
    true
}

/// The parts that fit `width`: the fields less important than a message are dropped
/// first (the least important, the last of equals, first); then the message shortens
/// itself to the room left; only then do the message and its equals go; what stays keeps
/// its order.
fn fitting_parts(mut parts: Vec<Part>, width: usize) -> Vec<Part> {
    while needed(&parts) > width {
        if let Some(drop) = least_important(&parts, MESSAGE) {
            parts.remove(drop);
            continue;
        }
        if shorten_message(&mut parts, width) {
            break;
        }
        let Some(drop) = least_important(&parts, 0) else {
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
    for (i, Part { text, style, .. }) in parts.into_iter().enumerate() {
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
        snap.verdict = crate::model::Verdict::new(
            [crate::model::Finding::new(
                crate::model::Gap::Lost,
                Some(12),
                "ring",
            )],
            true,
        );
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
            " done  │ 2 samples │ incomplete: lost 12 │ window 0.087s–1.646s                 "
        );
        // The verdict's style: a warning while anything is missing.
        let at = line(&buf, 0).find("incomplete").unwrap();
        let col = line(&buf, 0)[..at].chars().count() as u16;
        assert_eq!(buf[(col, 0)].style().fg, theme.warning.patch(theme.status).fg);
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

    /// An 80-column line with a message longer than the room left: the window and the
    /// source go whole, then the message cuts its path in the middle and stays.
    #[test]
    fn a_long_message_shortens_its_path_instead_of_leaving_the_line() {
        let p = profile_from(&[(&["a"], 3, Some(1))]);
        let mut snap = crate::engine::testing::snapshot_with(&p, Selection::all(), PhaseMarkers::default());
        snap.stats.source = "assets/tinyk-riscv64.qperf.bin".into();
        let dir = "/work/wt-names/target/tmp/out-of-a-long-test-run/perf/riscv64/latest";
        let info = StatusInfo {
            message: Some(Message::text("exported 14 files to ").then_path(std::path::Path::new(dir))),
            ..StatusInfo::default()
        };
        let theme = Theme::default();
        let mut buf = Buffer::empty(Rect::new(0, 0, 80, 1));
        render_status(buf.area, &mut buf, &snap, &info, &theme);
        assert_eq!(
            line(&buf, 0),
            " done  │ exported 14 files to /work/wt-names/ta…/perf/riscv64/latest │ 1 samples"
        );
        // A message without a path is cut at its end, still second.
        let info = StatusInfo {
            message: Some(Message::from(
                "stop marker: the workload window is selected (c on the timeline: the whole run)",
            )),
            ..StatusInfo::default()
        };
        render_status(buf.area, &mut buf, &snap, &info, &theme);
        assert_eq!(
            line(&buf, 0),
            " done  │ stop marker: the workload window is selected (c on the tim… │ 1 samples"
        );
        // Too narrow for any of it: the message goes, state and count stay.
        let mut narrow = Buffer::empty(Rect::new(0, 0, 30, 1));
        render_status(narrow.area, &mut narrow, &snap, &info, &theme);
        assert_eq!(line(&narrow, 0), " done  │ 1 samples            ");
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
        assert_eq!(parts[1].text, "2000 events", "{parts:?}");
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
            .find(|p| p.text.starts_with("unwinds:"))
            .expect("{parts:?}");
        assert_eq!(part.text, "unwinds: 97% whole · 3% no CFI");
        assert_eq!(part.style, theme.status);
        stops.cfi_missing = 40;
        snap.stats.unwind_stops = Some(stops);
        let parts = status_parts(&snap, &StatusInfo::default(), &theme);
        let part = parts.iter().find(|p| p.text.starts_with("unwinds:")).unwrap();
        assert_eq!(
            part.style,
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
            .find(|p| p.text.starts_with("callchain"))
            .expect("{parts:?}");
        assert_eq!(
            (part.text.as_str(), part.style),
            ("callchain dwarf (default)", theme.status)
        );
        callchain.method = "leaf".into();
        snap.stats.callchain = Some(callchain.clone());
        let parts = status_parts(&snap, &StatusInfo::default(), &theme);
        let part = parts.iter().find(|p| p.text.starts_with("callchain")).unwrap();
        assert_eq!(
            part.style,
            theme.warning.patch(theme.status),
            "no stacks by default"
        );
        callchain.chosen_by = "--callchain".into();
        snap.stats.callchain = Some(callchain);
        let parts = status_parts(&snap, &StatusInfo::default(), &theme);
        let part = parts.iter().find(|p| p.text.starts_with("callchain")).unwrap();
        assert_eq!(
            (part.text.as_str(), part.style),
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
            .find(|p| p.text.starts_with("stacks "))
            .expect("{parts:?}");
        assert_eq!(
            (part.text.as_str(), part.style),
            ("stacks 8.5 MiB/s · lost 0", theme.status)
        );
        copies.lost_records = 12;
        snap.stats.stack_copies = Some(copies);
        let parts = status_parts(&snap, &StatusInfo::default(), &theme);
        let part = parts.iter().find(|p| p.text.starts_with("stacks ")).unwrap();
        assert_eq!(
            (part.text.as_str(), part.style),
            ("stacks 8.5 MiB/s · lost 12", theme.warning.patch(theme.status))
        );
        // Without dwarf there is no such part.
        snap.stats.stack_copies = None;
        let parts = status_parts(&snap, &StatusInfo::default(), &theme);
        assert!(!parts.iter().any(|p| p.text.starts_with("stacks ")));
    }
}
