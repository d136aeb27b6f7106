//! Decoding of one perf record from its bytes, in place: strings, callchains and raw
//! tracepoint data are borrowed slices of the record, never copies.
//!
//! The bytes are untrusted (a ring can be torn, a test can hand anything): every read is
//! bounds-checked and a short or inconsistent record is a [`DecodeError`], never a panic.
//! Layouts follow `include/uapi/linux/perf_event.h`; which optional fields a sample has
//! is given by its event's [`SampleFormat`].

use perf_event_open_sys::bindings as b;

pub use super::callchain::{CONTEXT_KERNEL, CONTEXT_USER, Callchain, Frame, FrameContext};
use super::user_stack::read_user_tail;
pub use super::user_stack::{UserRegs, UserStack};

/// The perf record header size: `u32 type; u16 misc; u16 size`.
pub const HEADER_BYTES: usize = 8;

/// What a record's bytes did not satisfy.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("perf record shorter than its 8-byte header ({len} bytes)")]
    NoHeader { len: usize },
    #[error("perf record header says {size} bytes but {len} were given")]
    SizeMismatch { size: usize, len: usize },
    #[error(
        "perf record type {record_type} is truncated: {what} needs bytes up to {needed}, record has {len}"
    )]
    Truncated {
        record_type: u32,
        what: &'static str,
        needed: usize,
        len: usize,
    },
}

/// Which optional fields the records of one event carry (from its attr).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub struct SampleFormat {
    /// `PERF_SAMPLE_*` bits.
    pub sample_type: u64,
    /// `PERF_FORMAT_*` bits, for `PERF_SAMPLE_READ`.
    pub read_format: u64,
    /// Non-sample records end with a `sample_id` trailer.
    pub sample_id_all: bool,
    /// The attr's `sample_regs_user`: which registers `PERF_SAMPLE_REGS_USER` carries.
    pub regs_user: u64,
}

impl SampleFormat {
    fn has(&self, bit: u32) -> bool {
        self.sample_type & u64::from(bit) != 0
    }

    /// Bytes of the `sample_id` trailer non-sample records end with.
    pub fn sample_id_bytes(&self) -> usize {
        if !self.sample_id_all {
            return 0;
        }
        [
            b::PERF_SAMPLE_TID,
            b::PERF_SAMPLE_TIME,
            b::PERF_SAMPLE_ID,
            b::PERF_SAMPLE_STREAM_ID,
        ]
        .into_iter()
        .chain([b::PERF_SAMPLE_CPU, b::PERF_SAMPLE_IDENTIFIER])
        .filter(|&bit| self.has(bit))
        .count()
            * 8
    }
}

/// The `sample_id` trailer of a non-sample record (all `None` without `sample_id_all`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub struct SampleId {
    pub pid: Option<u32>,
    pub tid: Option<u32>,
    pub time: Option<u64>,
    pub id: Option<u64>,
    pub stream_id: Option<u64>,
    pub cpu: Option<u32>,
    pub identifier: Option<u64>,
}

/// `PERF_SAMPLE_READ` of a non-group event.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub struct ReadValue {
    pub value: u64,
    pub time_enabled: Option<u64>,
    pub time_running: Option<u64>,
    pub id: Option<u64>,
    pub lost: Option<u64>,
}

/// `PERF_RECORD_SAMPLE`: the fields the event's `sample_type` asked for.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub struct Sample<'a> {
    pub misc: u16,
    pub identifier: Option<u64>,
    pub ip: Option<u64>,
    pub pid: Option<u32>,
    pub tid: Option<u32>,
    pub time: Option<u64>,
    pub addr: Option<u64>,
    pub id: Option<u64>,
    pub stream_id: Option<u64>,
    pub cpu: Option<u32>,
    pub period: Option<u64>,
    pub read: Option<ReadValue>,
    pub callchain: Callchain<'a>,
    /// The tracepoint record (`PERF_SAMPLE_RAW`), empty when not asked for.
    pub raw: &'a [u8],
    /// `PERF_SAMPLE_REGS_USER` (`--call-graph dwarf`).
    pub user_regs: Option<UserRegs<'a>>,
    /// `PERF_SAMPLE_STACK_USER` (`--call-graph dwarf`).
    pub user_stack: Option<UserStack<'a>>,
}

