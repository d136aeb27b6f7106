//! Tests of whole-file reading: detection, endings, chunk boundaries, memory bound.

use std::io::{self, Read};

use super::*;
use crate::sources::qperf_file::varint::encode_u64;
use crate::sources::qperf_file::{
    Callchain, CorruptKind, Field, MAX_DRAINED_BYTES, MAX_RECORD_WIRE_BYTES, ZERO_RUN_BYTES, encode_record,
};

/// The spec's example address: its low bytes `34 12 20 80 c0 ff` make a v2 or v1 file
/// fail as v3, as in the spec's own detection check.
const KERNEL: u64 = 0xffff_ffc0_8020_1234;

fn sample(i: u64) -> QperfRecord {
    let trace: Vec<u64> = (0..=i % 3).map(|d| KERNEL + 0x1000 * d + i).collect();
    QperfRecord {
        elapsed_ns: Some(1_000_000 * (i + 1)),
        pc: trace[0],
        sp: Some(0xffff_ffc0_8100_0f00),
        fp: None,
        cpu: Some((i % 4) as u32),
        callchain: Some(Callchain::Fp),
        trace,
    }
}

/// What a record of `version` keeps of `record` once read back.
fn as_version(record: &QperfRecord, version: FormatVersion) -> QperfRecord {
    match version {
        FormatVersion::V3 => record.clone(),
        FormatVersion::V2 => QperfRecord {
            elapsed_ns: record.elapsed_ns,
            pc: record.pc,
            trace: record.trace.clone(),
            ..QperfRecord::default()
        },
        FormatVersion::V1 => QperfRecord {
            pc: record.pc,
            trace: record.trace.clone(),
            ..QperfRecord::default()
        },
    }
}

fn file_of(version: FormatVersion, count: u64) -> Vec<u8> {
    let mut bytes = Vec::new();
    for i in 0..count {
        encode_record(&sample(i), version, &mut bytes);
    }
    bytes
}

fn read_all<R: Read>(input: R) -> (Vec<QperfRecord>, ReadReport) {
    let mut reader = QperfReader::new(input);
    let records: Vec<QperfRecord> = reader.by_ref().map(|r| r.expect("no I/O error")).collect();
    (records, reader.finish())
}

/// Hands out at most one byte per read, to hit every chunk boundary.
struct OneByte<'a>(&'a [u8]);

impl Read for OneByte<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        match (self.0.split_first(), out.first_mut()) {
            (Some((&byte, rest)), Some(slot)) => {
                *slot = byte;
                self.0 = rest;
                Ok(1)
            }
            _ => Ok(0),
        }
    }
}

/// Fails once with `Interrupted`, then after `ok_bytes` fails for good.
struct Flaky<'a> {
    bytes: &'a [u8],
    interrupted: bool,
    ok_bytes: usize,
}

impl Read for Flaky<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if !self.interrupted {
            self.interrupted = true;
            return Err(io::Error::from(io::ErrorKind::Interrupted));
        }
        if self.ok_bytes == 0 {
            return Err(io::Error::other("disk on fire"));
        }
        let n = out.len().min(self.ok_bytes).min(self.bytes.len());
        out[..n].copy_from_slice(&self.bytes[..n]);
        self.bytes = &self.bytes[n..];
        self.ok_bytes -= n;
        Ok(n)
    }
}

#[test]
fn every_version_is_detected_and_read_to_a_clean_end() {
    for version in FormatVersion::DETECTION_ORDER {
        let bytes = file_of(version, 6);
        let (records, report) = read_all(&bytes[..]);
        let expected: Vec<QperfRecord> = (0..6).map(|i| as_version(&sample(i), version)).collect();
        assert_eq!(records, expected, "{version}");
        assert_eq!(
            report,
            ReadReport {
                version: Some(version),
                records: 6,
                bytes_read: bytes.len() as u64,
                end: ReadEnd::CleanEof,
                rest_unread: false,
            }
        );
    }
}

#[test]
fn v2_file_of_kernel_addresses_fails_v3_and_is_read_as_v2() {
    let bytes = file_of(FormatVersion::V2, 6);
    let Detection::Found(FormatVersion::V2) = detect_version(&bytes, true) else {
        panic!("expected v2: {:?}", detect_version(&bytes, true));
    };
    // As v3 the first record runs into the address bytes and hits a reserved marker.
    assert_eq!(
        decode_record(&bytes, FormatVersion::V3),
        Err(DecodeError::Corrupt(CorruptKind::ReservedMarker {
            field: Field::TraceEntry(4),
            at: 27
        }))
    );
}

