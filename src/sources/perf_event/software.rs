//! perf's software events by the names perf and perf-prof give them (`cpu-clock`,
//! `page-faults`, `cs`, …), as events of a tracepoint session: selectors spell them
//! `software:NAME` (a bare `NAME` is rewritten to it), their layout has no fields, and each
//! record stands for `period` units of the event (ns for the clocks, else one event).

use perf_event_open_sys::bindings as b;

use crate::trace::event::EventLayout;

/// The `system` of a software event's selector and layout.
pub const SOFTWARE_SYSTEM: &str = "software";

/// A clock sample per this many ns: the counts are exact to a millisecond.
const CLOCK_PERIOD_NS: u64 = 1_000_000;

/// One software event: its `PERF_COUNT_SW_*` config and how many units one record is.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SoftwareEvent {
    pub config: u32,
    /// `sample_period`: one record per this many events (ns for the clocks).
    pub period: u64,
}

/// The software event perf names `name`, if any.
pub fn software_event(name: &str) -> Option<SoftwareEvent> {
    let (config, period) = match name {
        "cpu-clock" => (b::PERF_COUNT_SW_CPU_CLOCK, CLOCK_PERIOD_NS),
        "task-clock" => (b::PERF_COUNT_SW_TASK_CLOCK, CLOCK_PERIOD_NS),
        "page-faults" | "faults" => (b::PERF_COUNT_SW_PAGE_FAULTS, 1),
        "minor-faults" => (b::PERF_COUNT_SW_PAGE_FAULTS_MIN, 1),
        "major-faults" => (b::PERF_COUNT_SW_PAGE_FAULTS_MAJ, 1),
        "context-switches" | "cs" => (b::PERF_COUNT_SW_CONTEXT_SWITCHES, 1),
        "cpu-migrations" | "migrations" => (b::PERF_COUNT_SW_CPU_MIGRATIONS, 1),
        "alignment-faults" => (b::PERF_COUNT_SW_ALIGNMENT_FAULTS, 1),
        "emulation-faults" => (b::PERF_COUNT_SW_EMULATION_FAULTS, 1),
        _ => return None,
    };
    Some(SoftwareEvent { config, period })
}

/// The software event a layout stands for (`software:NAME`).
pub fn software_event_of(layout: &EventLayout) -> Option<SoftwareEvent> {
    (layout.system == SOFTWARE_SYSTEM)
        .then(|| software_event(&layout.name))
        .flatten()
}

/// A software event's layout: no fields, no print fmt; its id is its config (a recorded
/// session keys event types by layout, never by this id).
pub fn software_layout(name: &str) -> Option<EventLayout> {
    let event = software_event(name)?;
    Some(EventLayout {
        system: SOFTWARE_SYSTEM.into(),
        name: name.into(),
        id: u64::from(event.config),
        fields: Vec::new(),
        print_fmt: String::new(),
    })
}

/// `-e` text with every bare software event name (`page-faults`) spelled as a selector
/// (`software:page-faults`); other selectors are kept as written.
pub fn spell_software_selectors(text: &str) -> String {
    if !text
        .split(',')
        .any(|piece| software_event(piece.trim()).is_some())
    {
        return text.to_string();
    }
    text.split(',')
        .map(|piece| match software_event(piece.trim()) {
            Some(_) => format!("{SOFTWARE_SYSTEM}:{}", piece.trim()),
            None => piece.to_string(),
        })
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_names_become_software_selectors() {
        assert_eq!(
            spell_software_selectors("cpu-clock,sched:sched_switch/prev_pid>0/"),
            "software:cpu-clock,sched:sched_switch/prev_pid>0/"
        );
        assert_eq!(
            spell_software_selectors("sched:sched_switch/a,b/"),
            "sched:sched_switch/a,b/"
        );
        let layout = software_layout("page-faults").unwrap();
        assert_eq!(layout.full_name(), "software:page-faults");
        assert_eq!(software_event_of(&layout).map(|e| e.period), Some(1));
        assert_eq!(
            software_event("cpu-clock").map(|e| e.period),
            Some(CLOCK_PERIOD_NS)
        );
        assert!(software_event("sched_switch").is_none());
    }
}
