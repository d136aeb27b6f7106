//! What `--call-graph dwarf` costs and what it gets: every sample carries a copy of the
//! user stack (8 KiB by default) through the kernel's ring, so the copies' bandwidth and
//! the records the rings lost for it are facts of the session, beside how well the copies
//! unwound. The status line and the closing summary of a headless run show them.

/// Totals of a session's user stack copies so far.
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct StackCopies {
    /// The copy asked of each sample (`dwarf,SIZE`).
    pub stack_bytes: u32,
    /// Samples that carried a copy.
    pub samples: u64,
    /// Bytes of copies the rings carried (each sample pays the whole asked size).
    pub copied_bytes: u64,
    /// Of them, the bytes that held stack.
    pub used_bytes: u64,
    /// Walks that reached the outermost frame (whole stacks).
    pub unwound_to_root: u64,
    /// User frames found.
    pub user_frames: u64,
    /// Time the ring reader spent unwinding.
    pub unwind_ns: u64,
    /// Time since sampling began.
    pub elapsed_ns: u64,
    /// Bytes of copies per second, recently (over the last second or so).
    pub bytes_per_sec: f64,
    /// Records the rings lost so far (a full ring drops whole samples, copies and all).
    pub lost_records: u64,
}

impl StackCopies {
    /// `stacks 8.4 MB/s · lost 0`: for the status line.
    pub fn status_text(&self) -> String {
        format!(
            "stacks {}/s · lost {}",
            format_bytes(self.bytes_per_sec.max(0.0) as u64),
            self.lost_records
        )
    }

    /// Bytes per second over the whole session.
    pub fn average_bytes_per_sec(&self) -> f64 {
        if self.elapsed_ns == 0 {
            return 0.0;
        }
        self.copied_bytes as f64 * 1e9 / self.elapsed_ns as f64
    }

    /// The closing summary's line: what the copies cost and how they unwound.
    pub fn summary_line(&self) -> String {
        let per_sample = |n: u64| {
            if self.samples == 0 {
                0.0
            } else {
                n as f64 / self.samples as f64
            }
        };
        let percent = |n: u64| 100.0 * per_sample(n);
        format!(
            "stack copies: {} samples × {} bytes = {} ({}/s over {:.1} s, {:.0} % of it stack); \
             {:.1} % unwound to the root, {:.1} user frames and {:.1} µs of unwinding a sample; \
             {} records lost",
            self.samples,
            self.stack_bytes,
            format_bytes(self.copied_bytes),
            format_bytes(self.average_bytes_per_sec() as u64),
            self.elapsed_ns as f64 / 1e9,
            if self.copied_bytes == 0 {
                0.0
            } else {
                100.0 * self.used_bytes as f64 / self.copied_bytes as f64
            },
            percent(self.unwound_to_root),
            per_sample(self.user_frames),
            per_sample(self.unwind_ns) / 1e3,
            self.lost_records
        )
    }
}

/// `812 B`, `7.9 KiB`, `15.6 MiB`, `1.2 GiB`.
fn format_bytes(bytes: u64) -> String {
    const KIB: f64 = 1024.0;
    let b = bytes as f64;
    if b < KIB {
        format!("{bytes} B")
    } else if b < KIB * KIB {
        format!("{:.1} KiB", b / KIB)
    } else if b < KIB * KIB * KIB {
        format!("{:.1} MiB", b / (KIB * KIB))
    } else {
        format!("{:.1} GiB", b / (KIB * KIB * KIB))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copies() -> StackCopies {
        StackCopies {
            stack_bytes: 8192,
            samples: 2000,
            copied_bytes: 2000 * 8192,
            used_bytes: 2000 * 2048,
            unwound_to_root: 1990,
            user_frames: 2000 * 9,
            unwind_ns: 2000 * 3_500,
            elapsed_ns: 2_000_000_000,
            bytes_per_sec: 8.0 * 1024.0 * 1024.0,
            lost_records: 3,
        }
    }

    #[test]
    fn the_status_says_the_recent_rate_and_the_losses() {
        assert_eq!(copies().status_text(), "stacks 8.0 MiB/s · lost 3");
        assert_eq!(StackCopies::default().status_text(), "stacks 0 B/s · lost 0");
    }

    #[test]
    fn bytes_read_in_binary_units() {
        assert_eq!(format_bytes(812), "812 B");
        assert_eq!(format_bytes(8192), "8.0 KiB");
        assert_eq!(format_bytes(16_384_000), "15.6 MiB");
        assert_eq!(format_bytes(3 << 30), "3.0 GiB");
    }

    #[test]
    fn the_summary_adds_up_the_run() {
        let line = copies().summary_line();
        assert_eq!(
            line,
            "stack copies: 2000 samples × 8192 bytes = 15.6 MiB (7.8 MiB/s over 2.0 s, 25 % of it stack); \
             99.5 % unwound to the root, 9.0 user frames and 3.5 µs of unwinding a sample; 3 records lost"
        );
        // Nothing sampled yet: no division by zero.
        let empty = StackCopies::default().summary_line();
        assert!(empty.starts_with("stack copies: 0 samples"), "{empty}");
        assert!(empty.contains("0.0 % unwound"), "{empty}");
    }
}
