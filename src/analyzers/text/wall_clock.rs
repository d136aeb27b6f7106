//! The wall-clock prefix of every perf-prof line: `YYYY-MM-DD HH:MM:SS.uuuuuu ` (local
//! time, trailing space included).

use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

/// A local date and time to the microsecond.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct WallClock {
    pub year: i32,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    pub microsecond: u32,
}

impl WallClock {
    /// `time` in the local time zone (`localtime_r`, as perf-prof's `print_time`).
    pub fn local(time: SystemTime) -> Self {
        let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
        let seconds = since.as_secs() as libc::time_t;
        // SAFETY: localtime_r only writes the tm we own; a zeroed tm is a valid value.
        let mut tm: libc::tm = unsafe { std::mem::zeroed() };
        // SAFETY: both pointers are valid for the call.
        let ok = !unsafe { libc::localtime_r(&seconds, &mut tm) }.is_null();
        if !ok {
            return Self::utc_epoch();
        }
        Self {
            year: tm.tm_year + 1900,
            month: (tm.tm_mon + 1) as u32,
            day: tm.tm_mday as u32,
            hour: tm.tm_hour as u32,
            minute: tm.tm_min as u32,
            second: tm.tm_sec as u32,
            microsecond: since.subsec_micros(),
        }
    }

    /// 1970-01-01 00:00:00: a fixed clock for text whose stamp is not shown.
    pub fn utc_epoch() -> Self {
        Self {
            year: 1970,
            month: 1,
            day: 1,
            hour: 0,
            minute: 0,
            second: 0,
            microsecond: 0,
        }
    }

    /// `2026-12-02 15:45:12.185600 ` — with the trailing space.
    pub fn prefix(&self) -> String {
        self.to_string()
    }

    /// `15:46:20`, as top's title line shows it.
    pub fn time_of_day(&self) -> String {
        format!("{:02}:{:02}:{:02}", self.hour, self.minute, self.second)
    }
}

/// The prefix, as [`WallClock::prefix`] (written in place by the per-line printers).
impl fmt::Display for WallClock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:06} ",
            self.year, self.month, self.day, self.hour, self.minute, self.second, self.microsecond
        )
    }
}

/// [`WallClock::local`] for a stream of times: the time zone is consulted once per
/// second, not per line (a profile prints a line per sample, thousands a second). Zone
/// rules change only at whole seconds, so the date and time of a second are reused as is.
#[derive(Default)]
pub struct LocalClock {
    last: Option<(u64, WallClock)>,
}

impl LocalClock {
    pub fn at(&mut self, time: SystemTime) -> WallClock {
        let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
        match self.last {
            Some((second, clock)) if second == since.as_secs() => WallClock {
                microsecond: since.subsec_micros(),
                ..clock
            },
            _ => {
                let clock = WallClock::local(time);
                self.last = Some((since.as_secs(), clock));
                clock
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn the_prefix_has_microseconds_and_a_trailing_space() {
        let wall = WallClock {
            year: 2026,
            month: 12,
            day: 2,
            hour: 15,
            minute: 45,
            second: 12,
            microsecond: 185_600,
        };
        assert_eq!(wall.prefix(), "2026-12-02 15:45:12.185600 ");
        assert_eq!(wall.time_of_day(), "15:45:12");
    }

    #[test]
    fn local_time_keeps_the_microseconds_of_the_instant() {
        let t = UNIX_EPOCH + Duration::from_micros(1_764_690_312_185_600);
        let wall = WallClock::local(t);
        assert_eq!(wall.microsecond, 185_600);
        assert!(wall.year >= 2025 && (1..=12).contains(&wall.month));
        // Local offsets are whole or half hours (plus 45-minute zones): minutes and
        // seconds of this instant (…:45:12 UTC) keep their seconds.
        assert_eq!(wall.second, 12);
    }

    #[test]
    fn the_stream_clock_agrees_with_the_zone_at_every_instant() {
        // Across second (and minute, hour, day) boundaries, forwards and back.
        let start = UNIX_EPOCH + Duration::from_micros(1_767_225_599_000_000);
        let mut clock = LocalClock::default();
        for step in [0u64, 1, 999_999, 1_000_000, 1_000_001, 400_000, 2_500_000, 17, 0] {
            let t = start + Duration::from_micros(step * 3);
            assert_eq!(clock.at(t), WallClock::local(t), "at +{} µs", step * 3);
        }
    }
}