impl Sample<'_> {
    /// The sample was taken in kernel mode (`misc` cpumode).
    pub fn in_kernel(&self) -> bool {
        u32::from(self.misc) & b::PERF_RECORD_MISC_CPUMODE_MASK == b::PERF_RECORD_MISC_KERNEL
    }
}

/// `PERF_RECORD_COMM`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Comm<'a> {
    pub pid: u32,
    pub tid: u32,
    /// The name bytes up to the NUL.
    pub comm: &'a [u8],
    /// The name changed because of an exec (`PERF_RECORD_MISC_COMM_EXEC`).
    pub exec: bool,
    pub sample_id: SampleId,
}

/// What identifies the file of a `PERF_RECORD_MMAP2`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum MappedFile<'a> {
    Inode {
        maj: u32,
        min: u32,
        ino: u64,
        ino_generation: u64,
    },
    /// `PERF_RECORD_MISC_MMAP_BUILD_ID` (attr `build_id=1`).
    BuildId(&'a [u8]),
}

/// `PERF_RECORD_MMAP2`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Mmap2<'a> {
    pub pid: u32,
    pub tid: u32,
    pub addr: u64,
    pub len: u64,
    pub pgoff: u64,
    pub file: MappedFile<'a>,
    pub prot: u32,
    pub flags: u32,
    /// The path bytes up to the NUL (`//anon`, `[vdso]`, `/usr/bin/sh`).
    pub filename: &'a [u8],
    pub sample_id: SampleId,
}

/// `PERF_RECORD_FORK` / `PERF_RECORD_EXIT`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TaskEvent {
    pub pid: u32,
    pub ppid: u32,
    pub tid: u32,
    pub ptid: u32,
    pub time: u64,
    pub sample_id: SampleId,
}

/// `PERF_RECORD_THROTTLE` / `PERF_RECORD_UNTHROTTLE`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Throttle {
    pub time: u64,
    pub id: u64,
    pub stream_id: u64,
    pub sample_id: SampleId,
}

/// `PERF_RECORD_SWITCH_CPU_WIDE` (attr `context_switch` on a CPU-wide event): a task
/// switched in (its `sample_id` names it) or out; `other_*` is the task on the other side
/// of the switch (pid 0: the CPU's idle task).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ContextSwitch {
    pub out: bool,
    /// A switch-out of a task that was still runnable (preempted), not blocked.
    pub preempted: bool,
    pub other_pid: u32,
    pub other_tid: u32,
    pub sample_id: SampleId,
}

