//! The vDSO: the small ELF the kernel maps into every process as `[vdso]`. It is not a
//! file on disk, but every process of one ABI gets the same image from the running kernel,
//! so this process's copy (read from /proc/self/mem) names the vDSO frames of all of them
//! — `__vdso_clock_gettime` instead of `[unknown]`. A mapping of another size (a 32-bit
//! process's vDSO) is not this image and stays unnamed.

use std::os::fd::FromRawFd;
use std::os::unix::fs::FileExt;
use std::path::Path;

use super::mapped_file::MappedFile;

/// This process's vDSO, loaded.
pub struct Vdso {
    pub file: MappedFile,
    pub size: u64,
}

impl Vdso {
    /// Copy this process's vDSO into an anonymous in-memory file (`memfd_create`) for the
    /// ELF reader to map: no name in a shared temporary directory that another user could
    /// plant a link at, or read. `None` when there is no vDSO.
    pub fn load_own() -> Option<Self> {
        let image = own_image()?;
        let size = image.len() as u64;
        // SAFETY: a NUL-terminated name; the descriptor returned is owned below.
        let fd = unsafe { libc::memfd_create(c"perfscope-vdso".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return None;
        }
        // SAFETY: a fresh descriptor nothing else owns.
        let memfd = unsafe { std::fs::File::from_raw_fd(fd) };
        memfd.write_all_at(&image, 0).ok()?;
        // The map keeps the image once the descriptor is closed.
        let path = format!("/proc/self/fd/{fd}");
        let file = MappedFile::open(
            Path::new(&path),
            Path::new("[vdso]"),
            Path::new("/nonexistent"),
            false,
        );
        drop(memfd);
        Some(Self {
            file: file.ok()?,
            size,
        })
    }
}

/// The most bytes read as the vDSO image (it is 8 KiB on x86_64).
const MAX_VDSO_BYTES: u64 = 1 << 20;

/// The bytes of this process's vDSO mapping (its whole ELF image), read from
/// /proc/self/mem; `None` when there is no vDSO.
pub fn own_image() -> Option<Vec<u8>> {
    let maps = crate::input::read_system_text("/proc/self/maps").ok()?;
    let (start, end) = maps.lines().filter(|l| l.ends_with("[vdso]")).find_map(|l| {
        let (start, end) = l.split_whitespace().next()?.split_once('-')?;
        Some((
            u64::from_str_radix(start, 16).ok()?,
            u64::from_str_radix(end, 16).ok()?,
        ))
    })?;
    // A vDSO is a few pages; a range larger than this is not one worth reading.
    let size = end.checked_sub(start).filter(|&size| size <= MAX_VDSO_BYTES)?;
    let mut image = vec![0u8; usize::try_from(size).ok()?];
    std::fs::File::open("/proc/self/mem")
        .ok()?
        .read_exact_at(&mut image, start)
        .ok()?;
    Some(image)
}
