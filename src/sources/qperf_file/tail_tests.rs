//! Tests of the tail reader against files written in pieces.

use std::fs::{File, OpenOptions};
use std::io::Write;

use super::*;
use crate::sources::qperf_file::varint::encode_u64;
use crate::sources::qperf_file::{Callchain, CorruptKind, Field, encode_record, read_file};

fn sample(i: u64) -> QperfRecord {
    let trace: Vec<u64> = (0..=i % 4)
        .map(|d| 0xffff_ffc0_8020_1234 + 0x100 * d + i)
        .collect();
    QperfRecord {
        elapsed_ns: Some(250 + 10_000 * i),
        pc: trace[0],
        sp: None,
        fp: Some(0xffff_ffc0_8100_0f40),
        cpu: Some(1),
        callchain: Some(Callchain::Fp),
        trace,
    }
}

fn encoded(version: FormatVersion, range: std::ops::Range<u64>) -> Vec<u8> {
    let mut bytes = Vec::new();
    for i in range {
        encode_record(&sample(i), version, &mut bytes);
    }
    bytes
}

struct Growing {
    _dir: tempfile::TempDir,
    path: PathBuf,
    file: File,
}

impl Growing {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("qperf.bin");
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .expect("create");
        Growing {
            _dir: dir,
            path,
            file,
        }
    }

    fn append(&mut self, bytes: &[u8]) {
        self.file.write_all(bytes).expect("append");
    }
}

fn poll(tail: &mut QperfTail) -> TailBatch {
    tail.poll().expect("poll")
}

#[test]
fn partial_record_appended_byte_by_byte_arrives_once_complete() {
    let mut out = Growing::new();
    let first = encoded(FormatVersion::V3, 0..1);
    let second = encoded(FormatVersion::V3, 1..2);
    out.append(&first);
    out.append(&second[..1]);
    let mut tail = QperfTail::open(&out.path).expect("open");
    let batch = poll(&mut tail);
    assert_eq!(
        (batch.records, batch.pending_bytes, batch.end),
        (vec![sample(0)], 1, None)
    );
    assert_eq!(tail.version(), Some(FormatVersion::V3));
    for (i, byte) in second.iter().enumerate().skip(1) {
        out.append(&[*byte]);
        let batch = poll(&mut tail);
        if i + 1 < second.len() {
            assert_eq!((batch.records.len(), batch.pending_bytes), (0, i + 1), "byte {i}");
        } else {
            assert_eq!((batch.records, batch.pending_bytes), (vec![sample(1)], 0));
        }
        assert_eq!(batch.end, None);
    }
    assert_eq!(
        (tail.records(), tail.bytes_read()),
        (2, (first.len() + second.len()) as u64)
    );
}

#[test]
fn byte_by_byte_tail_agrees_with_the_whole_file_reader_for_every_version() {
    for version in FormatVersion::DETECTION_ORDER {
        let bytes = encoded(version, 0..8);
        let mut out = Growing::new();
        let mut tail = QperfTail::open(&out.path).expect("open");
        let mut seen = Vec::new();
        for byte in &bytes {
            out.append(&[*byte]);
            let batch = poll(&mut tail);
            assert_eq!(batch.end, None, "{version}");
            seen.extend(batch.records);
        }
        let (rest, report) = tail.finish().expect("finish");
        seen.extend(rest);
        let (whole, whole_report) = read_file(&out.path).expect("read");
        assert_eq!(seen, whole, "{version}");
        assert_eq!(report, whole_report, "{version}");
        assert_eq!(
            (report.version, report.records, report.end),
            (Some(version), 8, ReadEnd::CleanEof)
        );
    }
}

#[test]
fn lone_v1_record_waits_on_the_v3_prefix_until_finish_decides() {
    let mut out = Growing::new();
    let mut bytes = Vec::new();
    encode_u64(2, &mut bytes);
    encode_u64(0xffff_ffc0_8020_1234, &mut bytes);
    encode_u64(0xffff_ffc0_8020_0010, &mut bytes);
    out.append(&bytes);
    let mut tail = QperfTail::open(&out.path).expect("open");
    let batch = poll(&mut tail);
    assert_eq!(
        (batch.records.len(), batch.pending_bytes, tail.version()),
        (0, 19, None)
    );
    let (records, report) = tail.finish().expect("finish");
    assert_eq!(records.len(), 1);
    assert_eq!(
        records[0].trace,
        vec![0xffff_ffc0_8020_1234, 0xffff_ffc0_8020_0010]
    );
    assert_eq!(
        (report.version, report.end),
        (Some(FormatVersion::V1), ReadEnd::CleanEof)
    );
}

