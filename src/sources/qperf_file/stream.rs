//! Decoding a live record stream (the plugin's socket): the same bytes as a qperf.bin,
//! arriving in arbitrary chunks. Partial records wait for the rest; a corrupt record ends
//! the stream for good (no resync guessing), exactly as the file tail does.

use super::report::ReadEnd;
use super::tail::decode_available;
use super::{FormatVersion, QperfRecord};

/// Turns chunks of stream bytes into records.
#[derive(Debug, Default)]
pub struct StreamDecoder {
    pending: Vec<u8>,
    /// Stream offset of `pending[0]`.
    offset: u64,
    version: Option<FormatVersion>,
    records: u64,
    end: Option<ReadEnd>,
}

impl StreamDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Add received bytes; returns the records they completed. After the stream ended
    /// (corrupt or undetectable), further bytes are ignored: see [`end`](Self::end).
    pub fn push(&mut self, bytes: &[u8]) -> Vec<QperfRecord> {
        let mut records = Vec::new();
        if self.end.is_some() {
            return records;
        }
        self.pending.extend_from_slice(bytes);
        let (used, end) = decode_available(&self.pending, &mut self.version, self.offset, &mut records);
        self.pending.drain(..used);
        self.offset += used as u64;
        self.records += records.len() as u64;
        self.end = end;
        records
    }

    pub fn version(&self) -> Option<FormatVersion> {
        self.version
    }

    pub fn records(&self) -> u64 {
        self.records
    }

    /// Bytes of an incomplete record still waiting.
    pub fn pending_bytes(&self) -> usize {
        self.pending.len()
    }

    /// Why decoding stopped, if it did.
    pub fn end(&self) -> Option<&ReadEnd> {
        self.end.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::qperf_file::{Callchain, encode_v3};

    fn record(i: u64) -> QperfRecord {
        QperfRecord {
            elapsed_ns: Some(i * 1000),
            pc: 0xffffffc080200000 + i,
            sp: Some(1),
            fp: Some(2),
            cpu: Some(0),
            callchain: Some(Callchain::Fp),
            trace: vec![0xffffffc080200000 + i, 0xffffffc080201000],
        }
    }

    #[test]
    fn byte_by_byte_gives_the_same_records_and_corruption_ends_it() {
        let mut bytes = Vec::new();
        let want: Vec<QperfRecord> = (0..5).map(record).collect();
        for r in &want {
            encode_v3(r, &mut bytes);
        }
        let mut d = StreamDecoder::new();
        let mut got = Vec::new();
        for b in &bytes {
            got.extend(d.push(std::slice::from_ref(b)));
        }
        assert_eq!(got, want);
        assert_eq!(d.version(), Some(FormatVersion::V3));
        assert_eq!((d.records(), d.pending_bytes()), (5, 0));
        // A hostile trace length (u64::MAX): the stream ends with the offset of the record.
        let mut hostile = Vec::new();
        encode_v3(
            &QperfRecord {
                trace: Vec::new(),
                ..record(9)
            },
            &mut hostile,
        );
        assert_eq!(hostile.pop(), Some(0), "an empty trace ends in a zero length");
        hostile.push(0xfd);
        hostile.extend_from_slice(&u64::MAX.to_le_bytes());
        assert!(d.push(&hostile).is_empty());
        match d.end() {
            Some(ReadEnd::Corrupt { offset, .. }) => assert_eq!(*offset, bytes.len() as u64),
            other => panic!("expected a corrupt end, got {other:?}"),
        }
        assert!(d.push(&bytes).is_empty(), "nothing after the end");
    }
}
