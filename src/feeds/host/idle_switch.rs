//! Switches away from a CPU's idle task, rebuilt from switch records.
//!
//! This kernel runs no perf tracepoint handler while a CPU's idle task is current (ftrace
//! sees `<idle>` events; a perf event on the same tracepoint gets none of them). So
//! `sched:sched_switch` arrives when a task is switched *out*, but a CPU leaving idle for a
//! task says nothing — and every analysis that follows switches goes wrong: oncpu credits a
//! task woken on an idle CPU with the whole idle time before it, task-state never sees a
//! timer-woken sleeper's sleep end, rundelay stretches a delay to some later switch.
//!
//! The switch record (`PERF_RECORD_SWITCH_CPU_WIDE`) of the task coming in does arrive,
//! with the time, CPU and thread of that switch. From it this module rebuilds the event
//! ftrace shows, `prev_comm=swapper/N prev_pid=0 prev_prio=120 prev_state=R ==>
//! next_comm=NAME next_pid=TID next_prio=PRIO` (the name from the session's thread names,
//! the priority from /proc once per thread), and the session feeds it like any other event
//! — through each sched_switch event's own filter, compiled in user space.
//!
//! Whether the kernel delivers them differs by CPU here (CPU 0 does, CPU 1 does not) and
//! may differ by moment, so no switch is taken as missing on trust: a delivered switch
//! away from idle comes just before the switch record of the same switch on its CPU, and
//! that record then rebuilds nothing — no switch is seen twice.

use rustc_hash::FxHashMap;

use crate::trace::event::{EventIndex, EventLayout, FieldLayout, TraceEvent};
use crate::trace::expr::Filter;

/// The idle task's priority and state as the kernel prints them (`prev_prio=120`,
/// `prev_state=R`).
const IDLE_PRIO: i64 = 120;
/// The priority of a thread /proc no longer has: the default nice-0 one.
const DEFAULT_PRIO: i64 = 120;

/// One opened `sched:sched_switch` event: where its rebuilt copies go and the filter they
/// must pass (the kernel applied it to the real ones).
struct SwitchEvent {
    index: EventIndex,
    filter: Option<Filter>,
}

/// The fields a rebuilt record writes.
struct SwitchFields {
    common_type: FieldLayout,
    prev_comm: FieldLayout,
    prev_pid: FieldLayout,
    prev_prio: FieldLayout,
    prev_state: FieldLayout,
    next_comm: FieldLayout,
    next_pid: FieldLayout,
    next_prio: FieldLayout,
}

/// A rebuilt switch away from idle, ready to be fed as `TraceEvent`s.
pub struct Rebuilt {
    pub time_ns: u64,
    pub cpu: u32,
    pub raw: Vec<u8>,
}

impl Rebuilt {
    /// The event as the session feeds it: the idle task (pid 0) was current, as the
    /// kernel's `sample_id` would say for a real one.
    pub fn event(&self, index: EventIndex) -> TraceEvent<'_> {
        TraceEvent {
            time_ns: self.time_ns,
            cpu: self.cpu,
            pid: 0,
            tid: 0,
            event: index,
            raw: &self.raw,
            callchain: &[],
        }
    }
}

pub struct IdleSwitches {
    events: Vec<SwitchEvent>,
    fields: SwitchFields,
    id: u64,
    size: usize,
    /// By CPU: the thread a delivered switch away from idle put on it, until that
    /// switch's own record comes by.
    delivered: Vec<Option<u32>>,
    prio: FxHashMap<u32, i64>,
}