#[test]
fn v2_file_can_be_misread_as_v3_exactly_as_the_reference_would() {
    // Nothing in the format rules this out (spec §1.6 item 3): with an address whose low
    // byte is 0 the first v2 record and a half read as one v3 record with an empty trace.
    let mut bytes = Vec::new();
    for (elapsed_ns, address) in [
        (1_000_000, 0xffff_ffc0_8020_0000u64),
        (2_000_000, 0xffff_ffc0_8020_0100),
    ] {
        encode_record(
            &QperfRecord {
                elapsed_ns: Some(elapsed_ns),
                trace: vec![address],
                ..QperfRecord::default()
            },
            FormatVersion::V2,
            &mut bytes,
        );
    }
    assert_eq!(detect_version(&bytes, true), Detection::Found(FormatVersion::V3));
    let (records, report) = read_all(&bytes[..]);
    assert_eq!(records.len(), 1);
    assert_eq!(
        (records[0].pc, records[0].sp, records[0].trace.len()),
        (1, Some(0xffff_ffc0_8020_0000), 0)
    );
    assert_eq!(report.version, Some(FormatVersion::V3));
    assert!(
        matches!(report.end, ReadEnd::Truncated { .. } | ReadEnd::Corrupt { .. }),
        "{report}"
    );
}

#[test]
fn two_entry_v1_trace_fails_v3_with_eof_and_v2_by_length_then_reads_as_v1() {
    let mut bytes = Vec::new();
    encode_u64(2, &mut bytes);
    encode_u64(0xffff_ffc0_8020_1234, &mut bytes);
    encode_u64(0xffff_ffc0_8020_0010, &mut bytes);
    assert_eq!(
        decode_record(&bytes, FormatVersion::V3),
        Err(DecodeError::Incomplete { needed_at_least: 4 })
    );
    assert!(matches!(
        decode_record(&bytes, FormatVersion::V2),
        Err(DecodeError::Corrupt(CorruptKind::TraceTooLong {
            limit: 32766,
            at: 1,
            ..
        }))
    ));
    assert_eq!(detect_version(&bytes, true), Detection::Found(FormatVersion::V1));
    // While the file may still grow, v3 is only a prefix: wait rather than fall back.
    assert_eq!(
        detect_version(&bytes, false),
        Detection::NeedMore { needed_at_least: 4 }
    );
    let (records, report) = read_all(&bytes[..]);
    assert_eq!(
        records[0].trace,
        vec![0xffff_ffc0_8020_1234, 0xffff_ffc0_8020_0010]
    );
    assert_eq!(
        (report.version, report.records, report.end),
        (Some(FormatVersion::V1), 1, ReadEnd::CleanEof)
    );
}

#[test]
fn truncated_last_record_keeps_the_others_and_says_where() {
    let whole = file_of(FormatVersion::V3, 4);
    let three = file_of(FormatVersion::V3, 3).len();
    let bytes = &whole[..three + 12];
    let (records, report) = read_all(bytes);
    assert_eq!(records.len(), 3);
    let offset = three as u64;
    assert_eq!(
        report.end,
        ReadEnd::Truncated {
            offset,
            bytes_lost: 12
        }
    );
    assert_eq!(
        report.to_string(),
        format!(
            "read 3 v3 records ({} bytes); truncated last record at byte {offset}: 12 bytes lost",
            three + 12
        )
    );
}

#[test]
fn corrupt_record_in_the_middle_keeps_the_records_before_it() {
    let mut bytes = file_of(FormatVersion::V3, 2);
    let offset = bytes.len() as u64;
    bytes.push(0xFF);
    bytes.extend(file_of(FormatVersion::V3, 5));
    let (records, report) = read_all(&bytes[..]);
    assert_eq!(records, vec![sample(0), sample(1)]);
    let reason = CorruptKind::ReservedMarker {
        field: Field::ElapsedNs,
        at: 0,
    };
    assert_eq!(
        report.end,
        ReadEnd::Corrupt {
            offset,
            bytes_lost: bytes.len() as u64 - offset,
            reason
        }
    );
    assert_eq!(report.bytes_read, bytes.len() as u64);
}

