//! A progress bar on stderr for work that takes more than a moment.
//!
//! Nothing is drawn for the first half second (a quick run stays quiet), nor when stderr
//! is not a terminal (logs stay clean); after that a single line is redrawn at most ten
//! times a second.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

const QUIET_FOR: Duration = Duration::from_millis(500);
const REDRAW_EVERY: Duration = Duration::from_millis(100);

pub struct Progress {
    label: String,
    total: u64,
    started: Instant,
    last_draw: Option<Instant>,
    enabled: bool,
}

impl Progress {
    /// `total` is the amount of work (bytes, for a file); 0 when unknown.
    pub fn new(label: &str, total: u64) -> Self {
        Self {
            label: label.to_string(),
            total,
            started: Instant::now(),
            last_draw: None,
            enabled: std::io::stderr().is_terminal(),
        }
    }

    /// Report `done` units of work so far.
    pub fn update(&mut self, done: u64) {
        if !self.enabled {
            return;
        }
        let now = Instant::now();
        if now - self.started < QUIET_FOR || self.last_draw.is_some_and(|t| now - t < REDRAW_EVERY) {
            return;
        }
        self.last_draw = Some(now);
        let line = render(&self.label, done, self.total, now - self.started);
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r{line}\x1b[K");
        let _ = err.flush();
    }

    /// Clear the line if anything was drawn.
    pub fn finish(&mut self) {
        if self.last_draw.take().is_some() {
            let _ = write!(std::io::stderr().lock(), "\r\x1b[K");
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

/// `decoding qperf.bin [#########-----------]  45%  12.3 MiB  1.2 s`
pub fn render(label: &str, done: u64, total: u64, elapsed: Duration) -> String {
    const WIDTH: usize = 24;
    let mib = done as f64 / (1024.0 * 1024.0);
    if total == 0 {
        return format!("{label}  {mib:.1} MiB  {:.1} s", elapsed.as_secs_f64());
    }
    let fraction = (done as f64 / total as f64).clamp(0.0, 1.0);
    let filled = (fraction * WIDTH as f64).round() as usize;
    format!(
        "{label} [{}{}] {:>3.0}%  {mib:.1} MiB  {:.1} s",
        "#".repeat(filled),
        "-".repeat(WIDTH - filled),
        fraction * 100.0,
        elapsed.as_secs_f64()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_a_bar() {
        let line = render("decoding", 512 * 1024, 1024 * 1024, Duration::from_millis(1500));
        assert_eq!(line, "decoding [############------------]  50%  0.5 MiB  1.5 s");
        assert_eq!(render("x", 0, 0, Duration::ZERO), "x  0.0 MiB  0.0 s");
    }
}
