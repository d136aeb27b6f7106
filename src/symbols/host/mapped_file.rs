//! One mapped ELF file (executable or shared library) with its symbols, loaded once and
//! shared by every process that maps it.
//!
//! A sampled address becomes a file offset (`address − start + pgoff`, from the mapping),
//! and the file offset becomes the ELF's virtual address through the `PT_LOAD` segment that
//! holds it — the same rule for PIE executables, shared libraries and fixed-address
//! executables, whatever address ASLR chose. Names come from [`ElfImage`] (`.symtab`/
//! `.dynsym`; with `inline_frames`, DWARF's inline chains first), from the separate debug
//! file first when the file itself has no DWARF (a stripped library's full symbol table is
//! there too).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use object::Object;

use super::debug_file::{DebugLink, find_debug_file};
use crate::symbols::elf::ElfError;
use crate::symbols::{ElfImage, SymbolFrame, Symbolizer};

/// A `PT_LOAD` segment: file bytes `[offset, offset + file_size)` appear at `vaddr`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) struct LoadSegment {
    pub(super) offset: u64,
    pub(super) file_size: u64,
    pub(super) vaddr: u64,
    /// `PF_X`: code may run from it (a probe may only go there).
    pub(super) executable: bool,
}

/// A loaded mapped file.
pub struct MappedFile {
    module: Arc<str>,
    loads: Vec<LoadSegment>,
    image: ElfImage,
    debug: Option<ElfImage>,
}

impl MappedFile {
    /// Load the ELF readable at `open_path` (the file itself, or `/proc/PID/map_files/…`
    /// when the path now names another file), searching debug files from the folder of
    /// `mapped_path` (the path the process mapped) and under `debug_root`.
    pub fn open(
        open_path: &Path,
        mapped_path: &Path,
        debug_root: &Path,
        inline_frames: bool,
    ) -> Result<Self, ElfError> {
        let elf = |path: &Path| match inline_frames {
            true => ElfImage::open(path),
            false => ElfImage::open_symbols_only(path),
        };
        // Dropped before returning; a file changed underneath gives wrong segments.
        let map = crate::input::map(open_path, "a mapped ELF")?;
        let object = object::File::parse(&*map).map_err(|e| ElfError::Parse {
            path: open_path.to_path_buf(),
            reason: e.to_string(),
        })?;
        let loads = load_segments(&object);
        let link = DebugLink::read(&object);
        let has_dwarf = object.section_by_name(".debug_info").is_some();
        drop(object);
        drop(map);

        let image = elf(open_path)?;
        let debug = if has_dwarf {
            None
        } else {
            find_debug_file(mapped_path, &link, debug_root).and_then(|p| elf(&p).ok())
        };
        let module = mapped_path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| mapped_path.display().to_string());
        Ok(Self {
            module: module.into(),
            loads,
            image,
            debug,
        })
    }

    /// The base name of the mapped path, as perf shows the module (`libc.so.6`).
    pub fn module(&self) -> &Arc<str> {
        &self.module
    }

    /// The separate debug file in use, if any.
    pub fn debug_path(&self) -> Option<&Path> {
        self.debug.as_ref().map(ElfImage::path)
    }

    pub fn has_dwarf(&self) -> bool {
        self.image.has_dwarf() || self.debug.as_ref().is_some_and(ElfImage::has_dwarf)
    }

    /// The ELF virtual address of file offset `offset`. An offset outside every segment's
    /// file bytes (padding between segments) maps through the nearest segment before it.
    pub fn virtual_address(&self, offset: u64) -> u64 {
        virtual_address(&self.loads, offset)
    }

    /// The inline chain at ELF virtual address `vaddr`, innermost first.
    pub fn symbolize(&self, vaddr: u64) -> Vec<SymbolFrame> {
        if let Some(debug) = &self.debug {
            let frames = debug.symbolize(vaddr);
            if !frames.is_empty() {
                return frames;
            }
        }
        self.image.symbolize(vaddr)
    }

    /// Where the symbols come from, for diagnostics: the file, and the debug file if any.
    pub fn sources(&self) -> Vec<PathBuf> {
        let mut out = vec![self.image.path().to_path_buf()];
        out.extend(self.debug_path().map(Path::to_path_buf));
        out
    }
}

/// The ELF virtual address of file offset `offset`, through the `PT_LOAD` segment whose
/// file bytes hold it (or the nearest one before it, for padding between segments).
pub(super) fn virtual_address(loads: &[LoadSegment], offset: u64) -> u64 {
    let containing = loads
        .iter()
        .find(|s| s.offset <= offset && offset < s.offset + s.file_size);
    let segment = containing.or_else(|| loads.iter().rev().find(|s| s.offset <= offset));
    match segment {
        Some(s) => s.vaddr.wrapping_add(offset - s.offset),
        None => offset,
    }
}

pub(super) fn load_segments(object: &object::File<'_>) -> Vec<LoadSegment> {
    use object::read::elf::{FileHeader, ProgramHeader};
    fn collect<Elf: FileHeader>(elf: &object::read::elf::ElfFile<'_, Elf>) -> Vec<LoadSegment> {
        let endian = elf.endian();
        let mut loads: Vec<LoadSegment> = elf
            .elf_program_headers()
            .iter()
            .filter(|ph| ph.p_type(endian) == object::elf::PT_LOAD)
            .map(|ph| LoadSegment {
                offset: ph.p_offset(endian).into(),
                file_size: ph.p_filesz(endian).into(),
                vaddr: ph.p_vaddr(endian).into(),
                executable: ph.p_flags(endian).0 & object::elf::PF_X.0 != 0,
            })
            .collect();
        loads.sort_by_key(|s| s.offset);
        loads
    }
    match object {
        object::File::Elf64(elf) => collect(elf),
        object::File::Elf32(elf) => collect(elf),
        _ => Vec::new(),
    }
}
