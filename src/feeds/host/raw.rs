//! What a host reader hands the resolver: ring records decoded into plain samples and the
//! side-band records that keep address spaces current, in ring order. The reader thread
//! only does this (and the DWARF walk of a stack copy), so it is back in poll(2) quickly.

use crate::sources::perf_event::record::{MappedFile, Record};
use crate::symbols::host::FileKey;

use super::dwarf_stacks::DwarfStacks;
use super::sample_counters::SampleCounters;

/// What the reader hands the resolver: a sample's addresses, or a side-band record the
/// symbolizer needs to keep address spaces current (in ring order with the samples).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RawItem {
    Sample(RawSample),
    Comm {
        pid: u32,
        tid: u32,
        comm: String,
        exec: bool,
    },
    Mmap {
        pid: u32,
        start: u64,
        len: u64,
        pgoff: u64,
        path: String,
        file: Option<FileKey>,
    },
    Fork {
        parent: u32,
        child: u32,
    },
    /// A new thread of an existing process (`tid` created by `parent_tid`).
    Thread {
        pid: u32,
        parent_tid: u32,
        tid: u32,
    },
    Exit {
        pid: u32,
    },
}

/// A sample as read: its call chain split into kernel and user halves, leaf first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawSample {
    pub time_ns: u64,
    pub pid: u32,
    pub tid: u32,
    pub cpu: u32,
    /// The sample's period (ns for cpu-clock; 0 when the record had none).
    pub period: u64,
    pub in_kernel: bool,
    pub ip: Option<u64>,
    pub kernel: Vec<u64>,
    pub user: Vec<u64>,
}

/// One record as the resolver wants it (`None` for what it does not need).
pub fn raw_item(
    record: Record<'_>,
    counters: &mut SampleCounters,
    exclude_self: bool,
    own_pid: u32,
    out: &mut Vec<RawItem>,
) {
    raw_item_unwound(record, counters, exclude_self, own_pid, None, out);
}

/// [`raw_item`], the user part of each sample's chain unwound from its stack copy by
/// `dwarf` (which sees every side-band record too).
pub(super) fn raw_item_unwound(
    record: Record<'_>,
    counters: &mut SampleCounters,
    exclude_self: bool,
    own_pid: u32,
    mut dwarf: Option<&mut DwarfStacks>,
    out: &mut Vec<RawItem>,
) {
    if let Some(dwarf) = dwarf.as_deref_mut() {
        dwarf.on_record(&record);
    }
    match record {
        Record::Sample(sample) => {
            let (Some(pid), Some(tid)) = (sample.pid, sample.tid) else {
                return;
            };
            if exclude_self && pid == own_pid {
                counters.own_samples += 1;
                return;
            }
            counters.samples += 1;
            let user = match dwarf {
                Some(dwarf) => dwarf.user_frames(pid, &sample, counters),
                None => sample.callchain.user_ips().collect(),
            };
            out.push(RawItem::Sample(RawSample {
                time_ns: sample.time.unwrap_or(0),
                pid,
                tid,
                cpu: sample.cpu.unwrap_or(0),
                period: sample.period.unwrap_or(0),
                in_kernel: sample.in_kernel(),
                ip: sample.ip,
                kernel: sample.callchain.kernel_ips().collect(),
                user,
            }));
        }
        Record::Comm(c) => out.push(RawItem::Comm {
            pid: c.pid,
            tid: c.tid,
            comm: String::from_utf8_lossy(c.comm).into_owned(),
            exec: c.exec,
        }),
        Record::Mmap2(m) => out.push(RawItem::Mmap {
            pid: m.pid,
            start: m.addr,
            len: m.len,
            pgoff: m.pgoff,
            path: String::from_utf8_lossy(m.filename).into_owned(),
            file: match m.file {
                MappedFile::Inode { maj, min, ino, .. } => Some(FileKey::new(maj, min, ino)),
                MappedFile::BuildId(_) => None,
            },
        }),
        Record::Fork(t) if t.pid != t.ppid => out.push(RawItem::Fork {
            parent: t.ppid,
            child: t.pid,
        }),
        Record::Fork(t) if t.tid != t.ptid => out.push(RawItem::Thread {
            pid: t.pid,
            parent_tid: t.ptid,
            tid: t.tid,
        }),
        Record::Exit(t) if t.pid == t.tid => out.push(RawItem::Exit { pid: t.pid }),
        _ => {}
    }
}
