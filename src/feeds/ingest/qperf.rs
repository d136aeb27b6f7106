//! How a qperf record becomes an address sample: its vCPU is the instance, its trace the
//! address path, and what it carried (pc, sp, fp, cpu, callchain) goes into the sample's
//! meta for the resolve statistics.

use crate::model::{Callchain, Instance, SampleMeta};
use crate::sources::qperf_file::{self, QperfRecord};

use super::AddressSample;

/// The address sample of one record (weight 1).
pub fn address_sample(record: &QperfRecord) -> AddressSample<'_> {
    let mut flags = 0;
    if record.pc != 0 {
        flags |= SampleMeta::HAS_PC;
    }
    if record.sp.is_some() {
        flags |= SampleMeta::HAS_SP;
    }
    if record.fp.is_some() {
        flags |= SampleMeta::HAS_FP;
    }
    if record.cpu.is_some() {
        flags |= SampleMeta::HAS_CPU;
    }
    AddressSample {
        time_ns: record.elapsed_ns,
        instance: record.cpu.map_or_else(Instance::unknown, Instance::vcpu),
        weight: 1,
        trace: &record.trace,
        meta: SampleMeta {
            raw_depth: u16::try_from(record.trace.len()).unwrap_or(u16::MAX),
            flags,
            callchain: record.callchain.map_or(Callchain::Unknown, callchain),
        },
    }
}

