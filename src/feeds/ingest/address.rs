//! Address traces → model samples.
//!
//! Each distinct (address, leaf-or-return) pair is resolved once and interned as a model
//! location; a trace is then a few hash lookups. Frames the kernel filter drops are
//! counted; a sample left with no frame at all is dropped and counted too. A sample whose
//! leaf lies outside the kernel (firmware, user space) is that leaf's region alone: the
//! rest of its trace was read from a stack that is not the kernel's, and whatever a value
//! there aliases to, it is no kernel caller. A kernel stack ends at its first return
//! address outside the kernel's code (outside the image, or in its data): a walk never
//! legitimately leaves it (trap entry starts a new chain), so the walk read a stale value
//! or a data pointer there (the plugin stops there itself; older recordings may not). It
//! also ends at a return address that is a function's first instruction: a task entered
//! with its return address set to its own entry, whose frame is already below it.
//!
//! A sample the plugin took of a halted vCPU (callchain `idle`: WFI, HLT) has no trace: its
//! stack is the one pseudo-frame `[idle]`, whatever the kernel filter keeps.
//!
//! Until a sample's leaf has been in the kernel, nothing in the lower half is user space:
//! the machine is still in its firmware (OVMF's drivers and SeaBIOS run from RAM, not from
//! the flash or ROM ranges the region rules know; whatever they load before the kernel,
//! a UEFI kernel's own loader stub included, is boot firmware too), so such a leaf is
//! `[firmware]`.

use rustc_hash::FxHashMap;

use crate::model::facts::OutsideKernel;
use crate::model::{
    Callchain, Instance, InstanceId, Line, Location, LocationId, ProfileTables, Sample, SampleMeta,
};
use crate::symbols::Resolver;
use crate::symbols::guest_space::Region;
use crate::symbols::resolver::Skipped;

/// The pseudo-frame of a halted vCPU's samples.
pub const IDLE_FRAME: &str = "[idle]";

/// One raw sample: time, CPU and the address trace, leaf first.
#[derive(Clone, Debug)]
pub struct AddressSample<'a> {
    pub time_ns: Option<u64>,
    pub instance: Instance,
    pub weight: u64,
    pub trace: &'a [u64],
    pub meta: SampleMeta,
}

/// What ingest did.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct IngestStats {
    pub records: u64,
    /// Sum of raw trace lengths over all records (the reference's `total_frames`).
    pub raw_frames: u64,
    /// Earliest and latest timestamp over all records, kept or not.
    pub first_time_ns: Option<u64>,
    pub last_time_ns: Option<u64>,
    pub samples: u64,
    /// Samples whose every address was outside the kernel text.
    pub samples_dropped_by_kernel_filter: u64,
    /// Trace entries outside the kernel text.
    pub frames_dropped_by_kernel_filter: u64,
    /// Trace entries mapped from a physical alias onto the linked address.
    pub aliased_frames: u64,
    /// Trace entries no symbol covered (named `0x…`).
    pub unknown_frames: u64,
    /// Trace entries outside the kernel image, by region.
    pub outside_kernel: OutsideKernel,
    /// `0` / `u64::MAX` trace entries skipped.
    pub terminator_entries: u64,
    /// Samples of a halted vCPU (`[idle]`).
    pub idle_samples: u64,
}

#[derive(Copy, Clone)]
struct Resolved {
    location: Result<LocationId, Skipped>,
    aliased: bool,
    unknown: bool,
    region: Region,
    named_by_user_program: bool,
    return_site: bool,
}

/// Turns address samples into profile samples through a resolver.
pub struct AddressIngest {
    resolver: Resolver,
    locations: FxHashMap<(u64, bool), Resolved>,
    /// The `[firmware]` location of each lower-half leaf seen before the kernel ran.
    boot_firmware: FxHashMap<u64, Resolved>,
    /// Whether a sample's leaf has been in the kernel yet.
    kernel_ran: bool,
    instances: FxHashMap<Instance, InstanceId>,
    unresolved: Option<LocationId>,
    idle: Option<LocationId>,
    scratch: Vec<LocationId>,
    pub stats: IngestStats,
}

impl AddressIngest {
    pub fn new(resolver: Resolver) -> Self {
        Self {
            resolver,
            locations: FxHashMap::default(),
            boot_firmware: FxHashMap::default(),
            kernel_ran: false,
            instances: FxHashMap::default(),
            unresolved: None,
            idle: None,
            scratch: Vec::new(),
            stats: IngestStats::default(),
        }
    }

    pub fn resolver(&self) -> &Resolver {
        &self.resolver
    }

