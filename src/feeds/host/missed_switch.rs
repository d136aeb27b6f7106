//! Switches the kernel did not deliver, rebuilt from switch records.
//!
//! This kernel runs no perf tracepoint handler while a CPU's idle task is current (ftrace
//! sees `<idle>` events; a perf event on the same tracepoint gets none of them), and now
//! and then it drops another task's `sched:sched_switch` too (seen on an idle-ish CPU: a
//! daemon's switch to a woken sleeper, between two it delivered). Every analysis that
//! follows switches then goes wrong: oncpu credits the task switched in with the time
//! before it, task-state never sees a timer-woken sleeper's sleep end, rundelay stretches
//! a delay to some later switch.
//!
//! The switch records (`PERF_RECORD_SWITCH_CPU_WIDE`) do arrive: the one of the task
//! going out (whether it was preempted) and the one of the task coming in, with the time,
//! CPU and both threads of that switch. From them this module rebuilds the event ftrace
//! shows — `prev_comm=NAME prev_pid=TID prev_prio=PRIO prev_state=S|R ==> next_comm=NAME
//! next_pid=TID next_prio=PRIO` (`swapper/N`, pid 0 for the idle task; the names from the
//! session's thread names, the priorities from /proc once per thread; `R` for a preempted
//! task and the idle task, else `S`: the record says the task blocked, not how) — and
//! the session feeds it like any other event, through each sched_switch event's own
//! filter, compiled in user space.
//!
//! Which switches the kernel delivers differs by CPU (here CPU 0 delivers switches away
//! from idle, CPU 1 does not) and by moment, so no switch is taken as missing on trust: a
//! delivered switch comes just before the switch-in record of the same switch on its CPU,
//! and that record then rebuilds nothing — no switch is seen twice.

use rustc_hash::FxHashMap;

use crate::trace::event::{EventIndex, EventLayout, FieldLayout, TraceEvent};
use crate::trace::expr::Filter;

/// The idle task's priority as the kernel prints it (`prev_prio=120`).
const IDLE_PRIO: i64 = 120;
/// `prev_state`: still runnable (`R`: preempted, or the idle task).
const TASK_RUNNING: i64 = 0;
/// `prev_state`: blocked (`S`), as far as a switch record can tell.
const TASK_INTERRUPTIBLE: i64 = 1;
/// `prev_state`: the task's last switch, it has exited (`X`).
const EXIT_DEAD: i64 = 0x10;
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

/// A rebuilt switch, ready to be fed as `TraceEvent`s.
pub struct Rebuilt {
    pub time_ns: u64,
    pub cpu: u32,
    /// The task switched out (pid, tid): the tracepoint runs in its context.
    pub prev: (u32, u32),
    pub raw: Vec<u8>,
}

impl Rebuilt {
    /// The event as the session feeds it: the task switched out was current, as the
    /// kernel's `sample_id` would say for a real one.
    pub fn event(&self, index: EventIndex) -> TraceEvent<'_> {
        TraceEvent {
            time_ns: self.time_ns,
            cpu: self.cpu,
            pid: self.prev.0,
            tid: self.prev.1,
            event: index,
            raw: &self.raw,
            callchain: &[],
            rebuilt: true,
        }
    }
}

/// One side of a switch: (pid, tid).
pub type SwitchTask = (u32, u32);

pub struct MissedSwitches {
    events: Vec<SwitchEvent>,
    fields: SwitchFields,
    id: u64,
    size: usize,
    /// By CPU: the threads (prev, next) of the last delivered switch, until that switch's
    /// own switch-in record comes by.
    delivered: Vec<Option<(u32, u32)>>,
    /// By CPU: the task a switch-out record said left, and whether it was preempted.
    left: Vec<Option<(SwitchTask, bool)>>,
    prio: FxHashMap<u32, i64>,
}

