//! Finding the separate debug file of a stripped ELF, the way gdb and perf look for it:
//!
//! 1. by build-id: `<debug root>/.build-id/ab/cdef….debug`;
//! 2. by `.gnu_debuglink` name, next to the file, in its `.debug/` folder, and under
//!    `<debug root>/<the file's folder>/`.
//!
//! A candidate is accepted only if it is the debug file of *this* build: same build-id
//! when both have one, else the CRC-32 the debuglink records. A debug file left over from
//! an older build would give plausible, wrong names.

use std::path::{Path, PathBuf};

use object::Object;

/// What a mapped ELF says about its debug file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DebugLink {
    pub build_id: Option<Vec<u8>>,
    /// `.gnu_debuglink`: file name and CRC-32 of the debug file.
    pub debuglink: Option<(String, u32)>,
}

impl DebugLink {
    pub fn read(object: &object::File<'_>) -> Self {
        Self {
            build_id: object.build_id().ok().flatten().map(<[u8]>::to_vec),
            debuglink: object
                .gnu_debuglink()
                .ok()
                .flatten()
                .and_then(|(name, crc)| Some((std::str::from_utf8(name).ok()?.to_string(), crc))),
        }
    }
}

/// The debug file for the ELF at `path` (the path the process mapped, which names the
/// folders to search), or `None`.
pub fn find_debug_file(path: &Path, link: &DebugLink, debug_root: &Path) -> Option<PathBuf> {
    if let Some(id) = link.build_id.as_deref().filter(|id| id.len() >= 2) {
        let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
        let candidate = debug_root
            .join(".build-id")
            .join(&hex[..2])
            .join(format!("{}.debug", &hex[2..]));
        if accepts(&candidate, link) {
            return Some(candidate);
        }
    }
    let (name, _) = link.debuglink.as_ref()?;
    let dir = path.parent()?;
    let relative_dir = dir.strip_prefix("/").unwrap_or(dir);
    [
        dir.join(name),
        dir.join(".debug").join(name),
        debug_root.join(relative_dir).join(name),
    ]
    .into_iter()
    .filter(|candidate| candidate != path)
    .find(|candidate| accepts(candidate, link))
}

fn accepts(candidate: &Path, link: &DebugLink) -> bool {
    // Mapped, not read: a distribution's debug file is hundreds of MiB.
    let Ok(data) = crate::input::map(candidate, "a debug file") else {
        return false;
    };
    let Ok(object) = object::File::parse(&*data) else {
        return false;
    };
    let candidate_id = object.build_id().ok().flatten();
    if let (Some(want), Some(have)) = (link.build_id.as_deref(), candidate_id) {
        return want == have;
    }
    match &link.debuglink {
        Some((_, crc)) => {
            let mut sum = flate2::Crc::new();
            sum.update(&data);
            sum.sum() == *crc
        }
        // Found by build-id path but carries no id to compare: trust the path.
        None => link.build_id.is_some(),
    }
}
