//! `trace` in the TUI: each event's raw line (perf-prof's, by its print fmt) handed over
//! as a line of the session's console log, so the Console view lists the events as they
//! arrive, with its scrollback and search. The text output does not use these: it prints
//! the events the session copies (see `batch::trace_text`).

use std::time::{Duration, SystemTime};

use crate::analyzers::session::Analysis;
use crate::analyzers::text::{WallClock, event_line};
use crate::feeds::Update;
use crate::model::threads::ThreadNames;
use crate::sources::clock::monotonic_ns;
use crate::sources::tracefs::EventPrinter;
use crate::symbols::host::comms::read_proc_comm;
use crate::trace::event::{EventLayout, TraceEvent};

/// Renders events as console lines.
pub struct EventLines {
    printer: EventPrinter,
    layouts: Vec<EventLayout>,
    /// CLOCK_REALTIME − CLOCK_MONOTONIC, to print event times as wall time.
    realtime_offset_ns: i128,
}

impl EventLines {
    pub fn new(analysis: &Analysis) -> Self {
        let real = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.as_nanos() as i128)
            .unwrap_or(0);
        Self {
            printer: analysis.printer().clone(),
            layouts: analysis.layouts().to_vec(),
            realtime_offset_ns: real - i128::from(monotonic_ns()),
        }
    }

    /// The event's line; a thread no COMM record named is named once from /proc.
    pub fn line(&self, event: &TraceEvent<'_>, names: &mut ThreadNames) -> Option<Update> {
        let layout = self.layouts.get(usize::from(event.event.0))?;
        if !names.contains(event.tid)
            && let Some(name) = read_proc_comm(event.pid, event.tid)
        {
            names.set(event.tid, &name);
        }
        let real = (i128::from(event.time_ns) + self.realtime_offset_ns).max(0) as u64;
        let wall = WallClock::local(SystemTime::UNIX_EPOCH + Duration::from_nanos(real));
        let comm_of = |tid: u32| names.name(tid);
        let fields = |e: &TraceEvent<'_>, l: &EventLayout| self.printer.fields_text(e, l);
        let text = event_line(&wall, ' ', event, layout, &comm_of, &fields);
        Some(Update::Console {
            time_ns: Some(event.time_ns),
            bytes: text.into_bytes(),
        })
    }
}
