//! Tests of the record layouts: the spec's worked examples, limits, prefixes.

use super::*;

const LEAF_EXAMPLE: [u8; 28] = [
    0xfc, 0x60, 0xe3, 0x16, 0x00, 0xfd, 0x34, 0x12, 0x20, 0x80, 0xc0, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00,
    0x00, 0x01, 0xfd, 0x34, 0x12, 0x20, 0x80, 0xc0, 0xff, 0xff, 0xff,
];
const FP_EXAMPLE: [u8; 40] = [
    0xfa, 0xfc, 0x00, 0x00, 0x20, 0x80, 0xfd, 0x00, 0x0f, 0x00, 0x81, 0xc0, 0xff, 0xff, 0xff, 0xfd, 0x40,
    0x0f, 0x00, 0x81, 0xc0, 0xff, 0xff, 0xff, 0x03, 0x01, 0x03, 0xfc, 0x00, 0x00, 0x20, 0x80, 0xfb, 0x2c,
    0x01, 0xfc, 0x70, 0x11, 0x01, 0x00,
];

fn leaf_record() -> QperfRecord {
    QperfRecord {
        elapsed_ns: Some(1_500_000),
        pc: 0xffff_ffc0_8020_1234,
        sp: None,
        fp: None,
        cpu: Some(0),
        callchain: Some(Callchain::Leaf),
        trace: vec![0xffff_ffc0_8020_1234],
    }
}

fn fp_record() -> QperfRecord {
    QperfRecord {
        elapsed_ns: Some(250),
        pc: 0x8020_0000,
        sp: Some(0xffff_ffc0_8100_0f00),
        fp: Some(0xffff_ffc0_8100_0f40),
        cpu: Some(3),
        callchain: Some(Callchain::Fp),
        trace: vec![0x8020_0000, 300, 70000],
    }
}

fn v3(record: &QperfRecord) -> Vec<u8> {
    let mut out = Vec::new();
    encode_v3(record, &mut out);
    out
}

/// A v3 header (all fields 0 except callchain 1) followed by a raw trace length.
fn v3_header_with_len(len: u64) -> Vec<u8> {
    let mut out = vec![0, 0, 0, 0, 0, 1];
    encode_u64(len, &mut out);
    out
}

#[test]
fn worked_leaf_example_encodes_and_decodes_byte_for_byte() {
    assert_eq!(v3(&leaf_record()), LEAF_EXAMPLE);
    assert_eq!(
        decode_record(&LEAF_EXAMPLE, FormatVersion::V3),
        Ok((leaf_record(), 28))
    );
}

#[test]
fn worked_fp_example_encodes_and_decodes_byte_for_byte() {
    assert_eq!(v3(&fp_record()), FP_EXAMPLE);
    assert_eq!(
        decode_record(&FP_EXAMPLE, FormatVersion::V3),
        Ok((fp_record(), 40))
    );
}

#[test]
fn decode_takes_only_its_record_from_a_longer_buffer() {
    let mut both = LEAF_EXAMPLE.to_vec();
    both.extend_from_slice(&FP_EXAMPLE);
    let (first, used) = decode_record(&both, FormatVersion::V3).expect("first record");
    assert_eq!((first, used), (leaf_record(), 28));
    assert_eq!(
        decode_record(&both[used..], FormatVersion::V3),
        Ok((fp_record(), 40))
    );
}

#[test]
fn v3_zero_sp_fp_are_absent_but_cpu_zero_is_kept() {
    let (record, _) = decode_record(&LEAF_EXAMPLE, FormatVersion::V3).expect("decodes");
    assert_eq!((record.sp, record.fp, record.cpu), (None, None, Some(0)));
}

