//! The resolver: a per-address cache in front of a [`Symbolizer`], applying the rules
//! every sampled address goes through.
//!
//! 1. `0` and `u64::MAX` are not addresses (unwinders use them as terminators): skipped.
//! 2. A physical alias of the image is mapped onto its linked address.
//! 3. With the kernel filter, an address outside the kernel text is dropped (counted).
//! 4. An address outside the kernel image is named by its region, not looked up among the
//!    kernel's symbols: one `[firmware]` or `[user]` frame, or `0x<ip>` under `[unknown]`. A
//!    user-space address inside a user program given (`--user-elf`) is looked up in it and
//!    shown under `[user]`.
//! 5. A return address (any frame but the leaf) is looked up at `ip − 1`, so it lands on
//!    the call instruction: the return address may already be the next function or line.
//! 6. Names are styled. A frame is a function: a symbol-table name carries no `+0x<offset>`
//!    (every sampled offset of an assembly routine would be a frame of its own; the address
//!    stays in the location); nothing found gives `0x<ip>`.
//! 7. Whether a kernel address can be a return address travels with it
//!    ([`ResolvedAddress::return_site`]); feeds/ingest ends a stack at one that cannot:
//!    - one in the kernel's data (outside its executable sections) or in no function (the
//!      padding between them) was read from something that is no frame record (a data
//!      pointer in the frame-pointer register);
//!    - one at a function's first instruction follows no call: it is a task entered with
//!      its return address set to its own entry (StarryOS's `TaskContext::init`), whose
//!      frame is already in the stack (the return into its body). Looked up one byte
//!      earlier it would name the function before it.

use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::guest_space::Region;
use super::style::SymbolStyle;
use super::{AddressRange, SymbolFrame, Symbolizer};

/// A frame as it enters the model: styled name, file and line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvedFrame {
    pub name: String,
    pub file: Option<String>,
    pub line: u32,
}

/// One resolved address: the inline chain (innermost first) at the address the sampler
/// saw, after canonicalization.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvedAddress {
    pub address: u64,
    pub frames: Arc<[ResolvedFrame]>,
    /// No symbol covered the address; the single frame is `0x…`.
    pub unknown: bool,
    /// Where the address lies; outside [`Region::Kernel`] the frames name the region.
    pub region: Region,
    /// A user-space address a `--user-elf` program's symbols named.
    pub named_by_user_program: bool,
    /// Whether, as a return address, the address can be one (rule 7 of the module docs);
    /// always true for the leaf and outside the kernel image (its region names it).
    pub return_site: bool,
}

/// Options of a resolver.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct ResolverOptions {
    pub style: SymbolStyle,
    /// Drop addresses outside the kernel text range.
    pub kernel_filter: bool,
}

/// What the resolver did, for the resolve statistics.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct ResolveCounters {
    /// Distinct lookup addresses symbolized (cache misses).
    pub distinct_addresses: u64,
    /// Lookups answered from the cache.
    pub cache_hits: u64,
    /// Distinct addresses no symbol covered.
    pub unknown_addresses: u64,
    /// Addresses dropped by the kernel filter (each occurrence).
    pub filtered_addresses: u64,
    /// Addresses moved from a physical alias (each occurrence).
    pub aliased_addresses: u64,
    /// `0` / `u64::MAX` entries skipped.
    pub terminator_entries: u64,
}

/// Per-address cache and rules in front of a symbolizer.
pub struct Resolver {
    symbolizer: Box<dyn Symbolizer>,
    /// Guest user programs (`--user-elf`), each with the text range it covers.
    user_programs: Vec<(AddressRange, Box<dyn Symbolizer>)>,
    options: ResolverOptions,
    kernel_text: Option<AddressRange>,
    cache: FxHashMap<u64, Option<Arc<[ResolvedFrame]>>>,
    pub counters: ResolveCounters,
}

/// Why an entry of a trace produced no frame.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Skipped {
    Terminator,
    Filtered,
}

impl Resolver {
    /// `kernel_filter` needs a text range: the symbolizer's own, or an explicit one.
    pub fn new(
        symbolizer: Box<dyn Symbolizer>,
        options: ResolverOptions,
        kernel_text_override: Option<AddressRange>,
    ) -> Self {
        let kernel_text = kernel_text_override.or_else(|| symbolizer.kernel_text());
        Self {
            symbolizer,
            user_programs: Vec::new(),
            options,
            kernel_text,
            cache: FxHashMap::default(),
            counters: ResolveCounters::default(),
        }
    }

