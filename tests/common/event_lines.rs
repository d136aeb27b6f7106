//! Event lines printed at two moments (the `--no-tui` text or the offender pane, and an
//! export's offenders.txt): each printer turns sample-clock times into wall-clock times
//! with its own reading of CLOCK_REALTIME − CLOCK_MONOTONIC, so the same event's stamp
//! may differ by what the clocks drifted apart between the readings (5 µs over a 2 s
//! run was seen here) and by a reader preempted between its two reads; everything else
//! is the same text.

/// A line's wall-clock stamp in µs of its day (`2026-12-08 01:23:45.678901 `) and the
/// rest of the line; a line without one (a stack frame) is all rest.
pub fn stamp(line: &str) -> (Option<u64>, &str) {
    let time = line
        .get(11..26)
        .filter(|_| line.as_bytes().first().is_some_and(u8::is_ascii_digit));
    match time.and_then(|t| {
        let (hms, micros) = t.split_once('.')?;
        let mut parts = hms.split(':').map(|p| p.parse::<u64>().ok());
        let (h, m, s) = (parts.next()??, parts.next()??, parts.next()??);
        Some(((h * 60 + m) * 60 + s) * 1_000_000 + micros.parse::<u64>().ok()?)
    }) {
        Some(us) => (Some(us), line.get(27..).unwrap_or("")),
        None => (None, line),
    }
}

/// How far apart two printings' stamps of one event may be.
pub const STAMP_SLACK_US: u64 = 1_000;

/// Two printings of one event line: the same text, the stamps within [`STAMP_SLACK_US`].
pub fn same_event_line(a: &str, b: &str) -> bool {
    match (stamp(a), stamp(b)) {
        ((Some(x), rest_a), (Some(y), rest_b)) => x.abs_diff(y) <= STAMP_SLACK_US && rest_a == rest_b,
        ((None, a), (None, b)) => a == b,
        _ => false,
    }
}
