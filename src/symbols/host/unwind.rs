//! User-space stacks without frame pointers: the sampled registers and a copy of the user
//! stack (what `--call-graph dwarf` asks the kernel for) become the return addresses of
//! the call chain, unwound with framehop through the call frame information of the files
//! the process maps (`.eh_frame`, `.debug_frame`).
//!
//! [`UserUnwinder`] keeps its own view of the processes' mappings ([`ProcessTable`], fed
//! the same MMAP2/COMM/FORK/EXIT records as the symbolizer, in ring order) and one
//! framehop unwinder per process. Modules are added lazily: a walk that passes through a
//! mapping whose tables are not loaded yet loads them (once per file, shared through a
//! [`FileCache`]) and walks again, so a process mapping a hundred libraries loads the
//! handful its samples run in. Where a file has no tables (JIT code, a stripped blob),
//! framehop falls back to the frame pointer.
//!
//! It knows nothing of perf records or names: addresses in, addresses out.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use framehop::{FrameAddress, Module, Unwinder};
use rustc_hash::{FxHashMap, FxHashSet};

use super::file_cache::FileCache;
use super::maps::{FileKey, Mapping, MappingTarget};
use super::processes::ProcessTable;
use super::unwind_sections::{SectionBytes, UnwindSections};

#[cfg(target_arch = "x86_64")]
type NativeUnwinder = framehop::x86_64::UnwinderX86_64<SectionBytes>;
#[cfg(target_arch = "x86_64")]
type NativeCache = framehop::x86_64::CacheX86_64;
#[cfg(target_arch = "aarch64")]
type NativeUnwinder = framehop::aarch64::UnwinderAarch64<SectionBytes>;
#[cfg(target_arch = "aarch64")]
type NativeCache = framehop::aarch64::CacheAarch64;
// Elsewhere the kernel samples no registers for perfscope (`UNWIND_REGS_MASK` is 0) and
// `--call-graph dwarf` is refused: the types only keep the code in one piece.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
type NativeUnwinder = framehop::x86_64::UnwinderX86_64<SectionBytes>;
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
type NativeCache = framehop::x86_64::CacheX86_64;

/// The user registers a walk starts from.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct UserRegisters {
    /// The sampled instruction address.
    pub pc: u64,
    pub sp: u64,
    /// The frame pointer (x86_64 rbp, aarch64 x29).
    pub fp: u64,
    /// The link register (aarch64 x30; unused on x86_64).
    pub lr: u64,
}

/// How a walk ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum WalkEnd {
    /// The unwinder found the outermost frame (`_start`, a thread's start).
    Root,
    /// The walk stopped early: the stack copy ended, a rule led nowhere, or the frame
    /// limit was reached.
    Truncated,
}

/// What the unwinder did, for a status line.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct UnwindCounters {
    pub walks: u64,
    /// Walks that reached the outermost frame.
    pub complete: u64,
    /// Files whose tables were loaded (again, after one was dropped as idle).
    pub files_loaded: u64,
    /// Mapped files that could not be read (walks through them use frame pointers).
    pub files_failed: u64,
    /// Per-process unwinders built (a process's maps changed, or a new process).
    pub spaces_built: u64,
}

/// Options of a [`UserUnwinder`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnwinderOptions {
    /// Root of separate debug files (`/usr/lib/debug`), for `.debug_frame`.
    pub debug_root: PathBuf,
    /// Exited processes kept unwindable (their samples may still be in the rings).
    pub exited_processes_kept: usize,
    /// A file's tables no walk needed for this long are dropped.
    pub file_idle: Duration,
    /// Files whose tables are kept at most.
    pub files_kept: usize,
    /// Frames a walk returns at most (the sampled address included).
    pub max_frames: usize,
}

impl Default for UnwinderOptions {
    fn default() -> Self {
        Self {
            debug_root: PathBuf::from("/usr/lib/debug"),
            exited_processes_kept: 256,
            file_idle: Duration::from_secs(60),
            files_kept: 256,
            // perf's default kernel.perf_event_max_stack.
            max_frames: 127,
        }
    }
}

/// One process's framehop unwinder and the mappings it has modules for.
struct Space {
    maps_version: u64,
    unwinder: NativeUnwinder,
    /// Start addresses of the mappings added as modules (or found to have no tables).
    added: FxHashSet<u64>,
}

/// Processes kept with an unwinder at most; past it they are all rebuilt as needed.
const MAX_SPACES: usize = 4096;