    pub fn options(&self) -> ResolverOptions {
        self.options
    }

    /// Name user-space addresses inside `program`'s text with its symbols (`--user-elf`).
    /// A program without a text range could name nothing: refused.
    pub fn add_user_program(&mut self, program: Box<dyn Symbolizer>) -> Result<(), &'static str> {
        let text = program.kernel_text().ok_or("it has no executable section")?;
        self.user_programs.push((text, program));
        Ok(())
    }

    /// The kernel image's physical alias, when the symbols give one.
    pub fn kernel_alias(&self) -> Option<super::guest_space::KernelAlias> {
        self.symbolizer.kernel_alias()
    }

    /// The range the kernel filter keeps.
    pub fn kernel_text(&self) -> Option<AddressRange> {
        self.kernel_text
    }

    /// Resolve trace entry `index` (0 = the sampled leaf, others are return addresses).
    pub fn resolve(&mut self, address: u64, index: usize) -> Result<ResolvedAddress, Skipped> {
        if address == 0 || address == u64::MAX {
            self.counters.terminator_entries += 1;
            return Err(Skipped::Terminator);
        }
        let canonical = self.symbolizer.canonicalize(address);
        if canonical.aliased {
            self.counters.aliased_addresses += 1;
        }
        let address = canonical.address;
        if self.options.kernel_filter
            && let Some(text) = self.kernel_text
            && !text.contains(address)
        {
            self.counters.filtered_addresses += 1;
            return Err(Skipped::Filtered);
        }
        let region = self.symbolizer.region(address);
        if let Some(name) = region.frame_name() {
            let region_frame = ResolvedFrame {
                name: name.to_string(),
                file: None,
                line: 0,
            };
            let user_program = match region {
                Region::User => self
                    .user_programs
                    .iter()
                    .position(|(text, _)| text.contains(address)),
                _ => None,
            };
            let mut named_by_user_program = false;
            let frames: Arc<[ResolvedFrame]> = match (region, user_program) {
                // Its own symbols, under the region's frame (innermost first).
                (Region::User, Some(program)) => {
                    let lookup = if index == 0 { address } else { address - 1 };
                    let mut frames = match self.cached(lookup, Some(program)) {
                        Some(named) => {
                            named_by_user_program = true;
                            named.to_vec()
                        }
                        None => vec![ResolvedFrame {
                            name: format!("0x{address:x}"),
                            file: None,
                            line: 0,
                        }],
                    };
                    frames.push(region_frame);
                    frames.into()
                }
                // By address, under the region's frame (innermost first).
                (Region::Unknown, _) => Arc::new([
                    ResolvedFrame {
                        name: format!("0x{address:x}"),
                        file: None,
                        line: 0,
                    },
                    region_frame,
                ]),
                _ => Arc::new([region_frame]),
            };
            return Ok(ResolvedAddress {
                address,
                frames,
                unknown: false,
                region,
                named_by_user_program,
                return_site: true,
            });
        }
        let lookup = if index == 0 { address } else { address - 1 };
        let return_site =
            index == 0 || (self.symbolizer.is_code(address) && !self.symbolizer.is_function_start(address));
        let cached = self.cached(lookup, None);
        Ok(match cached {
            Some(frames) => ResolvedAddress {
                address,
                frames,
                unknown: false,
                region,
                named_by_user_program: false,
                return_site,
            },
            None => ResolvedAddress {
                address,
                frames: Arc::new([ResolvedFrame {
                    name: format!("0x{address:x}"),
                    file: None,
                    line: 0,
                }]),
                unknown: true,
                region,
                named_by_user_program: false,
                return_site,
            },
        })
    }

    /// The styled frames at `lookup` from the kernel's symbols or user program `program`,
    /// cached (the regions are disjoint, so one cache serves all).
    fn cached(&mut self, lookup: u64, program: Option<usize>) -> Option<Arc<[ResolvedFrame]>> {
        if let Some(hit) = self.cache.get(&lookup) {
            self.counters.cache_hits += 1;
            return hit.clone();
        }
        let symbolizer = match program {
            Some(p) => &self.user_programs[p].1,
            None => &self.symbolizer,
        };
        let frames = self.style_frames(symbolizer.symbolize(lookup));
        self.counters.distinct_addresses += 1;
        self.counters.unknown_addresses += u64::from(frames.is_none());
        self.cache.insert(lookup, frames.clone());
        frames
    }

    fn style_frames(&self, frames: Vec<SymbolFrame>) -> Option<Arc<[ResolvedFrame]>> {
        if frames.is_empty() {
            return None;
        }
        Some(
            frames
                .into_iter()
                .map(|f| self.style_frame(f))
                .collect::<Vec<_>>()
                .into(),
        )
    }

    fn style_frame(&self, frame: SymbolFrame) -> ResolvedFrame {
        ResolvedFrame {
            name: self.options.style.apply(&frame.name),
            file: frame.file,
            line: frame.line,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::symbols::Canonical;

    /// Names every address `f<addr>` inside [0x1000, 0x2000), with an inline chain at 0x1800.
    struct Fake;

    impl Symbolizer for Fake {
        fn symbolize(&self, address: u64) -> Vec<SymbolFrame> {
            let frame = |name: String, offset| SymbolFrame {
                name,
                file: None,
                line: 0,
                offset,
            };
            match address {
                0x1800 => vec![frame("inner".into(), None), frame("a::b::outer".into(), None)],
                0x1000..0x2000 => vec![frame(format!("f{address:x}"), Some(4))],
                _ => vec![],
            }
        }
        fn canonicalize(&self, address: u64) -> Canonical {
            if (0x10_1000..0x10_2000).contains(&address) {
                Canonical {
                    address: address - 0x10_0000,
                    aliased: true,
                }
            } else {
                Canonical {
                    address,
                    aliased: false,
                }
            }
        }
        fn kernel_text(&self) -> Option<AddressRange> {
            Some(AddressRange {
                start: 0x1000,
                end: 0x2000,
            })
        }
    }

    fn names(r: &ResolvedAddress) -> Vec<&str> {
        r.frames.iter().map(|f| f.name.as_str()).collect()
    }

    #[test]
    fn return_addresses_are_looked_up_one_byte_earlier() {
        let mut r = Resolver::new(Box::new(Fake), ResolverOptions::default(), None);
        assert_eq!(names(&r.resolve(0x1801, 1).unwrap()), ["inner", "a::b::outer"]);
        assert_eq!(names(&r.resolve(0x1800, 0).unwrap()), ["inner", "a::b::outer"]);
        assert_eq!(names(&r.resolve(0x1801, 0).unwrap()), ["f1801"], "no +0x offset");
        assert_eq!(r.counters.cache_hits, 1);
        assert_eq!(r.counters.distinct_addresses, 2);
    }

    /// Functions at 0x1000 (`first`) and 0x1100 (`task_entry`), an assembly routine
    /// `asm_label` at 0x1200 named by the symbol table at every offset; data from 0x3000.
    struct Functions;

    impl Symbolizer for Functions {
        fn symbolize(&self, address: u64) -> Vec<SymbolFrame> {
            let (name, offset) = match address {
                0x1000..0x1100 => ("first", None),
                0x1100..0x1200 => ("task_entry", None),
                0x1200..0x1300 => ("asm_label", Some(address - 0x1200)),
                _ => return vec![],
            };
            vec![SymbolFrame {
                name: name.into(),
                file: None,
                line: 0,
                offset,
            }]
        }
        fn is_function_start(&self, address: u64) -> bool {
            [0x1000, 0x1100, 0x1200].contains(&address)
        }
        fn is_code(&self, address: u64) -> bool {
            (0x1000..0x2000).contains(&address)
        }
    }

    #[test]
    fn an_assembly_routine_is_one_frame_at_every_offset() {
        let mut r = Resolver::new(Box::new(Functions), ResolverOptions::default(), None);
        for (address, index) in [(0x1200, 0), (0x1208, 0), (0x1214, 0), (0x122e, 1)] {
            let resolved = r.resolve(address, index).unwrap();
            assert_eq!(names(&resolved), ["asm_label"], "{address:#x}");
            assert_eq!(resolved.address, address, "the address stays in the location");
        }
    }

    #[test]
    fn whether_an_address_can_be_a_return_address_travels_with_it() {
        let mut r = Resolver::new(Box::new(Functions), ResolverOptions::default(), None);
        assert!(r.resolve(0x1010, 1).unwrap().return_site);
        assert!(!r.resolve(0x3008, 1).unwrap().return_site, "kernel data");
        // A task entered with ra = task_entry: no call returns there.
        let entry = r.resolve(0x1100, 3).unwrap();
        assert!(!entry.return_site);
        assert!(r.resolve(0x1100, 0).unwrap().return_site, "a leaf is a leaf");
        assert!(r.resolve(0x1101, 3).unwrap().return_site);
    }

    #[test]
    fn unknown_addresses_keep_their_value_and_terminators_are_skipped() {
        let mut r = Resolver::new(Box::new(Fake), ResolverOptions::default(), None);
        let unknown = r.resolve(0x8000_0000, 0).unwrap();
        assert!(unknown.unknown);
        assert_eq!(names(&unknown), ["0x80000000"]);
        assert_eq!(r.resolve(0, 1), Err(Skipped::Terminator));
        assert_eq!(r.resolve(u64::MAX, 1), Err(Skipped::Terminator));
        assert_eq!(r.counters.terminator_entries, 2);
    }

    #[test]
    fn kernel_filter_drops_outside_text_after_aliasing() {
        let opts = ResolverOptions {
            kernel_filter: true,
            ..ResolverOptions::default()
        };
        let mut r = Resolver::new(Box::new(Fake), opts, None);
        assert_eq!(r.resolve(0x8000_0000, 0), Err(Skipped::Filtered));
        let aliased = r.resolve(0x10_1800, 0).unwrap();
        assert_eq!(aliased.address, 0x1800);
        assert_eq!(names(&aliased), ["inner", "a::b::outer"]);
        assert_eq!(r.counters.filtered_addresses, 1);
        assert_eq!(r.counters.aliased_addresses, 1);
    }

    #[test]
    fn style_applies_before_the_offset() {
        let opts = ResolverOptions {
            style: SymbolStyle::Short,
            ..ResolverOptions::default()
        };
        let mut r = Resolver::new(Box::new(Fake), opts, None);
        assert_eq!(names(&r.resolve(0x1800, 0).unwrap()), ["inner", "outer"]);
    }

    /// The kernel's view: user space below 0x1000 (nothing of the kernel's there).
    struct KernelWithUserSpace;

    impl Symbolizer for KernelWithUserSpace {
        fn symbolize(&self, _address: u64) -> Vec<SymbolFrame> {
            panic!("a user address is never looked up among the kernel's symbols")
        }
        fn region(&self, address: u64) -> Region {
            if address < 0x1000 {
                Region::User
            } else {
                Region::Unknown
            }
        }
    }

    /// A user program whose text is [0x400, 0x500): `user_fn` from 0x400.
    struct UserProgram;

    impl Symbolizer for UserProgram {
        fn symbolize(&self, address: u64) -> Vec<SymbolFrame> {
            match address {
                0x400..0x480 => vec![SymbolFrame {
                    name: "user_fn".into(),
                    file: Some("user.c".into()),
                    line: 7,
                    offset: None,
                }],
                _ => vec![],
            }
        }
        fn kernel_text(&self) -> Option<AddressRange> {
            Some(AddressRange {
                start: 0x400,
                end: 0x500,
            })
        }
    }

    #[test]
    fn user_addresses_are_named_by_the_user_program_that_covers_them() {
        let mut r = Resolver::new(Box::new(KernelWithUserSpace), ResolverOptions::default(), None);
        assert_eq!(
            names(&r.resolve(0x410, 0).unwrap()),
            ["[user]"],
            "no program given"
        );
        r.add_user_program(Box::new(UserProgram)).unwrap();
        let named = r.resolve(0x410, 0).unwrap();
        assert_eq!(names(&named), ["user_fn", "[user]"]);
        assert_eq!((named.region, named.unknown), (Region::User, false));
        assert!(named.named_by_user_program);
        assert_eq!(named.frames[0].line, 7);
        // Inside the program's text but no symbol: by address, still under [user].
        let no_symbol = r.resolve(0x490, 0).unwrap();
        assert_eq!(names(&no_symbol), ["0x490", "[user]"]);
        assert!(!no_symbol.named_by_user_program);
        // Outside every program: the region alone.
        assert_eq!(names(&r.resolve(0x800, 0).unwrap()), ["[user]"]);
        // A return address is looked up one byte earlier, as in the kernel.
        assert_eq!(names(&r.resolve(0x480, 1).unwrap()), ["user_fn", "[user]"]);
        assert!(
            r.add_user_program(Box::new(KernelWithUserSpace)).is_err(),
            "no text: refused"
        );
    }
}