#[test]
fn corrupt_record_stops_tailing_at_its_offset_and_keeps_earlier_records() {
    let mut out = Growing::new();
    let good = encoded(FormatVersion::V3, 0..2);
    out.append(&good);
    out.append(&[0x00, 0xFF, 0x01]);
    let mut tail = QperfTail::open(&out.path).expect("open");
    let batch = poll(&mut tail);
    let reason = CorruptKind::ReservedMarker {
        field: Field::Pc,
        at: 1,
    };
    let end = ReadEnd::Corrupt {
        offset: good.len() as u64,
        bytes_lost: 3,
        reason,
    };
    assert_eq!(batch.records, vec![sample(0), sample(1)]);
    assert_eq!(batch.end, Some(end.clone()));
    out.append(&encoded(FormatVersion::V3, 2..3));
    let again = poll(&mut tail);
    assert_eq!((again.records.len(), again.end), (0, Some(end.clone())));
    let (rest, report) = tail.finish().expect("finish");
    assert!(rest.is_empty());
    assert_eq!((report.records, report.end), (2, end));
}

#[test]
fn hostile_trace_length_is_corrupt_at_once_not_awaited() {
    let mut out = Growing::new();
    let good = encoded(FormatVersion::V3, 0..1);
    out.append(&good);
    let mut bytes = vec![0, 0, 0, 0, 0, 0];
    encode_u64(u64::MAX, &mut bytes);
    out.append(&bytes);
    let mut tail = QperfTail::open(&out.path).expect("open");
    let batch = poll(&mut tail);
    assert_eq!(batch.records, vec![sample(0)]);
    let reason = CorruptKind::TraceTooLong {
        len: u64::MAX,
        limit: 32762,
        at: 6,
    };
    assert_eq!(
        batch.end,
        Some(ReadEnd::Corrupt {
            offset: good.len() as u64,
            bytes_lost: 15,
            reason
        })
    );
}

#[test]
fn truncated_file_is_reported_as_shrunk() {
    let mut out = Growing::new();
    out.append(&encoded(FormatVersion::V3, 0..3));
    let mut tail = QperfTail::open(&out.path).expect("open");
    assert_eq!(poll(&mut tail).records.len(), 3);
    let read = tail.bytes_read();
    out.file.set_len(0).expect("truncate");
    let batch = poll(&mut tail);
    assert_eq!(batch.end, Some(ReadEnd::Shrunk { offset: read, len: 0 }));
    let (_, report) = tail.finish().expect("finish");
    assert_eq!(report.end, ReadEnd::Shrunk { offset: read, len: 0 });
}

#[cfg(unix)]
#[test]
fn file_replaced_at_the_path_is_reported() {
    let mut out = Growing::new();
    out.append(&encoded(FormatVersion::V3, 0..2));
    let mut tail = QperfTail::open(&out.path).expect("open");
    assert_eq!(poll(&mut tail).records.len(), 2);
    let read = tail.bytes_read();
    std::fs::remove_file(&out.path).expect("remove");
    // Longer than before, so only the identity check can notice.
    std::fs::write(&out.path, encoded(FormatVersion::V3, 0..5)).expect("recreate");
    assert_eq!(poll(&mut tail).end, Some(ReadEnd::Replaced { offset: read }));
}

#[test]
fn poll_budget_splits_a_backlog_without_losing_records() {
    let mut out = Growing::new();
    out.append(&encoded(FormatVersion::V3, 0..500));
    let mut tail = QperfTail::open(&out.path).expect("open");
    tail.set_poll_budget(1000);
    let first = poll(&mut tail);
    assert!(first.more);
    assert!(!first.records.is_empty() && first.records.len() < 500);
    let mut seen = first.records;
    let mut polls = 1;
    loop {
        let batch = poll(&mut tail);
        polls += 1;
        seen.extend(batch.records);
        if !batch.more {
            break;
        }
    }
    assert_eq!(seen, (0..500).map(sample).collect::<Vec<_>>());
    assert!(polls > 10, "{polls}");
}

#[test]
fn finish_reports_a_partial_last_record_as_truncated() {
    let mut out = Growing::new();
    let bytes = encoded(FormatVersion::V3, 0..3);
    let two = encoded(FormatVersion::V3, 0..2).len();
    out.append(&bytes[..two + 7]);
    let mut tail = QperfTail::open(&out.path).expect("open");
    assert_eq!(poll(&mut tail).records.len(), 2);
    let (rest, report) = tail.finish().expect("finish");
    assert!(rest.is_empty());
    let expected = ReadReport {
        version: Some(FormatVersion::V3),
        records: 2,
        bytes_read: (two + 7) as u64,
        end: ReadEnd::Truncated {
            offset: two as u64,
            bytes_lost: 7,
        },
        rest_unread: false,
    };
    assert_eq!(report, expected);
}

#[test]
fn empty_file_waits_then_finishes_as_empty() {
    let out = Growing::new();
    let mut tail = QperfTail::open(&out.path).expect("open");
    assert_eq!(poll(&mut tail), TailBatch::default());
    let (rest, report) = tail.finish().expect("finish");
    assert!(rest.is_empty());
    assert_eq!(
        report,
        ReadReport {
            version: None,
            records: 0,
            bytes_read: 0,
            end: ReadEnd::Empty,
            rest_unread: false,
        }
    );
}

#[test]
fn open_of_a_missing_file_is_not_found() {
    let dir = tempfile::tempdir().expect("tempdir");
    let error = QperfTail::open(dir.path().join("later.bin"))
        .err()
        .map(|e| e.kind());
    assert_eq!(error, Some(io::ErrorKind::NotFound));
}