/// One decoded record.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Record<'a> {
    Sample(Sample<'a>),
    /// `PERF_RECORD_LOST`: `count` records of event `id` were dropped (ring full).
    Lost {
        id: u64,
        count: u64,
        sample_id: SampleId,
    },
    /// `PERF_RECORD_LOST_SAMPLES`: samples dropped before reaching the ring.
    LostSamples {
        count: u64,
        sample_id: SampleId,
    },
    Comm(Comm<'a>),
    Mmap2(Mmap2<'a>),
    Fork(TaskEvent),
    Exit(TaskEvent),
    Throttle(Throttle),
    Unthrottle(Throttle),
    Switch(ContextSwitch),
    /// Any other record type, undecoded.
    Other {
        record_type: u32,
        misc: u16,
        body: &'a [u8],
    },
}

impl Record<'_> {
    /// The perf-clock time of the record: the sample's, the task event's, or the
    /// `sample_id` trailer's.
    pub fn time(&self) -> Option<u64> {
        match self {
            Record::Sample(s) => s.time,
            Record::Fork(t) | Record::Exit(t) => Some(t.time),
            Record::Throttle(t) | Record::Unthrottle(t) => Some(t.time),
            Record::Lost { sample_id, .. } | Record::LostSamples { sample_id, .. } => sample_id.time,
            Record::Comm(c) => c.sample_id.time,
            Record::Mmap2(m) => m.sample_id.time,
            Record::Switch(s) => s.sample_id.time,
            Record::Other { .. } => None,
        }
    }
}

/// The record type of a record's header, if it has one.
pub fn record_type(record: &[u8]) -> Option<u32> {
    record
        .get(..4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// The `PERF_SAMPLE_IDENTIFIER` of a record: first word of a sample's body, last word of
/// any other record (with `sample_id_all`). Lets a ring shared by events with different
/// formats find which format decodes a record before decoding it.
pub fn peek_identifier(record: &[u8]) -> Option<u64> {
    if record.len() < HEADER_BYTES + 8 {
        return None;
    }
    if record_type(record)? == b::PERF_RECORD_SAMPLE {
        Some(le_u64(&record[HEADER_BYTES..HEADER_BYTES + 8]))
    } else {
        Some(le_u64(&record[record.len() - 8..]))
    }
}

fn le_u64(bytes: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[..8]);
    u64::from_le_bytes(word)
}

/// A bounds-checked reader over one record's bytes.
struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
    end: usize,
    record_type: u32,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], DecodeError> {
        let needed = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.end)
            .ok_or(DecodeError::Truncated {
                record_type: self.record_type,
                what,
                needed: self.pos.saturating_add(n),
                len: self.end,
            })?;
        let slice = &self.bytes[self.pos..needed];
        self.pos = needed;
        Ok(slice)
    }

    fn u64(&mut self, what: &'static str) -> Result<u64, DecodeError> {
        self.take(8, what).map(le_u64)
    }

    fn u32(&mut self, what: &'static str) -> Result<u32, DecodeError> {
        self.take(4, what)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// Two u32s packed in one word (pid/tid, cpu/res).
    fn u32_pair(&mut self, what: &'static str) -> Result<(u32, u32), DecodeError> {
        Ok((self.u32(what)?, self.u32(what)?))
    }

    /// A NUL-terminated, padded string running to `self.end`.
    fn c_string(&mut self) -> &'a [u8] {
        let rest = &self.bytes[self.pos..self.end];
        self.pos = self.end;
        let len = rest.iter().position(|&c| c == 0).unwrap_or(rest.len());
        &rest[..len]
    }
}

/// Decode one whole record (header included) with the format of its event.
pub fn decode<'a>(record: &'a [u8], format: &SampleFormat) -> Result<Record<'a>, DecodeError> {
    if record.len() < HEADER_BYTES {
        return Err(DecodeError::NoHeader { len: record.len() });
    }
    let record_type = record_type(record).unwrap_or(0);
    let misc = u16::from_le_bytes([record[4], record[5]]);
    let size = usize::from(u16::from_le_bytes([record[6], record[7]]));
    if size != record.len() {
        return Err(DecodeError::SizeMismatch {
            size,
            len: record.len(),
        });
    }
    if record_type == b::PERF_RECORD_SAMPLE {
        let mut cursor = Cursor {
            bytes: record,
            pos: HEADER_BYTES,
            end: size,
            record_type,
        };
        return decode_sample(&mut cursor, misc, format).map(Record::Sample);
    }
    let trailer = if is_known_non_sample(record_type) {
        format.sample_id_bytes()
    } else {
        0
    };
    let body_end =
        size.checked_sub(trailer)
            .filter(|&e| e >= HEADER_BYTES)
            .ok_or(DecodeError::Truncated {
                record_type,
                what: "sample_id trailer",
                needed: HEADER_BYTES + trailer,
                len: size,
            })?;
    let sample_id = decode_sample_id(&record[body_end..], format);
    let mut c = Cursor {
        bytes: record,
        pos: HEADER_BYTES,
        end: body_end,
        record_type,
    };
    Ok(match record_type {
        b::PERF_RECORD_LOST => Record::Lost {
            id: c.u64("lost id")?,
            count: c.u64("lost count")?,
            sample_id,
        },
        b::PERF_RECORD_LOST_SAMPLES => Record::LostSamples {
            count: c.u64("lost count")?,
            sample_id,
        },
        b::PERF_RECORD_COMM => {
            let (pid, tid) = c.u32_pair("comm pid/tid")?;
            let exec = u32::from(misc) & b::PERF_RECORD_MISC_COMM_EXEC != 0;
            Record::Comm(Comm {
                pid,
                tid,
                comm: c.c_string(),
                exec,
                sample_id,
            })
        }
        b::PERF_RECORD_MMAP2 => Record::Mmap2(decode_mmap2(&mut c, misc, sample_id)?),
        b::PERF_RECORD_FORK | b::PERF_RECORD_EXIT => {
            let (pid, ppid) = c.u32_pair("task pid/ppid")?;
            let (tid, ptid) = c.u32_pair("task tid/ptid")?;
            let task = TaskEvent {
                pid,
                ppid,
                tid,
                ptid,
                time: c.u64("task time")?,
                sample_id,
            };
            if record_type == b::PERF_RECORD_FORK {
                Record::Fork(task)
            } else {
                Record::Exit(task)
            }
        }
        b::PERF_RECORD_THROTTLE | b::PERF_RECORD_UNTHROTTLE => {
            let throttle = Throttle {
                time: c.u64("throttle time")?,
                id: c.u64("throttle id")?,
                stream_id: c.u64("throttle stream_id")?,
                sample_id,
            };
            if record_type == b::PERF_RECORD_THROTTLE {
                Record::Throttle(throttle)
            } else {
                Record::Unthrottle(throttle)
            }
        }
        b::PERF_RECORD_SWITCH_CPU_WIDE => {
            let (other_pid, other_tid) = c.u32_pair("switch next_prev_pid/tid")?;
            Record::Switch(ContextSwitch {
                out: u32::from(misc) & b::PERF_RECORD_MISC_SWITCH_OUT != 0,
                preempted: u32::from(misc) & b::PERF_RECORD_MISC_SWITCH_OUT_PREEMPT != 0,
                other_pid,
                other_tid,
                sample_id,
            })
        }
        _ => Record::Other {
            record_type,
            misc,
            body: &record[HEADER_BYTES..],
        },
    })
}

