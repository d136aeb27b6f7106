//! Where tracefs is: found in /proc/mounts (its own mount, or `tracing/` under debugfs),
//! mounted at /sys/kernel/tracing when missing and we are root.

use std::ffi::CString;
use std::path::{Path, PathBuf};

use super::TracefsError;

/// The preferred mount point, and where we mount it.
pub const TRACEFS_MOUNT_POINT: &str = "/sys/kernel/tracing";

/// Find the tracefs root in `/proc/mounts`, mounting it when absent and permitted.
pub fn find_or_mount() -> Result<PathBuf, TracefsError> {
    let mounts = crate::input::read_system_text("/proc/mounts").map_err(|source| TracefsError::Io {
        path: PathBuf::from("/proc/mounts"),
        cause: source,
    })?;
    if let Some(root) = find_in_mounts(&mounts) {
        return Ok(root);
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(TracefsError::NotMounted);
    }
    mount_tracefs(Path::new(TRACEFS_MOUNT_POINT))?;
    Ok(PathBuf::from(TRACEFS_MOUNT_POINT))
}

/// The tracefs root named by a /proc/mounts text: a `tracefs` mount (preferring
/// /sys/kernel/tracing), else `tracing/` under a debugfs mount.
pub fn find_in_mounts(mounts: &str) -> Option<PathBuf> {
    let entries: Vec<(String, &str)> = mounts
        .lines()
        .filter_map(|line| {
            let mut parts = line.split_whitespace();
            let (_, point, fstype) = (parts.next()?, parts.next()?, parts.next()?);
            Some((unescape(point), fstype))
        })
        .collect();
    let tracefs: Vec<&String> = entries
        .iter()
        .filter(|(_, fstype)| *fstype == "tracefs")
        .map(|(point, _)| point)
        .collect();
    if let Some(point) = tracefs
        .iter()
        .find(|p| p.as_str() == TRACEFS_MOUNT_POINT)
        .or(tracefs.first())
    {
        return Some(PathBuf::from(point.as_str()));
    }
    entries
        .iter()
        .find(|(_, fstype)| *fstype == "debugfs")
        .map(|(point, _)| Path::new(point).join("tracing"))
}

/// /proc/mounts writes space, tab, newline and backslash as `\040`-style octal escapes.
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes.get(i + 1..i + 4).and_then(|d| {
            d.iter()
                .all(|c| (b'0'..=b'7').contains(c))
                .then(|| d.iter().fold(0u32, |v, c| v * 8 + u32::from(c - b'0')))
        });
        match (bytes[i], octal) {
            (b'\\', Some(value)) if value <= 0xff => {
                out.push(value as u8);
                i += 4;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Mount tracefs at `point` (root only). tracefs may be mounted at several points at once;
/// each shows the same events.
pub fn mount_tracefs(point: &Path) -> Result<(), TracefsError> {
    let to_c = |s: &str| CString::new(s).map_err(|_| TracefsError::NotMounted);
    let source = to_c("nodev")?;
    let target = to_c(&point.to_string_lossy())?;
    let fstype = to_c("tracefs")?;
    // SAFETY: every pointer is a NUL-terminated string that outlives the call; no data.
    let rc = unsafe {
        libc::mount(
            source.as_ptr(),
            target.as_ptr(),
            fstype.as_ptr(),
            0,
            std::ptr::null(),
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(TracefsError::MountFailed {
            point: point.to_path_buf(),
            cause: std::io::Error::last_os_error(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracefs_is_found_in_proc_mounts() {
        let both = "sysfs /sys sysfs rw 0 0\n\
                    debugfs /sys/kernel/debug debugfs rw 0 0\n\
                    nodev /mnt/my\\040trace tracefs rw 0 0\n\
                    nodev /sys/kernel/tracing tracefs rw,relatime 0 0\n";
        assert_eq!(find_in_mounts(both), Some(PathBuf::from("/sys/kernel/tracing")));
        let elsewhere = "nodev /mnt/my\\040trace tracefs rw 0 0\n";
        assert_eq!(find_in_mounts(elsewhere), Some(PathBuf::from("/mnt/my trace")));
        let debugfs = "debugfs /sys/kernel/debug debugfs rw 0 0\n";
        assert_eq!(
            find_in_mounts(debugfs),
            Some(PathBuf::from("/sys/kernel/debug/tracing"))
        );
        assert_eq!(find_in_mounts("proc /proc proc rw 0 0\n"), None);
    }
}
