//! perfscope's QEMU plugin, built once per test process with `cargo build --release -p
//! perfscope-qemu-plugin` into its own target directory (the outer `cargo test` holds the
//! main one).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Build (or reuse, when up to date) the plugin and return the .so.
pub fn build_plugin() -> PathBuf {
    static PLUGIN: OnceLock<PathBuf> = OnceLock::new();
    PLUGIN
        .get_or_init(|| {
            let root = Path::new(env!("CARGO_MANIFEST_DIR"));
            let target = root.join("target/plugin-build");
            let status = Command::new(env!("CARGO"))
                .current_dir(root)
                .args([
                    "build",
                    "--release",
                    "-q",
                    "-p",
                    "perfscope-qemu-plugin",
                    "--target-dir",
                ])
                .arg(&target)
                .status()
                .expect("cannot run cargo");
            assert!(status.success(), "building the QEMU plugin failed");
            let so = target.join("release/libperfscope_qemu_plugin.so");
            assert!(so.is_file(), "{} missing after the build", so.display());
            so
        })
        .clone()
}