fn callchain(c: qperf_file::Callchain) -> Callchain {
    match c {
        qperf_file::Callchain::Leaf => Callchain::Leaf,
        qperf_file::Callchain::Fp => Callchain::FramePointer,
        qperf_file::Callchain::Dwarf => Callchain::Dwarf,
        qperf_file::Callchain::Idle => Callchain::Idle,
        qperf_file::Callchain::Unknown(b) => Callchain::Other(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::feeds::ingest::AddressIngest;
    use crate::model::{ProfileInfo, ProfileTables};
    use crate::symbols::guest_space::Region;
    use crate::symbols::{Resolver, ResolverOptions, SymbolFrame, Symbolizer};

    struct Named;
    impl Symbolizer for Named {
        fn symbolize(&self, address: u64) -> Vec<SymbolFrame> {
            let name = match address {
                0x100..0x200 => "leaf",
                0x200..0x300 => "caller",
                _ => return vec![],
            };
            vec![SymbolFrame {
                name: name.into(),
                file: None,
                line: 0,
                offset: None,
            }]
        }
    }

    #[test]
    fn records_become_samples_on_their_vcpu() {
        let mut profile = ProfileTables::new(ProfileInfo::default());
        let mut ingest = AddressIngest::new(Resolver::new(Box::new(Named), ResolverOptions::default(), None));
        let rec = QperfRecord {
            elapsed_ns: Some(5),
            pc: 0x150,
            sp: Some(0x9000),
            fp: None,
            cpu: Some(1),
            callchain: Some(qperf_file::Callchain::Fp),
            trace: vec![0x150, 0x201],
        };
        let s = ingest.add(&mut profile, address_sample(&rec)).unwrap();
        let empty = QperfRecord::default();
        let unresolved = ingest.add(&mut profile, address_sample(&empty)).unwrap();
        assert_eq!(s.time_ns, Some(5));
        assert_eq!(profile.instance_info(s.instance).label, "vCPU 1");
        assert!(s.meta.has(SampleMeta::HAS_SP) && !s.meta.has(SampleMeta::HAS_FP));
        assert_eq!(s.meta.callchain, Callchain::FramePointer);
        let names: Vec<&str> = profile
            .stack_frames(s.stack)
            .map(|f| profile.frames.name(f))
            .collect();
        assert_eq!(names, ["caller", "leaf"]);
        assert!(unresolved.meta.has(SampleMeta::UNRESOLVED));
        let names: Vec<&str> = profile
            .stack_frames(unresolved.stack)
            .map(|f| profile.frames.name(f))
            .collect();
        assert_eq!(names, ["??"]);
        assert_eq!(ingest.stats.records, 2);
        assert_eq!(ingest.stats.raw_frames, 2);
    }

    /// [`Named`] with a guest's regions: kernel below 0x1000, firmware at 0x8000_0000.., user
    /// at 0x10_0000.., nothing known above 0xffff_0000_0000_0000.
    struct Regions;
    impl Symbolizer for Regions {
        fn symbolize(&self, address: u64) -> Vec<SymbolFrame> {
            assert!(address < 0x1000, "{address:#x} is not the kernel's to name");
            Named.symbolize(address)
        }
        fn region(&self, address: u64) -> Region {
            match address {
                0..0x1000 => Region::Kernel,
                0x8000_0000..0x8020_0000 => Region::Firmware,
                0x10_0000..0x8000_0000 => Region::User,
                _ => Region::Unknown,
            }
        }
    }

    #[test]
    fn addresses_outside_the_kernel_are_named_by_region_and_end_the_stack() {
        let mut profile = ProfileTables::new(ProfileInfo::default());
        let mut ingest =
            AddressIngest::new(Resolver::new(Box::new(Regions), ResolverOptions::default(), None));
        let mut stack = |trace: Vec<u64>| {
            let rec = QperfRecord {
                pc: trace[0],
                trace,
                ..QperfRecord::default()
            };
            let s = ingest.add(&mut profile, address_sample(&rec)).unwrap();
            profile
                .stack_frames(s.stack)
                .map(|f| profile.frames.name(f).to_string())
                .collect::<Vec<_>>()
        };
        // A kernel stack ends where its walk left the kernel.
        assert_eq!(stack(vec![0x150, 0x201, 0x8000_0100, 0x201]), ["caller", "leaf"]);
        // OpenSBI's leaf, its stack's values (one inside the kernel) not used.
        assert_eq!(stack(vec![0x8000_1234, 0x150, 0x8000_2000]), ["[firmware]"]);
        assert_eq!(stack(vec![0x40_0000, 0x201]), ["[user]"]);
        assert_eq!(
            stack(vec![0xffff_8000_0000_1000]),
            ["[unknown]", "0xffff800000001000"]
        );
        let outside = ingest.stats.outside_kernel;
        assert_eq!(
            (
                outside.firmware_frames,
                outside.user_frames,
                outside.unknown_frames
            ),
            (1, 1, 1)
        );
        assert_eq!(outside.return_addresses_dropped, 2 + 1 + 2);
    }

    /// [`Named`] whose kernel code ends at 0x800: 0x800..0x1000 is the image's data; the
    /// functions start at 0x100 and 0x200.
    struct WithData;
    impl Symbolizer for WithData {
        fn symbolize(&self, address: u64) -> Vec<SymbolFrame> {
            Named.symbolize(address)
        }
        fn is_code(&self, address: u64) -> bool {
            address < 0x800
        }
        fn is_function_start(&self, address: u64) -> bool {
            address == 0x100 || address == 0x200
        }
    }

    #[test]
    fn a_return_address_in_data_or_at_a_function_start_ends_the_stack_and_idle_ticks_are_idle() {
        let mut profile = ProfileTables::new(ProfileInfo::default());
        let options = ResolverOptions {
            kernel_filter: true,
            ..ResolverOptions::default()
        };
        let text = crate::symbols::AddressRange { start: 0, end: 0x800 };
        let mut ingest = AddressIngest::new(Resolver::new(Box::new(WithData), options, Some(text)));
        // A frame pointer that held a data pointer: its "return address" 0x9c0 is data.
        let mut unfiltered = AddressIngest::new(Resolver::new(
            Box::new(WithData),
            ResolverOptions::default(),
            None,
        ));
        let garbage = QperfRecord {
            pc: 0x150,
            trace: vec![0x150, 0x201, 0x9c0, 0x201],
            ..QperfRecord::default()
        };
        let s = unfiltered.add(&mut profile, address_sample(&garbage)).unwrap();
        let names: Vec<&str> = profile
            .stack_frames(s.stack)
            .map(|f| profile.frames.name(f))
            .collect();
        assert_eq!(names, ["caller", "leaf"]);
        assert_eq!(unfiltered.stats.outside_kernel.return_addresses_dropped, 2);
        // A task entered with ra = caller's entry: caller is the root, once.
        let task = QperfRecord {
            pc: 0x150,
            trace: vec![0x150, 0x201, 0x200],
            ..QperfRecord::default()
        };
        let s = unfiltered.add(&mut profile, address_sample(&task)).unwrap();
        let names: Vec<&str> = profile
            .stack_frames(s.stack)
            .map(|f| profile.frames.name(f))
            .collect();
        assert_eq!(names, ["caller", "leaf"]);
        // A halted vCPU's tick: `[idle]`, kept by the kernel filter though it has no pc.
        let idle = QperfRecord {
            elapsed_ns: Some(9),
            cpu: Some(0),
            callchain: Some(qperf_file::Callchain::Idle),
            ..QperfRecord::default()
        };
        let s = ingest.add(&mut profile, address_sample(&idle)).unwrap();
        let names: Vec<&str> = profile
            .stack_frames(s.stack)
            .map(|f| profile.frames.name(f))
            .collect();
        assert_eq!((names, s.meta.callchain), (vec!["[idle]"], Callchain::Idle));
        assert_eq!(ingest.stats.idle_samples, 1);
    }

    #[test]
    fn the_lower_half_is_the_firmware_until_the_kernel_runs() {
        let mut profile = ProfileTables::new(ProfileInfo::default());
        let mut ingest =
            AddressIngest::new(Resolver::new(Box::new(Regions), ResolverOptions::default(), None));
        let mut leaf = |trace: Vec<u64>| {
            let rec = QperfRecord {
                pc: trace[0],
                trace,
                ..QperfRecord::default()
            };
            let s = ingest.add(&mut profile, address_sample(&rec)).unwrap();
            let frames: Vec<String> = profile
                .stack_frames(s.stack)
                .map(|f| profile.frames.name(f).to_string())
                .collect();
            let location = *profile.stacks.locations(s.stack).last().unwrap();
            (frames, profile.locations.get(location).address)
        };
        // OVMF's drivers in RAM, before and after its flash code: the firmware, at their address.
        let ovmf_in_ram = vec![0x1dc0_4000, 0x150];
        assert_eq!(
            leaf(ovmf_in_ram.clone()),
            (vec!["[firmware]".to_string()], 0x1dc0_4000)
        );
        assert_eq!(leaf(vec![0x8000_1234]).0, ["[firmware]"]);
        assert_eq!(leaf(ovmf_in_ram.clone()).0, ["[firmware]"]);
        // An empty trace is no kernel.
        assert_eq!(leaf(vec![0]).0, ["??"]);
        assert_eq!(leaf(vec![0x30_0000]).0, ["[firmware]"]);
        // The kernel ran: the lower half is user space from now on, the same address too.
        assert_eq!(leaf(vec![0x150, 0x201]).0, ["caller", "leaf"]);
        assert_eq!(leaf(ovmf_in_ram).0, ["[user]"]);
        let outside = ingest.stats.outside_kernel;
        assert_eq!((outside.firmware_frames, outside.user_frames), (4, 1));
        assert_eq!(outside.return_addresses_dropped, 3);
    }
}
