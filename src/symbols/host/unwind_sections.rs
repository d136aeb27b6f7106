//! What an unwinder needs of one mapped ELF: its call frame information (`.eh_frame` with
//! its `.eh_frame_hdr` index, or `.debug_frame`), the addresses of the sections that
//! information is relative to, and the load segments that place the file in a process.
//!
//! The sections are copied out of the file once (libc's `.eh_frame` + index are a few
//! hundred KiB) and shared by every process mapping the file, like its symbols: a copy,
//! not a map, so a library rewritten in place can never fault the reader. A file without
//! CFI of its own (rare: `.eh_frame` is on by default for C, C++ and Rust on x86_64 and
//! aarch64) has `.debug_frame` looked up in its separate debug file.

use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use object::{Object, ObjectSection};

use super::debug_file::{DebugLink, find_debug_file};
use super::mapped_file::{LoadSegment, load_segments, virtual_address};

/// Section bytes as the unwinder reads them.
pub type SectionBytes = Arc<[u8]>;

/// The unwind tables of one ELF file.
#[derive(Clone, Debug, Default)]
pub struct UnwindSections {
    loads: Vec<LoadSegment>,
    text_svma: Option<Range<u64>>,
    got_svma: Option<Range<u64>>,
    eh_frame: Option<(Range<u64>, SectionBytes)>,
    eh_frame_hdr: Option<(Range<u64>, SectionBytes)>,
    debug_frame: Option<SectionBytes>,
}

impl UnwindSections {
    /// The tables of the ELF in `data`; `None` when it is not an ELF object.
    pub fn from_elf(data: &[u8]) -> Option<UnwindSections> {
        let object = object::File::parse(data).ok()?;
        Some(Self::from_object(&object))
    }

    fn from_object(object: &object::File<'_>) -> UnwindSections {
        let range = |name: &str| {
            let section = object.section_by_name(name)?;
            Some(section.address()..section.address() + section.size())
        };
        let bytes = |name: &str| -> Option<SectionBytes> {
            let section = object.section_by_name(name)?;
            // A debug file's sections may be compressed; the CFI sections of a loaded
            // file never are, and are then borrowed from the map and copied once.
            let data = section.uncompressed_data().ok()?;
            (!data.is_empty()).then(|| Arc::from(&*data))
        };
        let with_range = |name: &str| Some((range(name)?, bytes(name)?));
        UnwindSections {
            loads: load_segments(object),
            text_svma: range(".text"),
            got_svma: range(".got"),
            eh_frame: with_range(".eh_frame"),
            eh_frame_hdr: with_range(".eh_frame_hdr"),
            debug_frame: bytes(".debug_frame"),
        }
    }

    /// The tables of the ELF at `open_path` (the mapped file, or its map_files handle);
    /// without CFI of its own, `.debug_frame` from its separate debug file, searched from
    /// the folder of `mapped_path` and under `debug_root`.
    pub fn open(open_path: &Path, mapped_path: &Path, debug_root: &Path) -> Option<UnwindSections> {
        // Dropped before returning; the sections are copied out.
        let map = crate::input::map(open_path, "a mapped ELF").ok()?;
        let object = object::File::parse(&*map).ok()?;
        let mut sections = Self::from_object(&object);
        if !sections.has_cfi() {
            let link = DebugLink::read(&object);
            let debug = find_debug_file(mapped_path, &link, debug_root)
                .and_then(|path| crate::input::map(&path, "a debug file").ok())
                .and_then(|data| Self::from_elf(&data));
            if let Some(debug) = debug {
                sections.debug_frame = debug.debug_frame;
            }
        }
        Some(sections)
    }

    /// It has call frame information (else the unwinder falls back to frame pointers).
    pub fn has_cfi(&self) -> bool {
        self.eh_frame.is_some() || self.debug_frame.is_some()
    }