#[test]
fn hostile_trace_length_mid_file_is_corrupt_not_truncated() {
    let mut bytes = file_of(FormatVersion::V3, 1);
    let offset = bytes.len() as u64;
    bytes.extend_from_slice(&[0, 0, 0, 0, 0, 0]);
    encode_u64(u64::MAX, &mut bytes);
    let (records, report) = read_all(&bytes[..]);
    assert_eq!(records.len(), 1);
    let reason = CorruptKind::TraceTooLong {
        len: u64::MAX,
        limit: 32762,
        at: 6,
    };
    assert_eq!(
        report.end,
        ReadEnd::Corrupt {
            offset,
            bytes_lost: 15,
            reason
        }
    );
}

#[test]
fn empty_input_is_its_own_ending() {
    let (records, report) = read_all(&[][..]);
    assert!(records.is_empty());
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
fn undetectable_file_reports_all_three_failures() {
    let bytes = [0xFF, 1, 2, 3];
    let (records, report) = read_all(&bytes[..]);
    assert!(records.is_empty());
    let reserved = |field| DecodeError::Corrupt(CorruptKind::ReservedMarker { field, at: 0 });
    let end = ReadEnd::Undetectable {
        v3: reserved(Field::ElapsedNs),
        v2: reserved(Field::ElapsedNs),
        v1: reserved(Field::TraceLen),
    };
    assert_eq!(
        report,
        ReadReport {
            version: None,
            records: 0,
            bytes_read: 4,
            end,
            rest_unread: false,
        }
    );
    assert_eq!(report.bytes_lost(), 4);
}

#[test]
fn one_byte_reads_give_the_same_records_and_report() {
    for version in FormatVersion::DETECTION_ORDER {
        let mut bytes = file_of(version, 20);
        bytes.extend_from_slice(&[0xFD, 1, 2]);
        assert_eq!(read_all(OneByte(&bytes)), read_all(&bytes[..]), "{version}");
    }
}

#[test]
fn records_spanning_chunk_boundaries_all_arrive() {
    let count = 10_000;
    let bytes = file_of(FormatVersion::V3, count);
    assert!(bytes.len() > 4 * CHUNK_BYTES);
    let mut reader = QperfReader::new(&bytes[..]);
    let mut seen = 0;
    let mut largest_buffer = 0;
    while let Some(record) = reader.next_record().expect("no I/O error") {
        assert_eq!(record, sample(seen));
        seen += 1;
        largest_buffer = largest_buffer.max(reader.buf.capacity());
    }
    assert_eq!(seen, count);
    // Bounded by one chunk plus one partial record, not by the file.
    assert!(
        largest_buffer <= CHUNK_BYTES + MAX_RECORD_WIRE_BYTES,
        "{largest_buffer}"
    );
    assert_eq!(reader.finish().end, ReadEnd::CleanEof);
}

#[test]
fn largest_allowed_record_is_read_through_several_chunks() {
    let trace: Vec<u64> = (0..32762).map(|i| KERNEL + i).collect();
    let big = QperfRecord { trace, ..sample(0) };
    let mut bytes = Vec::new();
    encode_record(&big, FormatVersion::V3, &mut bytes);
    encode_record(&sample(1), FormatVersion::V3, &mut bytes);
    assert!(bytes.len() > 4 * CHUNK_BYTES);
    let (records, report) = read_all(&bytes[..]);
    assert_eq!(records, vec![big, sample(1)]);
    assert_eq!(report.end, ReadEnd::CleanEof);
}

#[test]
fn finish_reads_the_rest_after_an_early_stop() {
    let bytes = file_of(FormatVersion::V3, 50);
    let mut reader = QperfReader::new(&bytes[..]);
    assert_eq!(reader.version(), None);
    assert_eq!(reader.next_record().expect("ok"), Some(sample(0)));
    assert_eq!(reader.version(), Some(FormatVersion::V3));
    let report = reader.finish();
    assert_eq!(
        (report.records, report.bytes_read, report.end),
        (50, bytes.len() as u64, ReadEnd::CleanEof)
    );
}

#[test]
fn interrupted_reads_are_retried_and_real_errors_end_the_read_once() {
    let bytes = file_of(FormatVersion::V3, 3);
    let first = file_of(FormatVersion::V3, 1).len();
    let mut reader = QperfReader::new(Flaky {
        bytes: &bytes,
        interrupted: false,
        ok_bytes: first + 2,
    });
    assert_eq!(reader.next_record().expect("first record"), Some(sample(0)));
    let error = reader.next_record().expect_err("second read fails");
    assert_eq!(error.to_string(), "disk on fire");
    assert_eq!(reader.next_record().expect("ended"), None);
    let report = reader.finish();
    let end = ReadEnd::Io {
        offset: first as u64,
        message: "disk on fire".into(),
    };
    assert_eq!(
        (report.records, report.bytes_read, report.end),
        (1, first as u64 + 2, end)
    );
}

#[test]
fn read_file_reads_from_disk_and_a_missing_file_is_an_io_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("qperf.bin");
    std::fs::write(&path, file_of(FormatVersion::V3, 7)).expect("write");
    let (records, report) = read_file(&path).expect("read");
    assert_eq!(records.len(), 7);
    assert_eq!(report.end, ReadEnd::CleanEof);
    let mut pcs = Vec::new();
    let streamed = read_file_with(&path, |r| pcs.push(r.pc)).expect("stream");
    assert_eq!(streamed, report);
    assert_eq!(pcs, records.iter().map(|r| r.pc).collect::<Vec<_>>());
    let missing = read_file(dir.path().join("absent.bin")).expect_err("missing");
    assert_eq!(missing.kind(), io::ErrorKind::NotFound);
}

