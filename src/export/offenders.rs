//! The `--than` offenders of an analysis session, saved with its tables:
//!
//! - `offenders.txt`: the offender pane's lines — the text `--no-tui` prints, each pair's
//!   two event lines (with `--detail` the events between, with `stack` the symbolized
//!   stacks) — and, when pairs were dropped, a last line saying how many.
//! - `offenders.json`: one record per pair with both events (sample-clock time, CPU, pid,
//!   tid, comm, event name, fields, whether perfscope rebuilt it), the latency, the
//!   `--detail` events, and each event's raw callchain and stack frames when it has them,
//!   named as the pane names them.
//!
//! Nothing is written for a session without offenders.

use std::collections::VecDeque;
use std::path::PathBuf;

use serde_json::{Map, Value, json};

use crate::analyzers::latency::{PairPrint, SlowPair};
use crate::analyzers::text::{self, OffenderPrinting};
use crate::model::tables::ProfileTables;
use crate::model::threads::ThreadNames;
use crate::sources::tracefs::EventPrinter;
use crate::trace::event::{EventLayout, OwnedTraceEvent};

use super::ExportError;
use super::clock::ExportClock;
use super::layout::OutputLayout;
use super::stage::Stage;

/// The session's offenders as the engine keeps them.
pub struct OffenderSource<'a> {
    /// Oldest first.
    pub pairs: &'a VecDeque<SlowPair>,
    /// Pairs over the threshold that were not kept.
    pub dropped: u64,
    /// The session's event layouts, by event index.
    pub layouts: &'a [EventLayout],
    /// How the events print; `None` when the session never said (no lines, as the pane).
    pub printer: Option<&'a EventPrinter>,
    /// The session's sample clock is CLOCK_MONOTONIC minus this (`None`: a recording).
    pub live_clock_offset_ns: Option<i64>,
}

/// What the reports say of the offenders written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OffendersSummary {
    pub pairs: usize,
    pub dropped: u64,
    pub text: PathBuf,
    pub json: PathBuf,
}

impl OffendersSummary {
    pub fn to_json(&self) -> Value {
        json!({
            "pairs": self.pairs,
            "dropped": self.dropped,
            "text": self.text.display().to_string(),
            "json": self.json.display().to_string(),
        })
    }
}

/// Where the names and stacks of the events come from.
pub struct Names<'a> {
    pub tables: &'a ProfileTables,
    pub threads: &'a ThreadNames,
}

/// offenders.txt: the pane's lines, one per line, and the dropped pairs said last.
pub fn offenders_text(source: &OffenderSource<'_>, names: &Names<'_>, realtime_offset_ns: i128) -> String {
    let mut out = String::new();
    if let Some(printer) = source.printer {
        let printed = text::offender_lines(
            source.pairs,
            &OffenderPrinting {
                layouts: source.layouts,
                printer,
                tables: names.tables,
                threads: names.threads,
                realtime_offset_ns,
            },
        );
        for line in printed.lines {
            out.push_str(&line);
            out.push('\n');
        }
    }
    if source.dropped > 0 {
        out.push_str(&dropped_line(source.dropped));
        out.push('\n');
    }
    out
}

/// The last line of offenders.txt when pairs were dropped: the analyzer's queue and the
/// engine keep a bounded number, so a storm of slow pairs cannot exhaust memory.
fn dropped_line(dropped: u64) -> String {
    let (pairs, were) = if dropped == 1 {
        ("pair", "was")
    } else {
        ("pairs", "were")
    };
    format!(
        "{dropped} more {pairs} over the --than threshold {were} dropped (more than perfscope keeps) and not listed"
    )
}

/// `0xffffffff81000000`: addresses as hex strings (a JSON number loses kernel addresses).
fn hex(address: u64) -> Value {
    json!(format!("{address:#x}"))
}