/// Walks a walk is retried at most after adding the modules it passed through.
const MAX_ROUNDS: usize = 8;

/// Unwinds user stack copies of the processes it is told about.
pub struct UserUnwinder {
    options: UnwinderOptions,
    processes: ProcessTable,
    files: FileCache<Arc<UnwindSections>>,
    /// This process's vDSO size and tables, read at the first `[vdso]` address
    /// (`Some(None)`: none).
    vdso: Option<Option<(u64, Arc<UnwindSections>)>>,
    spaces: FxHashMap<u32, Space>,
    /// One rule cache for every process: framehop keys its entries by the unwinder's
    /// module generation, so another process's rules are never applied, and memory stays
    /// one cache however many processes are sampled.
    cache: NativeCache,
    counters: UnwindCounters,
}

impl UserUnwinder {
    pub fn new(options: UnwinderOptions) -> UserUnwinder {
        UserUnwinder {
            processes: ProcessTable::new(options.exited_processes_kept),
            files: FileCache::new(options.file_idle, options.files_kept),
            vdso: None,
            spaces: FxHashMap::default(),
            cache: NativeCache::new(),
            counters: UnwindCounters::default(),
            options,
        }
    }

    pub fn counters(&self) -> UnwindCounters {
        self.counters
    }

    /// An MMAP2 record (executable mappings).
    pub fn on_mmap(&mut self, pid: u32, start: u64, len: u64, pgoff: u64, path: &str, file: Option<FileKey>) {
        self.processes.on_mmap(pid, start, len, pgoff, path, file);
    }

    /// A COMM record with the exec flag: the old image is gone.
    pub fn on_exec(&mut self, pid: u32) {
        self.processes.on_exec(pid);
        self.spaces.remove(&pid);
    }

    /// A FORK record of a new process.
    pub fn on_fork(&mut self, parent_pid: u32, child_pid: u32) {
        self.processes.on_fork(parent_pid, child_pid);
    }

    /// An EXIT record of a process: it stays unwindable for the grace of its samples.
    pub fn on_exit(&mut self, pid: u32) {
        for forgotten in self.processes.on_exit(pid) {
            self.spaces.remove(&forgotten);
        }
    }

    /// Unwind the stack of process `pid` from `regs`: `stack` holds the user stack from
    /// `regs.sp` up. `out` gets the sampled address, then the return addresses (leaf
    /// first, as a callchain), at most `max_frames`.
    pub fn unwind(&mut self, pid: u32, regs: UserRegisters, stack: &[u8], out: &mut Vec<u64>) -> WalkEnd {
        self.counters.walks += 1;
        // Learn the process (its /proc maps when it is new) before its unwinder is built.
        self.processes.find(pid, regs.pc);
        let mut end = WalkEnd::Truncated;
        for _ in 0..MAX_ROUNDS {
            self.space(pid);
            let Some(space) = self.spaces.get(&pid) else {
                break;
            };
            end = walk(
                &space.unwinder,
                &mut self.cache,
                regs,
                stack,
                self.options.max_frames,
                out,
            );
            if !self.add_modules_for(pid, out) {
                break;
            }
        }
        if end == WalkEnd::Root {
            self.counters.complete += 1;
        }
        end
    }

    /// The unwinder of `pid`, rebuilt (empty) when its maps changed since it was built.
    fn space(&mut self, pid: u32) -> &mut Space {
        let version = self.processes.maps_version(pid).unwrap_or(0);
        if self.spaces.get(&pid).is_none_or(|s| s.maps_version != version) {
            if self.spaces.len() >= MAX_SPACES {
                self.spaces.clear();
            }
            self.counters.spaces_built += 1;
            self.spaces.insert(
                pid,
                Space {
                    maps_version: version,
                    unwinder: NativeUnwinder::new(),
                    added: FxHashSet::default(),
                },
            );
        }
        self.spaces.get_mut(&pid).expect("inserted above")
    }

