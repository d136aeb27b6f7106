//! The interned tables samples point into — frames, locations, stacks, instances — and
//! what the source says the profile is of ([`ProfileInfo`]).
//!
//! A feed interns on its own thread (names are resolved there) and hands the engine only
//! what is new since its last batch, as a [`TableDelta`]; the engine appends it to its
//! replica, so ids mean the same on both sides and a sample crosses the thread boundary as
//! a few integers, never as strings.

use rustc_hash::FxHashMap;

use super::frames::{FrameId, FrameOrigin, FrameTable};
use super::location::{Line, Location, LocationId, LocationTable};
use super::sample::{Instance, InstanceId};
use super::stack::{StackId, StackPaths, StackTable};

/// What the profile is of and how it was sampled; carried into exports.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProfileInfo {
    /// Human description of the source, e.g. the input path.
    pub source: String,
    /// Guest or host architecture (`riscv64`, `x86_64`), when known.
    pub arch: Option<String>,
    /// The binary the addresses were symbolized against (kernel ELF), when there is one.
    pub binary: Option<String>,
    /// Sampling frequency, when the source fixes one (gives pprof its cpu-nanoseconds).
    pub frequency_hz: Option<u64>,
}

/// Frames, locations, stacks and instances.
#[derive(Debug, Default, Clone)]
pub struct ProfileTables {
    pub info: ProfileInfo,
    pub frames: FrameTable,
    pub locations: LocationTable,
    pub stacks: StackTable,
    instances: Vec<Instance>,
    instance_index: FxHashMap<Instance, InstanceId>,
}

/// How far a [`TableDelta`] reaches: the table lengths it was taken at.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TableMark {
    frames: usize,
    late_files: usize,
    locations: usize,
    stacks: usize,
    instances: usize,
    info: ProfileInfo,
}

/// The entries added to a [`ProfileTables`] since a [`TableMark`], in id order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TableDelta {
    /// The lengths the new entries start at (checked when applied).
    pub from: TableMark,
    /// New frames: name, file, origin.
    pub frames: Vec<(Box<str>, Option<Box<str>>, FrameOrigin)>,
    /// Files learnt for frames interned earlier.
    pub frame_files: Vec<(FrameId, Box<str>)>,
    pub locations: Vec<Location>,
    pub stacks: StackPaths,
    pub instances: Vec<Instance>,
    /// The info, when it changed.
    pub info: Option<ProfileInfo>,
}

impl TableDelta {
    /// The first stack id this delta adds.
    pub fn from_stacks(&self) -> usize {
        self.from.stacks
    }

    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
            && self.frame_files.is_empty()
            && self.locations.is_empty()
            && self.stacks.is_empty()
            && self.instances.is_empty()
            && self.info.is_none()
    }
}

/// A delta that does not continue the tables it is applied to: a feed bug, reported
/// rather than mixing ids.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("table delta out of order: it starts at {what} {expected} but the tables have {actual}")]
pub struct DeltaMismatch {
    pub what: &'static str,
    pub expected: usize,
    pub actual: usize,
}

impl ProfileTables {
    pub fn new(info: ProfileInfo) -> Self {
        Self {
            info,
            ..Self::default()
        }
    }

    /// Intern an instance and return its id.
    pub fn instance(&mut self, instance: Instance) -> InstanceId {
        if let Some(&id) = self.instance_index.get(&instance) {
            return id;
        }
        let id = InstanceId(u32::try_from(self.instances.len()).expect("more than 2^32 instances"));
        self.instances.push(instance.clone());
        self.instance_index.insert(instance, id);
        id
    }

    pub fn instances(&self) -> &[Instance] {
        &self.instances
    }

    pub fn instance_info(&self, id: InstanceId) -> &Instance {
        &self.instances[id.index()]
    }

