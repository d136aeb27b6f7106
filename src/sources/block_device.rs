//! A block device named by its path (`/dev/vda`, `/dev/sda1`), resolved to what the block
//! tracepoints record: the whole disk's `dev_t` in the kernel's internal encoding
//! (`MAJOR << 20 | MINOR`, not the `st_rdev` userspace sees) and, for a partition, its
//! sector range on that disk — the block layer traces requests of the whole disk, so a
//! partition is a range of it (as perf-prof's blktrace resolves `-d`).

use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

/// `MINORBITS` of include/linux/kdev_t.h: the kernel's `dev_t` keeps the minor in 20 bits.
const MINOR_BITS: u32 = 20;

#[derive(Debug, thiserror::Error)]
pub enum BlockDeviceError {
    // Fields named `reason`, not `source`: the message says the cause once (a `source`
    // would be printed again by the error chain).
    #[error("-d {path}: {reason} (give a block device such as /dev/vda; `lsblk` lists them)")]
    Stat { path: PathBuf, reason: std::io::Error },
    #[error(
        "-d {path}: not a block device ({kind}): give a disk or partition such as /dev/vda; `lsblk` lists them"
    )]
    NotBlock { path: PathBuf, kind: &'static str },
    #[error("-d {path}: cannot read {sysfs}: {reason} (is sysfs mounted on /sys?)")]
    Sysfs {
        path: PathBuf,
        sysfs: PathBuf,
        reason: std::io::Error,
    },
}

/// A block device as the block tracepoints name it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockDevice {
    /// The whole disk's `dev_t`, kernel encoding (the tracepoints' `dev` field).
    pub dev: u32,
    /// A partition: its sectors on the disk, first and last (inclusive, as perf-prof's
    /// filter `sector>=start && sector<=end` puts it).
    pub sectors: Option<(u64, u64)>,
}

/// `MKDEV(major, minor)` of the kernel.
pub fn kernel_dev(major: u32, minor: u32) -> u32 {
    (major << MINOR_BITS) | (minor & ((1 << MINOR_BITS) - 1))
}

impl BlockDevice {
    /// Resolve `path` (following symlinks such as /dev/disk/by-id/…) through stat(2) and
    /// /sys/dev/block.
    pub fn resolve(path: &Path) -> Result<BlockDevice, BlockDeviceError> {
        let meta = std::fs::metadata(path).map_err(|reason| BlockDeviceError::Stat {
            path: path.into(),
            reason,
        })?;
        let file_type = meta.file_type();
        if !file_type.is_block_device() {
            let kind = if file_type.is_char_device() {
                "a character device"
            } else if file_type.is_dir() {
                "a directory"
            } else if file_type.is_file() {
                "a regular file"
            } else {
                "not a device"
            };
            return Err(BlockDeviceError::NotBlock {
                path: path.into(),
                kind,
            });
        }
        use std::os::unix::fs::MetadataExt;
        let rdev = meta.rdev();
        let (major, minor) = (libc::major(rdev), libc::minor(rdev));
        let sysfs = PathBuf::from(format!("/sys/dev/block/{major}:{minor}"));
        let read = |name: &str| -> Result<Option<String>, BlockDeviceError> {
            let file = sysfs.join(name);
            match crate::input::read_system_text(&file) {
                Ok(text) => Ok(Some(text.trim().to_string())),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(reason) => Err(BlockDeviceError::Sysfs {
                    path: path.into(),
                    sysfs: file,
                    reason,
                }),
            }
        };
        let number = |name: &str, text: String| -> Result<u64, BlockDeviceError> {
            text.parse().map_err(|_| BlockDeviceError::Sysfs {
                path: path.into(),
                sysfs: sysfs.join(name),
                reason: std::io::Error::new(std::io::ErrorKind::InvalidData, format!("not a number: {text}")),
            })
        };
        // Only a partition has a `partition` file; its disk is the parent directory.
        if read("partition")?.is_none() {
            return Ok(BlockDevice {
                dev: kernel_dev(major, minor),
                sectors: None,
            });
        }
        let start = number("start", read("start")?.unwrap_or_default())?;
        let size = number("size", read("size")?.unwrap_or_default())?;
        let disk = read("../dev")?.unwrap_or_default();
        let Some((disk_major, disk_minor)) = disk
            .split_once(':')
            .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
        else {
            return Err(BlockDeviceError::Sysfs {
                path: path.into(),
                sysfs: sysfs.join("../dev"),
                reason: std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("not MAJOR:MINOR: {disk}"),
                ),
            });
        };
        Ok(BlockDevice {
            dev: kernel_dev(disk_major, disk_minor),
            sectors: Some((start, start + size)),
        })
    }

    /// The tracefs filter that keeps this device's requests (perf-prof's blktrace filter).
    pub fn kernel_filter(&self) -> String {
        match self.sectors {
            None => format!("dev=={}", self.dev),
            Some((first, last)) => format!("dev=={} && sector>={first} && sector<={last}", self.dev),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_encode_as_the_kernel_does() {
        assert_eq!(kernel_dev(254, 0), 254 << 20);
        assert_eq!(kernel_dev(7, 3), (7 << 20) | 3);
        assert_eq!(kernel_dev(8, 0x12345), (8 << 20) | 0x12345);
        let disk = BlockDevice {
            dev: kernel_dev(254, 0),
            sectors: None,
        };
        assert_eq!(disk.kernel_filter(), "dev==266338304");
        let part = BlockDevice {
            dev: kernel_dev(8, 0),
            sectors: Some((2048, 4096)),
        };
        assert_eq!(
            part.kernel_filter(),
            "dev==8388608 && sector>=2048 && sector<=4096"
        );
    }

    #[test]
    fn what_is_not_a_block_device_says_so() {
        let e = BlockDevice::resolve(Path::new("/dev/null"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a block device (a character device)"), "{e}");
        let e = BlockDevice::resolve(Path::new("/")).unwrap_err().to_string();
        assert!(e.contains("not a block device (a directory)"), "{e}");
        let e = BlockDevice::resolve(Path::new("/nonexistent/disk"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("/nonexistent/disk") && e.contains("lsblk"), "{e}");
    }
}
