//! Test records written through a real layout: integers at their field's size, strings
//! into `char[N]` fields or appended as `__data_loc`/`__rel_loc` payloads, so the
//! renderer reads bytes shaped as the kernel writes them.

use crate::sources::tracefs::parse_format;
use crate::trace::event::{EventIndex, EventLayout, FieldKind, TraceEvent};

/// The layout in tests/fixtures/tracefs/events/`path`/format (a copy of a 6.18 file).
pub(super) fn fixture(path: &str) -> EventLayout {
    let text = std::fs::read_to_string(format!(
        "{}/tests/fixtures/tracefs/events/{path}/format",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap_or_else(|e| panic!("fixture {path}: {e}"));
    let (system, name) = path.split_once('/').expect("sys/name");
    parse_format(system, name, &text).expect("fixture parses")
}

pub(super) struct Record<'l> {
    layout: &'l EventLayout,
    pub(super) raw: Vec<u8>,
}

impl<'l> Record<'l> {
    pub(super) fn new(layout: &'l EventLayout) -> Self {
        let end = layout.fields.iter().map(|f| f.offset + f.size).max().unwrap_or(0);
        let mut raw = vec![0u8; end];
        raw[..2].copy_from_slice(&(layout.id as u16).to_le_bytes());
        Self { layout, raw }
    }

    fn field(&self, name: &str) -> &'l crate::trace::event::FieldLayout {
        self.layout
            .field(name)
            .unwrap_or_else(|| panic!("{} has no field {name}", self.layout.name))
    }

    /// A scalar field, or the first element of an array.
    pub(super) fn int(self, name: &str, value: i64) -> Self {
        self.element(name, 0, value)
    }

    pub(super) fn element(mut self, name: &str, index: usize, value: i64) -> Self {
        let field = self.field(name);
        let size = match field.kind {
            FieldKind::Array { element_size } => element_size,
            _ => field.size,
        };
        let at = field.offset + index * size;
        self.raw[at..at + size].copy_from_slice(&value.to_le_bytes()[..size]);
        self
    }

    /// A string: into a `char[N]` field, or as a NUL-terminated dynamic payload.
    pub(super) fn text(self, name: &str, text: &str) -> Self {
        if self.field(name).kind == FieldKind::CharArray {
            let mut this = self;
            let field = this.field(name);
            this.raw[field.offset..field.offset + text.len()].copy_from_slice(text.as_bytes());
            return this;
        }
        let mut payload = text.as_bytes().to_vec();
        payload.push(0);
        self.payload(name, &payload)
    }

    /// A `__data_loc`/`__rel_loc` payload appended to the record.
    pub(super) fn payload(mut self, name: &str, bytes: &[u8]) -> Self {
        let field = self.field(name);
        let start = self.raw.len();
        let offset = match field.kind {
            FieldKind::RelLoc { .. } => start - (field.offset + field.size),
            _ => start,
        };
        let word = offset as u32 | ((bytes.len() as u32) << 16);
        self.raw[field.offset..field.offset + 4].copy_from_slice(&word.to_le_bytes());
        self.raw.extend_from_slice(bytes);
        self
    }

    pub(super) fn event(&self) -> TraceEvent<'_> {
        TraceEvent {
            time_ns: 0,
            cpu: 0,
            pid: 1,
            tid: 1,
            event: EventIndex(0),
            raw: &self.raw,
            callchain: &[],
            rebuilt: false,
        }
    }
}
