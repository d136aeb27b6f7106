//! multi-trace `--detail[=samecpu|samepid|sametid]`: every event of the session (the
//! `untraced` ones too) is kept on a timeline while a first event waits for its second,
//! so an over-threshold pair is listed with the events that happened between its two —
//! what the CPU or the task did meanwhile, perf-prof's step after `--than`.
//!
//! The timeline keeps what a pending pair may still need: events newer than the oldest
//! pending first event, at most [`TIMELINE_MAX`] of them (the oldest go first, counted).

use std::collections::VecDeque;

use crate::trace::event::{OwnedTraceEvent, TraceEvent};

/// Events the timeline holds at most.
pub const TIMELINE_MAX: usize = 1 << 16;

/// Pushes between two trims by the oldest pending event.
pub const TRIM_EVERY: usize = 256;

/// Which of the events between two a detail dump shows.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum DetailFilter {
    /// Every event.
    All,
    /// Events on the CPU of either event of the pair.
    SameCpu,
    /// Events of the process of either event.
    SamePid,
    /// Events of the thread of either event.
    SameTid,
}

impl DetailFilter {
    /// perf-prof's `--detail=LIST` (empty: every event). Its other items (`-N`, `+N`,
    /// `hide<N`, `1`, `2`, `samekey`) are refused by name rather than ignored.
    pub fn parse(list: &str) -> Result<DetailFilter, String> {
        let mut filter = DetailFilter::All;
        for item in list.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            filter = match item {
                "samecpu" => DetailFilter::SameCpu,
                "samepid" => DetailFilter::SamePid,
                "sametid" => DetailFilter::SameTid,
                other => {
                    return Err(format!(
                        "--detail={other}: perfscope's --detail takes samecpu, samepid or sametid \
                         (perf-prof's -N, +N, hide<N, 1, 2 and samekey are not supported yet)"
                    ));
                }
            };
        }
        Ok(filter)
    }

    fn shows(self, event: &OwnedTraceEvent, first: &OwnedTraceEvent, second: &TraceEvent<'_>) -> bool {
        match self {
            DetailFilter::All => true,
            DetailFilter::SameCpu => event.cpu == first.cpu || event.cpu == second.cpu,
            DetailFilter::SamePid => event.pid == first.pid || event.pid == second.pid,
            DetailFilter::SameTid => event.tid == first.tid || event.tid == second.tid,
        }
    }
}

pub struct Timeline {
    filter: DetailFilter,
    events: VecDeque<OwnedTraceEvent>,
    /// Events pushed out by [`TIMELINE_MAX`] while still maybe needed.
    pub dropped: u64,
    /// Events kept since the start (when to trim).
    pushes: usize,
}

impl Timeline {
    pub fn new(filter: DetailFilter) -> Self {
        Timeline {
            filter,
            events: VecDeque::new(),
            dropped: 0,
            pushes: 0,
        }
    }

    /// Keep `event` while a first event is `pending` (one pushed after it became pending is
    /// kept from then on), the oldest going beyond the cap; with nothing pending no pair
    /// can need any event.
    pub fn push(&mut self, event: &TraceEvent<'_>, pending: bool) {
        if !pending {
            self.events.clear();
            return;
        }
        if self.events.len() >= TIMELINE_MAX {
            self.events.pop_front();
            self.dropped += 1;
        }
        self.events.push_back(OwnedTraceEvent::from_event(event));
        self.pushes = self.pushes.wrapping_add(1);
    }

    /// Forget what is older than `oldest_needed_ns` (no pending first event is older).
    /// [`Timeline::between`] reads by time, so trimming late changes no listing: the
    /// caller trims every [`TRIM_EVERY`] pushes, not per event (finding the oldest pending
    /// event walks them all).
    pub fn trim(&mut self, oldest_needed_ns: u64) {
        while self.events.front().is_some_and(|e| e.time_ns < oldest_needed_ns) {
            self.events.pop_front();
        }
    }

    /// Every [`TRIM_EVERY`] pushes: time to [`Timeline::trim`].
    pub fn trim_due(&self) -> bool {
        self.pushes.is_multiple_of(TRIM_EVERY)
    }

    /// The events strictly between `first` and `second` that the filter shows.
    pub fn between(&self, first: &OwnedTraceEvent, second: &TraceEvent<'_>) -> Vec<OwnedTraceEvent> {
        let start = self.events.partition_point(|e| e.time_ns <= first.time_ns);
        self.events
            .range(start..)
            .take_while(|e| e.time_ns < second.time_ns)
            .filter(|e| self.filter.shows(e, first, second))
            .cloned()
            .collect()
    }

    pub fn clear(&mut self) {
        self.events.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::event::EventIndex;

    fn event(time_ns: u64, cpu: u32, tid: u32) -> OwnedTraceEvent {
        OwnedTraceEvent::from_event(&TraceEvent {
            time_ns,
            cpu,
            pid: tid,
            tid,
            event: EventIndex(0),
            raw: &[],
            callchain: &[],
            rebuilt: false,
        })
    }

    #[test]
    fn between_keeps_the_events_inside_the_pair_that_the_filter_shows() {
        let mut t = Timeline::new(DetailFilter::SameCpu);
        let first = event(10, 0, 7);
        for e in [
            event(5, 0, 1),
            event(10, 0, 7),
            event(12, 1, 2),
            event(15, 0, 3),
            event(20, 0, 7),
        ] {
            t.push(&e.as_event(), true);
        }
        let second = event(20, 0, 7);
        let times: Vec<u64> = t
            .between(&first, &second.as_event())
            .iter()
            .map(|e| e.time_ns)
            .collect();
        assert_eq!(
            times,
            [15],
            "CPU 1's event is left out, the pair's own are not between"
        );
        let mut all = Timeline::new(DetailFilter::All);
        for e in [event(10, 0, 7), event(12, 1, 2), event(15, 0, 3)] {
            all.push(&e.as_event(), true);
        }
        assert_eq!(all.between(&first, &second.as_event()).len(), 2);
    }

    #[test]
    fn the_timeline_forgets_what_no_pending_pair_needs_and_stays_bounded() {
        let mut t = Timeline::new(DetailFilter::All);
        t.push(&event(1, 0, 1).as_event(), true);
        t.push(&event(2, 0, 1).as_event(), true);
        t.trim(2);
        assert_eq!(t.events.len(), 1, "older than the oldest pending event");
        t.push(&event(3, 0, 1).as_event(), false);
        assert!(t.events.is_empty(), "nothing pending, nothing kept");
        for i in 0..(TIMELINE_MAX as u64 + 10) {
            t.push(&event(10 + i, 0, 1).as_event(), true);
        }
        assert_eq!((t.events.len(), t.dropped), (TIMELINE_MAX, 10));
    }

    #[test]
    fn detail_lists_parse_as_perf_prof_spells_them() {
        assert_eq!(DetailFilter::parse(""), Ok(DetailFilter::All));
        assert_eq!(DetailFilter::parse("samecpu"), Ok(DetailFilter::SameCpu));
        assert_eq!(DetailFilter::parse("sametid"), Ok(DetailFilter::SameTid));
        assert!(DetailFilter::parse("-1ms").unwrap_err().contains("-1ms"));
    }
}