impl MissedSwitches {
    /// For the session's `sched:sched_switch` events (index, layout, the filter the kernel
    /// applies). `Ok(None)` without any; an error names a filter that cannot be applied in
    /// user space (the rebuilt events would pass what the kernel filters out).
    pub fn new<'a>(
        events: impl IntoIterator<Item = (EventIndex, &'a EventLayout, Option<&'a str>)>,
    ) -> anyhow::Result<Option<MissedSwitches>> {
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
                             on this kernel switches it does not deliver are rebuilt and must pass it there"
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
        Ok(Some(MissedSwitches {
            events: found,
            fields,
            id: layout.id,
            size,
            delivered: Vec::new(),
            left: Vec::new(),
            prio: FxHashMap::default(),
        }))
    }

    /// A delivered event went by: its switch needs no rebuilding.
    pub fn saw(&mut self, event: &TraceEvent<'_>) {
        if !self.events.iter().any(|e| e.index == event.event) {
            return;
        }
        let tid = |field: &FieldLayout| field.read_i64(event.raw).and_then(|p| u32::try_from(p).ok());
        let switch = tid(&self.fields.prev_pid).zip(tid(&self.fields.next_pid));
        *slot(&mut self.delivered, event.cpu) = switch;
    }

    /// A switch-out record: `task` left `cpu`, `preempted` or blocked.
    pub fn switched_out(&mut self, cpu: u32, task: SwitchTask, preempted: bool) {
        *slot(&mut self.left, cpu) = Some((task, preempted));
    }

    /// The switch a switch-in record stands for — `prev` left `cpu` for `next` — if the
    /// kernel did not deliver it; `names` names the threads (prev's, next's), asked only
    /// then.
    pub fn rebuild(
        &mut self,
        time_ns: u64,
        cpu: u32,
        prev: SwitchTask,
        next: SwitchTask,
        names: impl FnOnce() -> (Option<String>, Option<String>),
    ) -> Option<Rebuilt> {
        let delivered = slot(&mut self.delivered, cpu).take();
        let left = slot(&mut self.left, cpu).take();
        // A task that has exited is -1 in the switch-in record (the kernel can no longer
        // name it): it is the one whose switch-out record came last on this CPU, if that
        // record could still name it. Otherwise nobody can: the switch was delivered (the
        // event names it) or it is not rebuilt.
        let exited = prev.1 == u32::MAX;
        let prev = match (exited, left) {
            (false, _) => prev,
            (true, Some((task, _))) if task.1 != u32::MAX => task,
            (true, _) => return None,
        };
        if prev.1 == next.1 || delivered == Some((prev.1, next.1)) {
            return None;
        }
        let prev_state = match left {
            _ if exited => EXIT_DEAD,
            _ if prev.1 == 0 => TASK_RUNNING,
            Some((task, true)) if task.1 == prev.1 => TASK_RUNNING,
            _ => TASK_INTERRUPTIBLE,
        };
        let prev_prio = self.prio_of(prev.1);
        let next_prio = self.prio_of(next.1);
        let names = names();
        let name = |tid: u32, name: &Option<String>| match tid {
            0 => format!("swapper/{cpu}"),
            _ => name.as_deref().unwrap_or("<...>").to_string(),
        };
        let mut raw = vec![0u8; self.size];
        let f = &self.fields;
        write_int(&mut raw, &f.common_type, self.id as i64);
        write_str(&mut raw, &f.prev_comm, &name(prev.1, &names.0));
        write_int(&mut raw, &f.prev_pid, i64::from(prev.1));
        write_int(&mut raw, &f.prev_prio, prev_prio);
        write_int(&mut raw, &f.prev_state, prev_state);
        write_str(&mut raw, &f.next_comm, &name(next.1, &names.1));
        write_int(&mut raw, &f.next_pid, i64::from(next.1));
        write_int(&mut raw, &f.next_prio, next_prio);
        Some(Rebuilt {
            time_ns,
            cpu,
            prev,
            raw,
        })
    }

    /// A thread's priority (the idle task's, or /proc's once per thread).
    fn prio_of(&mut self, tid: u32) -> i64 {
        if tid == 0 {
            return IDLE_PRIO;
        }
        if self.prio.len() > crate::model::threads::MAX_THREADS {
            self.prio.clear();
        }
        *self.prio.entry(tid).or_insert_with(|| proc_prio(tid))
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

/// `cpu`'s slot of a per-CPU list, grown as needed.
fn slot<T: Default + Clone>(list: &mut Vec<T>, cpu: u32) -> &mut T {
    let cpu = cpu as usize;
    if list.len() <= cpu {
        list.resize(cpu + 1, T::default());
    }
    &mut list[cpu]
}

/// The kernel's priority of a thread (`/proc/TID/stat` field 18 is prio − 100).
fn proc_prio(tid: u32) -> i64 {
    let Ok(stat) = crate::input::read_system_text(format!("/proc/{tid}/stat")) else {
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
    /// The session's one sched_switch event (index 0, no filter).
    fn one_switch_event(layout: &EventLayout) -> MissedSwitches {
        MissedSwitches::new([(EventIndex(0), layout, None)])
            .unwrap()
            .unwrap()
    }

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
        let mut missed = MissedSwitches::new([(EventIndex(2), &layout, None)])
            .unwrap()
            .unwrap();
        let tid = std::process::id();
        let rebuilt = missed
            .rebuild(1_000, 1, (0, 0), (tid, tid), || {
                (None, Some("a-very-long-thread-name".into()))
            })
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
        assert_eq!(read("prev_state"), TASK_RUNNING);
        assert_eq!(text("next_comm"), "a-very-long-thr", "cut to TASK_COMM_LEN - 1");
        assert_eq!(read("next_pid"), i64::from(tid));
        // This test runs at nice 0 unless its runner changed that: /proc says which.
        assert_eq!(read("next_prio"), proc_prio(tid));
        assert!((100..140).contains(&read("next_prio")));
        assert_eq!((event.time_ns, event.cpu, event.tid), (1_000, 1, 0));
        assert_eq!(missed.targets(&rebuilt).collect::<Vec<_>>(), [EventIndex(2)]);
        assert!(
            missed
                .rebuild(1_000, 1, (0, 0), (0, 0), || (None, None))
                .is_none(),
            "idle to idle is no switch"
        );
    }

    /// A task's switch the kernel dropped: the task going out is named, its state is
    /// what its switch-out record says (preempted: R, else S), the event is in its context.
    #[test]
    fn a_dropped_switch_between_tasks_is_rebuilt_with_the_state_its_switch_out_record_gives() {
        let layout = layout();
        let mut missed = one_switch_event(&layout);
        let state = |missed: &mut MissedSwitches, preempted: Option<bool>| {
            if let Some(preempted) = preempted {
                missed.switched_out(0, (103, 103), preempted);
            }
            let rebuilt = missed
                .rebuild(5, 0, (100, 103), (7, 42), || {
                    (Some("tokio-rt-worker".into()), Some("sleeper".into()))
                })
                .unwrap();
            let event = rebuilt.event(EventIndex(0));
            let read = |name: &str| layout.field(name).unwrap().read_i64(event.raw).unwrap();
            let prev_comm = layout
                .field("prev_comm")
                .unwrap()
                .read_str(event.raw)
                .unwrap()
                .into_owned();
            assert_eq!(
                (prev_comm.as_str(), read("prev_pid"), read("next_pid")),
                ("tokio-rt-worker", 103, 42)
            );
            assert_eq!(
                (event.pid, event.tid),
                (100, 103),
                "in the context of the task going out"
            );
            read("prev_state")
        };
        assert_eq!(state(&mut missed, Some(true)), TASK_RUNNING);
        assert_eq!(state(&mut missed, Some(false)), TASK_INTERRUPTIBLE);
        assert_eq!(state(&mut missed, None), TASK_INTERRUPTIBLE, "no record: blocked");
    }

    /// The switch-in record after an exiting task's last switch names it -1: it is the
    /// task whose switch-out record came last on the CPU, and a switch the kernel did
    /// deliver is not rebuilt again for want of that name.
    #[test]
    fn an_exited_tasks_switch_is_named_by_its_switch_out_record() {
        let layout = layout();
        let mut missed = one_switch_event(&layout);
        let dead = (u32::MAX, u32::MAX);
        // Delivered: the kernel's event named the task; the record's -1 matches it.
        let delivered = missed.rebuild(8, 1, (200, 201), (0, 0), || (None, None)).unwrap();
        missed.saw(&delivered.event(EventIndex(0)));
        missed.switched_out(1, (200, 201), false);
        assert!(missed.rebuild(9, 1, dead, (0, 0), || (None, None)).is_none());
        // Dropped: rebuilt as the task's exit (X), in its context, under its name.
        missed.switched_out(1, (200, 201), false);
        let rebuilt = missed
            .rebuild(10, 1, dead, (0, 0), || (Some("worker".into()), None))
            .unwrap();
        let event = rebuilt.event(EventIndex(0));
        let read = |name: &str| layout.field(name).unwrap().read_i64(event.raw).unwrap();
        assert_eq!((read("prev_pid"), read("prev_state")), (201, EXIT_DEAD));
        assert_eq!((event.pid, event.tid), (200, 201));
        // Neither the event nor a switch-out record that names it: nothing rebuilt.
        assert!(missed.rebuild(11, 1, dead, (7, 7), || (None, None)).is_none());
        missed.switched_out(1, dead, false);
        assert!(missed.rebuild(12, 1, dead, (7, 7), || (None, None)).is_none());
    }

    #[test]
    fn each_switch_event_gets_the_copies_its_filter_passes() {
        let layout = layout();
        let mut missed = MissedSwitches::new([
            (EventIndex(0), &layout, Some("prev_pid>0")),
            (EventIndex(1), &layout, Some("next_pid==42")),
            (EventIndex(3), &layout, None),
        ])
        .unwrap()
        .unwrap();
        let rebuilt = missed.rebuild(5, 0, (0, 0), (42, 42), || (None, None)).unwrap();
        assert_eq!(
            missed.targets(&rebuilt).collect::<Vec<_>>(),
            [EventIndex(1), EventIndex(3)]
        );
        let other = missed.rebuild(6, 0, (9, 9), (43, 43), || (None, None)).unwrap();
        assert_eq!(
            missed.targets(&other).collect::<Vec<_>>(),
            [EventIndex(0), EventIndex(3)]
        );
    }

    #[test]
    fn a_switch_the_kernel_delivered_is_not_rebuilt_and_only_that_one() {
        let layout = layout();
        let mut missed = one_switch_event(&layout);
        let (idle, task) = ((0, 0), (42, 42));
        // A delivered sample of the same shape on CPU 0: idle to 42.
        let delivered = missed.rebuild(7, 0, idle, task, || (None, None)).unwrap();
        missed.saw(&delivered.event(EventIndex(0)));
        assert!(
            missed.rebuild(8, 1, idle, task, || (None, None)).is_some(),
            "another CPU's switch"
        );
        assert!(
            missed.rebuild(8, 0, idle, task, || (None, None)).is_none(),
            "its own record"
        );
        assert!(
            missed.rebuild(9, 0, idle, task, || (None, None)).is_some(),
            "the next switch was not delivered"
        );
        // 42 to 43 delivered; the record of 42 to 44 is another switch.
        let delivered = missed.rebuild(10, 0, task, (43, 43), || (None, None)).unwrap();
        missed.saw(&delivered.event(EventIndex(0)));
        assert!(missed.rebuild(11, 0, task, (44, 44), || (None, None)).is_some());
    }

    #[test]
    fn no_switch_event_no_rebuilding() {
        let mut other = layout();
        other.name = "sched_wakeup".into();
        assert!(
            MissedSwitches::new([(EventIndex(0), &other, None)])
                .unwrap()
                .is_none()
        );
    }
}
