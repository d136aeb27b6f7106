//! The sessions the `app_keys` target drives the terminal UI over: one of each kind a user
//! meets (host sampling, a latency analyzer, a table analyzer, a guest console, nothing at
//! all), each empty, with one row or with many, as the typed updates a feed hands the
//! engine. The app's own model thread applies them, so every screen is drawn from a real
//! engine snapshot.

use std::sync::Arc;

use perfscope::feeds::{Feed, FeedStatus, RowsUpdate, SessionStart, Update};
use perfscope::model::analysis::{
    AnalysisInfo, AnalysisRows, AnalysisSchema, LatencyKey, LatencyRows, SyscallsSchema, TopCells, TopKey,
    TopRows, TopSchema,
};
use perfscope::model::latency_stats::LatencyStats;
use perfscope::model::sample_list::SampleList;
use perfscope::model::{Instance, PhaseMarkers, ProfileInfo, Sample, SampleMeta};

/// What a session holds.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Stacks on two CPUs over three seconds, with start and stop markers.
    Sampling,
    /// `syscalls`: a latency distribution per syscall, and its table.
    Latency,
    /// perf-prof's `top`: a key/value table and no distribution.
    Table,
    /// A guest's console lines, with markers, and no samples.
    Console,
    /// A session that never said anything but its start.
    Empty,
}

impl Kind {
    pub const ALL: [Kind; 5] = [
        Kind::Sampling,
        Kind::Latency,
        Kind::Table,
        Kind::Console,
        Kind::Empty,
    ];

    /// The letter an input starts with to pick it (any other byte picks by its value).
    pub fn letter(self) -> u8 {
        match self {
            Kind::Sampling => b's',
            Kind::Latency => b'l',
            Kind::Table => b't',
            Kind::Console => b'c',
            Kind::Empty => b'e',
        }
    }

    pub fn of_byte(byte: u8) -> Kind {
        Kind::ALL
            .into_iter()
            .find(|k| k.letter() == byte)
            .unwrap_or(Kind::ALL[usize::from(byte) % Kind::ALL.len()])
    }
}

/// How many rows (samples, series, table rows, console lines) a session holds.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Size {
    Nothing,
    One,
    Many,
}

impl Size {
    pub const ALL: [Size; 3] = [Size::Nothing, Size::One, Size::Many];

    /// `0`, `1`, `2` (any other byte picks by its value).
    pub fn of_byte(byte: u8) -> Size {
        Size::ALL[usize::from(byte.wrapping_sub(b'0')) % Size::ALL.len()]
    }

    pub fn digit(self) -> u8 {
        match self {
            Size::Nothing => b'0',
            Size::One => b'1',
            Size::Many => b'2',
        }
    }

    fn count(self, many: usize) -> usize {
        match self {
            Size::Nothing => 0,
            Size::One => 1,
            Size::Many => many,
        }
    }
}

const MS: u64 = 1_000_000;

/// Names that stress the views' cutting and widths: long Rust paths, closures, wide
/// characters, a name that is all spaces.
const NAMES: &[&str] = &[
    "main",
    "std::rt::lang_start::{{closure}}",
    "<alloc::vec::Vec<T,A> as core::ops::drop::Drop>::drop",
    "perfscope::engine::slices::SliceStore::compact::h0123456789abcdef",
    "渲染::绘制::布局",
    "do_syscall_64",
    "   ",
    "x",
];

/// Every update of a `kind` session of `size`, in the order a feed hands them over.
pub fn updates(kind: Kind, size: Size) -> Vec<Update> {
    let mut out = vec![Update::Start(SessionStart {
        label: format!("fuzz {kind:?} {size:?}"),
        kind: match kind {
            Kind::Sampling => "host",
            Kind::Latency | Kind::Table => "host-trace",
            Kind::Console => "qemu",
            Kind::Empty => "memory",
        }
        .into(),
        ..SessionStart::default()
    })];
    match kind {
        Kind::Sampling => sampling(size, &mut out),
        Kind::Latency => latency(size, &mut out),
        Kind::Table => table(size, &mut out),
        Kind::Console => console(size, &mut out),
        Kind::Empty => {}
    }
    out
}

fn markers() -> Update {
    Update::Markers(PhaseMarkers {
        start_ns: Some(1_000 * MS),
        stop_ns: Some(2_000 * MS),
    })
}

