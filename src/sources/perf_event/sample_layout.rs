//! [`SampleLayout`]: where the fields a tracing session needs sit in the samples of one
//! format, worked out once per event.
//!
//! A tracing session reads a million samples a second and wants six things of each (time,
//! cpu, pid/tid, the raw tracepoint record, the callchain). [`super::record::decode`]
//! walks every optional field and builds the whole [`super::record::Sample`], some 300
//! bytes moved through every step; the fixed-size fields sit at the same offsets in every
//! sample of a format, so this reads them there, bounds-checked like the full decode.

use perf_event_open_sys::bindings as b;

use super::record::{Callchain, HEADER_BYTES, SampleFormat, record_type};
use super::user_stack::{UserRegs, UserStack, read_user_tail};

/// The fields of one sample a tracing session needs, borrowed from its bytes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SampleFields<'a> {
    pub time_ns: u64,
    pub cpu: u32,
    pub pid: u32,
    pub tid: u32,
    pub raw: &'a [u8],
    pub callchain: Callchain<'a>,
    /// `PERF_SAMPLE_REGS_USER`, when the format has it.
    pub user_regs: Option<UserRegs<'a>>,
    /// `PERF_SAMPLE_STACK_USER`, when the format has it.
    pub user_stack: Option<UserStack<'a>>,
}

/// Offsets (from the record's start) of a format's fields.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SampleLayout {
    time: Option<usize>,
    tid: Option<usize>,
    cpu: Option<usize>,
    /// Where the variable part starts (callchain, then raw): after every fixed field, the
    /// read value included. `None` when the read value's size varies (a group read).
    variable: Option<usize>,
    callchain: bool,
    raw: bool,
    /// `sample_type` and `regs_user` when the user registers or stack follow the raw
    /// record (and no branch stack sits between).
    user_tail: Option<(u64, u64)>,
}

/// The fixed-size sample fields in the kernel's order, each with its size in bytes; the
/// read value, the callchain and the raw record follow them (every bit below
/// `PERF_SAMPLE_RAW` is here or one of those; later bits come after the raw record).
const FIXED_FIELDS: [(u32, usize); 9] = [
    (b::PERF_SAMPLE_IDENTIFIER, 8),
    (b::PERF_SAMPLE_IP, 8),
    (b::PERF_SAMPLE_TID, 8),
    (b::PERF_SAMPLE_TIME, 8),
    (b::PERF_SAMPLE_ADDR, 8),
    (b::PERF_SAMPLE_ID, 8),
    (b::PERF_SAMPLE_STREAM_ID, 8),
    (b::PERF_SAMPLE_CPU, 8),
    (b::PERF_SAMPLE_PERIOD, 8),
];

impl SampleLayout {
    pub fn new(format: &SampleFormat) -> SampleLayout {
        let has = |bit: u32| format.sample_type & u64::from(bit) != 0;
        let mut at = HEADER_BYTES;
        let mut offsets = [None; 9];
        for (slot, (bit, size)) in offsets.iter_mut().zip(FIXED_FIELDS) {
            if has(bit) {
                *slot = Some(at);
                at += size;
            }
        }
        let variable = if !has(b::PERF_SAMPLE_READ) {
            Some(at)
        } else if format.read_format & u64::from(b::PERF_FORMAT_GROUP) == 0 {
            let extra = [
                b::PERF_FORMAT_TOTAL_TIME_ENABLED,
                b::PERF_FORMAT_TOTAL_TIME_RUNNING,
                b::PERF_FORMAT_ID,
                b::PERF_FORMAT_LOST,
            ]
            .into_iter()
            .filter(|&bit| format.read_format & u64::from(bit) != 0)
            .count();
            Some(at + 8 * (1 + extra))
        } else {
            None
        };
        // Indices into FIXED_FIELDS.
        SampleLayout {
            time: offsets[3],
            tid: offsets[2],
            cpu: offsets[7],
            variable,
            callchain: has(b::PERF_SAMPLE_CALLCHAIN),
            raw: has(b::PERF_SAMPLE_RAW),
            user_tail: ((has(b::PERF_SAMPLE_REGS_USER) || has(b::PERF_SAMPLE_STACK_USER))
                && !has(b::PERF_SAMPLE_BRANCH_STACK))
            .then_some((format.sample_type, format.regs_user)),
        }
    }

    /// A sample's time; `None` for other records, formats without a time, or a record too
    /// short to hold it.
    pub fn time(&self, record: &[u8]) -> Option<u64> {
        if record_type(record)? != b::PERF_RECORD_SAMPLE {
            return None;
        }
        word(record, self.time?)
    }

    /// The fields of a sample; `None` when the record is not a sample, the format lacks
    /// one of time/tid/cpu, or the bytes are short or inconsistent (the full decode then
    /// says what is wrong).
    pub fn fields<'a>(&self, record: &'a [u8]) -> Option<SampleFields<'a>> {
        if record_type(record)? != b::PERF_RECORD_SAMPLE || header_size(record)? != record.len() {
            return None;
        }
        let pid_tid = word(record, self.tid?)?;
        let mut at = self.variable?;
        if at > record.len() {
            return None; // the fixed fields run past the record
        }
        let callchain = if self.callchain {
            let nr = usize::try_from(word(record, at)?).ok()?;
            let start = at + 8;
            at = nr.checked_mul(8).and_then(|bytes| start.checked_add(bytes))?;
            Callchain::from_bytes(record.get(start..at)?)
        } else {
            Callchain::from_bytes(&[])
        };
        let raw: &[u8] = if self.raw {
            let size = u32::from_le_bytes(record.get(at..at + 4)?.try_into().ok()?) as usize;
            let raw = record.get(at + 4..(at + 4).checked_add(size)?)?;
            // The kernel pads `size` itself so the next field starts on a u64.
            at = at + 4 + size;
            raw
        } else {
            &[]
        };
        let (user_regs, user_stack) = match self.user_tail {
            Some((sample_type, regs_mask)) => {
                let (regs, stack, _) = read_user_tail(record.get(at..)?, sample_type, regs_mask).ok()?;
                (regs, stack)
            }
            None => (None, None),
        };
        Some(SampleFields {
            time_ns: word(record, self.time?)?,
            cpu: word(record, self.cpu?)? as u32,
            pid: pid_tid as u32,
            tid: (pid_tid >> 32) as u32,
            raw,
            callchain,
            user_regs,
            user_stack,
        })
    }
}

fn word(record: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(record.get(at..at + 8)?.try_into().ok()?))
}

fn header_size(record: &[u8]) -> Option<usize> {
    Some(usize::from(u16::from_le_bytes(
        record.get(6..8)?.try_into().ok()?,
    )))
}

#[cfg(test)]
#[path = "sample_layout_tests.rs"]
mod tests;
