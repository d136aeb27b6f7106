//! Decay weights applied to counts: one rounding for every row type that merges scaled.

/// `n × factor`, rounded (decay weights; a factor ≥ 1 keeps `n`).
pub fn scale(n: u64, factor: f64) -> u64 {
    if factor >= 1.0 {
        n
    } else {
        (n as f64 * factor.max(0.0)).round() as u64
    }
}