    /// Add a module for each mapping `frames` pass through that has none yet; whether any
    /// was added (the walk is then worth another round).
    fn add_modules_for(&mut self, pid: u32, frames: &[u64]) -> bool {
        let mut added = false;
        for (i, &address) in frames.iter().enumerate() {
            // A return address is looked up on its call instruction.
            let lookup = if i == 0 {
                address
            } else {
                address.saturating_sub(1)
            };
            let Some(start) = self.processes.find(pid, lookup).map(|m| m.start) else {
                continue;
            };
            // The lookup may have re-read the maps: the space is then rebuilt below.
            let version = self.processes.maps_version(pid).unwrap_or(0);
            if self
                .spaces
                .get(&pid)
                .is_some_and(|s| s.maps_version == version && s.added.contains(&start))
            {
                continue;
            }
            let Some(mapping) = self.processes.find(pid, lookup).cloned() else {
                continue;
            };
            let module = self.module_of(pid, &mapping);
            let space = self.space(pid);
            space.added.insert(mapping.start);
            if let Some(module) = module {
                space.unwinder.add_module(module);
                added = true;
            }
        }
        added
    }

    /// The framehop module of one mapping of `pid`, when its file has tables.
    fn module_of(&mut self, pid: u32, mapping: &Mapping) -> Option<Module<SectionBytes>> {
        let size = mapping.end - mapping.start;
        let sections: Arc<UnwindSections> = match &mapping.target {
            MappingTarget::File { path, key: Some(key) }
            | MappingTarget::Deleted { path, key: Some(key) } => {
                let debug_root = &self.options.debug_root;
                let range = (mapping.start, mapping.end);
                let (sections, loaded) = self.files.get_or_load(*key, || {
                    super::open_mapping(path, *key, pid, range, |open_path| {
                        UnwindSections::open(open_path, Path::new(&**path), debug_root)
                    })
                    .map(Arc::new)
                });
                if loaded {
                    match sections {
                        Some(_) => self.counters.files_loaded += 1,
                        None => self.counters.files_failed += 1,
                    }
                }
                Arc::clone(sections?)
            }
            MappingTarget::Special(name) if &**name == "[vdso]" => {
                let vdso = self.vdso.get_or_insert_with(|| {
                    let image = super::vdso::own_image()?;
                    let sections = UnwindSections::from_elf(&image)?;
                    Some((image.len() as u64, Arc::new(sections)))
                });
                // Another process's vDSO is the same image when it has the same size
                // (every process of one ABI gets the running kernel's).
                let (own_size, sections) = vdso.as_ref()?;
                if *own_size != size {
                    return None;
                }
                Arc::clone(sections)
            }
            _ => return None,
        };
        if !sections.has_cfi() {
            return None;
        }
        // Where the file's virtual address 0 lies in the process: the mapping start less
        // the virtual address of the file offset it maps.
        let base = mapping
            .start
            .wrapping_sub(sections.mapped_virtual_address(mapping.pgoff, size));
        Some(Module::new(
            mapping.target.module().to_string(),
            mapping.start..mapping.end,
            base,
            sections.section_info(),
        ))
    }
}

/// One walk with the modules `unwinder` has now.
fn walk(
    unwinder: &NativeUnwinder,
    cache: &mut NativeCache,
    regs: UserRegisters,
    stack: &[u8],
    max_frames: usize,
    out: &mut Vec<u64>,
) -> WalkEnd {
    out.clear();
    let sp = regs.sp;
    let mut read_stack = |address: u64| -> Result<u64, ()> {
        let offset = usize::try_from(address.checked_sub(sp).ok_or(())?).map_err(|_| ())?;
        let bytes = stack.get(offset..offset.checked_add(8).ok_or(())?).ok_or(())?;
        let mut word = [0u8; 8];
        word.copy_from_slice(bytes);
        Ok(u64::from_le_bytes(word))
    };
    #[cfg(not(target_arch = "aarch64"))]
    let start = framehop::x86_64::UnwindRegsX86_64::new(regs.pc, regs.sp, regs.fp);
    #[cfg(target_arch = "aarch64")]
    let start = framehop::aarch64::UnwindRegsAarch64::new_with_ptr_auth_mask(
        framehop::aarch64::PtrAuthMask::from_max_known_address(unwinder.max_known_code_address()),
        regs.lr,
        regs.sp,
        regs.fp,
    );
    let mut frames = unwinder.iter_frames(regs.pc, start, cache, &mut read_stack);
    while out.len() < max_frames {
        match frames.next() {
            Ok(Some(frame)) => out.push(FrameAddress::address(frame)),
            Ok(None) => return WalkEnd::Root,
            Err(_) => return WalkEnd::Truncated,
        }
    }
    WalkEnd::Truncated
}

#[cfg(test)]
#[path = "unwind_tests.rs"]
mod tests;
