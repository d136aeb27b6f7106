//! Durations for people: nanoseconds as "771ns", "1.04us", "74.8us", "3.85ms", "1.20s"
//! with three significant digits, the unit chosen so the number stays below 1000 — and
//! the unit of a distribution's values ([`ValueUnit`]), which says whether they are such
//! durations or plain numbers, so no renderer writes a count as a time.

const UNITS: [&str; 4] = ["ns", "us", "ms", "s"];

/// Three significant digits (fewer decimals as the number grows).
fn three_digits(v: f64) -> String {
    if v < 9.995 {
        format!("{v:.2}")
    } else if v < 99.95 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    }
}

/// `ns` nanoseconds in the largest unit that keeps the number below 1000 (seconds grow
/// without bound). Whole nanoseconds below 1000 print exactly.
pub fn format_duration_ns(ns: f64) -> String {
    if !ns.is_finite() || ns < 0.0 {
        return "-".into();
    }
    if ns < 999.5 && ns.fract() == 0.0 {
        return format!("{ns:.0}ns");
    }
    let mut value = ns;
    let mut unit = 0;
    // 999.5 rounds to "1000" at three digits: such a value belongs to the next unit.
    while value >= 999.5 && unit < UNITS.len() - 1 {
        value /= 1000.0;
        unit += 1;
    }
    format!("{}{}", three_digits(value), UNITS[unit])
}

/// What the values of a distribution are. The analyzer sets it (num-dist: a plain number
/// unless its field is a duration); the Latency view, the text, latency.csv's and
/// report.json's names and report.md write each value in it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ValueUnit {
    /// Nanoseconds: a latency, a run time (`3.85ms`; columns `*_ns`).
    Nanoseconds,
    /// A plain number — a count, a size in the event's own terms, a return value —
    /// written as it is (columns without a unit).
    Number,
}

impl ValueUnit {
    /// One value for people: `3.85ms`, or `4096`.
    pub fn format(self, value: u64) -> String {
        match self {
            ValueUnit::Nanoseconds => format_ns(value),
            ValueUnit::Number => value.to_string(),
        }
    }

    /// One value in at most 6 columns, for axes and bucket labels: `16.8ms`, or `4096`,
    /// `1.05M` (three significant digits past 999,999).
    pub fn format_short(self, value: u64) -> String {
        const SCALES: [&str; 6] = ["k", "M", "G", "T", "P", "E"];
        match self {
            ValueUnit::Nanoseconds => format_ns(value),
            ValueUnit::Number if value < 1_000_000 => value.to_string(),
            ValueUnit::Number => {
                let mut v = value as f64 / 1e3;
                let mut scale = 0;
                while v >= 999.5 && scale < SCALES.len() - 1 {
                    v /= 1e3;
                    scale += 1;
                }
                format!("{}{}", three_digits(v), SCALES[scale])
            }
        }
    }

    /// A mean for people: `1.50us`, or `500.5`.
    pub fn format_mean(self, value: f64) -> String {
        match self {
            ValueUnit::Nanoseconds => format_duration_ns(value),
            ValueUnit::Number if !value.is_finite() => "-".into(),
            ValueUnit::Number if value.fract() == 0.0 => format!("{value:.0}"),
            ValueUnit::Number if value.abs() < 100.0 => format!("{value:.2}"),
            ValueUnit::Number => format!("{value:.1}"),
        }
    }

    /// A CSV column or JSON key for a figure in this unit: `p99_ns`, or `p99`.
    pub fn column(self, figure: &str) -> String {
        match self {
            ValueUnit::Nanoseconds => format!("{figure}_ns"),
            ValueUnit::Number => figure.to_string(),
        }
    }

    /// The unit's name in report.json and latency.csv: `ns` or `number`.
    pub fn name(self) -> &'static str {
        match self {
            ValueUnit::Nanoseconds => "ns",
            ValueUnit::Number => "number",
        }
    }
}

/// The latest time a sample clock may read: 2^62 ns, 146 years. A later time stamp is
/// garbage (a corrupt record, `-1`): it would make a grid of slices from the session's
/// first time to it absurd, and sums of such times overflow. The engine counts a record
/// that carries one without its time ([`crate::model::Gap::BadTimes`]).
pub const MAX_TIME_NS: u64 = 1 << 62;

/// `seconds` as nanoseconds, saturating: negative or NaN is 0, too large is `u64::MAX`
/// (never a panic, whatever a user typed).
pub fn seconds_to_ns(seconds: f64) -> u64 {
    if seconds.is_nan() || seconds <= 0.0 {
        0
    } else if seconds >= u64::MAX as f64 / 1e9 {
        u64::MAX
    } else {
        (seconds * 1e9).round() as u64
    }
}

/// Whole nanoseconds (the usual case).
pub fn format_ns(ns: u64) -> String {
    format_duration_ns(ns as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_written_as_numbers_and_durations_as_durations() {
        let (ns, n) = (ValueUnit::Nanoseconds, ValueUnit::Number);
        assert_eq!(
            (ns.format(4_096), n.format(4_096)),
            ("4.10us".into(), "4096".into())
        );
        assert_eq!(n.format(u64::MAX), "18446744073709551615");
        assert_eq!(ns.format_mean(1_500.0), "1.50us");
        assert_eq!(n.format_mean(120.0), "120");
        assert_eq!(n.format_mean(500.5), "500.5");
        assert_eq!(n.format_mean(2.25), "2.25");
        assert_eq!(n.format_mean(f64::NAN), "-");
        assert_eq!(
            (ns.column("p99"), n.column("p99")),
            ("p99_ns".into(), "p99".into())
        );
        assert_eq!((ns.name(), n.name()), ("ns", "number"));
        assert_eq!(n.format_short(999_999), "999999");
        assert_eq!(n.format_short(1_048_576), "1.05M");
        assert_eq!(n.format_short(u64::MAX), "18.4E");
        assert_eq!(ns.format_short(16_777_216), "16.8ms");
    }

    #[test]
    fn durations_pick_a_unit_and_three_digits() {
        assert_eq!(format_ns(0), "0ns");
        assert_eq!(format_ns(771), "771ns");
        assert_eq!(format_ns(999), "999ns");
        assert_eq!(format_ns(1_000), "1.00us");
        assert_eq!(format_ns(1_043), "1.04us");
        assert_eq!(format_ns(16_384), "16.4us");
        assert_eq!(format_ns(74_843), "74.8us");
        assert_eq!(format_ns(999_700), "1.00ms");
        assert_eq!(format_ns(3_852_393), "3.85ms");
        assert_eq!(format_ns(1_200_000_000), "1.20s");
        assert_eq!(format_ns(7_200_000_000_000), "7200s");
        assert_eq!(format_duration_ns(12.5), "12.5ns");
        assert_eq!(format_duration_ns(f64::NAN), "-");
    }
}
