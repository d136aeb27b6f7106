//! Tracepoint events as analyzers see them: the raw record bytes of one event plus the
//! field layout the kernel publishes for it (tracefs `events/SYS/NAME/format`).
//!
//! Nothing here hard-codes a kernel struct: every offset comes from an [`EventLayout`]
//! (perf-prof breaks on 6.18 because it does, notes/perf-prof.md §7). An analyzer looks up
//! the few [`FieldLayout`]s it needs once, then reads only those fields from each event's
//! raw bytes — no event is decoded in full on the hot path.

use std::borrow::Cow;

/// How a field's bytes are to be read.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FieldKind {
    /// An integer of `size` bytes (1, 2, 4 or 8), zero-extended.
    Unsigned,
    /// An integer of `size` bytes, sign-extended.
    Signed,
    /// `char name[N]`: a NUL-padded string inside the record.
    CharArray,
    /// `__data_loc`: a u32 whose low 16 bits are the offset of the payload from the start
    /// of the record and whose high 16 bits are its length. `is_string` = `char[]` payload.
    DataLoc { is_string: bool },
    /// `__rel_loc`: as `DataLoc`, but the offset counts from the end of this field.
    RelLoc { is_string: bool },
    /// Any other fixed-size array (`unsigned long args[6]`): `size` bytes of
    /// `element_size`-byte elements.
    Array { element_size: usize },
}

/// One field of an event's format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldLayout {
    pub name: String,
    /// The C declaration as the format file spells it (`unsigned long args[6]`).
    pub declaration: String,
    pub offset: usize,
    pub size: usize,
    pub kind: FieldKind,
}

impl FieldLayout {
    /// A field without a C declaration (layouts built in code: tests, benches, perf's
    /// software events).
    pub fn new(name: &str, offset: usize, size: usize, kind: FieldKind) -> Self {
        Self {
            name: name.into(),
            declaration: String::new(),
            offset,
            size,
            kind,
        }
    }

    fn bytes<'a>(&self, raw: &'a [u8]) -> Option<&'a [u8]> {
        raw.get(self.offset..self.offset.checked_add(self.size)?)
    }

    /// The field as an unsigned integer (arrays: the first element). `None` when the
    /// record is too short or the field is a string.
    pub fn read_u64(&self, raw: &[u8]) -> Option<u64> {
        match self.kind {
            FieldKind::Unsigned | FieldKind::Signed => {
                read_int(self.bytes(raw)?, self.kind == FieldKind::Signed)
            }
            FieldKind::Array { element_size } => self.read_element(raw, 0, element_size),
            _ => None,
        }
    }

    /// The field as a signed integer (sign-extended from its size for signed fields).
    pub fn read_i64(&self, raw: &[u8]) -> Option<i64> {
        self.read_u64(raw).map(|v| v as i64)
    }

    /// Element `index` of an array field (`args[1]`).
    pub fn read_index(&self, raw: &[u8], index: usize) -> Option<u64> {
        match self.kind {
            FieldKind::Array { element_size } => self.read_element(raw, index, element_size),
            FieldKind::Unsigned | FieldKind::Signed if index == 0 => self.read_u64(raw),
            _ => None,
        }
    }

    fn read_element(&self, raw: &[u8], index: usize, element_size: usize) -> Option<u64> {
        if element_size == 0 || (index + 1) * element_size > self.size {
            return None;
        }
        let start = self.offset + index * element_size;
        read_int(raw.get(start..start + element_size)?, false)
    }

    /// The field's bytes as text: `char[N]` up to the first NUL, `__data_loc char[]`
    /// payloads likewise. Invalid UTF-8 is replaced, never an error.
    pub fn read_str<'a>(&self, raw: &'a [u8]) -> Option<Cow<'a, str>> {
        let bytes = match self.kind {
            FieldKind::CharArray => self.bytes(raw)?,
            FieldKind::DataLoc { .. } | FieldKind::RelLoc { .. } => self.payload(raw)?,
            _ => return None,
        };
        let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
        Some(String::from_utf8_lossy(&bytes[..end]))
    }

    /// The payload a `__data_loc` / `__rel_loc` field points at.
    pub fn payload<'a>(&self, raw: &'a [u8]) -> Option<&'a [u8]> {
        let word = u32::from_le_bytes(self.bytes(raw)?.get(..4)?.try_into().ok()?);
        let (offset, len) = ((word & 0xffff) as usize, (word >> 16) as usize);
        let start = match self.kind {
            FieldKind::DataLoc { .. } => offset,
            FieldKind::RelLoc { .. } => self.offset + self.size + offset,
            _ => return None,
        };
        raw.get(start..start.checked_add(len)?)
    }

    pub fn is_string(&self) -> bool {
        matches!(
            self.kind,
            FieldKind::CharArray
                | FieldKind::DataLoc { is_string: true }
                | FieldKind::RelLoc { is_string: true }
        )
    }
}

fn read_int(bytes: &[u8], signed: bool) -> Option<u64> {
    Some(match (bytes.len(), signed) {
        (1, false) => u64::from(bytes[0]),
        (1, true) => bytes[0] as i8 as i64 as u64,
        (2, false) => u64::from(u16::from_le_bytes(bytes.try_into().ok()?)),
        (2, true) => i16::from_le_bytes(bytes.try_into().ok()?) as i64 as u64,
        (4, false) => u64::from(u32::from_le_bytes(bytes.try_into().ok()?)),
        (4, true) => i32::from_le_bytes(bytes.try_into().ok()?) as i64 as u64,
        (8, _) => u64::from_le_bytes(bytes.try_into().ok()?),
        _ => return None,
    })
}