fn is_known_non_sample(record_type: u32) -> bool {
    matches!(
        record_type,
        b::PERF_RECORD_LOST
            | b::PERF_RECORD_LOST_SAMPLES
            | b::PERF_RECORD_COMM
            | b::PERF_RECORD_MMAP2
            | b::PERF_RECORD_FORK
            | b::PERF_RECORD_EXIT
            | b::PERF_RECORD_THROTTLE
            | b::PERF_RECORD_UNTHROTTLE
            | b::PERF_RECORD_SWITCH_CPU_WIDE
    )
}

fn decode_sample<'a>(c: &mut Cursor<'a>, misc: u16, f: &SampleFormat) -> Result<Sample<'a>, DecodeError> {
    let mut s = Sample {
        misc,
        ..Sample::default()
    };
    if f.has(b::PERF_SAMPLE_IDENTIFIER) {
        s.identifier = Some(c.u64("identifier")?);
    }
    if f.has(b::PERF_SAMPLE_IP) {
        s.ip = Some(c.u64("ip")?);
    }
    if f.has(b::PERF_SAMPLE_TID) {
        let (pid, tid) = c.u32_pair("pid/tid")?;
        (s.pid, s.tid) = (Some(pid), Some(tid));
    }
    if f.has(b::PERF_SAMPLE_TIME) {
        s.time = Some(c.u64("time")?);
    }
    if f.has(b::PERF_SAMPLE_ADDR) {
        s.addr = Some(c.u64("addr")?);
    }
    if f.has(b::PERF_SAMPLE_ID) {
        s.id = Some(c.u64("id")?);
    }
    if f.has(b::PERF_SAMPLE_STREAM_ID) {
        s.stream_id = Some(c.u64("stream_id")?);
    }
    if f.has(b::PERF_SAMPLE_CPU) {
        s.cpu = Some(c.u32_pair("cpu")?.0);
    }
    if f.has(b::PERF_SAMPLE_PERIOD) {
        s.period = Some(c.u64("period")?);
    }
    if f.has(b::PERF_SAMPLE_READ) {
        s.read = Some(decode_read(c, f.read_format)?);
    }
    if f.has(b::PERF_SAMPLE_CALLCHAIN) {
        let nr = c.u64("callchain nr")?;
        let bytes = usize::try_from(nr)
            .ok()
            .and_then(|n| n.checked_mul(8))
            .unwrap_or(usize::MAX);
        s.callchain = Callchain::from_bytes(c.take(bytes, "callchain")?);
    }
    if f.has(b::PERF_SAMPLE_RAW) {
        let size = c.u32("raw size")? as usize;
        s.raw = c.take(size, "raw data")?;
    }
    // The branch stack would come first; its length depends on `branch_sample_type`, which
    // perfscope never sets, so a format with both has its user fields left unread.
    let user_tail = b::PERF_SAMPLE_REGS_USER | b::PERF_SAMPLE_STACK_USER;
    if f.sample_type & u64::from(user_tail) != 0 && !f.has(b::PERF_SAMPLE_BRANCH_STACK) {
        let rest = &c.bytes[c.pos..c.end];
        let (regs, stack, used) =
            read_user_tail(rest, f.sample_type, f.regs_user).map_err(|e| DecodeError::Truncated {
                record_type: c.record_type,
                what: e.what,
                needed: c.pos.saturating_add(e.needed),
                len: c.end,
            })?;
        (s.user_regs, s.user_stack) = (regs, stack);
        c.pos += used;
    }
    Ok(s)
}

