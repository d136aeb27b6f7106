use super::*;
use crate::sources::perf_event::record::{DecodeError, Record, SampleFormat, decode};
use crate::sources::perf_event::sample_layout::SampleLayout;

/// A sample record as the kernel lays out one of `--call-graph dwarf`: identifier, tid,
/// time, cpu, period, callchain, then the user registers and the stack copy.
struct DwarfSample {
    callchain: Vec<u64>,
    abi: u64,
    regs: Vec<u64>,
    stack: Vec<u8>,
    dyn_size: u64,
}

const SAMPLE_TYPE: u32 = b::PERF_SAMPLE_IDENTIFIER
    | b::PERF_SAMPLE_TID
    | b::PERF_SAMPLE_TIME
    | b::PERF_SAMPLE_CPU
    | b::PERF_SAMPLE_PERIOD
    | b::PERF_SAMPLE_CALLCHAIN
    | b::PERF_SAMPLE_REGS_USER
    | b::PERF_SAMPLE_STACK_USER;

/// bp, sp, ip on x86_64 (bits 6, 7, 8): three registers, lowest bit first.
const MASK: u64 = (1 << 6) | (1 << 7) | (1 << 8);

fn format() -> SampleFormat {
    SampleFormat {
        sample_type: u64::from(SAMPLE_TYPE),
        read_format: 0,
        sample_id_all: true,
        regs_user: MASK,
    }
}

impl DwarfSample {
    fn bytes(&self) -> Vec<u8> {
        let mut words: Vec<u64> = vec![42, 300 | (301 << 32), 7_000, 1, 1_000_000];
        words.push(self.callchain.len() as u64);
        words.extend(&self.callchain);
        words.push(self.abi);
        if self.abi != ABI_NONE {
            words.extend(&self.regs);
        }
        words.push(self.stack.len() as u64);
        let mut bytes = b::PERF_RECORD_SAMPLE.to_le_bytes().to_vec();
        bytes.extend_from_slice(&[0, 0, 0, 0]);
        for w in words {
            bytes.extend_from_slice(&w.to_le_bytes());
        }
        bytes.extend_from_slice(&self.stack);
        if !self.stack.is_empty() {
            bytes.extend_from_slice(&self.dyn_size.to_le_bytes());
        }
        let size = bytes.len() as u16;
        bytes[6..8].copy_from_slice(&size.to_le_bytes());
        bytes
    }
}

fn kernel_frames() -> Vec<u64> {
    vec![
        crate::sources::perf_event::record::CONTEXT_KERNEL,
        0xffff_ffff_8100_1234,
    ]
}

#[test]
fn a_dwarf_sample_carries_its_registers_and_stack_copy() {
    let stack: Vec<u8> = (0..64u8).collect();
    let record = DwarfSample {
        callchain: kernel_frames(),
        abi: ABI_64,
        regs: vec![0x7ffd_0000_1000, 0x7ffd_0000_0f00, 0x5555_5555_1234],
        stack: stack.clone(),
        dyn_size: 40,
    }
    .bytes();
    let Ok(Record::Sample(s)) = decode(&record, &format()) else {
        panic!("{:?}", decode(&record, &format()));
    };
    let regs = s.user_regs.expect("regs");
    assert_eq!(regs.abi, ABI_64);
    // Registers are found by their perf_regs.h number, whatever their slot.
    assert_eq!(regs.get(6), Some(0x7ffd_0000_1000));
    assert_eq!(regs.get(7), Some(0x7ffd_0000_0f00));
    assert_eq!(regs.get(8), Some(0x5555_5555_1234));
    assert_eq!(regs.get(0), None, "not sampled");
    assert_eq!(regs.get(64), None);
    let user = s.user_stack.expect("stack");
    assert_eq!(user.copied, &stack[..]);
    assert_eq!(user.dyn_size, 40);
    assert_eq!(user.data(), &stack[..40], "only dyn_size bytes hold the stack");
    assert_eq!(
        s.callchain.kernel_ips().collect::<Vec<_>>(),
        [0xffff_ffff_8100_1234]
    );
    // The layout reads the same fields in place.
    let fields = SampleLayout::new(&format()).fields(&record).expect("layout");
    assert_eq!((fields.user_regs, fields.user_stack), (s.user_regs, s.user_stack));
    assert_eq!((fields.pid, fields.tid, fields.time_ns), (300, 301, 7_000));
}

