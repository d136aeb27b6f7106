//! A private runtime directory for one QEMU session's sockets (QMP, the plugin's stream).
//! They are rendezvous points, not artifacts: they do not belong in the output directory
//! (another user could connect to a QMP socket there and stop or inspect the guest), and a
//! long `--out` path would pass the 108-byte limit of a Unix socket path. The directory is
//! made 0700 under `$XDG_RUNTIME_DIR` (else the system temp dir) and removed with its
//! contents when the session ends.

use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use anyhow::Context;

/// The directory; removed on drop.
#[derive(Debug)]
pub struct RuntimeDir {
    path: PathBuf,
}

impl RuntimeDir {
    /// Make a fresh 0700 directory for this process's session.
    pub fn create() -> anyhow::Result<RuntimeDir> {
        let base = std::env::var_os("XDG_RUNTIME_DIR")
            .map(PathBuf::from)
            .filter(|d| d.is_dir())
            .unwrap_or_else(std::env::temp_dir);
        Self::create_in(&base)
    }

    /// Make it under `base` (a name no one else has: pid plus a counter, created with
    /// `mkdir`, which fails rather than reuse an existing directory).
    pub fn create_in(base: &Path) -> anyhow::Result<RuntimeDir> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let mut last_error = None;
        for attempt in 0..16u32 {
            let path = base.join(format!(
                "perfscope-{}-{:x}",
                std::process::id(),
                nanos.wrapping_add(attempt)
            ));
            match std::fs::DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => return Ok(RuntimeDir { path }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last_error = Some(e),
                Err(e) => {
                    return Err(e).with_context(|| {
                        format!("cannot create a private runtime directory in {}", base.display())
                    });
                }
            }
        }
        Err(last_error.unwrap_or_else(|| std::io::Error::other("no free name")))
            .with_context(|| format!("cannot create a private runtime directory in {}", base.display()))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `name` inside the directory.
    pub fn join(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }
}

impl Drop for RuntimeDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn private_fresh_and_removed_with_its_contents() {
        let base = std::env::temp_dir();
        let a = RuntimeDir::create_in(&base).unwrap();
        let b = RuntimeDir::create_in(&base).unwrap();
        assert_ne!(a.path(), b.path());
        let mode = std::fs::metadata(a.path()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        std::fs::write(a.join("qmp.sock"), b"").unwrap();
        let path = a.path().to_path_buf();
        drop(a);
        assert!(!path.exists());
    }
}
