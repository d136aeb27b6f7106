//! The qperf v3 record and its bytes (notes/qperf-format.md §1.2–1.4): bincode 2
//! `standard()` — struct fields in order, unsigned varints, `u8` raw, `Vec<u64>` as a
//! varint length then varint elements. Own encoder: the plugin does not depend on the
//! perfscope crate or on bincode's version to keep the format.

/// One sample, as the reference plugin's `SampleRecordV3`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Record {
    /// CLOCK_MONOTONIC ns since `epoch_ns`.
    pub elapsed_ns: u64,
    /// The sampled (canonical) address; equals `trace[0]`.
    pub pc: u64,
    /// 0 = not read (leaf mode).
    pub sp: u64,
    pub fp: u64,
    pub cpu: u32,
    /// 0 = leaf, 1 = frame pointers, 2 = DWARF CFI, [`CALLCHAIN_IDLE`] = an idle tick.
    pub callchain: u8,
    /// `[leaf, return_1, return_2, …]`.
    pub trace: Vec<u64>,
}

/// The `callchain` byte of a tick that found its vCPU halted (WFI, HLT, `idle`): no code
/// ran, so there is no pc and no trace. perfscope shows it as `[idle]`; the reference
/// analyzer, which knows bytes 0 and 1 only, calls the method unknown and the empty trace
/// `??`.
pub const CALLCHAIN_IDLE: u8 = 3;

impl Record {
    /// The record of a tick at `elapsed_ns` that found `cpu` idle.
    pub fn idle(elapsed_ns: u64, cpu: u32) -> Record {
        Record {
            elapsed_ns,
            cpu,
            callchain: CALLCHAIN_IDLE,
            ..Record::default()
        }
    }
}

/// Append `value` as a bincode varint (smallest form).
pub fn put_varint(out: &mut Vec<u8>, value: u64) {
    if value <= 250 {
        out.push(value as u8);
    } else if value <= u64::from(u16::MAX) {
        out.push(0xFB);
        out.extend_from_slice(&(value as u16).to_le_bytes());
    } else if value <= u64::from(u32::MAX) {
        out.push(0xFC);
        out.extend_from_slice(&(value as u32).to_le_bytes());
    } else {
        out.push(0xFD);
        out.extend_from_slice(&value.to_le_bytes());
    }
}

impl Record {
    /// Append the record's v3 bytes.
    pub fn encode(&self, out: &mut Vec<u8>) {
        put_varint(out, self.elapsed_ns);
        put_varint(out, self.pc);
        put_varint(out, self.sp);
        put_varint(out, self.fp);
        put_varint(out, u64::from(self.cpu));
        out.push(self.callchain);
        put_varint(out, self.trace.len() as u64);
        for &address in &self.trace {
            put_varint(out, address);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The worked examples of notes/qperf-format.md §1.4, produced by bincode 2.0.1.
    #[test]
    fn matches_bincode_worked_examples() {
        let mut out = Vec::new();
        Record {
            elapsed_ns: 1_500_000,
            pc: 0xffffffc080201234,
            trace: vec![0xffffffc080201234],
            ..Record::default()
        }
        .encode(&mut out);
        assert_eq!(
            hex(&out),
            "fc 60 e3 16 00 fd 34 12 20 80 c0 ff ff ff 00 00 00 00 01 fd 34 12 20 80 c0 ff ff ff"
        );
        out.clear();
        Record {
            elapsed_ns: 250,
            pc: 0x80200000,
            sp: 0xffffffc081000f00,
            fp: 0xffffffc081000f40,
            cpu: 3,
            callchain: 1,
            trace: vec![0x80200000, 300, 70000],
        }
        .encode(&mut out);
        assert_eq!(
            hex(&out),
            "fa fc 00 00 20 80 fd 00 0f 00 81 c0 ff ff ff fd 40 0f 00 81 c0 ff ff ff 03 01 03 fc 00 00 20 80 fb 2c 01 fc 70 11 01 00"
        );
    }

    #[test]
    fn an_idle_tick_is_a_record_without_pc_or_trace() {
        let mut out = Vec::new();
        Record::idle(1_000, 2).encode(&mut out);
        // elapsed 1000 (fb e8 03), pc/sp/fp 0, cpu 2, callchain 3, empty trace.
        assert_eq!(hex(&out), "fb e8 03 00 00 00 02 03 00");
    }

    #[test]
    fn varint_boundaries() {
        for (value, len) in [
            (0, 1),
            (250, 1),
            (251, 3),
            (65535, 3),
            (65536, 5),
            (u32::MAX as u64, 5),
            (1 << 32, 9),
        ] {
            let mut out = Vec::new();
            put_varint(&mut out, value);
            assert_eq!(out.len(), len, "{value}");
        }
    }
}
