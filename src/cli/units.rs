//! perf-prof's number syntax on the command line (`--than 4ms`, `-i 1000`), and the one
//! parser of every flag that takes seconds (`--duration`, `--timeout`,
//! `--workload-timeout`, `--sliding-seconds`, `--start-sec`, `--stop-sec`).

use std::time::Duration;

use crate::model::units::MAX_TIME_NS;

/// The most seconds a flag takes: 4,611,686,018 s (146 years), the whole seconds of
/// [`MAX_TIME_NS`], the latest time the engine keeps on a session's clock. A window edge
/// past it could select nothing the engine has, and a deadline of it still fits every
/// clock (`Instant + Duration` panics only past ~2^63 s on Linux, but a u64 of
/// nanoseconds ends at 584 years).
pub const MAX_SECONDS: u64 = MAX_TIME_NS / 1_000_000_000;

/// A flag's number of seconds, `0` to [`MAX_SECONDS`] (`--timeout 0`: no limit;
/// `--start-sec 0`: the start). For clap's `value_parser`: a refusal is a usage error
/// (exit 2); clap's message quotes the text as typed, ours says the range.
pub fn parse_seconds(text: &str) -> Result<Duration, String> {
    seconds_in(text, false)
        .ok_or_else(|| format!("not a number of seconds from 0 to {MAX_SECONDS} (146 years)"))
}

/// As [`parse_seconds`], for flags where 0 means nothing (`--duration`,
/// `--sliding-seconds`, `--workload-timeout`): from 1 ns to [`MAX_SECONDS`].
pub fn parse_positive_seconds(text: &str) -> Result<Duration, String> {
    seconds_in(text, true)
        .ok_or_else(|| format!("not a number of seconds above 0 and at most {MAX_SECONDS} (146 years)"))
}

fn seconds_in(text: &str, positive: bool) -> Option<Duration> {
    let seconds: f64 = text.trim().parse().ok()?;
    // NaN fails both comparisons; -0 is 0.
    if !(0.0..=MAX_SECONDS as f64).contains(&seconds) {
        return None;
    }
    let duration = Duration::try_from_secs_f64(seconds).ok()?;
    (!positive || !duration.is_zero()).then_some(duration)
}

/// A duration as perf-prof's `nsparse` reads it: a decimal integer with an optional unit
/// `s`, `ms`, `us` or `ns` (case-insensitive); a bare number is nanoseconds.
pub fn parse_duration_ns(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return Err(format!(
            "`{text}` is not a duration: write a whole number with an optional unit, e.g. 500us, 4ms, 1s"
        ));
    }
    let value: u64 = text[..digits]
        .parse()
        .map_err(|_| format!("`{text}` is too large"))?;
    let scale = match text[digits..].to_ascii_lowercase().as_str() {
        "" | "ns" => 1,
        "us" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        unit => return Err(format!("unknown unit `{unit}` in `{text}`: use s, ms, us or ns")),
    };
    value
        .checked_mul(scale)
        .ok_or_else(|| format!("`{text}` is too large"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_scale_and_bare_numbers_are_nanoseconds() {
        assert_eq!(parse_duration_ns("4ms"), Ok(4_000_000));
        assert_eq!(parse_duration_ns("100us"), Ok(100_000));
        assert_eq!(parse_duration_ns("1S"), Ok(1_000_000_000));
        assert_eq!(parse_duration_ns("250"), Ok(250));
        assert!(parse_duration_ns("ms").unwrap_err().contains("not a duration"));
        assert!(
            parse_duration_ns("3min")
                .unwrap_err()
                .contains("unknown unit `min`")
        );
        assert!(parse_duration_ns("99999999999999999999s").is_err());
    }

    #[test]
    fn seconds_are_bounded_and_every_refusal_reads_the_same() {
        assert_eq!(parse_seconds("1.5"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_seconds("0"), Ok(Duration::ZERO));
        assert_eq!(parse_seconds(" 2 "), Ok(Duration::from_secs(2)));
        assert_eq!(parse_seconds("4611686018"), Ok(Duration::from_secs(MAX_SECONDS)));
        assert_eq!(MAX_SECONDS, 4_611_686_018);
        assert_eq!(parse_positive_seconds("1e-9"), Ok(Duration::from_nanos(1)));
        // Past the limit, or not a number: one sentence (the old one printed
        // 18446744073709551615 as 18446744073709552000 and said it was too large).
        for bad in [
            "4611686019",
            "9223372036854775807",
            "9223372036854775808",
            "1e19",
            "18446744073709551615",
            "1e400",
            "inf",
            "NaN",
            "-1",
            "ten",
            "",
        ] {
            assert_eq!(
                parse_seconds(bad),
                Err("not a number of seconds from 0 to 4611686018 (146 years)".into()),
                "{bad}"
            );
            assert_eq!(
                parse_positive_seconds(bad),
                Err("not a number of seconds above 0 and at most 4611686018 (146 years)".into()),
                "{bad}"
            );
        }
        for zero in ["0", "-0", "0.0000000001"] {
            assert_eq!(
                parse_positive_seconds(zero),
                Err("not a number of seconds above 0 and at most 4611686018 (146 years)".into()),
                "{zero}"
            );
        }
    }
}
