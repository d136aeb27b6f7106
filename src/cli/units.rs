//! perf-prof's number syntax on the command line: `--than 4ms`, `-i 1000`.

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
}
