//! Host symbolization: the running kernel (/proc/kallsyms) and user space
//! (/proc/PID/maps + the mapped files' ELF symbols and DWARF), cached per mapped file.
//!
//! [`HostSymbolizer`] is fed from a perf_event reader thread: sampled addresses go in
//! through [`HostSymbolizer::resolve_kernel`] and [`HostSymbolizer::resolve_user`], and the
//! side-band records (MMAP2, COMM, FORK, EXIT) through the `on_*` methods so the
//! address spaces stay current. It owns no perf_event code and no model types.
//!
//! - [`maps`]: one process's executable mappings, parsed from /proc or built from records.
//! - [`probe_offset`]: function (+offset) → the file offset a uprobe is placed at.
//! - [`processes`]: pid → maps with fork sharing, exec reset and the exited-process grace.
//! - [`mapped_file`]: one ELF with its load segments and (separate) debug info.
//! - [`debug_file`]: build-id and `.gnu_debuglink` debug file lookup.
//! - [`kernel`]: kallsyms with module names.
//! - [`comms`]: thread names and the optional comm/pid root frame.
//! - [`perf_map`]: JIT code named by `/tmp/perf-PID.map`.
//! - [`vdso`]: the `[vdso]` image, read from this process.
//! - [`address_cache`]: the bounded per-address cache.
//! - [`file_cache`]: the loaded files, dropped when idle.
//! - [`unwind`]: user stack copies → return addresses (`--call-graph dwarf`), through
//!   [`unwind_sections`], the mapped files' call frame information.
//!
//! Symbols are cached per file (device + inode), never per pid: a hundred processes
//! mapping libc load it once, and a file replaced on disk (a new inode) is loaded anew. A
//! file no lookup needed for a minute is dropped, so a profile left running while builds
//! make new binaries stays flat.
//! Resolved addresses are cached per (file, file offset), so an address hot in many
//! processes is resolved once.
//!
//! Return addresses: like [`super::Resolver`], callers look up non-leaf callchain entries
//! at `ip − 1` (see [`lookup_address`]), so a call at the end of a function is not named
//! after the next one.

pub mod address_cache;
pub mod comms;
pub mod debug_file;
pub mod file_cache;
pub mod kernel;
pub mod mapped_file;
pub mod maps;
pub mod perf_map;
pub mod probe_offset;
pub mod processes;
pub mod stack_names;
pub mod unwind;
pub mod unwind_sections;
pub mod vdso;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rustc_hash::FxHashMap;

use address_cache::AddressCache;
use comms::CommTable;
pub use comms::RootFrame;
use file_cache::FileCache;
pub use kernel::KernelSymbolsError;
use kernel::{KERNEL_MODULE, KernelSymbols};
use mapped_file::MappedFile;
pub use maps::FileKey;
use maps::MappingTarget;
use perf_map::PerfMaps;
use processes::ProcessTable;
use vdso::Vdso;

/// One frame of a host stack.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct HostFrame {
    /// Demangled function name, or `[unknown]`.
    pub name: Arc<str>,
    /// `[kernel.kallsyms]`, `[ext4]`, `libc.so.6`, `[vdso]`, `[anon]`, …
    pub module: Arc<str>,
    /// Offset from the symbol start for symbol-table names; for `[unknown]` in a file, the
    /// file-relative (ELF virtual) address; `None` for DWARF names.
    pub offset: Option<u64>,
    pub file: Option<Arc<str>>,
    /// 0 when unknown.
    pub line: u32,
}

/// Options of a [`HostSymbolizer`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostSymbolizerOptions {
    /// Load the kernel's symbols (fails with a what-to-do error when they are hidden).
    pub kernel: bool,
    pub kallsyms_path: PathBuf,
    /// Root of separate debug files (`/usr/lib/debug`).
    pub debug_root: PathBuf,
    /// User-space frames from DWARF too: inline chains and source lines. Off, names come
    /// from symbol tables as perf's and perf-prof's do — DWARF's parsed form costs memory
    /// in proportion to the debug info (~35 MB for libc's debug file, ~45 MB for a
    /// debug build of perfscope itself, sampled like any process).
    pub inline_frames: bool,
    pub root_frame: RootFrame,
    /// Exited processes kept resolvable (their samples may still be in the rings).
    pub exited_processes_kept: usize,
    /// Resolved addresses kept (user and kernel each).
    pub address_cache_entries: usize,
    /// A loaded file no lookup needed for this long is dropped.
    pub file_idle: Duration,
    /// Loaded files kept at most.
    pub files_kept: usize,
}

