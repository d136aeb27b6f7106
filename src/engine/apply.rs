//! Applying a feed's updates to the model state: the one place model state is written.

use crate::feeds::Update;

use super::Engine;
use super::state::MAX_OFFENDERS;
use crate::model::units::MAX_TIME_NS;

impl Engine {
    /// Apply a batch of updates in order, then let the slices settle.
    pub fn apply(&mut self, updates: Vec<Update>) {
        for update in updates {
            self.apply_one(update);
        }
        self.state.store.settle();
    }

    fn apply_one(&mut self, mut update: Update) {
        self.state.stats.bad_times += without_bad_times(&mut update);
        if let Some(sink) = &mut self.recording {
            sink.record(&update, &self.state);
        }
        let state = &mut self.state;
        match update {
            Update::Start(start) => {
                state.stats.source = start.label;
                state.provenance.source_kind = start.kind;
                state.time_origin_ns = start.time_origin_ns;
                state.live_clock_offset_ns = start.live_clock_offset_ns;
            }
            Update::Tables(delta) => {
                if let Err(e) = state.tables.apply(delta) {
                    // A feed bug: say so and keep what is consistent.
                    let text = format!("internal error, samples dropped: {e}");
                    if !state.provenance.warnings.contains(&text) {
                        state.provenance.warnings.push(text);
                    }
                }
            }
            Update::Samples(samples) => {
                let stacks = state.tables.stacks.len();
                let instances = state.tables.instances().len();
                for sample in &samples {
                    if sample.stack.index() >= stacks || sample.instance.index() >= instances {
                        state.stats.dropped += 1;
                        continue;
                    }
                    state.stats.samples += 1;
                    state.store.add_sample(sample);
                    self.builder.note_sample(sample);
                }
            }
            Update::Analysis(info) => state.analysis = Some(info),
            Update::Rows(rows) => {
                state.stats.events = state.stats.events.saturating_add(rows.events);
                state.store.add_analysis(rows.time_ns, &rows.rows, rows.events);
                self.builder.note_rows(rows);
            }
            Update::Offenders(offenders) => {
                state.offenders_dropped = state.offenders_dropped.saturating_add(offenders.dropped);
                for pair in offenders.pairs {
                    if state.offenders.len() >= MAX_OFFENDERS {
                        state.offenders.pop_front();
                        state.offenders_dropped += 1;
                    }
                    state.offenders.push_back(pair);
                    state.offenders_queued += 1;
                }
            }
            Update::EventFormat(format) => state.event_format = Some(format),
            Update::ThreadName { tid, name } => state.threads.set(tid, &name),
            Update::Console { time_ns, bytes } => {
                state.console.push_bytes(time_ns, &bytes);
            }
            Update::Markers(markers) => self.set_markers(markers),
            Update::Lost { total, time_ns } => {
                if total > state.stats.lost {
                    state.store.add_lost(time_ns, total - state.stats.lost);
                    state.stats.lost = total;
                }
            }
            Update::Waiting(waiting) => state.stats.waiting = waiting,
            Update::Dropped { total } => state.stats.dropped = state.stats.dropped.max(total),
            Update::Counts(counts) => state.stats.counts = state.stats.counts.max(counts),
            Update::Finding(finding) => state.provenance.note(finding),
            Update::RecordedVerdict(verdict) => state.provenance.recorded_verdict = Some(verdict),
            Update::StackCopies(copies) => state.stats.stack_copies = Some(copies),
            Update::Input(input) => state.provenance.input = input,
            Update::Facts(facts) => state.provenance.facts = facts,
            Update::Window(window) => state.provenance.window = Some(window),
            Update::Callchain(facts) => state.stats.callchain = Some(facts),
            Update::PluginSummary(entries) => {
                state.stats.unwind_stops = crate::model::facts::UnwindStops::from_summary(&entries);
                state.provenance.plugin_summary = entries;
            }
            Update::Warning(text) => {
                if !state.provenance.warnings.contains(&text) {
                    state.provenance.warnings.push(text);
                }
            }
            Update::ExtraFile { name, bytes } => {
                state.provenance.extra_files.retain(|(n, _)| *n != name);
                state.provenance.extra_files.push((name, bytes));
            }
            // Only the recording sink (above) has a use for these.
            Update::Record(_) => {}
            // Only a text run's printer has a use for these.
            Update::SampleLines(_) => {}
        }
    }
}

/// Take every time stamp past [`MAX_TIME_NS`] out of `update` (the record stays, without
/// its time); returns how many were taken. Garbage times (a corrupt record, `-1`) would
/// otherwise stretch the slice grid and the timeline to an absurd span.
fn without_bad_times(update: &mut Update) -> u64 {
    let mut bad = 0;
    let mut check = |t: &mut Option<u64>| {
        if t.is_some_and(|t| t > MAX_TIME_NS) {
            *t = None;
            bad += 1;
        }
    };
    match update {
        Update::Samples(samples) => {
            for sample in samples {
                check(&mut sample.time_ns);
            }
        }
        Update::Rows(rows) => check(&mut rows.time_ns),
        Update::Lost { time_ns, .. } | Update::Console { time_ns, .. } => check(time_ns),
        Update::Markers(markers) => {
            check(&mut markers.start_ns);
            check(&mut markers.stop_ns);
        }
        Update::Start(start) if start.time_origin_ns > MAX_TIME_NS => {
            start.time_origin_ns = 0;
            bad += 1;
        }
        _ => {}
    }
    bad
}
