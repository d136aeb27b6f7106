use super::*;
use crate::sources::perf_event::sample_layout::SampleLayout;

/// Builds a record as the kernel lays it out: header, then words/bytes, padded to 8.
pub(super) struct Builder {
    bytes: Vec<u8>,
}

impl Builder {
    pub(super) fn new(record_type: u32, misc: u16) -> Builder {
        let mut bytes = record_type.to_le_bytes().to_vec();
        bytes.extend_from_slice(&misc.to_le_bytes());
        bytes.extend_from_slice(&[0, 0]);
        Builder { bytes }
    }
    pub(super) fn u64(mut self, v: u64) -> Self {
        self.bytes.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub(super) fn u32s(mut self, a: u32, b: u32) -> Self {
        self.bytes.extend_from_slice(&a.to_le_bytes());
        self.bytes.extend_from_slice(&b.to_le_bytes());
        self
    }
    pub(super) fn bytes(mut self, data: &[u8]) -> Self {
        self.bytes.extend_from_slice(data);
        self
    }
    pub(super) fn pad(mut self) -> Self {
        while !self.bytes.len().is_multiple_of(8) {
            self.bytes.push(0);
        }
        self
    }
    pub(super) fn finish(mut self) -> Vec<u8> {
        let size = self.bytes.len() as u16;
        self.bytes[6..8].copy_from_slice(&size.to_le_bytes());
        self.bytes
    }
}

const ALL_ID: u64 =
    (b::PERF_SAMPLE_TID | b::PERF_SAMPLE_TIME | b::PERF_SAMPLE_CPU | b::PERF_SAMPLE_IDENTIFIER) as u64;

fn format_with_trailer() -> SampleFormat {
    SampleFormat {
        sample_type: ALL_ID,
        read_format: 0,
        sample_id_all: true,
        regs_user: 0,
    }
}

/// Appends the trailer of `format_with_trailer`: pid/tid, time, cpu, identifier.
fn trailer(b: Builder, time: u64) -> Builder {
    b.u32s(7, 8).u64(time).u32s(1, 0).u64(99)
}

#[test]
fn a_full_sample_decodes_every_field_and_splits_the_callchain() {
    let sample_type = b::PERF_SAMPLE_IDENTIFIER
        | b::PERF_SAMPLE_IP
        | b::PERF_SAMPLE_TID
        | b::PERF_SAMPLE_TIME
        | b::PERF_SAMPLE_ID
        | b::PERF_SAMPLE_CPU
        | b::PERF_SAMPLE_PERIOD
        | b::PERF_SAMPLE_CALLCHAIN
        | b::PERF_SAMPLE_RAW;
    let format = SampleFormat {
        sample_type: sample_type as u64,
        read_format: 0,
        sample_id_all: true,
        regs_user: 0,
    };
    let kernel = CONTEXT_KERNEL;
    let user = CONTEXT_USER;
    let bytes = Builder::new(b::PERF_RECORD_SAMPLE, b::PERF_RECORD_MISC_KERNEL as u16)
        .u64(42)
        .u64(0xffff_ffff_8100_1234)
        .u32s(100, 101)
        .u64(5_000)
        .u64(42)
        .u32s(3, 0)
        .u64(1_000_000)
        .u64(5)
        .u64(kernel)
        .u64(0xffff_ffff_8100_1234)
        .u64(0xffff_ffff_8100_9999)
        .u64(user)
        .u64(0x5555_0000_1000)
        .bytes(&4u32.to_le_bytes())
        .bytes(&[1, 2, 3, 4])
        .finish();
    let Record::Sample(s) = decode(&bytes, &format).unwrap() else {
        panic!("not a sample")
    };
    assert_eq!(s.identifier, Some(42));
    assert_eq!(s.ip, Some(0xffff_ffff_8100_1234));
    assert_eq!(
        (s.pid, s.tid, s.time, s.id, s.cpu),
        (Some(100), Some(101), Some(5_000), Some(42), Some(3))
    );
    assert_eq!(s.period, Some(1_000_000));
    assert!(s.in_kernel());
    assert_eq!(s.callchain.len_words(), 5);
    assert_eq!(
        s.callchain.kernel_ips().collect::<Vec<_>>(),
        [0xffff_ffff_8100_1234, 0xffff_ffff_8100_9999]
    );
    assert_eq!(s.callchain.user_ips().collect::<Vec<_>>(), [0x5555_0000_1000]);
    assert_eq!(s.callchain.frames().count(), 3, "markers are not frames");
    assert_eq!(s.raw, &[1, 2, 3, 4]);
    assert_eq!(peek_identifier(&bytes), Some(42));
    // Read in place, the time is the decoded one.
    assert_eq!(SampleLayout::new(&format).time(&bytes), Some(5_000));
    assert_eq!(Record::Sample(s).time(), Some(5_000));
    // Without IP (or TID) before it, the time sits earlier; without TIME there is none.
    let no_ip = SampleFormat {
        sample_type: (sample_type & !b::PERF_SAMPLE_IP) as u64,
        ..format
    };
    let shorter = Builder::new(b::PERF_RECORD_SAMPLE, 0)
        .u64(42)
        .u32s(100, 101)
        .u64(7_000)
        .finish();
    assert_eq!(SampleLayout::new(&no_ip).time(&shorter), Some(7_000));
    let timeless = SampleFormat {
        sample_type: (sample_type & !b::PERF_SAMPLE_TIME) as u64,
        ..format
    };
    assert_eq!(SampleLayout::new(&timeless).time(&bytes), None);
    let lost = trailer(Builder::new(b::PERF_RECORD_LOST, 0).u64(1).u64(2), 9).finish();
    assert_eq!(
        SampleLayout::new(&format_with_trailer()).time(&lost),
        None,
        "not a sample"
    );
    assert_eq!(SampleLayout::new(&no_ip).time(&shorter[..16]), None, "too short");
}

#[test]
fn callchain_words_are_a_slice_when_aligned() {
    let format = SampleFormat {
        sample_type: u64::from(b::PERF_SAMPLE_CALLCHAIN),
        ..SampleFormat::default()
    };
    let bytes = Builder::new(b::PERF_RECORD_SAMPLE, 0)
        .u64(2)
        .u64(CONTEXT_USER)
        .u64(0x400)
        .finish();
    let words: Vec<u64> = bytes.chunks_exact(8).map(le_u64).collect();
    // SAFETY: a Vec<u64> viewed as its bytes.
    let aligned = unsafe { std::slice::from_raw_parts(words.as_ptr().cast::<u8>(), words.len() * 8) };
    let Record::Sample(s) = decode(aligned, &format).unwrap() else {
        panic!()
    };
    assert_eq!(s.callchain.as_words(), Some(&[CONTEXT_USER, 0x400][..]));
}

#[test]
fn a_sample_with_read_value_decodes_its_read_format() {
    let format = SampleFormat {
        sample_type: u64::from(b::PERF_SAMPLE_TIME | b::PERF_SAMPLE_READ),
        read_format: u64::from(b::PERF_FORMAT_TOTAL_TIME_ENABLED | b::PERF_FORMAT_ID),
        sample_id_all: false,
        regs_user: 0,
    };
    let bytes = Builder::new(b::PERF_RECORD_SAMPLE, 0)
        .u64(9)
        .u64(123)
        .u64(456)
        .u64(7)
        .finish();
    let Record::Sample(s) = decode(&bytes, &format).unwrap() else {
        panic!()
    };
    let read = s.read.unwrap();
    assert_eq!(
        (s.time, read.value, read.time_enabled, read.time_running, read.id),
        (Some(9), 123, Some(456), None, Some(7))
    );
}

#[test]
fn lost_and_lost_samples_carry_counts_and_trailer() {
    let f = format_with_trailer();
    let lost = trailer(Builder::new(b::PERF_RECORD_LOST, 0).u64(99).u64(17), 777).finish();
    let Record::Lost { id, count, sample_id } = decode(&lost, &f).unwrap() else {
        panic!()
    };
    assert_eq!((id, count), (99, 17));
    assert_eq!(
        sample_id,
        SampleId {
            pid: Some(7),
            tid: Some(8),
            time: Some(777),
            id: None,
            stream_id: None,
            cpu: Some(1),
            identifier: Some(99)
        }
    );
    assert_eq!(peek_identifier(&lost), Some(99));
    let ls = trailer(Builder::new(b::PERF_RECORD_LOST_SAMPLES, 0).u64(5), 778).finish();
    assert!(matches!(
        decode(&ls, &f).unwrap(),
        Record::LostSamples { count: 5, .. }
    ));
}

#[test]
fn comm_reads_name_and_exec_flag() {
    let f = format_with_trailer();
    let exec = b::PERF_RECORD_MISC_COMM_EXEC as u16;
    let bytes = trailer(
        Builder::new(b::PERF_RECORD_COMM, exec)
            .u32s(10, 11)
            .bytes(b"busy\0")
            .pad(),
        50,
    )
    .finish();
    let Record::Comm(c) = decode(&bytes, &f).unwrap() else {
        panic!()
    };
    assert_eq!((c.pid, c.tid, c.comm, c.exec), (10, 11, &b"busy"[..], true));
    assert_eq!(Record::Comm(c).time(), Some(50));
    let plain = trailer(
        Builder::new(b::PERF_RECORD_COMM, 0)
            .u32s(10, 12)
            .bytes(b"worker-1")
            .u64(0),
        51,
    )
    .finish();
    let Record::Comm(c) = decode(&plain, &f).unwrap() else {
        panic!()
    };
    assert_eq!((c.comm, c.exec), (&b"worker-1"[..], false));
}

#[test]
fn mmap2_reads_inode_or_build_id_and_filename() {
    let f = format_with_trailer();
    let bytes = trailer(
        Builder::new(b::PERF_RECORD_MMAP2, 0)
            .u32s(20, 20)
            .u64(0x5555_0000_0000)
            .u64(0x2000)
            .u64(0x1000)
            .u32s(8, 1)
            .u64(123_456)
            .u64(2)
            .u32s(5, 2)
            .bytes(b"/usr/bin/dash\0")
            .pad(),
        60,
    )
    .finish();
    let Record::Mmap2(m) = decode(&bytes, &f).unwrap() else {
        panic!()
    };
    assert_eq!(
        (m.pid, m.tid, m.addr, m.len, m.pgoff),
        (20, 20, 0x5555_0000_0000, 0x2000, 0x1000)
    );
    assert_eq!(
        m.file,
        MappedFile::Inode {
            maj: 8,
            min: 1,
            ino: 123_456,
            ino_generation: 2
        }
    );
    assert_eq!((m.prot, m.flags, m.filename), (5, 2, &b"/usr/bin/dash"[..]));

    let mut id = vec![4u8, 0, 0, 0];
    id.extend_from_slice(&[0xde, 0xad, 0xbe, 0xef]);
    id.resize(24, 0);
    let misc = b::PERF_RECORD_MISC_MMAP_BUILD_ID as u16;
    let bytes = trailer(
        Builder::new(b::PERF_RECORD_MMAP2, misc)
            .u32s(20, 20)
            .u64(1)
            .u64(2)
            .u64(3)
            .bytes(&id)
            .u32s(5, 2)
            .bytes(b"[vdso]\0")
            .pad(),
        61,
    )
    .finish();
    let Record::Mmap2(m) = decode(&bytes, &f).unwrap() else {
        panic!()
    };
    assert_eq!(
        (m.file, m.filename),
        (MappedFile::BuildId(&[0xde, 0xad, 0xbe, 0xef]), &b"[vdso]"[..])
    );
}

#[test]
fn fork_exit_and_throttle_records() {
    let f = format_with_trailer();
    let fork = trailer(
        Builder::new(b::PERF_RECORD_FORK, 0)
            .u32s(30, 29)
            .u32s(31, 29)
            .u64(70),
        70,
    )
    .finish();
    let exit = trailer(
        Builder::new(b::PERF_RECORD_EXIT, 0)
            .u32s(30, 29)
            .u32s(30, 30)
            .u64(80),
        80,
    )
    .finish();
    let Record::Fork(t) = decode(&fork, &f).unwrap() else {
        panic!()
    };
    assert_eq!((t.pid, t.ppid, t.tid, t.ptid, t.time), (30, 29, 31, 29, 70));
    let Record::Exit(t) = decode(&exit, &f).unwrap() else {
        panic!()
    };
    assert_eq!((t.pid, t.tid, t.time), (30, 30, 80));
    let throttle = trailer(
        Builder::new(b::PERF_RECORD_THROTTLE, 0).u64(90).u64(99).u64(99),
        90,
    )
    .finish();
    let unthrottle = trailer(
        Builder::new(b::PERF_RECORD_UNTHROTTLE, 0).u64(95).u64(99).u64(99),
        95,
    )
    .finish();
    assert!(matches!(
        decode(&throttle, &f).unwrap(),
        Record::Throttle(Throttle { time: 90, id: 99, .. })
    ));
    assert!(matches!(
        decode(&unthrottle, &f).unwrap(),
        Record::Unthrottle(Throttle { time: 95, .. })
    ));
}

#[test]
fn cpu_wide_switch_records_say_who_was_on_the_other_side() {
    let f = format_with_trailer();
    let switch_in = trailer(Builder::new(b::PERF_RECORD_SWITCH_CPU_WIDE, 0).u32s(0, 0), 40).finish();
    let switch_out = trailer(
        Builder::new(
            b::PERF_RECORD_SWITCH_CPU_WIDE,
            b::PERF_RECORD_MISC_SWITCH_OUT as u16,
        )
        .u32s(12, 13),
        41,
    )
    .finish();
    let Record::Switch(s) = decode(&switch_in, &f).unwrap() else {
        panic!()
    };
    assert_eq!(
        (s.out, s.other_pid, s.other_tid, s.sample_id.time),
        (false, 0, 0, Some(40))
    );
    assert_eq!((s.sample_id.pid, s.sample_id.tid), (Some(7), Some(8)));
    let Record::Switch(s) = decode(&switch_out, &f).unwrap() else {
        panic!()
    };
    assert_eq!((s.out, s.other_pid, s.other_tid), (true, 12, 13));
    assert_eq!(decode(&switch_out, &f).unwrap().time(), Some(41));
}

#[test]
fn unknown_records_are_passed_through_undecoded() {
    let bytes = Builder::new(b::PERF_RECORD_SWITCH, 3).u64(1).finish();
    let record = decode(&bytes, &format_with_trailer()).unwrap();
    assert_eq!(
        record,
        Record::Other {
            record_type: b::PERF_RECORD_SWITCH,
            misc: 3,
            body: &1u64.to_le_bytes()
        }
    );
}

#[test]
fn short_and_corrupt_records_are_errors_not_panics() {
    let f = format_with_trailer();
    assert_eq!(decode(&[1, 2, 3], &f), Err(DecodeError::NoHeader { len: 3 }));
    let mut lost = trailer(Builder::new(b::PERF_RECORD_LOST, 0).u64(99).u64(17), 1).finish();
    lost[6] = 200;
    assert!(matches!(
        decode(&lost, &f),
        Err(DecodeError::SizeMismatch { size: 200, .. })
    ));
    // A LOST whose body is missing its count.
    let short = trailer(Builder::new(b::PERF_RECORD_LOST, 0).u64(99), 1).finish();
    assert!(matches!(
        decode(&short, &f),
        Err(DecodeError::Truncated {
            what: "lost count",
            ..
        })
    ));
    // A record smaller than its trailer.
    let tiny = Builder::new(b::PERF_RECORD_COMM, 0).u64(1).finish();
    assert!(matches!(
        decode(&tiny, &f),
        Err(DecodeError::Truncated {
            what: "sample_id trailer",
            ..
        })
    ));
    // A callchain claiming 2^61 entries, a raw size past the end.
    let chain = SampleFormat {
        sample_type: u64::from(b::PERF_SAMPLE_CALLCHAIN),
        ..f
    };
    let huge = Builder::new(b::PERF_RECORD_SAMPLE, 0)
        .u64(1 << 61)
        .u64(0)
        .finish();
    assert!(matches!(
        decode(&huge, &chain),
        Err(DecodeError::Truncated {
            what: "callchain",
            ..
        })
    ));
    let raw = SampleFormat {
        sample_type: u64::from(b::PERF_SAMPLE_RAW),
        ..f
    };
    let long = Builder::new(b::PERF_RECORD_SAMPLE, 0)
        .bytes(&64u32.to_le_bytes())
        .bytes(&[0; 4])
        .finish();
    assert!(matches!(
        decode(&long, &raw),
        Err(DecodeError::Truncated { what: "raw data", .. })
    ));
    // Every prefix of a valid sample fails cleanly.
    let full = SampleFormat {
        sample_type: u64::MAX >> 40,
        read_format: 0xf,
        sample_id_all: true,
        regs_user: 0,
    };
    let sample = Builder::new(b::PERF_RECORD_SAMPLE, 0)
        .bytes(&[0xff; 120])
        .finish();
    for len in 0..sample.len() {
        let mut cut = sample[..len].to_vec();
        if cut.len() >= 8 {
            cut[6..8].copy_from_slice(&(len as u16).to_le_bytes());
        }
        let _ = decode(&cut, &full);
    }
}

#[test]
fn random_bytes_never_panic_the_decoder_or_the_ring_walk() {
    let mut rng = crate::model::test_rng::TestRng::new(0x1234_5678_9abc_def1);
    let mut next = || rng.next_u64();
    let types = [
        b::PERF_RECORD_SAMPLE,
        b::PERF_RECORD_LOST,
        b::PERF_RECORD_COMM,
        b::PERF_RECORD_MMAP2,
        b::PERF_RECORD_FORK,
        b::PERF_RECORD_EXIT,
        b::PERF_RECORD_THROTTLE,
        b::PERF_RECORD_LOST_SAMPLES,
    ];
    let mut decoded = 0;
    for round in 0..20_000 {
        let len = (next() % 160) as usize;
        let mut bytes: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        if len >= 8 {
            bytes[..4].copy_from_slice(&types[round % types.len()].to_le_bytes());
            bytes[6..8].copy_from_slice(&(len as u16).to_le_bytes());
        }
        let format = SampleFormat {
            sample_type: next() & 0xffff,
            read_format: next() & 0xf,
            sample_id_all: next() % 2 == 0,
            regs_user: 0,
        };
        decoded += usize::from(decode(&bytes, &format).is_ok());
        let _ = peek_identifier(&bytes);
        let mut data = bytes.clone();
        data.resize(256, 0);
        let mut scratch = Vec::new();
        let (tail, head) = (next() % 512, next() % 512);
        let _ = super::super::ring::read_records(&data, tail, head, &mut scratch, |r| {
            let _ = decode(r, &format);
        });
    }
    assert!(
        decoded > 100,
        "some random records are well-formed enough to decode: {decoded}"
    );
}