#[test]
fn v3_callchain_is_a_raw_byte() {
    let mut bytes = vec![0, 0, 0, 0, 0, 0xFF, 0];
    let (record, used) = decode_record(&bytes, FormatVersion::V3).expect("decodes");
    assert_eq!((record.callchain, used), (Some(Callchain::Unknown(0xFF)), 7));
    bytes[5] = 0xFB;
    let (record, used) = decode_record(&bytes, FormatVersion::V3).expect("decodes");
    assert_eq!((record.callchain, used), (Some(Callchain::Unknown(0xFB)), 7));
}

#[test]
fn v3_cpu_with_u64_marker_is_corrupt() {
    let mut bytes = vec![0, 0, 0, 0, 0xFD];
    bytes.extend_from_slice(&[3, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    let expected = CorruptKind::U64MarkerOnU32 {
        field: Field::Cpu,
        at: 4,
    };
    assert_eq!(
        decode_record(&bytes, FormatVersion::V3),
        Err(DecodeError::Corrupt(expected))
    );
}

#[test]
fn v2_hand_built_record_decodes_with_pc_from_the_trace() {
    let mut bytes = Vec::new();
    encode_u64(1_000_000, &mut bytes);
    encode_u64(2, &mut bytes);
    encode_u64(0xffff_ffc0_8020_1234, &mut bytes);
    encode_u64(0xffff_ffc0_8020_0010, &mut bytes);
    assert_eq!(bytes.len(), 5 + 1 + 9 + 9);
    let expected = QperfRecord {
        elapsed_ns: Some(1_000_000),
        pc: 0xffff_ffc0_8020_1234,
        trace: vec![0xffff_ffc0_8020_1234, 0xffff_ffc0_8020_0010],
        ..QperfRecord::default()
    };
    assert_eq!(decode_record(&bytes, FormatVersion::V2), Ok((expected, 24)));
}

#[test]
fn v1_hand_built_record_has_no_time_and_empty_trace_has_pc_zero() {
    let bytes = [0x01, 0xFB, 0x34, 0x12, 0x00];
    let (record, used) = decode_record(&bytes, FormatVersion::V1).expect("decodes");
    assert_eq!(used, 4);
    assert_eq!(
        record,
        QperfRecord {
            pc: 0x1234,
            trace: vec![0x1234],
            ..QperfRecord::default()
        }
    );
    let (empty, used) = decode_record(&[0x00], FormatVersion::V1).expect("decodes");
    assert_eq!(
        (empty.pc, empty.elapsed_ns, empty.trace.len(), used),
        (0, None, 0, 1)
    );
}

#[test]
fn legacy_encoders_round_trip_what_their_version_keeps() {
    let record = fp_record();
    for version in FormatVersion::DETECTION_ORDER {
        let mut bytes = Vec::new();
        encode_record(&record, version, &mut bytes);
        let (back, used) = decode_record(&bytes, version).expect("round trip");
        assert_eq!(used, bytes.len());
        assert_eq!(back.trace, record.trace);
        assert_eq!(back.pc, record.pc);
        let time = if version == FormatVersion::V1 {
            None
        } else {
            Some(250)
        };
        assert_eq!(back.elapsed_ns, time);
    }
}

#[test]
fn v3_longest_allowed_trace_decodes() {
    let mut bytes = v3_header_with_len(32762);
    bytes.extend(std::iter::repeat_n(0x07, 32762));
    let (record, used) = decode_record(&bytes, FormatVersion::V3).expect("at the limit");
    assert_eq!((record.trace.len(), used), (32762, bytes.len()));
}

#[test]
fn trace_one_past_the_limit_is_corrupt_before_any_entry_is_read() {
    // No entry bytes at all: the length alone must be rejected, not waited for.
    for (version, limit) in [
        (FormatVersion::V3, 32762),
        (FormatVersion::V2, 32766),
        (FormatVersion::V1, 32767),
    ] {
        let mut bytes = match version {
            FormatVersion::V3 => vec![0, 0, 0, 0, 0, 0],
            FormatVersion::V2 => vec![0],
            FormatVersion::V1 => vec![],
        };
        let at = bytes.len();
        encode_u64(limit + 1, &mut bytes);
        let expected = CorruptKind::TraceTooLong {
            len: limit + 1,
            limit,
            at,
        };
        assert_eq!(
            decode_record(&bytes, version),
            Err(DecodeError::Corrupt(expected)),
            "{version}"
        );
    }
}

#[test]
fn hostile_u64_max_trace_length_is_corrupt_without_allocating() {
    let mut v1 = Vec::new();
    encode_u64(u64::MAX, &mut v1);
    let expected = CorruptKind::TraceTooLong {
        len: u64::MAX,
        limit: 32767,
        at: 0,
    };
    assert_eq!(
        decode_record(&v1, FormatVersion::V1),
        Err(DecodeError::Corrupt(expected))
    );
    let v3_bytes = v3_header_with_len(u64::MAX);
    let expected = CorruptKind::TraceTooLong {
        len: u64::MAX,
        limit: 32762,
        at: 6,
    };
    assert_eq!(
        decode_record(&v3_bytes, FormatVersion::V3),
        Err(DecodeError::Corrupt(expected))
    );
}

#[test]
fn every_prefix_of_a_record_is_incomplete_with_a_true_lower_bound() {
    for example in [&LEAF_EXAMPLE[..], &FP_EXAMPLE[..]] {
        for cut in 0..example.len() {
            match decode_record(&example[..cut], FormatVersion::V3) {
                Err(DecodeError::Incomplete { needed_at_least }) => {
                    assert!(needed_at_least >= 1, "cut {cut}");
                    assert!(
                        cut + needed_at_least <= example.len(),
                        "cut {cut} hint {needed_at_least}"
                    );
                }
                other => panic!("cut {cut}: {other:?}"),
            }
        }
    }
    assert_eq!(
        decode_record(&LEAF_EXAMPLE[..27], FormatVersion::V3),
        Err(DecodeError::Incomplete { needed_at_least: 1 })
    );
    // After elapsed_ns: pc, sp, fp, cpu, callchain and the trace length remain.
    assert_eq!(
        decode_record(&LEAF_EXAMPLE[..5], FormatVersion::V3),
        Err(DecodeError::Incomplete { needed_at_least: 6 })
    );
}

#[test]
fn a_buffer_of_the_maximum_record_size_never_decodes_as_incomplete() {
    // The readers bound their buffers on this: junk of that length must be decided.
    let mut rng = crate::model::test_rng::TestRng::new(0x2545_f491_4f6c_dd1d);
    for version in FormatVersion::DETECTION_ORDER {
        for _ in 0..10 {
            let mut junk = Vec::with_capacity(version.max_record_wire_bytes());
            while junk.len() < version.max_record_wire_bytes() {
                let state = rng.next_u64();
                // Mostly small bytes so traces get long before a marker ends them.
                junk.push(if state.is_multiple_of(4) {
                    (state >> 8) as u8
                } else {
                    (state >> 8) as u8 % 8
                });
            }
            let result = decode_record(&junk, version);
            assert!(
                !matches!(result, Err(DecodeError::Incomplete { .. })),
                "{version}: {result:?}"
            );
        }
        let mut widest = vec![0xFD; version.max_record_wire_bytes()];
        let max = version.max_trace_len();
        let len_at = match version {
            FormatVersion::V3 => {
                widest[36] = 0xFC;
                widest[37..41].fill(0);
                widest[41] = 1;
                42
            }
            FormatVersion::V2 => 9,
            FormatVersion::V1 => 0,
        };
        widest[len_at + 1..len_at + 9].copy_from_slice(&max.to_le_bytes());
        let (record, used) = decode_record(&widest, version).expect("widest record");
        assert_eq!(
            (record.trace.len() as u64, used),
            (max, version.max_record_wire_bytes())
        );
        let short = &widest[..widest.len() - 1];
        assert_eq!(
            decode_record(short, version),
            Err(DecodeError::Incomplete { needed_at_least: 1 })
        );
    }
}