impl IdleSwitches {
    /// For the session's `sched:sched_switch` events (index, layout, the filter the kernel
    /// applies). `Ok(None)` without any; an error names a filter that cannot be applied in
    /// user space (the rebuilt events would pass what the kernel filters out).
    pub fn new<'a>(
        events: impl IntoIterator<Item = (EventIndex, &'a EventLayout, Option<&'a str>)>,
    ) -> anyhow::Result<Option<IdleSwitches>> {
        let mut found = Vec::new();
        let mut layout = None;
        for (index, event_layout, filter) in events {
            if event_layout.system != "sched" || event_layout.name != "sched_switch" {
                continue;
            }
            let filter = filter
                .map(|text| {
                    Filter::compile(text, event_layout).map_err(|e| {
                        anyhow::anyhow!(
                            "sched:sched_switch: the filter '{text}' does not compile in user space ({e}); \
                             on this kernel switches away from idle are rebuilt and must pass it there"
                        )
                    })
                })
                .transpose()?;
            found.push(SwitchEvent { index, filter });
            layout.get_or_insert(event_layout);
        }
        let Some(layout) = layout else {
            return Ok(None);
        };
        let field = |name: &str| {
            layout
                .field(name)
                .cloned()
                .ok_or_else(|| anyhow::anyhow!("sched:sched_switch has no field {name}"))
        };
        let fields = SwitchFields {
            common_type: field("common_type")?,
            prev_comm: field("prev_comm")?,
            prev_pid: field("prev_pid")?,
            prev_prio: field("prev_prio")?,
            prev_state: field("prev_state")?,
            next_comm: field("next_comm")?,
            next_pid: field("next_pid")?,
            next_prio: field("next_prio")?,
        };
        let size = layout.fields.iter().map(|f| f.offset + f.size).max().unwrap_or(0);
        Ok(Some(IdleSwitches {
            events: found,
            fields,
            id: layout.id,
            size,
            delivered: Vec::new(),
            prio: FxHashMap::default(),
        }))
    }

    /// A delivered event went by: a switch away from idle needs no rebuilding.
    pub fn saw(&mut self, event: &TraceEvent<'_>) {
        if !self.events.iter().any(|e| e.index == event.event) {
            return;
        }
        let cpu = event.cpu as usize;
        if self.delivered.len() <= cpu {
            self.delivered.resize(cpu + 1, None);
        }
        let raw = event.raw;
        self.delivered[cpu] = match self.fields.prev_pid.read_i64(raw) {
            Some(0) => self
                .fields
                .next_pid
                .read_i64(raw)
                .and_then(|p| u32::try_from(p).ok()),
            _ => None,
        };
    }

    /// The switch away from idle a switch-in record stands for, if it is one and the kernel
    /// did not deliver it: `next` is the thread switched in, named `name`.
    pub fn rebuild(&mut self, time_ns: u64, cpu: u32, next: u32, name: Option<&str>) -> Option<Rebuilt> {
        let delivered = self.delivered.get_mut(cpu as usize).and_then(Option::take);
        if next == 0 || delivered == Some(next) {
            return None;
        }
        let prio = *self.prio.entry(next).or_insert_with(|| proc_prio(next));
        if self.prio.len() > crate::model::threads::MAX_THREADS {
            self.prio.clear();
        }
        let mut raw = vec![0u8; self.size];
        let f = &self.fields;
        write_int(&mut raw, &f.common_type, self.id as i64);
        write_str(&mut raw, &f.prev_comm, &format!("swapper/{cpu}"));
        write_int(&mut raw, &f.prev_pid, 0);
        write_int(&mut raw, &f.prev_prio, IDLE_PRIO);
        write_int(&mut raw, &f.prev_state, 0);
        write_str(&mut raw, &f.next_comm, name.unwrap_or("<...>"));
        write_int(&mut raw, &f.next_pid, i64::from(next));
        write_int(&mut raw, &f.next_prio, prio);
        Some(Rebuilt { time_ns, cpu, raw })
    }

    /// The events `rebuilt` is fed as: each sched_switch event whose filter it passes.
    pub fn targets<'a>(&'a self, rebuilt: &'a Rebuilt) -> impl Iterator<Item = EventIndex> + 'a {
        self.events
            .iter()
            .filter(|e| {
                e.filter
                    .as_ref()
                    .is_none_or(|f| f.matches(&rebuilt.event(e.index)))
            })
            .map(|e| e.index)
    }
}

/// The kernel's priority of a thread (`/proc/TID/stat` field 18 is prio − 100).
fn proc_prio(tid: u32) -> i64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{tid}/stat")) else {
        return DEFAULT_PRIO;
    };
    // The comm (field 2) may hold spaces and parentheses: count from its closing one.
    stat.rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().nth(15))
        .and_then(|p| p.parse::<i64>().ok())
        .map_or(DEFAULT_PRIO, |p| p + 100)
}

fn write_int(raw: &mut [u8], field: &FieldLayout, value: i64) {
    let bytes = value.to_le_bytes();
    let size = field.size.min(8);
    if let Some(slot) = raw.get_mut(field.offset..field.offset + size) {
        slot.copy_from_slice(&bytes[..size]);
    }
}

