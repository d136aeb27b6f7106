//! Where a drained record goes: the user-space filter, the analyzer, the recording, the
//! stack resolver; COMM records and first sightings name threads; a new cell of event
//! time hands the analyzer's rows over.

use rustc_hash::FxHashSet;

use crate::analyzers::session::{Analysis, StackChoice};
use crate::feeds::{RecordOnly, RowsUpdate, Update};
use crate::model::threads::ThreadNames;
use crate::sources::perf_event::reader::Ordered;
use crate::sources::perf_event::record::{ContextSwitch, Record};
use crate::symbols::host::comms::read_proc_comm;
use crate::trace::event::{EventIndex, OwnedTraceEvent};
use crate::trace::expr::Filter;

use super::{RECORD_BATCH, ROW_CELL_NS, TraceCounters};
use crate::feeds::host::event_lines::EventLines;
use crate::feeds::host::missed_switch::MissedSwitches;
use crate::feeds::host::raw::{RawItem, raw_item};
use crate::feeds::host::sample_counters::SampleCounters;

/// Where each released record goes: the user-space filter, the analyzer, the recording;
/// COMM records name threads; a new cell of event time hands the analyzer's rows over.
pub(super) struct EventSink<'a> {
    /// See [`TraceSession::abandon`].
    pub(super) abandon: &'a std::sync::atomic::AtomicBool,
    pub(super) analysis: &'a mut Analysis,
    pub(super) filters: &'a [Option<Filter>],
    pub(super) missed_switches: Option<&'a mut MissedSwitches>,
    pub(super) counters: &'a mut TraceCounters,
    pub(super) exit_after: Option<u64>,
    pub(super) cell: &'a mut Option<u64>,
    pub(super) cell_events: &'a mut u64,
    pub(super) recording: bool,
    pub(super) recorded: &'a mut Vec<OwnedTraceEvent>,
    pub(super) names: &'a mut ThreadNames,
    /// Where the callchains and side-band records go when events have stacks.
    pub(super) stack_items: Option<&'a mut Vec<RawItem>>,
    /// Which stacks become samples: with `Offenders` (`take_updates` resolves them) the
    /// events' own samples are left out, with `Kept` they wait for the analyzer's word;
    /// side-band records are kept.
    pub(super) stack_choice: StackChoice,
    pub(super) event_lines: Option<&'a EventLines>,
    pub(super) looked_up: &'a mut FxHashSet<u32>,
    pub(super) last_sighted: &'a mut u32,
    pub(super) out: &'a mut Vec<Update>,
}

