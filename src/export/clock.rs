//! The one clock reading of an export: the wall-clock time `<analyzer>.txt` is stamped
//! with and the offset `offenders.txt` turns sample-clock times into wall-clock times
//! with, taken together by the exporter (the engine reads no clock for an export).

use std::time::SystemTime;

use crate::analyzers::text::{WallClock, realtime_offset_ns};

/// CLOCK_REALTIME and CLOCK_MONOTONIC read at one moment.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ExportClock {
    pub real: SystemTime,
    pub monotonic_ns: u64,
}

impl ExportClock {
    pub fn now() -> Self {
        Self {
            real: SystemTime::now(),
            monotonic_ns: crate::sources::clock::monotonic_ns(),
        }
    }

    /// The moment as local time (the `<analyzer>.txt` stamp).
    pub fn wall(&self) -> WallClock {
        WallClock::local(self.real)
    }

    /// CLOCK_REALTIME − the sample clock of a session whose sample clock is
    /// CLOCK_MONOTONIC minus `live_clock_offset_ns`.
    pub fn realtime_offset_ns(&self, live_clock_offset_ns: Option<i64>) -> i128 {
        realtime_offset_ns(self.real, self.monotonic_ns, live_clock_offset_ns)
    }
}