    /// Resolve one sample into `profile`'s tables; `None` when the kernel filter dropped it.
    pub fn add(&mut self, profile: &mut ProfileTables, sample: AddressSample<'_>) -> Option<Sample> {
        self.stats.records += 1;
        self.stats.raw_frames += sample.trace.len() as u64;
        if let Some(t) = sample.time_ns {
            self.stats.first_time_ns = Some(self.stats.first_time_ns.map_or(t, |f| f.min(t)));
            self.stats.last_time_ns = Some(self.stats.last_time_ns.map_or(t, |l| l.max(t)));
        }
        self.scratch.clear();
        let mut filtered = 0u64;
        if sample.meta.callchain == Callchain::Idle {
            self.stats.idle_samples += 1;
            let idle = self.idle_location(profile);
            self.scratch.push(idle);
        }
        let trace = if self.scratch.is_empty() {
            sample.trace
        } else {
            &[]
        };
        for (index, &address) in trace.iter().enumerate() {
            let mut resolved = self.location(profile, address, index == 0);
            if index == 0 {
                match resolved.region {
                    Region::Kernel if resolved.location.is_ok() => self.kernel_ran = true,
                    Region::User if !self.kernel_ran => {
                        resolved = self.boot_firmware(profile, address, resolved)
                    }
                    _ => {}
                }
            }
            self.stats.aliased_frames += u64::from(resolved.aliased);
            match resolved.location {
                Ok(loc) => {
                    let outside = &mut self.stats.outside_kernel;
                    if index > 0 && (resolved.region != Region::Kernel || !resolved.return_site) {
                        outside.return_addresses_dropped += (sample.trace.len() - index) as u64;
                        break;
                    }
                    self.stats.unknown_frames += u64::from(resolved.unknown);
                    self.scratch.push(loc);
                    match resolved.region {
                        Region::Kernel => {}
                        Region::Firmware => outside.firmware_frames += 1,
                        Region::User => {
                            outside.user_frames += 1;
                            outside.user_frames_named += u64::from(resolved.named_by_user_program);
                        }
                        Region::Unknown => outside.unknown_frames += 1,
                    }
                    if resolved.region != Region::Kernel {
                        outside.return_addresses_dropped += sample.trace.len() as u64 - 1;
                        break;
                    }
                }
                Err(Skipped::Filtered) => filtered += 1,
                Err(Skipped::Terminator) => self.stats.terminator_entries += 1,
            }
        }
        self.stats.frames_dropped_by_kernel_filter += filtered;
        let mut meta = sample.meta;
        if self.scratch.is_empty() {
            if filtered > 0 {
                self.stats.samples_dropped_by_kernel_filter += 1;
                return None;
            }
            // Nothing to resolve at all (an empty trace): the reference shows `??`.
            meta.flags |= SampleMeta::UNRESOLVED;
            let unknown = self.unresolved_location(profile);
            self.scratch.push(unknown);
        }
        self.scratch.reverse(); // leaf first → root first
        let stack = profile.stacks.intern(&self.scratch);
        let instance = match self.instances.get(&sample.instance) {
            Some(&id) => id,
            None => {
                let id = profile.instance(sample.instance.clone());
                self.instances.insert(sample.instance, id);
                id
            }
        };
        self.stats.samples += 1;
        Some(Sample {
            time_ns: sample.time_ns,
            instance,
            weight: sample.weight,
            stack,
            meta,
        })
    }

    fn location(&mut self, profile: &mut ProfileTables, address: u64, leaf: bool) -> Resolved {
        if let Some(&r) = self.locations.get(&(address, leaf)) {
            return r;
        }
        let aliased_before = self.resolver.counters.aliased_addresses;
        let result = self.resolver.resolve(address, usize::from(!leaf));
        let aliased = self.resolver.counters.aliased_addresses > aliased_before;
        let resolved = match result {
            Ok(r) => {
                let lines: Vec<Line> = r
                    .frames
                    .iter()
                    .map(|f| Line {
                        frame: profile.frames.intern(&f.name, f.file.as_deref()),
                        line: f.line,
                    })
                    .collect();
                let id = profile.locations.intern(Location {
                    address: r.address,
                    lines: lines.into(),
                });
                Resolved {
                    location: Ok(id),
                    aliased,
                    unknown: r.unknown,
                    region: r.region,
                    named_by_user_program: r.named_by_user_program,
                    return_site: r.return_site,
                }
            }
            Err(skip) => Resolved {
                location: Err(skip),
                aliased,
                unknown: false,
                region: Region::Kernel,
                named_by_user_program: false,
                return_site: true,
            },
        };
        self.locations.insert((address, leaf), resolved);
        resolved
    }

    /// A lower-half leaf before the kernel ran, as the firmware's.
    fn boot_firmware(&mut self, profile: &mut ProfileTables, address: u64, user: Resolved) -> Resolved {
        if let Some(&r) = self.boot_firmware.get(&address) {
            return r;
        }
        let Ok(user_location) = user.location else {
            return user;
        };
        let canonical = profile.locations.get(user_location).address;
        let frame = profile
            .frames
            .intern(Region::Firmware.frame_name().unwrap_or_default(), None);
        let id = profile.locations.intern(Location {
            address: canonical,
            lines: Box::new([Line { frame, line: 0 }]),
        });
        let resolved = Resolved {
            location: Ok(id),
            region: Region::Firmware,
            named_by_user_program: false,
            ..user
        };
        self.boot_firmware.insert(address, resolved);
        resolved
    }

    /// The `[idle]` pseudo-frame of a halted vCPU's samples.
    fn idle_location(&mut self, profile: &mut ProfileTables) -> LocationId {
        *self.idle.get_or_insert_with(|| {
            let frame = profile.frames.intern(IDLE_FRAME, None);
            profile.locations.intern(Location {
                address: 0,
                lines: Box::new([Line { frame, line: 0 }]),
            })
        })
    }

    fn unresolved_location(&mut self, profile: &mut ProfileTables) -> LocationId {
        *self.unresolved.get_or_insert_with(|| {
            let frame = profile.frames.intern("??", None);
            profile.locations.intern(Location {
                address: 0,
                lines: Box::new([Line { frame, line: 0 }]),
            })
        })
    }
}