impl EventSink<'_> {
    /// `-N COUNT` events were delivered: the rest are dropped unseen, as perf-prof's
    /// (the rings may hold more by the time the count is reached).
    pub(super) fn reached_limit(&self) -> bool {
        self.exit_after.is_some_and(|n| self.counters.events >= n)
    }

    pub(super) fn item(&mut self, item: Ordered<'_>) {
        if self.abandon.load(std::sync::atomic::Ordering::Relaxed) {
            self.counters.dropped += 1;
            return;
        }
        match item {
            Ordered::Record(record) => {
                if self.reached_limit() && matches!(record.record, Record::Sample(_) | Record::Switch(_)) {
                    return;
                }
                if let Record::Switch(switch) = record.record {
                    self.switched(&switch);
                    return;
                }
                if let Some(items) = &mut self.stack_items {
                    let with_stack = match record.record {
                        Record::Sample(s) => {
                            self.stack_choice == StackChoice::Every
                                && !s.callchain.as_words().unwrap_or(&[]).is_empty()
                                && self
                                    .filters
                                    .get(record.event.map_or(usize::MAX, |e| usize::from(e.0)))
                                    .and_then(Option::as_ref)
                                    .is_none_or(|f| record.trace_event().is_some_and(|e| f.matches(&e)))
                        }
                        _ => true,
                    };
                    if with_stack {
                        raw_item(record.record, &mut SampleCounters::default(), false, 0, items);
                    }
                }
                let Some(event) = record.trace_event() else {
                    match &record.record {
                        Record::Comm(c) => {
                            let name = String::from_utf8_lossy(c.comm).into_owned();
                            self.name(c.tid, name);
                        }
                        // A new task goes by its parent's name until it execs (a COMM
                        // record then renames it): perf-prof names the threads of a
                        // `dd`-style burst, which are gone before their table prints.
                        Record::Fork(f) if f.tid != f.ptid || f.pid != f.ppid => {
                            let name = self
                                .names
                                .name(f.ptid)
                                .or_else(|| read_proc_comm(f.pid, f.tid))
                                .or_else(|| read_proc_comm(f.ppid, f.ptid));
                            if let Some(name) = name {
                                self.name(f.tid, name);
                            }
                        }
                        _ => {}
                    }
                    return;
                };
                self.event(event);
                if self.stack_choice == StackChoice::Kept
                    && self.analysis.took_stack()
                    && let Some(items) = &mut self.stack_items
                {
                    raw_item(record.record, &mut SampleCounters::default(), false, 0, items);
                }
            }
            Ordered::Event(event) => {
                if !self.reached_limit() {
                    self.event(event);
                }
            }
            Ordered::Lost(range) => {
                if !self.reached_limit() {
                    self.counters.lost_before_limit += range.count;
                }
                self.analysis
                    .lost(range.start_ns, range.end_ns.unwrap_or(u64::MAX));
            }
        }
    }

    /// A traced event as the rings delivered it.
    pub(super) fn event(&mut self, event: crate::trace::event::TraceEvent<'_>) {
        if let Some(missed) = self.missed_switches.as_deref_mut() {
            missed.saw(&event);
        }
        self.deliver(event);
    }

    /// A switch record: a switch-in stands for the sched_switch the kernel did not
    /// deliver (missed_switch.rs); a switch-out says how the task left.
    pub(super) fn switched(&mut self, switch: &ContextSwitch) {
        let id = switch.sample_id;
        let (Some(time_ns), Some(cpu), Some(pid), Some(tid)) = (id.time, id.cpu, id.pid, id.tid) else {
            return;
        };
        let Some(missed) = self.missed_switches.as_deref_mut() else {
            return;
        };
        if switch.out {
            missed.switched_out(cpu, (pid, tid), switch.preempted);
            return;
        }
        let prev = (switch.other_pid, switch.other_tid);
        self.name_at_first_sight(pid, tid);
        let names = &*self.names;
        let Some(missed) = self.missed_switches.as_deref_mut() else {
            return;
        };
        let Some(rebuilt) = missed.rebuild(time_ns, cpu, prev, (pid, tid), || {
            (names.name(prev.1), names.name(tid))
        }) else {
            return;
        };
        let targets: Vec<EventIndex> = missed.targets(&rebuilt).collect();
        for index in targets {
            self.deliver(rebuilt.event(index));
        }
    }

    /// One event, real or rebuilt: through its user-space filter into the analyzer, the
    /// console lines and the recording.
    pub(super) fn deliver(&mut self, mut event: crate::trace::event::TraceEvent<'_>) {
        if event.tid == u32::MAX {
            // The kernel reports pid/tid -1 for a task whose pid is already gone
            // (its last sched_switch, prev_state=X); the trace entry's common_pid
            // still says who it was.
            if let Some(b) = event.raw.get(4..8) {
                let tid = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                (event.pid, event.tid) = (tid, tid);
            }
        }
        self.name_at_first_sight(event.pid, event.tid);
        if let Some(Some(filter)) = self.filters.get(usize::from(event.event.0))
            && !filter.matches(&event)
        {
            self.counters.filtered += 1;
            return;
        }
        if self.reached_limit() {
            return;
        }
        let cell = event.time_ns - event.time_ns % ROW_CELL_NS;
        if self.cell.is_some_and(|c| c != cell) {
            self.flush_rows();
        }
        *self.cell = Some(cell);
        *self.cell_events += 1;
        self.counters.events += 1;
        if event.rebuilt {
            self.counters.source.rebuilt += 1;
        }
        self.analysis.feed(&event);
        if let Some(lines) = self.event_lines
            && let Some(line) = lines.line(&event, self.names)
        {
            self.out.push(line);
        }
        if self.recording {
            self.recorded.push(OwnedTraceEvent::from_event(&event));
            if self.recorded.len() >= RECORD_BATCH {
                self.flush_recorded();
            }
        }
    }

    pub(super) fn name(&mut self, tid: u32, name: String) {
        self.names.set(tid, &name);
        self.out.push(Update::ThreadName { tid, name });
    }

    /// A thread that was there before the session (no FORK or COMM record names it) is
    /// named from /proc at its first event, while it still runs: by the time its table
    /// prints it may have exited. Once per thread, bounded as the name table.
    pub(super) fn name_at_first_sight(&mut self, pid: u32, tid: u32) {
        // Events come in runs of one thread's: the last one asked about is known.
        if tid == *self.last_sighted {
            return;
        }
        *self.last_sighted = tid;
        if tid == 0 || self.names.contains(tid) || self.looked_up.contains(&tid) {
            return;
        }
        if self.looked_up.len() >= crate::model::threads::MAX_THREADS {
            self.looked_up.clear();
        }
        self.looked_up.insert(tid);
        // A thread already gone (its FORK record lost with a full ring) goes by its
        // process's name rather than `<...>`.
        if let Some(name) = read_proc_comm(pid, tid).or_else(|| self.names.name(pid)) {
            self.name(tid, name);
        }
    }

    /// The current cell's rows, handed over.
    pub(super) fn flush_rows(&mut self) {
        let rows = self.analysis.take_rows();
        let events = std::mem::take(self.cell_events);
        if rows.is_empty() && events == 0 {
            return;
        }
        self.out.push(Update::Rows(RowsUpdate {
            time_ns: *self.cell,
            rows,
            events,
        }));
    }

    pub(super) fn flush_recorded(&mut self) {
        if !self.recorded.is_empty() {
            self.out
                .push(Update::Record(RecordOnly::Events(std::mem::take(self.recorded))));
        }
    }
}
