//! Object files (ELF, DWARF, separate debug files) are mapped, not read: their size costs
//! address space, not memory, and only the pages a lookup touches are ever loaded. Only a
//! regular file can be mapped; anything else is refused with what to do instead.

use std::path::Path;

use super::error::InputError;
use super::file::{FileType, InputFile};

/// Map `path` read-only; `what` names it in the refusal of a pipe or a device ("an ELF").
pub fn map(path: &Path, what: &'static str) -> Result<memmap2::Mmap, InputError> {
    // Checked before opening: a FIFO without a writer would block the open.
    FileType::require_regular(path, what)?;
    let input = InputFile::open(path)?;
    input.require_regular(what)?;
    // SAFETY: a read-only private map. A file truncated while mapped faults on access
    // (SIGBUS), the documented hazard of every mapped reader; the ELF parsers never write.
    unsafe { memmap2::Mmap::map(input.file()) }.map_err(|cause| InputError::Read {
        path: path.to_path_buf(),
        cause,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_regular_file_maps_and_a_device_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.elf");
        std::fs::write(&path, b"\x7fELF").unwrap();
        assert_eq!(&map(&path, "an ELF").unwrap()[..], b"\x7fELF");
        let e = map(Path::new("/dev/zero"), "an ELF").unwrap_err().to_string();
        assert!(
            e.contains("is a character device, not a regular file: an ELF is read in place"),
            "{e}"
        );
    }
}