impl Default for HostSymbolizerOptions {
    fn default() -> Self {
        Self {
            kernel: true,
            kallsyms_path: PathBuf::from("/proc/kallsyms"),
            debug_root: PathBuf::from("/usr/lib/debug"),
            inline_frames: false,
            root_frame: RootFrame::None,
            exited_processes_kept: 256,
            address_cache_entries: 1 << 18,
            file_idle: Duration::from_secs(60),
            files_kept: 256,
        }
    }
}

/// What the symbolizer did, for a status line.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct HostCounters {
    /// Lookups that found a name (cached or not).
    pub resolved: u64,
    /// Lookups that found none (`[unknown]`).
    pub unresolved: u64,
    /// Lookups answered from the per-address cache.
    pub cache_hits: u64,
    /// Mapped files whose symbols were loaded (again, after one was dropped as idle).
    pub files_loaded: u64,
    /// Mapped files that could not be read or parsed (their frames name the file).
    pub files_failed: u64,
    /// `/proc/PID/maps` files read.
    pub maps_reads: u64,
}

/// The address to look up for callchain entry `index` (0 = the sampled ip, others are
/// return addresses, looked up one byte earlier so they land on the call).
pub fn lookup_address(ip: u64, index: usize) -> u64 {
    if index == 0 { ip } else { ip.saturating_sub(1) }
}

/// A resolved user address: its frames, and whether a symbol named it.
type CachedFrames = (Arc<[HostFrame]>, bool);

/// Kernel and user-space symbols of this machine. `Send`: build it on, or move it to, the
/// perf_event reader thread.
pub struct HostSymbolizer {
    options: HostSymbolizerOptions,
    kernel: Option<KernelSymbols>,
    kernel_cache: AddressCache<u64, HostFrame>,
    processes: ProcessTable,
    comms: CommTable,
    files: FileCache,
    user_cache: AddressCache<(FileKey, u64), CachedFrames>,
    /// `[unknown]` frames per module name, built once.
    unknown_frames: FxHashMap<Arc<str>, Arc<[HostFrame]>>,
    /// This process's vDSO image, loaded at the first `[vdso]` address (`Some(None)`: none).
    vdso: Option<Option<Vdso>>,
    perf_maps: PerfMaps,
    counters: HostCounters,
}

impl HostSymbolizer {
    pub fn new(options: HostSymbolizerOptions) -> Result<Self, KernelSymbolsError> {
        let kernel = if options.kernel {
            Some(KernelSymbols::load(&options.kallsyms_path)?)
        } else {
            None
        };
        Ok(Self {
            kernel,
            kernel_cache: AddressCache::new(options.address_cache_entries),
            processes: ProcessTable::new(options.exited_processes_kept),
            comms: CommTable::default(),
            files: FileCache::new(options.file_idle, options.files_kept),
            user_cache: AddressCache::new(options.address_cache_entries),
            unknown_frames: FxHashMap::default(),
            vdso: None,
            perf_maps: PerfMaps::default(),
            counters: HostCounters::default(),
            options,
        })
    }

    pub fn options(&self) -> &HostSymbolizerOptions {
        &self.options
    }

    pub fn counters(&self) -> HostCounters {
        HostCounters {
            maps_reads: self.processes.maps_reads,
            ..self.counters
        }
    }

    /// Kernel symbols loaded (0 without `kernel`).
    pub fn kernel_symbol_count(&self) -> usize {
        self.kernel.as_ref().map_or(0, KernelSymbols::symbol_count)
    }

    /// The kernel function at `ip`.
    pub fn resolve_kernel(&mut self, ip: u64) -> HostFrame {
        if let Some(frame) = self.kernel_cache.get(&ip) {
            self.counters.cache_hits += 1;
            self.count(&frame.name);
            return frame;
        }
        let frame = match self.kernel.as_ref().and_then(|k| k.lookup(ip)) {
            Some(hit) => HostFrame {
                name: hit.name.into(),
                module: Arc::clone(hit.module),
                offset: Some(hit.offset),
                file: None,
                line: 0,
            },
            None => HostFrame {
                name: UNKNOWN.into(),
                module: KERNEL_MODULE.into(),
                offset: None,
                file: None,
                line: 0,
            },
        };
        self.count(&frame.name);
        self.kernel_cache.insert(ip, frame.clone());
        frame
    }

    fn count(&mut self, name: &str) {
        if name == UNKNOWN {
            self.counters.unresolved += 1;
        } else {
            self.counters.resolved += 1;
        }
    }