/// One event of a pair: its own facts, and its callchain and stack frames when it has
/// them (`stack` is the pair's interned stack of that event).
fn event_json(
    event: &OwnedTraceEvent,
    stack: Option<crate::model::stack::StackId>,
    source: &OffenderSource<'_>,
    names: &Names<'_>,
) -> Value {
    let layout = source.layouts.get(usize::from(event.event.0));
    let mut m = Map::new();
    m.insert("time_ns".into(), json!(event.time_ns));
    m.insert("cpu".into(), json!(event.cpu));
    m.insert("pid".into(), json!(event.pid));
    m.insert("tid".into(), json!(event.tid));
    m.insert("comm".into(), json!(names.threads.name(event.tid)));
    m.insert(
        "event".into(),
        json!(layout.map(|l| format!("{}:{}", l.system, l.name))),
    );
    m.insert(
        "fields".into(),
        json!(
            layout
                .zip(source.printer)
                .map(|(l, printer)| printer.fields_text(&event.as_event(), l))
        ),
    );
    m.insert("rebuilt".into(), json!(event.rebuilt));
    if !event.callchain.is_empty() {
        m.insert(
            "callchain".into(),
            Value::Array(event.callchain.iter().map(|&a| hex(a)).collect()),
        );
    }
    if let Some(stack) = stack {
        let mut frames = Vec::new();
        text::visit_stack_frames(names.tables, stack, &event.callchain, &mut |frame| {
            frames.push(json!({
                "address": frame.address.map(hex),
                "function": frame.function,
                "module": frame.module,
            }))
        });
        m.insert("stack".into(), Value::Array(frames));
    }
    Value::Object(m)
}

/// One record of offenders.json.
fn pair_json(pair: &SlowPair, source: &OffenderSource<'_>, names: &Names<'_>) -> Value {
    let mut m = Map::new();
    m.insert("latency_ns".into(), json!(pair.latency_ns));
    m.insert(
        "first".into(),
        event_json(&pair.first, pair.stacks[0], source, names),
    );
    m.insert(
        "second".into(),
        event_json(&pair.second, pair.stacks[1], source, names),
    );
    m.insert(
        "rebuilt".into(),
        json!(pair.first.rebuilt || pair.second.rebuilt || pair.detail.iter().any(|e| e.rebuilt)),
    );
    if !pair.detail.is_empty() {
        m.insert(
            "detail".into(),
            Value::Array(
                pair.detail
                    .iter()
                    .map(|e| event_json(e, None, source, names))
                    .collect(),
            ),
        );
    }
    match pair.print {
        // num-dist: one event past the threshold (`first` is the same event).
        PairPrint::Event => {
            m.insert("one_event".into(), json!(true));
        }
        PairPrint::TaskState { pid, run_delay } => {
            m.insert(
                "task".into(),
                json!({
                    "pid": pid,
                    "comm": names.threads.name(pid),
                    "state": if run_delay { "RUNDELAY" } else { "WAIT" },
                }),
            );
        }
        PairPrint::TraceLines | PairPrint::TepLines => {}
    }
    Value::Object(m)
}

/// offenders.json: the counts and one record per pair, oldest first.
pub fn offenders_json(source: &OffenderSource<'_>, names: &Names<'_>) -> Value {
    json!({
        "pairs": source.pairs.len(),
        "dropped": source.dropped,
        "offenders": source.pairs.iter().map(|p| pair_json(p, source, names)).collect::<Vec<_>>(),
    })
}