/// A `char[N]` field, NUL-padded and cut to leave its NUL.
fn write_str(raw: &mut [u8], field: &FieldLayout, text: &str) {
    let len = text.len().min(field.size.saturating_sub(1));
    if let Some(slot) = raw.get_mut(field.offset..field.offset + len) {
        slot.copy_from_slice(&text.as_bytes()[..len]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::event::FieldKind;

    fn int(name: &str, offset: usize, size: usize) -> FieldLayout {
        FieldLayout {
            name: name.into(),
            declaration: format!("int {name}"),
            offset,
            size,
            kind: FieldKind::Signed,
        }
    }

    fn chars(name: &str, offset: usize) -> FieldLayout {
        FieldLayout {
            name: name.into(),
            declaration: format!("char {name}[16]"),
            offset,
            size: 16,
            kind: FieldKind::CharArray,
        }
    }

    /// The 6.18 layout of sched_switch.
    fn layout() -> EventLayout {
        EventLayout {
            system: "sched".into(),
            name: "sched_switch".into(),
            id: 372,
            fields: vec![
                FieldLayout {
                    kind: FieldKind::Unsigned,
                    ..int("common_type", 0, 2)
                },
                int("common_pid", 4, 4),
                chars("prev_comm", 8),
                int("prev_pid", 24, 4),
                int("prev_prio", 28, 4),
                int("prev_state", 32, 8),
                chars("next_comm", 40),
                int("next_pid", 56, 4),
                int("next_prio", 60, 4),
            ],
            print_fmt: String::new(),
        }
    }

    #[test]
    fn a_switch_in_from_idle_becomes_the_event_ftrace_shows() {
        let layout = layout();
        let mut idle = IdleSwitches::new([(EventIndex(2), &layout, None)])
            .unwrap()
            .unwrap();
        let tid = std::process::id();
        let rebuilt = idle
            .rebuild(1_000, 1, tid, Some("a-very-long-thread-name"))
            .unwrap();
        let event = rebuilt.event(EventIndex(2));
        let read = |name: &str| layout.field(name).unwrap().read_i64(event.raw).unwrap();
        let text = |name: &str| {
            layout
                .field(name)
                .unwrap()
                .read_str(event.raw)
                .unwrap()
                .into_owned()
        };
        assert_eq!(read("common_type"), 372);
        assert_eq!(
            (text("prev_comm").as_str(), read("prev_pid"), read("prev_prio")),
            ("swapper/1", 0, 120)
        );
        assert_eq!(read("prev_state"), 0);
        assert_eq!(text("next_comm"), "a-very-long-thr", "cut to TASK_COMM_LEN - 1");
        assert_eq!(read("next_pid"), i64::from(tid));
        // This test runs at nice 0 unless its runner changed that: /proc says which.
        assert_eq!(read("next_prio"), proc_prio(tid));
        assert!((100..140).contains(&read("next_prio")));
        assert_eq!((event.time_ns, event.cpu, event.tid), (1_000, 1, 0));
        assert_eq!(idle.targets(&rebuilt).collect::<Vec<_>>(), [EventIndex(2)]);
        assert!(
            idle.rebuild(1_000, 1, 0, None).is_none(),
            "idle to idle is no switch"
        );
    }

    #[test]
    fn each_switch_event_gets_the_copies_its_filter_passes() {
        let layout = layout();
        let mut idle = IdleSwitches::new([
            (EventIndex(0), &layout, Some("prev_pid>0")),
            (EventIndex(1), &layout, Some("next_pid==42")),
            (EventIndex(3), &layout, None),
        ])
        .unwrap()
        .unwrap();
        let rebuilt = idle.rebuild(5, 0, 42, None).unwrap();
        assert_eq!(
            idle.targets(&rebuilt).collect::<Vec<_>>(),
            [EventIndex(1), EventIndex(3)]
        );
        let other = idle.rebuild(6, 0, 43, None).unwrap();
        assert_eq!(idle.targets(&other).collect::<Vec<_>>(), [EventIndex(3)]);
    }

    #[test]
    fn a_switch_the_kernel_delivered_is_not_rebuilt_and_only_that_one() {
        let layout = layout();
        let mut idle = IdleSwitches::new([(EventIndex(0), &layout, None)])
            .unwrap()
            .unwrap();
        // A delivered sample of the same shape on CPU 0: idle to 42.
        let delivered = idle.rebuild(7, 0, 42, None).unwrap();
        idle.saw(&delivered.event(EventIndex(0)));
        assert!(idle.rebuild(8, 1, 42, None).is_some(), "another CPU's switch");
        assert!(idle.rebuild(8, 0, 42, None).is_none(), "its own record");
        assert!(
            idle.rebuild(9, 0, 42, None).is_some(),
            "the next switch was not delivered"
        );
    }

    #[test]
    fn no_switch_event_no_rebuilding() {
        let mut other = layout();
        other.name = "sched_wakeup".into();
        assert!(
            IdleSwitches::new([(EventIndex(0), &other, None)])
                .unwrap()
                .is_none()
        );
    }
}