    /// The inline chain at `ip` in process `pid` (threads: their process's pid), innermost
    /// first; never empty (an address nothing names gives one `[unknown]` frame whose
    /// module names the mapping).
    pub fn resolve_user(&mut self, pid: u32, ip: u64) -> Arc<[HostFrame]> {
        let Some(mapping) = self.processes.find(pid, ip) else {
            self.counters.unresolved += 1;
            return unknown_frames(&mut self.unknown_frames, UNKNOWN_MODULE);
        };
        let size = mapping.end - mapping.start;
        let (source, key) = match &mapping.target {
            MappingTarget::File { path, key: Some(key) }
            | MappingTarget::Deleted { path, key: Some(key) } => (Some(path), *key),
            MappingTarget::Special(name) if &**name == VDSO => (None, vdso_key(size)),
            MappingTarget::Special(name) if &**name == ANON => {
                if let Some(frames) = self.perf_maps.lookup(pid, ip) {
                    self.counters.resolved += 1;
                    return frames;
                }
                self.counters.unresolved += 1;
                return unknown_frames(&mut self.unknown_frames, ANON);
            }
            target => {
                self.counters.unresolved += 1;
                return unknown_frames(&mut self.unknown_frames, target.module());
            }
        };
        let offset = mapping.file_offset(ip);
        if let Some((frames, known)) = self.user_cache.get(&(key, offset)) {
            self.counters.cache_hits += 1;
            if known {
                self.counters.resolved += 1;
            } else {
                self.counters.unresolved += 1;
            }
            return frames;
        }
        let range = (mapping.start, mapping.end);
        let file = match &source {
            Some(path) => {
                let (debug_root, inline) = (&self.options.debug_root, self.options.inline_frames);
                let (file, loaded) = self.files.get_or_load(key, || {
                    open_mapped_file(path, key, pid, range, debug_root, inline)
                });
                if loaded {
                    match file {
                        Some(_) => self.counters.files_loaded += 1,
                        None => self.counters.files_failed += 1,
                    }
                }
                file
            }
            None => self
                .vdso
                .get_or_insert_with(Vdso::load_own)
                .as_ref()
                .filter(|v| v.size == size)
                .map(|v| &v.file),
        };
        let (frames, known) = match file {
            Some(file) => frames_of(file, offset),
            None => {
                let module = match &source {
                    Some(path) => path.rsplit('/').next().unwrap_or(path),
                    None => VDSO,
                };
                (unknown_frames(&mut self.unknown_frames, module), false)
            }
        };
        if known {
            self.counters.resolved += 1;
        } else {
            self.counters.unresolved += 1;
        }
        self.user_cache
            .insert((key, offset), (Arc::clone(&frames), known));
        frames
    }

    /// An MMAP2 record (executable mappings). `file` is the record's device and inode
    /// (`FileKey::new(maj, min, ino)`); `None` stats `path` now.
    pub fn on_mmap(&mut self, pid: u32, start: u64, len: u64, pgoff: u64, path: &str, file: Option<FileKey>) {
        self.processes.on_mmap(pid, start, len, pgoff, path, file);
    }

    /// A COMM record; `exec` (PERF_RECORD_MISC_COMM_EXEC) drops the old program's maps.
    pub fn on_comm(&mut self, pid: u32, tid: u32, comm: &str, exec: bool) {
        self.comms.on_comm(tid, comm);
        if exec {
            self.processes.on_exec(pid);
        }
    }

    /// A FORK record: a new process shares its parent's maps; a new thread (same pid)
    /// changes nothing.
    pub fn on_fork(&mut self, parent_pid: u32, child_pid: u32) {
        self.processes.on_fork(parent_pid, child_pid);
    }

    /// An EXIT record of a process (`pid == tid`). The process stays resolvable until
    /// `exited_processes_kept` later exits.
    pub fn on_exit(&mut self, pid: u32) {
        for forgotten in self.processes.on_exit(pid) {
            self.comms.forget(forgotten);
            self.perf_maps.forget(forgotten);
        }
    }

    /// The name of thread `tid` of process `pid` (records, else /proc).
    pub fn comm(&mut self, pid: u32, tid: u32) -> Option<Arc<str>> {
        self.comms.comm(pid, tid)
    }

    /// The root frame's text for a sample, per the `root_frame` option; `comm` overrides
    /// the tracked name when the caller has one.
    pub fn root_frame_text(&mut self, pid: u32, tid: u32, comm: Option<&str>) -> Option<String> {
        self.comms
            .root_frame_text(self.options.root_frame, pid, tid, comm)
    }

