//! Address traces → model samples.
//!
//! Each distinct (address, leaf-or-return) pair is resolved once and interned as a model
//! location; a trace is then a few hash lookups. Frames the kernel filter drops are
//! counted; a sample left with no frame at all is dropped and counted too.

use rustc_hash::FxHashMap;

use crate::model::{Instance, InstanceId, Line, Location, LocationId, ProfileTables, Sample, SampleMeta};
use crate::symbols::Resolver;
use crate::symbols::resolver::Skipped;

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
    /// `0` / `u64::MAX` trace entries skipped.
    pub terminator_entries: u64,
}

#[derive(Copy, Clone)]
struct Resolved {
    location: Result<LocationId, Skipped>,
    aliased: bool,
    unknown: bool,
}

/// Turns address samples into profile samples through a resolver.
pub struct AddressIngest {
    resolver: Resolver,
    locations: FxHashMap<(u64, bool), Resolved>,
    instances: FxHashMap<Instance, InstanceId>,
    unresolved: Option<LocationId>,
    scratch: Vec<LocationId>,
    pub stats: IngestStats,
}

impl AddressIngest {
    pub fn new(resolver: Resolver) -> Self {
        Self {
            resolver,
            locations: FxHashMap::default(),
            instances: FxHashMap::default(),
            unresolved: None,
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
        for (index, &address) in sample.trace.iter().enumerate() {
            let resolved = self.location(profile, address, index == 0);
            self.stats.aliased_frames += u64::from(resolved.aliased);
            match resolved.location {
                Ok(loc) => {
                    self.stats.unknown_frames += u64::from(resolved.unknown);
                    self.scratch.push(loc);
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
                }
            }
            Err(skip) => Resolved {
                location: Err(skip),
                aliased,
                unknown: false,
            },
        };
        self.locations.insert((address, leaf), resolved);
        resolved
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