    /// Bytes of tables held.
    pub fn byte_size(&self) -> usize {
        self.eh_frame.as_ref().map_or(0, |(_, b)| b.len())
            + self.eh_frame_hdr.as_ref().map_or(0, |(_, b)| b.len())
            + self.debug_frame.as_ref().map_or(0, |b| b.len())
    }

    /// The ELF virtual address at the start of a mapping of `len` bytes from file offset
    /// `pgoff`, through the executable segment it maps. The page-aligned `pgoff` often
    /// lies in the file bytes of the segment before (a text segment at offset 0x5d6400,
    /// vaddr 0x5d7400, is mapped from 0x5d6000), which would place the file a page off.
    pub fn mapped_virtual_address(&self, pgoff: u64, len: u64) -> u64 {
        let end = pgoff.saturating_add(len);
        let text = self
            .loads
            .iter()
            .find(|s| s.executable && s.offset < end && pgoff < s.offset + s.file_size);
        match text {
            Some(s) => s.vaddr.wrapping_add(pgoff).wrapping_sub(s.offset),
            None => virtual_address(&self.loads, pgoff),
        }
    }

    /// The sections as framehop takes them (ELF: addresses relative to a base of 0).
    pub fn section_info(&self) -> framehop::ExplicitModuleSectionInfo<SectionBytes> {
        framehop::ExplicitModuleSectionInfo {
            base_svma: 0,
            text_svma: self.text_svma.clone(),
            got_svma: self.got_svma.clone(),
            eh_frame_svma: self.eh_frame.as_ref().map(|(r, _)| r.clone()),
            eh_frame: self.eh_frame.as_ref().map(|(_, b)| Arc::clone(b)),
            eh_frame_hdr_svma: self.eh_frame_hdr.as_ref().map(|(r, _)| r.clone()),
            eh_frame_hdr: self.eh_frame_hdr.as_ref().map(|(_, b)| Arc::clone(b)),
            debug_frame: self.debug_frame.clone(),
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_test_binary_has_eh_frame_and_its_index() {
        let exe = std::env::current_exe().unwrap();
        let sections = UnwindSections::open(&exe, &exe, Path::new("/nonexistent")).unwrap();
        assert!(sections.has_cfi());
        let info = sections.section_info();
        let (hdr_range, hdr) = (info.eh_frame_hdr_svma.unwrap(), info.eh_frame_hdr.unwrap());
        assert_eq!(hdr_range.end - hdr_range.start, hdr.len() as u64);
        // .eh_frame_hdr starts with version 1.
        assert_eq!(hdr[0], 1);
        assert!(info.eh_frame.unwrap().len() > 1000);
        assert!(sections.byte_size() > 1000);
        assert!(info.text_svma.is_some());
    }

    #[test]
    fn a_text_mapping_is_placed_by_its_executable_segment() {
        // ld's layout: a read-only segment, then text at offset 0x5d6400, vaddr 0x5d7400,
        // mapped from the page-aligned offset 0x5d6000.
        let segment = |offset, file_size, vaddr, executable| LoadSegment {
            offset,
            file_size,
            vaddr,
            executable,
        };
        let sections = UnwindSections {
            loads: vec![
                segment(0, 0x5d6400, 0, false),
                segment(0x5d6400, 0x1299670, 0x5d7400, true),
            ],
            ..Default::default()
        };
        assert_eq!(sections.mapped_virtual_address(0x5d6000, 0x129a000), 0x5d7000);
        // A mapping of no executable segment goes by the offset's own segment.
        assert_eq!(sections.mapped_virtual_address(0x1000, 0x1000), 0x1000);
        assert_eq!(
            UnwindSections::default().mapped_virtual_address(0x3000, 0x1000),
            0x3000
        );
    }

    #[test]
    fn not_an_elf_has_no_tables() {
        assert!(UnwindSections::from_elf(b"not an elf at all").is_none());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x");
        std::fs::write(&path, b"#!/bin/sh\n").unwrap();
        assert!(UnwindSections::open(&path, &path, dir.path()).is_none());
    }
}