    /// The mapping module at `ip` in `pid` (for diagnostics and tests), reading /proc for
    /// an unknown pid.
    pub fn module_at(&mut self, pid: u32, ip: u64) -> Option<String> {
        self.processes
            .find(pid, ip)
            .map(|m| m.target.module().to_string())
    }

    /// The files symbols were read from for the mapping at `ip` in `pid` (the file, then
    /// its separate debug file), once that mapping has been resolved.
    pub fn symbol_sources(&mut self, pid: u32, ip: u64) -> Vec<PathBuf> {
        let key = match self.processes.find(pid, ip).map(|m| &m.target) {
            Some(
                MappingTarget::File { key: Some(key), .. } | MappingTarget::Deleted { key: Some(key), .. },
            ) => *key,
            _ => return Vec::new(),
        };
        self.files.get(&key).map(MappedFile::sources).unwrap_or_default()
    }
}

const UNKNOWN: &str = "[unknown]";
const VDSO: &str = "[vdso]";
const ANON: &str = "[anon]";

/// The cache key of a vDSO image of `size` bytes (no file: a device number no disk has).
fn vdso_key(size: u64) -> FileKey {
    FileKey {
        dev: u64::MAX,
        inode: size,
    }
}
const UNKNOWN_MODULE: &str = "[unknown]";

fn unknown_frames(table: &mut FxHashMap<Arc<str>, Arc<[HostFrame]>>, module: &str) -> Arc<[HostFrame]> {
    if let Some(frames) = table.get(module) {
        return Arc::clone(frames);
    }
    let module: Arc<str> = module.into();
    let frames: Arc<[HostFrame]> = Arc::from([HostFrame {
        name: UNKNOWN.into(),
        module: Arc::clone(&module),
        offset: None,
        file: None,
        line: 0,
    }]);
    table.insert(module, Arc::clone(&frames));
    frames
}

/// The frames of file offset `offset` of `file`, and whether a symbol named it.
fn frames_of(file: &MappedFile, offset: u64) -> CachedFrames {
    let vaddr = file.virtual_address(offset);
    let module = file.module();
    let frames: Vec<HostFrame> = file
        .symbolize(vaddr)
        .into_iter()
        .map(|f| HostFrame {
            name: f.name.into(),
            module: Arc::clone(module),
            offset: f.offset,
            file: f.file.map(Into::into),
            line: f.line,
        })
        .collect();
    if frames.is_empty() {
        let unknown = HostFrame {
            name: UNKNOWN.into(),
            module: Arc::clone(module),
            offset: Some(vaddr),
            file: None,
            line: 0,
        };
        return (Arc::from([unknown]), false);
    }
    (Arc::from(frames), true)
}

/// Open the file a mapping shows: its path when that still names the mapped inode, else
/// the kernel's handle on the mapped file itself (`/proc/PID/map_files/START-END`: the
/// file was replaced or deleted since it was mapped).
fn open_mapped_file(
    path: &str,
    key: FileKey,
    pid: u32,
    range: (u64, u64),
    debug_root: &Path,
    inline_frames: bool,
) -> Option<MappedFile> {
    let mapped = Path::new(path);
    open_mapping(path, key, pid, range, |open_path| {
        MappedFile::open(open_path, mapped, debug_root, inline_frames).ok()
    })
}

/// `open` the file mapping `range` of process `pid` shows (`path`, identified by `key`):
/// at its path when that still names the mapped inode, else through the kernel's handle
/// `/proc/PID/map_files/START-END` (the file was replaced or deleted since).
pub(crate) fn open_mapping<T>(
    path: &str,
    key: FileKey,
    pid: u32,
    range: (u64, u64),
    open: impl Fn(&Path) -> Option<T>,
) -> Option<T> {
    if FileKey::of_path(path) == Some(key)
        && let Some(file) = open(Path::new(path))
    {
        return Some(file);
    }
    let handle = PathBuf::from(format!("/proc/{pid}/map_files/{:x}-{:x}", range.0, range.1));
    let handle_key = FileKey::of_path(handle.to_str()?);
    if handle_key != Some(key) {
        return None;
    }
    open(&handle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send<T: Send>() {}

    #[test]
    fn host_symbolizer_is_send() {
        assert_send::<HostSymbolizer>();
    }

    #[test]
    fn lookup_address_moves_return_addresses_onto_the_call() {
        assert_eq!(lookup_address(0x1000, 0), 0x1000);
        assert_eq!(lookup_address(0x1000, 3), 0xfff);
        assert_eq!(lookup_address(0, 1), 0);
    }
}