    /// Frames of a stack, root first.
    pub fn stack_frames(&self, stack: StackId) -> impl Iterator<Item = FrameId> + '_ {
        self.stacks.frames(stack, &self.locations)
    }

    /// Intern a stack given as frame names, root first, without addresses (folded input,
    /// tests). Each name becomes its own address-less location.
    pub fn intern_named_stack<S: AsRef<str>>(&mut self, root_first: &[S]) -> StackId {
        let locations: Vec<LocationId> = root_first
            .iter()
            .map(|name| {
                let frame = self.frames.intern(name.as_ref(), None);
                self.locations.intern(Location {
                    address: 0,
                    lines: Box::new([Line { frame, line: 0 }]),
                })
            })
            .collect();
        self.stacks.intern(&locations)
    }

    /// Where the tables are now: the next [`delta_since`](Self::delta_since) starts here.
    pub fn mark(&self) -> TableMark {
        TableMark {
            frames: self.frames.len(),
            late_files: self.frames.late_files().len(),
            locations: self.locations.len(),
            stacks: self.stacks.len(),
            instances: self.instances.len(),
            info: self.info.clone(),
        }
    }

    /// Everything added since `mark`; `mark` moves to now.
    pub fn take_delta(&mut self, mark: &mut TableMark) -> TableDelta {
        let delta = TableDelta {
            from: mark.clone(),
            frames: (mark.frames..self.frames.len())
                .map(|i| {
                    let id = FrameId(i as u32);
                    (
                        self.frames.name(id).into(),
                        self.frames.file(id).map(Into::into),
                        self.frames.origin(id).clone(),
                    )
                })
                .collect(),
            frame_files: self.frames.late_files()[mark.late_files.min(self.frames.late_files().len())..]
                .iter()
                // A frame interned in this same delta carries its file already.
                .filter(|id| id.index() < mark.frames)
                .filter_map(|&id| Some((id, self.frames.file(id)?.into())))
                .collect(),
            locations: (mark.locations..self.locations.len())
                .map(|i| self.locations.get(LocationId(i as u32)).clone())
                .collect(),
            stacks: self.stacks.paths_from(mark.stacks),
            instances: self.instances[mark.instances..].to_vec(),
            info: (self.info != mark.info).then(|| self.info.clone()),
        };
        *mark = self.mark();
        delta
    }

    /// Append a feed's delta: afterwards every id the feed hands out means the same here.
    pub fn apply(&mut self, delta: TableDelta) -> Result<(), DeltaMismatch> {
        let check = |what, expected, actual| {
            if expected == actual {
                Ok(())
            } else {
                Err(DeltaMismatch {
                    what,
                    expected,
                    actual,
                })
            }
        };
        check("frame", delta.from.frames, self.frames.len())?;
        check("location", delta.from.locations, self.locations.len())?;
        check("stack", delta.from.stacks, self.stacks.len())?;
        check("instance", delta.from.instances, self.instances.len())?;
        for (name, file, origin) in &delta.frames {
            let before = self.frames.len();
            let id = self.frames.intern_from(name, file.as_deref(), origin.clone());
            check("frame", before, id.index())?;
        }
        for (id, file) in &delta.frame_files {
            if id.index() < self.frames.len() {
                let name = self.frames.name(*id).to_string();
                self.frames.intern(&name, Some(file));
            }
        }
        for location in delta.locations {
            let before = self.locations.len();
            let id = self.locations.intern(location);
            check("location", before, id.index())?;
        }
        // The feed interned these: each is new here, so no lookup.
        for stack in delta.stacks.iter() {
            self.stacks.append(stack);
        }
        for instance in delta.instances {
            let before = self.instances.len();
            let id = self.instance(instance);
            check("instance", before, id.index())?;
        }
        if let Some(info) = delta.info {
            self.info = info;
        }
        Ok(())
    }

    /// Bytes the tables hold on the heap, roughly (names, stack paths, the indexes).
    pub fn heap_bytes(&self) -> usize {
        self.frames.heap_bytes() + self.locations.heap_bytes() + self.stacks.heap_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replica_fed_deltas_has_the_same_ids() {
        let mut feed = ProfileTables::new(ProfileInfo::default());
        let mut mark = feed.mark();
        let mut engine = ProfileTables::default();
        let a = feed.intern_named_stack(&["main", "work", "leaf"]);
        let cpu = feed.instance(Instance::cpu(1));
        engine.apply(feed.take_delta(&mut mark)).unwrap();
        assert!(feed.take_delta(&mut mark).is_empty(), "nothing new");
        let b = feed.intern_named_stack(&["main", "idle"]);
        feed.frames.intern("main", Some("main.c"));
        feed.info.frequency_hz = Some(997);
        let delta = feed.take_delta(&mut mark);
        assert_eq!(delta.frames.len(), 1, "only `idle` is new");
        assert_eq!(delta.frame_files, [(FrameId(0), "main.c".into())]);
        engine.apply(delta.clone()).unwrap();
        for stack in [a, b] {
            let names = |t: &ProfileTables| -> Vec<String> {
                t.stack_frames(stack)
                    .map(|f| t.frames.name(f).to_string())
                    .collect()
            };
            assert_eq!(names(&engine), names(&feed));
        }
        assert_eq!(engine.instance_info(cpu).label, "CPU 1");
        assert_eq!(engine.frames.file(FrameId(0)), Some("main.c"));
        assert_eq!(engine.info.frequency_hz, Some(997));
        // The same delta again does not continue the replica: refused, not mixed in.
        assert!(engine.apply(delta).is_err());
    }
}
