//! How a guest recording's addresses get their names: the symbols (an ELF or a kallsyms
//! file) and the options of their resolution — shared by every feed that reads qperf
//! records (a file, a followed file, a live QEMU) and the ingest they use.

use std::path::{Path, PathBuf};

use crate::symbols::SymbolStyle;
use crate::symbols::guest_space::Boot;

/// Where addresses get their names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SymbolSource {
    Elf(PathBuf),
    Kallsyms(PathBuf),
}

/// How to resolve.
#[derive(Clone, Debug, Default)]
pub struct OpenOptions {
    pub style: SymbolStyle,
    pub kernel_filter: bool,
    /// How the guest kernel was booted (its physical alias depends on it).
    pub boot: Boot,
    /// Guest user programs that name user-space samples (`--user-elf`).
    pub user_elves: Vec<PathBuf>,
}

impl OpenOptions {
    /// These options for the recording `qperf_bin`: a direct boot unless its `qemu.toml`
    /// says the run booted through UEFI.
    pub fn with_recorded_boot(&self, qperf_bin: &Path) -> OpenOptions {
        let mut options = self.clone();
        if options.boot == Boot::Direct {
            options.boot = crate::sources::qemu::config_toml::recorded_boot(qperf_bin);
        }
        options
    }
}
