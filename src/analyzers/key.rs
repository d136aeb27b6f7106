//! Where an analyzer gets a number from an event: a correlation key (`key=`, `-k`), a
//! value to sum (`top-by=`, `top-add=`) or role bits (`role=`). Either one field read
//! through its layout, an identity of the sample, or a closure the caller compiled from
//! an expression (the expression language lives in `trace::expr`; it plugs in here).

use std::fmt;

use crate::trace::event::{FieldKind, FieldLayout, TraceEvent};

/// A compiled expression: an event in, a number out (`None` = no number).
pub type EventNumber = Box<dyn Fn(&TraceEvent<'_>) -> Option<u64> + Send>;

/// A number read from an event. `None` = the event has no such number (a short record,
/// a failed expression): the analyzer skips the event rather than file it under 0.
pub enum KeySource {
    /// One field, read through its layout. Negative values of signed fields read as 0,
    /// as perf-prof's keys do ("negative evaluation → 0").
    Field(FieldLayout),
    /// The sample's process id (`PERF_SAMPLE_TID` pid).
    Pid,
    /// The sample's thread id.
    Tid,
    /// The CPU the event was recorded on.
    Cpu,
    /// Anything else (an expression).
    Custom(EventNumber),
}

impl KeySource {
    pub fn read(&self, event: &TraceEvent<'_>) -> Option<u64> {
        match self {
            KeySource::Field(field) => {
                let value = field.read_u64(event.raw)?;
                if field.kind == FieldKind::Signed && (value as i64) < 0 {
                    Some(0)
                } else {
                    Some(value)
                }
            }
            KeySource::Pid => Some(u64::from(event.pid)),
            KeySource::Tid => Some(u64::from(event.tid)),
            KeySource::Cpu => Some(u64::from(event.cpu)),
            KeySource::Custom(f) => f(event),
        }
    }
}

impl fmt::Debug for KeySource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeySource::Field(field) => write!(f, "Field({})", field.name),
            KeySource::Pid => f.write_str("Pid"),
            KeySource::Tid => f.write_str("Tid"),
            KeySource::Cpu => f.write_str("Cpu"),
            KeySource::Custom(_) => f.write_str("Custom"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::event::EventIndex;

    #[test]
    fn keys_come_from_fields_identities_or_closures() {
        let raw = (-5i32)
            .to_le_bytes()
            .into_iter()
            .chain(7u32.to_le_bytes())
            .collect::<Vec<_>>();
        let event = TraceEvent {
            time_ns: 1,
            cpu: 3,
            pid: 10,
            tid: 11,
            event: EventIndex(0),
            raw: &raw,
            callchain: &[],
            rebuilt: false,
        };
        let field = |offset, kind| FieldLayout {
            name: "f".into(),
            declaration: String::new(),
            offset,
            size: 4,
            kind,
        };
        assert_eq!(
            KeySource::Field(field(0, FieldKind::Signed)).read(&event),
            Some(0)
        );
        assert_eq!(
            KeySource::Field(field(4, FieldKind::Signed)).read(&event),
            Some(7)
        );
        assert_eq!(KeySource::Field(field(8, FieldKind::Signed)).read(&event), None);
        assert_eq!(KeySource::Pid.read(&event), Some(10));
        assert_eq!(KeySource::Tid.read(&event), Some(11));
        assert_eq!(KeySource::Cpu.read(&event), Some(3));
        let custom = KeySource::Custom(Box::new(|e| Some(u64::from(e.cpu) << 32 | 9)));
        assert_eq!(custom.read(&event), Some(3 << 32 | 9));
    }
}
