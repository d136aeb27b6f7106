//! Untrusted bytes through every qperf.bin decoding path: the streaming reader (with
//! detection), and a single record in each version. None may panic or allocate without
//! bound; what decodes must re-encode to bytes that decode to the same record.

use perfscope::sources::qperf_file::{
    Callchain, FormatVersion, QperfReader, QperfRecord, decode_record, encode_record,
};

pub fn run(data: &[u8]) {
    let mut reader = QperfReader::new(data);
    let mut records = 0u64;
    while let Ok(Some(_)) = reader.next_record() {
        records += 1;
    }
    let report = reader.finish();
    assert_eq!(report.records, records);
    assert!(report.bytes_lost() <= data.len() as u64);

    for version in FormatVersion::DETECTION_ORDER {
        if let Ok((record, used)) = decode_record(data, version) {
            assert!(used <= data.len());
            let mut again = Vec::new();
            encode_record(&record, version, &mut again);
            let (back, n) = decode_record(&again, version).expect("re-encoded record decodes");
            assert_eq!(n, again.len());
            assert_eq!(back, record);
        }
    }
}

/// A few records of each version, as the plugin and older plugins write them.
pub fn generated_seeds() -> Vec<Vec<u8>> {
    FormatVersion::DETECTION_ORDER
        .iter()
        .map(|&version| {
            let mut bytes = Vec::new();
            for i in 0..4u64 {
                let record = QperfRecord {
                    elapsed_ns: Some(1_000 * i),
                    pc: 0xffff_ffc0_8020_0000 + i,
                    sp: Some(0xffff_ffc0_8100_0000),
                    fp: Some(0xffff_ffc0_8100_0040),
                    cpu: Some(i as u32 % 2),
                    callchain: Some(Callchain::Fp),
                    trace: vec![0xffff_ffc0_8020_0000 + i, 0xffff_ffc0_8020_1000],
                };
                encode_record(&record, version, &mut bytes);
            }
            bytes
        })
        .collect()
}