#[test]
fn no_prefix_of_junk_panics_or_misreports_lengths() {
    let mut rng = crate::model::test_rng::TestRng::new(0x9e37_79b9_7f4a_7c15);
    for round in 0..300 {
        let len = (round * 7) % 200;
        let junk: Vec<u8> = (0..len).map(|_| (rng.next_u64() >> 24) as u8).collect();
        let (_, report) = read_all(&junk[..]);
        assert_eq!(report.bytes_read, len as u64);
        assert!(report.bytes_lost() <= len as u64);
    }
}

#[test]
fn a_run_of_zeros_where_a_record_starts_is_a_hole_and_ends_the_read() {
    // Records, then a zeroed block (a crash, a preallocation), then more bytes.
    let mut bytes = file_of(FormatVersion::V3, 5);
    let hole_at = bytes.len() as u64;
    bytes.extend(std::iter::repeat_n(0u8, ZERO_RUN_BYTES + 10));
    let (records, report) = read_all(&bytes[..]);
    assert_eq!(records.len(), 5);
    assert_eq!(
        report.end,
        ReadEnd::Corrupt {
            offset: hole_at,
            bytes_lost: ZERO_RUN_BYTES as u64 + 10,
            reason: CorruptKind::ZeroRun {
                bytes: ZERO_RUN_BYTES
            },
        }
    );
    assert!(
        report
            .to_string()
            .contains("4096 zero bytes where a record starts"),
        "{report}"
    );
    // Fewer zeros than a block still decode, as the reference reads them (7-byte records).
    let mut short = file_of(FormatVersion::V3, 1);
    short.extend([0u8; 14]);
    let (records, report) = read_all(&short[..]);
    assert_eq!((records.len(), report.end), (3, ReadEnd::CleanEof));
}

#[test]
fn endless_zeros_end_at_once_and_an_endless_stream_is_counted_only_so_far() {
    let (records, report) = read_all(io::repeat(0));
    assert!(records.is_empty());
    assert!(matches!(
        report.end,
        ReadEnd::Corrupt {
            offset: 0,
            reason: CorruptKind::ZeroRun { .. },
            ..
        }
    ));
    assert!(report.rest_unread);
    // What was buffered, and the stream drained up to the cap.
    let lost = report.bytes_lost();
    assert!(
        (MAX_DRAINED_BYTES..MAX_DRAINED_BYTES + (1 << 20)).contains(&lost),
        "{lost}"
    );
    assert!(
        report
            .to_string()
            .contains(" lost (a stream, read no further than 67 108 864 bytes past"),
        "{report}"
    );
    // With the input's length known (a regular file), the rest is not read at all.
    let mut reader = QperfReader::new(io::repeat(0)).with_input_len(Some(1 << 40));
    assert_eq!(reader.next_record().unwrap(), None);
    let report = reader.finish();
    assert!(!report.rest_unread);
    assert_eq!(report.bytes_lost(), 1 << 40);
}