#[test]
fn a_kernel_thread_has_no_registers_and_an_empty_stack() {
    // abi NONE: no register words; size 0: no dyn_size word.
    let record = DwarfSample {
        callchain: kernel_frames(),
        abi: ABI_NONE,
        regs: vec![],
        stack: vec![],
        dyn_size: 0,
    }
    .bytes();
    let Ok(Record::Sample(s)) = decode(&record, &format()) else {
        panic!("decode");
    };
    let regs = s.user_regs.unwrap();
    assert_eq!((regs.abi, regs.get(7)), (ABI_NONE, None));
    let user = s.user_stack.unwrap();
    assert_eq!((user.copied.len(), user.dyn_size, user.data().len()), (0, 0, 0));
    let fields = SampleLayout::new(&format()).fields(&record).unwrap();
    assert_eq!((fields.user_regs, fields.user_stack), (s.user_regs, s.user_stack));
}

#[test]
fn a_dyn_size_past_the_copy_is_cut_to_the_copy() {
    let record = DwarfSample {
        callchain: vec![],
        abi: ABI_64,
        regs: vec![1, 2, 3],
        stack: vec![9; 16],
        dyn_size: 4096,
    }
    .bytes();
    let Ok(Record::Sample(s)) = decode(&record, &format()) else {
        panic!("decode");
    };
    assert_eq!(s.user_stack.unwrap().data(), &[9; 16]);
}

#[test]
fn a_torn_stack_copy_is_an_error_not_a_panic() {
    let full = DwarfSample {
        callchain: kernel_frames(),
        abi: ABI_64,
        regs: vec![1, 2, 3],
        stack: vec![7; 32],
        dyn_size: 32,
    }
    .bytes();
    // Cut the record anywhere in its user tail (the header says the cut size).
    let tail_start = 8 + 8 * (5 + 1 + 2);
    for cut in (tail_start..full.len()).step_by(8) {
        let mut torn = full[..cut].to_vec();
        let size = torn.len() as u16;
        torn[6..8].copy_from_slice(&size.to_le_bytes());
        let err = decode(&torn, &format());
        assert!(
            matches!(err, Err(DecodeError::Truncated { what, .. }) if what.contains("user")),
            "cut at {cut}: {err:?}"
        );
        assert_eq!(SampleLayout::new(&format()).fields(&torn), None, "cut at {cut}");
    }
    // A stack size bigger than the record.
    let mut lying = full.clone();
    let size_at = tail_start + 8 + 3 * 8;
    lying[size_at..size_at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(decode(&lying, &format()).is_err());
    assert_eq!(SampleLayout::new(&format()).fields(&lying), None);
}

#[test]
fn stack_sizes_are_checked_as_perf_checks_them() {
    assert_eq!(parse_stack_bytes("8192"), Ok(8192));
    assert_eq!(parse_stack_bytes("0x2000"), Ok(8192));
    assert_eq!(parse_stack_bytes("8"), Ok(8));
    assert_eq!(parse_stack_bytes("65528"), Ok(MAX_STACK_BYTES));
    let err = parse_stack_bytes("1001").unwrap_err();
    assert!(err.contains("multiple of 8") && err.contains("1008"), "{err}");
    let err = parse_stack_bytes("65536").unwrap_err();
    assert!(err.contains("out of range") && err.contains("65528"), "{err}");
    assert!(parse_stack_bytes("0").unwrap_err().contains("out of range"));
    assert!(parse_stack_bytes("8k").unwrap_err().contains("not a number"));
    assert!(parse_stack_bytes("").unwrap_err().contains("not a number"));
}
