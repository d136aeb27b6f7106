//! pprof export: `profile.pb.gz`, the protobuf of google/pprof's `profile.proto`, gzipped.
//!
//! Sample types are `samples/count` and, when the source has a sampling frequency,
//! `cpu/nanoseconds` (count × period). Functions carry names and files; locations carry
//! their address and inline chain (innermost line first, as the format defines); samples
//! are merged per (stack, instance) and labelled with the instance (`vcpu`, `cpu`,
//! `thread`).

use std::io::{Read, Write};

use flate2::Compression;
use flate2::read::GzDecoder;
use flate2::write::GzEncoder;
use rustc_hash::FxHashMap;

use crate::model::{InstanceKind, ProfileTables};

use super::ExportView;

/// The messages of profile.proto that perfscope writes (field numbers are the format's).
pub mod proto {
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Profile {
        #[prost(message, repeated, tag = "1")]
        pub sample_type: Vec<ValueType>,
        #[prost(message, repeated, tag = "2")]
        pub sample: Vec<Sample>,
        #[prost(message, repeated, tag = "3")]
        pub mapping: Vec<Mapping>,
        #[prost(message, repeated, tag = "4")]
        pub location: Vec<Location>,
        #[prost(message, repeated, tag = "5")]
        pub function: Vec<Function>,
        #[prost(string, repeated, tag = "6")]
        pub string_table: Vec<String>,
        #[prost(int64, tag = "9")]
        pub time_nanos: i64,
        #[prost(int64, tag = "10")]
        pub duration_nanos: i64,
        #[prost(message, optional, tag = "11")]
        pub period_type: Option<ValueType>,
        #[prost(int64, tag = "12")]
        pub period: i64,
        #[prost(int64, repeated, tag = "13")]
        pub comment: Vec<i64>,
        #[prost(int64, tag = "14")]
        pub default_sample_type: i64,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ValueType {
        #[prost(int64, tag = "1")]
        pub r#type: i64,
        #[prost(int64, tag = "2")]
        pub unit: i64,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Sample {
        #[prost(uint64, repeated, tag = "1")]
        pub location_id: Vec<u64>,
        #[prost(int64, repeated, tag = "2")]
        pub value: Vec<i64>,
        #[prost(message, repeated, tag = "3")]
        pub label: Vec<Label>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Label {
        #[prost(int64, tag = "1")]
        pub key: i64,
        #[prost(int64, tag = "2")]
        pub str: i64,
        #[prost(int64, tag = "3")]
        pub num: i64,
        #[prost(int64, tag = "4")]
        pub num_unit: i64,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Mapping {
        #[prost(uint64, tag = "1")]
        pub id: u64,
        #[prost(uint64, tag = "2")]
        pub memory_start: u64,
        #[prost(uint64, tag = "3")]
        pub memory_limit: u64,
        #[prost(uint64, tag = "4")]
        pub file_offset: u64,
        #[prost(int64, tag = "5")]
        pub filename: i64,
        #[prost(int64, tag = "6")]
        pub build_id: i64,
        #[prost(bool, tag = "7")]
        pub has_functions: bool,
        #[prost(bool, tag = "8")]
        pub has_filenames: bool,
        #[prost(bool, tag = "9")]
        pub has_line_numbers: bool,
        #[prost(bool, tag = "10")]
        pub has_inline_frames: bool,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Location {
        #[prost(uint64, tag = "1")]
        pub id: u64,
        #[prost(uint64, tag = "2")]
        pub mapping_id: u64,
        #[prost(uint64, tag = "3")]
        pub address: u64,
        #[prost(message, repeated, tag = "4")]
        pub line: Vec<Line>,
        #[prost(bool, tag = "5")]
        pub is_folded: bool,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Line {
        #[prost(uint64, tag = "1")]
        pub function_id: u64,
        #[prost(int64, tag = "2")]
        pub line: i64,
        #[prost(int64, tag = "3")]
        pub column: i64,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Function {
        #[prost(uint64, tag = "1")]
        pub id: u64,
        #[prost(int64, tag = "2")]
        pub name: i64,
        #[prost(int64, tag = "3")]
        pub system_name: i64,
        #[prost(int64, tag = "4")]
        pub filename: i64,
        #[prost(int64, tag = "5")]
        pub start_line: i64,
    }
}

#[derive(Default)]
struct Strings {
    table: Vec<String>,
    index: FxHashMap<String, i64>,
}

impl Strings {
    fn new() -> Self {
        let mut s = Self::default();
        s.id(""); // index 0 must be the empty string
        s
    }

    fn id(&mut self, s: &str) -> i64 {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        let i = self.table.len() as i64;
        self.table.push(s.to_string());
        self.index.insert(s.to_string(), i);
        i
    }
}

/// Build the pprof message for a view.
pub fn build(view: &ExportView<'_>) -> proto::Profile {
    let profile: &ProfileTables = view.tables;
    let mut strings = Strings::new();
    let mut out = proto::Profile::default();
    let period_ns = profile
        .info
        .frequency_hz
        .filter(|&f| f > 0)
        .map(|f| (1_000_000_000 / f) as i64);

    out.sample_type.push(proto::ValueType {
        r#type: strings.id("samples"),
        unit: strings.id("count"),
    });
    if let Some(period) = period_ns {
        let cpu = proto::ValueType {
            r#type: strings.id("cpu"),
            unit: strings.id("nanoseconds"),
        };
        out.sample_type.push(cpu.clone());
        out.period_type = Some(cpu);
        out.period = period;
    }

    let has_addresses = profile.locations.iter().any(|(_, l)| l.address != 0);
    let mapping_id = if has_addresses {
        let filename = strings.id(profile.info.binary.as_deref().unwrap_or(&profile.info.source));
        out.mapping.push(proto::Mapping {
            id: 1,
            filename,
            memory_start: 0,
            memory_limit: u64::MAX,
            has_functions: true,
            has_filenames: true,
            has_line_numbers: true,
            has_inline_frames: true,
            ..proto::Mapping::default()
        });
        1
    } else {
        0
    };

    // One label per instance, interned once.
    let labels: Vec<Option<proto::Label>> = profile
        .instances()
        .iter()
        .map(|inst| {
            let key = match inst.kind {
                InstanceKind::Unknown => return None,
                InstanceKind::Cpu => "cpu",
                InstanceKind::Vcpu => "vcpu",
                InstanceKind::Thread => "thread",
            };
            Some(proto::Label {
                key: strings.id(key),
                num: inst.id as i64,
                ..proto::Label::default()
            })
        })
        .collect();
    let mut used_locations: Vec<bool> = vec![false; profile.locations.len()];
    for &(stack, instance, weight) in &view.per_instance {
        let weight = i64::try_from(weight).unwrap_or(i64::MAX);
        let locations = profile.stacks.locations(stack);
        let mut sample = proto::Sample {
            // pprof lists the leaf first.
            location_id: locations.iter().rev().map(|l| u64::from(l.0) + 1).collect(),
            value: vec![weight],
            label: Vec::new(),
        };
        for l in locations {
            used_locations[l.index()] = true;
        }
        if let Some(period) = period_ns {
            sample.value.push(weight.saturating_mul(period));
        }
        if let Some(Some(label)) = labels.get(instance.index()) {
            sample.label.push(label.clone());
        }
        out.sample.push(sample);
    }

    let mut used_functions: Vec<bool> = vec![false; profile.frames.len()];
    for (id, loc) in profile.locations.iter() {
        if !used_locations[id.index()] {
            continue;
        }
        out.location.push(proto::Location {
            id: u64::from(id.0) + 1,
            mapping_id,
            address: loc.address,
            line: loc
                .lines
                .iter()
                .map(|l| {
                    used_functions[l.frame.index()] = true;
                    proto::Line {
                        function_id: u64::from(l.frame.0) + 1,
                        line: i64::from(l.line),
                        column: 0,
                    }
                })
                .collect(),
            is_folded: false,
        });
    }
    for frame in profile.frames.ids().filter(|f| used_functions[f.index()]) {
        let name = strings.id(profile.frames.name(frame));
        let filename = profile.frames.file(frame).map(|f| strings.id(f)).unwrap_or(0);
        out.function.push(proto::Function {
            id: u64::from(frame.0) + 1,
            name,
            system_name: name,
            filename,
            start_line: 0,
        });
    }
    if let Some((lo, hi)) = view.time_range_ns {
        out.duration_nanos = i64::try_from(hi.saturating_sub(lo)).unwrap_or(i64::MAX);
    }
    out.comment
        .push(strings.id(&format!("perfscope: {}", profile.info.source)));
    out.string_table = strings.table;
    out
}

/// Encode and gzip.
pub fn encode(profile: &proto::Profile) -> Vec<u8> {
    let bytes = prost::Message::encode_to_vec(profile);
    // Fast compression: a profile of a million distinct stacks is tens of megabytes of
    // protobuf, and level 6 costs seconds for a few percent of size.
    let mut gz = GzEncoder::new(Vec::new(), Compression::fast());
    // Writing to a Vec cannot fail.
    gz.write_all(&bytes).expect("gzip into memory");
    gz.finish().expect("gzip into memory")
}

/// Gunzip and decode (for tests and for reading pprof input back).
pub fn decode(gzipped: &[u8]) -> Result<proto::Profile, String> {
    let mut raw = Vec::new();
    GzDecoder::new(gzipped)
        .read_to_end(&mut raw)
        .map_err(|e| format!("not gzip: {e}"))?;
    prost::Message::decode(raw.as_slice()).map_err(|e| format!("not a pprof profile: {e}"))
}

/// Per call path (root first, function names with inline frames expanded): the first
/// sample value, summed. The shape a round trip is compared in.
pub fn stacks_by_name(p: &proto::Profile) -> std::collections::BTreeMap<Vec<String>, i64> {
    let functions: FxHashMap<u64, &str> = p
        .function
        .iter()
        .map(|f| {
            (
                f.id,
                p.string_table.get(f.name as usize).map_or("", String::as_str),
            )
        })
        .collect();
    let locations: FxHashMap<u64, &proto::Location> = p.location.iter().map(|l| (l.id, l)).collect();
    let mut out = std::collections::BTreeMap::new();
    for s in &p.sample {
        let mut names = Vec::new();
        for id in s.location_id.iter().rev() {
            if let Some(loc) = locations.get(id) {
                for line in loc.line.iter().rev() {
                    names.push(
                        functions
                            .get(&line.function_id)
                            .copied()
                            .unwrap_or("?")
                            .to_string(),
                    );
                }
            }
        }
        *out.entry(names).or_insert(0) += s.value.first().copied().unwrap_or(0);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::sample_list::test_support::profile_from;
    use crate::model::{Line, Location, Selection, StackTrie};

    #[test]
    fn round_trip_keeps_every_stack_and_weight() {
        let mut p = profile_from(&[
            (&["kmain", "run_bench", "mix_leaf"], 5, Some(10)),
            (&["kmain", "run_bench", "mix_leaf"], 2, Some(20)),
            (&["kmain", "readline"], 1, Some(30)),
        ]);
        p.info.frequency_hz = Some(1000);
        let view = ExportView::new(&p, Selection::all());
        let bytes = encode(&build(&view));
        let back = decode(&bytes).unwrap();
        assert_eq!(back.string_table[0], "");
        let types: Vec<&str> = back
            .sample_type
            .iter()
            .map(|t| back.string_table[t.r#type as usize].as_str())
            .collect();
        assert_eq!(types, ["samples", "cpu"]);
        assert_eq!(back.period, 1_000_000);
        assert_eq!(back.duration_nanos, 20);
        let stacks = stacks_by_name(&back);
        let trie = StackTrie::from_selection(&p, &Selection::all());
        let expected: std::collections::BTreeMap<Vec<String>, i64> = trie
            .ids()
            .filter(|&id| trie.node(id).self_weight > 0)
            .map(|id| {
                let names = trie
                    .path(id)
                    .into_iter()
                    .map(|f| p.frames.name(f).to_string())
                    .collect();
                (names, trie.node(id).self_weight as i64)
            })
            .collect();
        assert_eq!(stacks, expected);
        let cpu_ns: i64 = back.sample.iter().map(|s| s.value[1]).sum();
        assert_eq!(cpu_ns, 8 * 1_000_000);
    }

    #[test]
    fn inline_chains_and_lines_survive() {
        let mut p = profile_from(&[]);
        let inst = p.instance(crate::model::Instance::vcpu(2));
        let outer = p.frames.intern("hash_block", Some("kernel.c"));
        let inner = p.frames.intern("mix_round", Some("kernel.c"));
        let loc = p.locations.intern(Location {
            address: 0xffffffc080200100,
            lines: Box::new([
                Line {
                    frame: inner,
                    line: 42,
                },
                Line {
                    frame: outer,
                    line: 57,
                },
            ]),
        });
        let stack = p.stacks.intern(&[loc]);
        p.push_sample(crate::model::Sample {
            time_ns: None,
            instance: inst,
            weight: 3,
            stack,
            meta: Default::default(),
        });
        let back = decode(&encode(&build(&ExportView::new(&p, Selection::all())))).unwrap();
        assert_eq!(back.location.len(), 1);
        let l = &back.location[0];
        assert_eq!(l.address, 0xffffffc080200100);
        assert_eq!(l.line.iter().map(|x| x.line).collect::<Vec<_>>(), [42, 57]);
        assert_eq!(back.mapping.len(), 1);
        let label = &back.sample[0].label[0];
        assert_eq!(back.string_table[label.key as usize], "vcpu");
        assert_eq!(label.num, 2);
        assert_eq!(
            stacks_by_name(&back).into_iter().next().unwrap().0,
            ["hash_block", "mix_round"]
        );
        assert!(decode(b"not gzip").is_err());
    }
}