fn decode_read(c: &mut Cursor<'_>, read_format: u64) -> Result<ReadValue, DecodeError> {
    let has = |bit: u32| read_format & u64::from(bit) != 0;
    let mut read = ReadValue {
        value: c.u64("read value")?,
        ..ReadValue::default()
    };
    if has(b::PERF_FORMAT_TOTAL_TIME_ENABLED) {
        read.time_enabled = Some(c.u64("read time_enabled")?);
    }
    if has(b::PERF_FORMAT_TOTAL_TIME_RUNNING) {
        read.time_running = Some(c.u64("read time_running")?);
    }
    if has(b::PERF_FORMAT_ID) {
        read.id = Some(c.u64("read id")?);
    }
    if has(b::PERF_FORMAT_LOST) {
        read.lost = Some(c.u64("read lost")?);
    }
    Ok(read)
}

/// The trailer is exactly `format.sample_id_bytes()` long (checked by the caller).
fn decode_sample_id(trailer: &[u8], f: &SampleFormat) -> SampleId {
    let mut id = SampleId::default();
    if !f.sample_id_all {
        return id;
    }
    let mut words = trailer.chunks_exact(8).map(le_u64);
    let mut next = |bit: u32| if f.has(bit) { words.next() } else { None };
    if let Some(word) = next(b::PERF_SAMPLE_TID) {
        (id.pid, id.tid) = (Some(word as u32), Some((word >> 32) as u32));
    }
    id.time = next(b::PERF_SAMPLE_TIME);
    id.id = next(b::PERF_SAMPLE_ID);
    id.stream_id = next(b::PERF_SAMPLE_STREAM_ID);
    id.cpu = next(b::PERF_SAMPLE_CPU).map(|w| w as u32);
    id.identifier = next(b::PERF_SAMPLE_IDENTIFIER);
    id
}

fn decode_mmap2<'a>(c: &mut Cursor<'a>, misc: u16, sample_id: SampleId) -> Result<Mmap2<'a>, DecodeError> {
    let (pid, tid) = c.u32_pair("mmap2 pid/tid")?;
    let (addr, len, pgoff) = (c.u64("mmap2 addr")?, c.u64("mmap2 len")?, c.u64("mmap2 pgoff")?);
    let id_bytes = c.take(24, "mmap2 file id")?;
    let file = if u32::from(misc) & b::PERF_RECORD_MISC_MMAP_BUILD_ID != 0 {
        let size = usize::from(id_bytes[0]).min(20);
        MappedFile::BuildId(&id_bytes[4..4 + size])
    } else {
        MappedFile::Inode {
            maj: u32::from_le_bytes([id_bytes[0], id_bytes[1], id_bytes[2], id_bytes[3]]),
            min: u32::from_le_bytes([id_bytes[4], id_bytes[5], id_bytes[6], id_bytes[7]]),
            ino: le_u64(&id_bytes[8..16]),
            ino_generation: le_u64(&id_bytes[16..24]),
        }
    };
    let (prot, flags) = c.u32_pair("mmap2 prot/flags")?;
    Ok(Mmap2 {
        pid,
        tid,
        addr,
        len,
        pgoff,
        file,
        prot,
        flags,
        filename: c.c_string(),
        sample_id,
    })
}

#[cfg(test)]
#[path = "record_tests.rs"]
mod tests;
