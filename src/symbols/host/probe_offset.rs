//! Where in an ELF file a uprobe goes: the kernel takes a file offset, the user gives a
//! function (and maybe `+OFF`) or the offset itself. A function's ELF virtual address
//! becomes a file offset through the executable `PT_LOAD` segment that holds it — the
//! inverse of [`super::mapped_file::MappedFile::virtual_address`], the same rule for
//! PIE executables, shared libraries and fixed-address ones.

use std::path::{Path, PathBuf};

use object::{Object, ObjectSymbol, SymbolKind};

use super::mapped_file::{LoadSegment, load_segments};

#[derive(Debug, thiserror::Error)]
pub enum ProbeOffsetError {
    #[error("cannot read {}: {cause}", path.display())]
    Io { path: PathBuf, cause: std::io::Error },
    #[error("{} is not an ELF file perfscope can read: {reason}", path.display())]
    NotElf { path: PathBuf, reason: String },
    #[error(
        "no function '{name}' in {} (its .symtab and .dynsym{}); check the name with `nm {}`",
        path.display(),
        if *stripped { " — the file is stripped: give the file offset, uprobe:BINARY:0xOFF" } else { "" },
        path.display()
    )]
    NoSymbol {
        path: PathBuf,
        name: String,
        stripped: bool,
    },
    #[error("'{name}' has {count} definitions at different addresses in {}: give the file offset, uprobe:BINARY:0xOFF", path.display())]
    Ambiguous {
        path: PathBuf,
        name: String,
        count: usize,
    },
    #[error("{name}+{offset} is past the end of '{name}' ({size} bytes) in {}", path.display())]
    PastEnd {
        path: PathBuf,
        name: String,
        offset: u64,
        size: u64,
    },
    #[error("file offset 0x{offset:x} is in no executable segment of {}", path.display())]
    NotCode { path: PathBuf, offset: u64 },
}

/// The file offset of `name` + `offset` in the ELF at `path`.
pub fn symbol_file_offset(path: &Path, name: &str, offset: u64) -> Result<u64, ProbeOffsetError> {
    with_object(path, |object| {
        let loads = load_segments(object);
        let mut found: Vec<(u64, u64)> = object
            .symbols()
            .chain(object.dynamic_symbols())
            .filter(|s| s.kind() == SymbolKind::Text && s.is_definition() && s.name() == Ok(name))
            .map(|s| (s.address(), s.size()))
            .collect();
        found.sort_unstable();
        found.dedup_by_key(|(address, _)| *address);
        let (address, size) = match found.as_slice() {
            [one] => *one,
            [] => {
                return Err(ProbeOffsetError::NoSymbol {
                    path: path.to_path_buf(),
                    name: name.to_string(),
                    stripped: object.symbols().next().is_none(),
                });
            }
            many => {
                return Err(ProbeOffsetError::Ambiguous {
                    path: path.to_path_buf(),
                    name: name.to_string(),
                    count: many.len(),
                });
            }
        };
        if size > 0 && offset >= size {
            return Err(ProbeOffsetError::PastEnd {
                path: path.to_path_buf(),
                name: name.to_string(),
                offset,
                size,
            });
        }
        let vaddr = address + offset;
        code_segments(&loads)
            .find(|s| s.vaddr <= vaddr && vaddr < s.vaddr + s.file_size)
            .map(|s| vaddr - s.vaddr + s.offset)
            .ok_or(ProbeOffsetError::NotCode {
                path: path.to_path_buf(),
                offset: vaddr,
            })
    })
}

/// `offset` itself, once it is known to be code of the ELF at `path` (the kernel would
/// place a probe on data, or past the end, and it would never fire).
pub fn code_file_offset(path: &Path, offset: u64) -> Result<u64, ProbeOffsetError> {
    with_object(path, |object| {
        let loads = load_segments(object);
        if code_segments(&loads).any(|s| s.offset <= offset && offset < s.offset + s.file_size) {
            Ok(offset)
        } else {
            Err(ProbeOffsetError::NotCode {
                path: path.to_path_buf(),
                offset,
            })
        }
    })
}

fn code_segments(loads: &[LoadSegment]) -> impl Iterator<Item = &LoadSegment> {
    loads.iter().filter(|s| s.executable)
}

fn with_object<T>(
    path: &Path,
    read: impl FnOnce(&object::File<'_>) -> Result<T, ProbeOffsetError>,
) -> Result<T, ProbeOffsetError> {
    // Dropped before returning; a file changed underneath gives a wrong offset.
    let map = crate::input::map(path, "an ELF").map_err(|e| ProbeOffsetError::Io {
        path: path.to_path_buf(),
        cause: e.into(),
    })?;
    let object = object::File::parse(&*map).map_err(|e| ProbeOffsetError::NotElf {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })?;
    read(&object)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This test binary is an ELF with symbols: its own `main` is code.
    fn me() -> PathBuf {
        std::env::current_exe().expect("current exe")
    }

    #[test]
    fn symbols_become_offsets_of_code() {
        let main = symbol_file_offset(&me(), "main", 0).expect("main has an offset");
        assert_eq!(code_file_offset(&me(), main).expect("main is code"), main);
        assert_eq!(symbol_file_offset(&me(), "main", 1).expect("main+1"), main + 1);
        // Offset 0 is the ELF header: never code in a file linked by a modern ld.
        assert!(matches!(
            code_file_offset(&me(), 0),
            Err(ProbeOffsetError::NotCode { .. })
        ));
    }

    #[test]
    fn missing_names_files_and_non_elf_are_errors() {
        let e = symbol_file_offset(&me(), "no_such_function_here", 0).unwrap_err();
        assert!(
            e.to_string().contains("no function 'no_such_function_here'"),
            "{e}"
        );
        let e = symbol_file_offset(Path::new("/nonexistent/bin"), "main", 0).unwrap_err();
        assert!(matches!(e, ProbeOffsetError::Io { .. }), "{e}");
        let e = symbol_file_offset(Path::new("/proc/self/status"), "main", 0).unwrap_err();
        assert!(
            matches!(e, ProbeOffsetError::NotElf { .. } | ProbeOffsetError::Io { .. }),
            "{e}"
        );
        let e = symbol_file_offset(&me(), "main", 1 << 40).unwrap_err();
        assert!(matches!(e, ProbeOffsetError::PastEnd { .. }), "{e}");
    }
}
