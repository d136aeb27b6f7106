use super::*;
use crate::sources::perf_event::record::{CONTEXT_KERNEL, Record, decode};

/// A sample record: header, then `words`, then the raw record (size + bytes, padded).
fn sample(words: &[u64], raw: Option<&[u8]>) -> Vec<u8> {
    let mut bytes = b::PERF_RECORD_SAMPLE.to_le_bytes().to_vec();
    bytes.extend_from_slice(&[0, 0, 0, 0]);
    for word in words {
        bytes.extend_from_slice(&word.to_le_bytes());
    }
    if let Some(raw) = raw {
        bytes.extend_from_slice(&(raw.len() as u32).to_le_bytes());
        bytes.extend_from_slice(raw);
    }
    while !bytes.len().is_multiple_of(8) {
        bytes.push(0);
    }
    let size = bytes.len() as u16;
    bytes[6..8].copy_from_slice(&size.to_le_bytes());
    bytes
}

fn format(sample_type: u32, read_format: u32) -> SampleFormat {
    SampleFormat {
        sample_type: u64::from(sample_type),
        read_format: u64::from(read_format),
        sample_id_all: true,
        regs_user: 0,
    }
}

/// What the full decode says of the same record, as fields.
fn decoded<'a>(record: &'a [u8], format: &SampleFormat) -> Option<SampleFields<'a>> {
    let Ok(Record::Sample(s)) = decode(record, format) else {
        return None;
    };
    Some(SampleFields {
        time_ns: s.time?,
        cpu: s.cpu?,
        pid: s.pid?,
        tid: s.tid?,
        raw: s.raw,
        callchain: s.callchain,
        user_regs: s.user_regs,
        user_stack: s.user_stack,
    })
}

#[test]
fn a_tracepoint_sample_is_read_at_its_offsets() {
    // What a tracing session opens: identifier, tid, time, cpu, period, raw.
    let format = format(
        b::PERF_SAMPLE_IDENTIFIER
            | b::PERF_SAMPLE_TID
            | b::PERF_SAMPLE_TIME
            | b::PERF_SAMPLE_CPU
            | b::PERF_SAMPLE_PERIOD
            | b::PERF_SAMPLE_RAW,
        0,
    );
    let layout = SampleLayout::new(&format);
    let record = sample(&[77, 100 | (101 << 32), 5_000, 3, 1], Some(&[9, 8, 7, 6, 5]));
    let fields = layout.fields(&record).unwrap();
    assert_eq!(
        (fields.time_ns, fields.cpu, fields.pid, fields.tid, fields.raw),
        (5_000, 3, 100, 101, &[9, 8, 7, 6, 5][..])
    );
    assert_eq!(fields.callchain.len_words(), 0);
    assert_eq!(layout.time(&record), Some(5_000));
    assert_eq!(Some(fields), decoded(&record, &format));
    // A raw size running past the record is no sample, as for the full decode.
    let mut torn = record.clone();
    torn[8 + 5 * 8..8 + 5 * 8 + 4].copy_from_slice(&400u32.to_le_bytes());
    assert_eq!(layout.fields(&torn), None);
    assert!(decode(&torn, &format).is_err());
}

#[test]
fn a_read_value_and_a_callchain_move_the_raw_record() {
    let format = format(
        b::PERF_SAMPLE_IP
            | b::PERF_SAMPLE_TID
            | b::PERF_SAMPLE_TIME
            | b::PERF_SAMPLE_CPU
            | b::PERF_SAMPLE_READ
            | b::PERF_SAMPLE_CALLCHAIN
            | b::PERF_SAMPLE_RAW,
        b::PERF_FORMAT_TOTAL_TIME_ENABLED | b::PERF_FORMAT_ID,
    );
    let layout = SampleLayout::new(&format);
    let record = sample(
        &[
            0x1000,
            5 | (6 << 32),
            9_000,
            1,
            42,
            7,
            8,
            2,
            CONTEXT_KERNEL,
            0xffff_ffff_8100_0000,
        ],
        Some(&[1, 2, 3]),
    );
    let fields = layout.fields(&record).unwrap();
    assert_eq!(fields.raw, &[1, 2, 3]);
    assert_eq!(
        fields.callchain.kernel_ips().collect::<Vec<_>>(),
        [0xffff_ffff_8100_0000]
    );
    assert_eq!(Some(fields), decoded(&record, &format));
    // A group read has no fixed size: no layout for it, the full decode takes over.
    let group = SampleLayout::new(&SampleFormat {
        read_format: u64::from(b::PERF_FORMAT_GROUP),
        ..format
    });
    assert_eq!(group.fields(&record), None);
    assert_eq!(
        group.time(&record),
        Some(9_000),
        "the time sits before the read value"
    );
}

#[test]
fn formats_without_time_tid_or_cpu_have_no_fields() {
    for missing in [b::PERF_SAMPLE_TIME, b::PERF_SAMPLE_TID, b::PERF_SAMPLE_CPU] {
        let all = b::PERF_SAMPLE_TID | b::PERF_SAMPLE_TIME | b::PERF_SAMPLE_CPU | b::PERF_SAMPLE_RAW;
        let format = format(all & !missing, 0);
        let record = sample(&[1, 2], Some(&[0; 4]));
        assert_eq!(SampleLayout::new(&format).fields(&record), None);
    }
}

/// On any bytes and any format, the layout agrees with the full decode: what it reads is
/// what the decode reads, and it reads every sample the decode can (but group reads).
#[test]
fn random_records_read_as_the_full_decode_reads_them() {
    let mut rng = crate::model::test_rng::TestRng::new(0x9e37_79b9_7f4a_7c15);
    let mut next = || rng.next_u64();
    let mut agreed = 0;
    for _ in 0..50_000 {
        let format = SampleFormat {
            // Most of them with what a tracing session needs, to reach the deep paths.
            sample_type: (next() & 0x1_ffff)
                | if next() % 4 == 0 {
                    0
                } else {
                    u64::from(b::PERF_SAMPLE_TID | b::PERF_SAMPLE_TIME | b::PERF_SAMPLE_CPU)
                },
            read_format: next() & 0x1f,
            sample_id_all: true,
            // A few registers at most, so user tails fit the short records.
            regs_user: next() & 0x7,
        };
        let words: Vec<u64> = (0..next() % 14)
            .map(|_| if next() % 3 == 0 { next() % 4 } else { next() })
            .collect();
        let raw_len = (next() % 12) as usize;
        let raw: Vec<u8> = (0..raw_len).map(|_| next() as u8).collect();
        let mut record = sample(&words, (next() % 2 == 0).then_some(&raw[..]));
        if next() % 8 == 0 {
            let cut = (next() as usize) % record.len();
            record.truncate(cut);
        }
        let layout = SampleLayout::new(&format);
        let lean = layout.fields(&record);
        let full = decoded(&record, &format);
        let group = format.read_format & u64::from(b::PERF_FORMAT_GROUP) != 0
            && format.sample_type & u64::from(b::PERF_SAMPLE_READ) != 0;
        if group {
            assert_eq!(lean, None);
        } else {
            assert_eq!(lean, full, "{format:?} {record:?}");
            agreed += usize::from(lean.is_some());
        }
        if full.is_some() {
            assert_eq!(layout.time(&record), full.map(|f| f.time_ns));
        }
    }
    assert!(
        agreed > 1_000,
        "enough well-formed samples were compared: {agreed}"
    );
}