/// Write offenders.txt and offenders.json into the work directory, when the session has
/// offenders; `None` (and nothing written) when it has none.
pub fn write(
    source: &OffenderSource<'_>,
    names: &Names<'_>,
    clock: &ExportClock,
    layout: &OutputLayout,
    stage: &Stage,
    files: &mut Vec<(String, PathBuf)>,
) -> Result<Option<OffendersSummary>, ExportError> {
    if source.pairs.is_empty() && source.dropped == 0 {
        return Ok(None);
    }
    let offset = clock.realtime_offset_ns(source.live_clock_offset_ns);
    let text_path = layout.offenders_txt();
    stage.write(&text_path, offenders_text(source, names, offset).as_bytes())?;
    files.push(("offenders_text".into(), text_path.clone()));

    let json_path = layout.offenders_json();
    let mut json = serde_json::to_string_pretty(&offenders_json(source, names)).unwrap_or_default();
    json.push('\n');
    stage.write(&json_path, json.as_bytes())?;
    files.push(("offenders_json".into(), json_path.clone()));
    Ok(Some(OffendersSummary {
        pairs: source.pairs.len(),
        dropped: source.dropped,
        text: text_path,
        json: json_path,
    }))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::engine::{ModelState, SlicePolicy};
    use crate::feeds::EventFormat;
    use crate::trace::event::{EventIndex, FieldKind, FieldLayout};

    /// Sample clock → wall clock in these tests: any fixed offset (the pane and the file
    /// are printed with the same one).
    const OFFSET_NS: i128 = 1_765_000_000_000_000_000;

    fn field(name: &str, offset: usize, size: usize, kind: FieldKind) -> FieldLayout {
        FieldLayout {
            name: name.into(),
            declaration: format!("long {name}"),
            offset,
            size,
            kind,
        }
    }

    fn syscall_layout(name: &str, print_fmt: &str) -> EventLayout {
        EventLayout {
            system: "raw_syscalls".into(),
            name: name.into(),
            id: 21,
            fields: vec![
                field("common_type", 0, 2, FieldKind::Unsigned),
                field("id", 8, 8, FieldKind::Signed),
                field("ret", 16, 8, FieldKind::Signed),
            ],
            print_fmt: print_fmt.into(),
        }
    }

    fn layouts() -> Vec<EventLayout> {
        vec![
            syscall_layout("sys_enter", "\"NR %ld\", REC->id"),
            syscall_layout("sys_exit", "\"NR %ld = %ld\", REC->id, REC->ret"),
        ]
    }

    fn event(
        index: u16,
        time_ns: u64,
        tid: u32,
        ret: i64,
        callchain: &[u64],
        rebuilt: bool,
    ) -> OwnedTraceEvent {
        let mut raw = vec![0u8; 24];
        raw[16..24].copy_from_slice(&ret.to_le_bytes());
        OwnedTraceEvent {
            time_ns,
            cpu: 1,
            pid: tid,
            tid,
            event: EventIndex(index),
            raw,
            callchain: callchain.to_vec(),
            rebuilt,
        }
    }

    /// Two pairs: a read by `reader` whose exit has a 3-frame stack, and a rebuilt exit
    /// of `writer` without one; 3 more were dropped.
    fn state() -> ModelState {
        let mut state = ModelState::new(SlicePolicy::live(10_000_000_000));
        let layouts = layouts();
        state.event_format = Some(Arc::new(EventFormat {
            printer: EventPrinter::new(&layouts),
            layouts,
            execs: Vec::new(),
        }));
        state.threads.set(42, "reader");
        state.threads.set(43, "writer");
        let stack = state.tables.intern_named_stack(&["main", "do_read", "sys_read"]);
        let chain = [0x4011aa, 0x401100, 0x400f00];
        let mut read = SlowPair::new(
            event(0, 1_000_000_000, 42, 0, &[], false),
            &event(1, 1_000_020_000, 42, 1, &chain, false).as_event(),
            20_000,
            PairPrint::TraceLines,
        );
        read.stacks[1] = Some(stack);
        let write = SlowPair::new(
            event(0, 2_000_000_000, 43, 0, &[], false),
            &event(1, 2_000_500_000, 43, 4096, &[], true).as_event(),
            500_000,
            PairPrint::TraceLines,
        );
        state.offenders.extend([read, write]);
        state.offenders_dropped = 3;
        state
    }

    fn source(state: &ModelState) -> OffenderSource<'_> {
        let format = state.event_format.as_ref().unwrap();
        OffenderSource {
            pairs: &state.offenders,
            dropped: state.offenders_dropped,
            layouts: &format.layouts,
            printer: Some(&format.printer),
            live_clock_offset_ns: state.live_clock_offset_ns,
        }
    }

    fn names(state: &ModelState) -> Names<'_> {
        Names {
            tables: &state.tables,
            threads: &state.threads,
        }
    }

    #[test]
    fn the_pane_prints_each_pair_once_and_gets_the_lines_printing_all_would() {
        use crate::engine::offenders::OffenderCache;
        let mut state = state();
        let all: Vec<SlowPair> = state.offenders.drain(..).collect();
        let mut cache = OffenderCache::with_offset(OFFSET_NS);
        // The first pair arrives, then the second.
        state.offenders.push_back(all[0].clone());
        state.offenders_queued = 1;
        let one = cache.get(&state);
        assert_eq!(one.pair_starts, [0]);
        state.offenders.push_back(all[1].clone());
        state.offenders_queued = 2;
        let two = cache.get(&state);
        assert_eq!(*two, crate::engine::offenders::print_at(&state, OFFSET_NS));
        // The first pair's lines are the very ones printed before, not printed again.
        assert!(Arc::ptr_eq(&one.lines[0], &two.lines[0]));
        // The queue is full: the oldest leaves as a new one comes.
        state.offenders.pop_front();
        state.offenders_dropped += 1;
        let mut third = all[0].clone();
        third.latency_ns += 1;
        state.offenders.push_back(third);
        state.offenders_queued = 3;
        let three = cache.get(&state);
        assert_eq!(*three, crate::engine::offenders::print_at(&state, OFFSET_NS));
        assert!(Arc::ptr_eq(&two.lines[two.pair_starts[1]], &three.lines[0]));
        // Nothing new: the same list, shared.
        assert!(Arc::ptr_eq(&three, &cache.get(&state)));
    }

    #[test]
    fn the_text_is_the_panes_lines_then_the_dropped_pairs() {
        let state = state();
        let pane = crate::engine::offenders::print_at(&state, OFFSET_NS);
        let text = offenders_text(&source(&state), &names(&state), OFFSET_NS);
        let lines: Vec<&str> = text.lines().collect();
        // Two event lines each, and the read's exit stack (3 frames) under its line.
        assert_eq!((pane.lines.len(), pane.pair_starts.clone()), (7, vec![0, 5]));
        let pane_lines: Vec<&str> = pane.lines.iter().map(|l| &**l).collect();
        assert_eq!(lines[..7], pane_lines);
        assert_eq!(
            lines[7],
            "3 more pairs over the --than threshold were dropped (more than perfscope keeps) and not listed"
        );
        assert_eq!(lines.len(), 8);
        assert!(text.ends_with('\n'));
        assert!(
            lines[1].contains(" reader ") && lines[1].contains("raw_syscalls:sys_exit: NR 0 = 1"),
            "{text}"
        );
        assert_eq!(
            lines[2..5],
            [
                "    00000000004011aa sys_read",
                "    0000000000401100 do_read",
                "    0000000000400f00 main"
            ]
        );
        assert!(
            lines[6].contains(" writer ") && lines[6].contains("NR 0 = 4096"),
            "{text}"
        );
        assert_eq!(
            dropped_line(1),
            "1 more pair over the --than threshold was dropped (more than perfscope keeps) and not listed"
        );
        // Nothing dropped: no closing line.
        let mut whole = state.clone();
        whole.offenders_dropped = 0;
        let text = offenders_text(&source(&whole), &names(&whole), OFFSET_NS);
        assert_eq!(
            text.lines().collect::<Vec<_>>(),
            pane.lines.iter().map(|l| &**l).collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_record_per_pair_with_its_events_and_stack() {
        let state = state();
        let json = offenders_json(&source(&state), &names(&state));
        assert_eq!(
            (json["pairs"].as_u64(), json["dropped"].as_u64()),
            (Some(2), Some(3))
        );
        let records = json["offenders"].as_array().unwrap();
        assert_eq!(records.len(), 2);
        let read = &records[0];
        assert_eq!(read["latency_ns"], 20_000);
        assert_eq!(read["rebuilt"], false);
        let first = &read["first"];
        assert_eq!(
            (
                first["time_ns"].as_u64(),
                first["cpu"].as_u64(),
                first["pid"].as_u64(),
                first["tid"].as_u64()
            ),
            (Some(1_000_000_000), Some(1), Some(42), Some(42))
        );
        assert_eq!(first["event"], "raw_syscalls:sys_enter");
        assert_eq!(first["comm"], "reader");
        assert_eq!(first["fields"], "NR 0");
        assert!(first.get("stack").is_none() && first.get("callchain").is_none());
        let second = &read["second"];
        assert_eq!(second["event"], "raw_syscalls:sys_exit");
        assert_eq!(second["fields"], "NR 0 = 1");
        assert_eq!(
            second["callchain"],
            serde_json::json!(["0x4011aa", "0x401100", "0x400f00"])
        );
        assert_eq!(
            second["stack"],
            serde_json::json!([
                {"address": "0x4011aa", "function": "sys_read", "module": null},
                {"address": "0x401100", "function": "do_read", "module": null},
                {"address": "0x400f00", "function": "main", "module": null},
            ])
        );
        let write = &records[1];
        assert_eq!(
            (write["latency_ns"].as_u64(), write["rebuilt"].as_bool()),
            (Some(500_000), Some(true))
        );
        assert_eq!(write["second"]["rebuilt"], true);
        assert_eq!(write["first"]["rebuilt"], false);
        assert_eq!(write["second"]["comm"], "writer");
    }

    #[test]
    fn both_files_are_staged_and_listed_and_nothing_without_offenders() {
        let state = state();
        let dir = tempfile::tempdir().unwrap();
        let layout = OutputLayout::new(dir.path(), "x86_64").unwrap();
        let stage = Stage::begin(dir.path(), &layout.work_dir).unwrap();
        let clock = ExportClock::now();
        let mut files = Vec::new();

        let mut none = ModelState::new(SlicePolicy::live(10_000_000_000));
        none.event_format = state.event_format.clone();
        let nothing = write(&source(&none), &names(&none), &clock, &layout, &stage, &mut files).unwrap();
        assert_eq!((nothing, files.len()), (None, 0));

        let summary = write(
            &source(&state),
            &names(&state),
            &clock,
            &layout,
            &stage,
            &mut files,
        )
        .unwrap()
        .unwrap();
        assert_eq!((summary.pairs, summary.dropped), (2, 3));
        assert_eq!(
            files,
            [
                ("offenders_text".to_string(), layout.offenders_txt()),
                ("offenders_json".to_string(), layout.offenders_json())
            ]
        );
        // Nothing reaches `latest/` before the set is complete.
        assert!(!layout.offenders_txt().exists());
        stage.commit(OutputLayout::owns).unwrap();
        let text = std::fs::read_to_string(layout.offenders_txt()).unwrap();
        let offset = clock.realtime_offset_ns(state.live_clock_offset_ns);
        assert_eq!(text, offenders_text(&source(&state), &names(&state), offset));
        let json: Value =
            serde_json::from_str(&std::fs::read_to_string(layout.offenders_json()).unwrap()).unwrap();
        assert_eq!(json, offenders_json(&source(&state), &names(&state)));
    }

    /// A write that fails (here a directory where the file goes) says which file, and the
    /// set it was part of never replaces `latest/`.
    #[test]
    fn a_failed_write_names_the_file() {
        let state = state();
        let dir = tempfile::tempdir().unwrap();
        let layout = OutputLayout::new(dir.path(), "x86_64").unwrap();
        let stage = Stage::begin(dir.path(), &layout.work_dir).unwrap();
        std::fs::create_dir_all(stage.path(&layout.offenders_txt()).join("in-the-way")).unwrap();
        let e = write(
            &source(&state),
            &names(&state),
            &ExportClock::now(),
            &layout,
            &stage,
            &mut Vec::new(),
        )
        .unwrap_err();
        assert_eq!(e.path, layout.offenders_txt());
        assert!(e.to_string().starts_with("cannot write "), "{e}");
        drop(stage);
        assert!(!layout.work_dir.exists());
    }
}