fn sampling(size: Size, out: &mut Vec<Update>) {
    let mut list = SampleList::new(ProfileInfo::default());
    let cpus = [list.instance(Instance::cpu(0)), list.instance(Instance::cpu(1))];
    let n = size.count(300);
    for i in 0..n {
        // Depth 1 to 6, each level a name of NAMES: some stacks share prefixes, some not.
        let depth = 1 + i % 6;
        let frames: Vec<&str> = (0..depth).map(|d| NAMES[(i * 7 + d * 3) % NAMES.len()]).collect();
        let stack = list.intern_named_stack(&frames);
        list.push_sample(Sample {
            time_ns: Some(i as u64 * 10 * MS),
            instance: cpus[i % 2],
            weight: 1 + (i as u64 % 5),
            stack,
            meta: SampleMeta::default(),
        });
    }
    out.extend(perfscope::feeds::memory::updates_of(&list));
    out.push(markers());
}

fn latency(size: Size, out: &mut Vec<Update>) {
    out.push(Update::Analysis(Arc::new(AnalysisInfo {
        name: "syscalls".into(),
        schema: AnalysisSchema::Syscalls(SyscallsSchema {
            perins: false,
            than_ns: None,
        }),
    })));
    let series = size.count(12) as u64;
    // Ten cells of 100 ms, each with every series' calls (latencies from 1 µs to 50 ms).
    for cell in 0..if series == 0 { 0 } else { 10u64 } {
        let rows = (0..series)
            .map(|s| {
                let mut stats = LatencyStats::default();
                for call in 0..(1 + s * 3) {
                    stats.record(1_000 * (1 + (call * 37 + cell * 11) % 50_000), None);
                }
                (
                    LatencyKey {
                        instance: 0,
                        series: s,
                    },
                    stats,
                )
            })
            .collect();
        out.push(Update::Rows(RowsUpdate {
            time_ns: Some(cell * 100 * MS),
            rows: AnalysisRows::Latency(LatencyRows { rows }),
            events: 2 * series,
        }));
    }
}

fn table(size: Size, out: &mut Vec<Update>) {
    out.push(Update::Analysis(Arc::new(AnalysisInfo {
        name: "top".into(),
        schema: AnalysisSchema::Top(TopSchema {
            key_header: Some("PID".into()),
            comm_header: Some("COMM".into()),
            comm_from_pid: false,
            column_headers: vec!["EVENTS".into(), "BYTES".into()],
            sort_order: vec![0, 1],
            printkey: None,
        }),
    })));
    let rows = size.count(40) as u64;
    if rows == 0 {
        return;
    }
    out.push(Update::Rows(RowsUpdate {
        time_ns: Some(0),
        rows: AnalysisRows::Top(TopRows {
            rows: (0..rows)
                .map(|pid| {
                    let cells = TopCells {
                        comm: Some(NAMES[pid as usize % NAMES.len()].into()),
                        values: vec![pid * 13 % 97, u64::MAX - pid],
                    };
                    (TopKey::Key(1000 + pid), cells)
                })
                .collect(),
            events: rows * 3,
        }),
        events: rows * 3,
    }));
}

fn console(size: Size, out: &mut Vec<Update>) {
    for i in 0..size.count(200) {
        // Escapes, wide characters and a line far wider than any terminal.
        let text = match i % 4 {
            0 => format!("starry:~# ./bench {i}\n"),
            1 => format!("\x1b[1;31merror\x1b[0m 第{i}行 \t tab\n"),
            2 => format!("{}\n", "long-line ".repeat(40)),
            _ => "BENCH_START\r\n".into(),
        };
        out.push(Update::Console {
            time_ns: Some(i as u64 * 15 * MS),
            bytes: text.into_bytes(),
        });
    }
    out.push(markers());
}

/// A feed that hands a session's updates over at its first poll and is done.
pub struct UpdatesFeed(Option<Vec<Update>>);

impl UpdatesFeed {
    pub fn new(updates: Vec<Update>) -> UpdatesFeed {
        UpdatesFeed(Some(updates))
    }
}

impl Feed for UpdatesFeed {
    fn poll(&mut self, out: &mut Vec<Update>) -> anyhow::Result<FeedStatus> {
        out.extend(self.0.take().unwrap_or_default());
        Ok(FeedStatus::Finished)
    }

    fn is_recorded(&self) -> bool {
        true
    }
}