/// The format of one tracepoint: its id (the perf `config`) and its fields, common ones
/// (`common_type`, `common_flags`, `common_preempt_count`, `common_pid`) included.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventLayout {
    pub system: String,
    pub name: String,
    pub id: u64,
    pub fields: Vec<FieldLayout>,
    /// The `print fmt:` line, kept for raw event printing.
    pub print_fmt: String,
}

impl EventLayout {
    pub fn field(&self, name: &str) -> Option<&FieldLayout> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// `sys:name`, as selectors and tables spell it.
    pub fn full_name(&self) -> String {
        format!("{}:{}", self.system, self.name)
    }
}

/// Index of an event in a session's list of opened events (the order of the `-e`
/// selectors after wildcard expansion).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EventIndex(pub u16);

/// One tracepoint sample, borrowed from wherever it was read (a ring buffer, a store row).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TraceEvent<'a> {
    /// perf clock (CLOCK_MONOTONIC when opened with `use_clockid`), ns.
    pub time_ns: u64,
    pub cpu: u32,
    /// Process and thread id from `PERF_SAMPLE_TID`.
    pub pid: u32,
    pub tid: u32,
    pub event: EventIndex,
    /// The tracepoint's raw record (`PERF_SAMPLE_RAW`), read through an [`EventLayout`].
    pub raw: &'a [u8],
    /// Kernel-delivered callchain, leaf first; empty unless the event asked for `stack`.
    pub callchain: &'a [u64],
    /// perfscope rebuilt this event from other records (a `sched_switch` the kernel did
    /// not deliver): counted like a delivered one, marked wherever events are listed.
    pub rebuilt: bool,
}

/// A [`TraceEvent`] that outlives its buffer: what an analyzer keeps while it waits for
/// the matching second event, or what a store row is read into.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnedTraceEvent {
    pub time_ns: u64,
    pub cpu: u32,
    pub pid: u32,
    pub tid: u32,
    pub event: EventIndex,
    pub raw: Vec<u8>,
    pub callchain: Vec<u64>,
    pub rebuilt: bool,
}

impl OwnedTraceEvent {
    pub fn from_event(event: &TraceEvent<'_>) -> Self {
        Self {
            time_ns: event.time_ns,
            cpu: event.cpu,
            pid: event.pid,
            tid: event.tid,
            event: event.event,
            raw: event.raw.to_vec(),
            callchain: event.callchain.to_vec(),
            rebuilt: event.rebuilt,
        }
    }

    pub fn as_event(&self) -> TraceEvent<'_> {
        TraceEvent {
            time_ns: self.time_ns,
            cpu: self.cpu,
            pid: self.pid,
            tid: self.tid,
            event: self.event,
            raw: &self.raw,
            callchain: &self.callchain,
            rebuilt: self.rebuilt,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_are_read_at_their_size_and_sign() {
        let raw = [0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0x10, 0x20];
        assert_eq!(
            FieldLayout::new("a", 0, 4, FieldKind::Signed).read_i64(&raw),
            Some(-1)
        );
        assert_eq!(
            FieldLayout::new("a", 0, 4, FieldKind::Unsigned).read_u64(&raw),
            Some(0xffff_ffff)
        );
        assert_eq!(
            FieldLayout::new("b", 4, 8, FieldKind::Unsigned).read_u64(&raw),
            None,
            "past the end"
        );
        assert_eq!(
            FieldLayout::new("c", 8, 2, FieldKind::Unsigned).read_u64(&raw),
            Some(0x2010)
        );
        let args = FieldLayout::new("args", 0, 8, FieldKind::Array { element_size: 4 });
        assert_eq!(args.read_index(&raw, 1), Some(2));
        assert_eq!(args.read_index(&raw, 2), None);
    }

    #[test]
    fn strings_come_from_char_arrays_and_data_loc_payloads() {
        let mut raw = b"sh\0\0\0\0\0\0".to_vec();
        // __data_loc at offset 8: payload at 12, 6 bytes ("kswap" + NUL).
        raw.extend_from_slice(&(12u32 | (6u32 << 16)).to_le_bytes());
        raw.extend_from_slice(b"kswap\0");
        assert_eq!(
            FieldLayout::new("comm", 0, 8, FieldKind::CharArray)
                .read_str(&raw)
                .as_deref(),
            Some("sh")
        );
        let loc = FieldLayout::new("name", 8, 4, FieldKind::DataLoc { is_string: true });
        assert_eq!(loc.read_str(&raw).as_deref(), Some("kswap"));
        // __rel_loc: offset 0 from the end of the field (8 + 4 = 12).
        let rel = FieldLayout::new("name", 8, 4, FieldKind::RelLoc { is_string: true });
        let mut rel_raw = raw.clone();
        rel_raw[8..12].copy_from_slice(&(6u32 << 16).to_le_bytes());
        assert_eq!(rel.read_str(&rel_raw).as_deref(), Some("kswap"));
        assert_eq!(loc.read_u64(&raw), None, "a string is not a number");
    }

    #[test]
    fn owned_events_round_trip() {
        let raw = [1u8, 2, 3];
        let chain = [0xffff_ffff_8100_0000u64];
        let event = TraceEvent {
            time_ns: 5,
            cpu: 1,
            pid: 2,
            tid: 3,
            event: EventIndex(4),
            raw: &raw,
            callchain: &chain,
            rebuilt: false,
        };
        let owned = OwnedTraceEvent::from_event(&event);
        let back = owned.as_event();
        assert_eq!(
            (back.time_ns, back.cpu, back.pid, back.tid, back.event),
            (5, 1, 2, 3, EventIndex(4))
        );
        assert_eq!((back.raw, back.callchain), (&raw[..], &chain[..]));
    }
}
