//! Untrusted bytes through every qperf.bin decoding path: the streaming reader (with
//! detection), and a single record in each version. None may panic or allocate without
//! bound; what decodes must re-encode to bytes that decode to the same record.
#![no_main]

use libfuzzer_sys::fuzz_target;
use perfscope::sources::qperf_file::{FormatVersion, QperfReader, decode_record, encode_record};

fuzz_target!(|data: &[u8]| {
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
});
