//! From `perfscope qemu` options to a running session: the plugin library found, the
//! kernel and its symbols sorted out, the output directories prepared, one clock epoch for
//! plugin and console, and the QEMU command line assembled.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, bail};

use super::symbol_options::{OpenOptions, SymbolSource};
use crate::export::layout::OutputLayout;
use crate::export::stage::refuse_linked_dirs;
use crate::model::facts::CallchainFacts;
use crate::sources::clock::monotonic_ns;
use crate::sources::qemu::callchain_choice::{CallchainChoice, choose};
use crate::sources::qemu::console::STARRY_PROMPTS;
use crate::sources::qemu::host_perf::DEFAULT_EVENTS;
use crate::sources::qemu::kernel_unwind::KernelUnwindInfo;
use crate::sources::qemu::machine::QemuLaunch;
use crate::sources::qemu::plugin_args::{CallchainMode, PluginOptions, SampleMode, kernel_text_of};
use crate::sources::qemu::runtime_dir::RuntimeDir;
use crate::sources::qemu::uefi::{OVMF_DIR_ENV, UefiBoot, find_ovmf};
use crate::sources::qemu::{Arch, SessionOptions};
use crate::symbols::SymbolStyle;
use crate::symbols::guest_space::Boot;

use super::qemu::{QemuFeed, QemuSourceOptions};

/// The plugin's file name as cargo builds it.
pub const PLUGIN_FILE: &str = "libperfscope_qemu_plugin.so";

/// What `perfscope qemu` was asked.
#[derive(Clone, Debug)]
pub struct QemuRunOptions {
    pub arch: Arch,
    pub kernel: PathBuf,
    pub elf: Option<PathBuf>,
    /// Guest user programs that name user-space samples.
    pub user_elves: Vec<PathBuf>,
    pub qemu: Option<PathBuf>,
    pub qemu_args: Vec<String>,
    pub plugin: Option<PathBuf>,
    pub smp: Option<u32>,
    pub uefi: bool,
    pub freq_hz: u32,
    pub mode: SampleMode,
    /// `--callchain`; `None`: what the kernel supports ([`choose`]).
    pub callchain: Option<CallchainMode>,
    pub max_depth: u32,
    pub kernel_filter: bool,
    pub symbol_style: SymbolStyle,
    pub shell_prefix: Option<String>,
    pub init_cmd: Option<String>,
    pub start_marker: Option<String>,
    pub stop_marker: Option<String>,
    pub workload_timeout: Option<Duration>,
    pub timeout: Option<Duration>,
    pub host_perf: bool,
    pub host_perf_events: Option<String>,
    /// The plugin's executed-instruction/block counters (`--guest-counters`).
    pub guest_counters: bool,
    pub out: PathBuf,
}

/// The plugin: `--plugin`, else beside the perfscope binary, else in this workspace's
/// target directory.
pub fn find_plugin(explicit: Option<&Path>) -> anyhow::Result<PathBuf> {
    if let Some(p) = explicit {
        if p.is_file() {
            return Ok(p.to_path_buf());
        }
        bail!("--plugin {} does not exist", p.display());
    }
    let mut candidates = Vec::new();
    if let Ok(exe) = std::env::current_exe()
        && let Some(dir) = exe.parent()
    {
        candidates.push(dir.join(PLUGIN_FILE));
        // target/<profile>/deps/<test binary> → target/<profile>/
        if let Some(up) = dir.parent() {
            candidates.push(up.join(PLUGIN_FILE));
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    candidates.push(root.join("target/release").join(PLUGIN_FILE));
    candidates.push(root.join("target/debug").join(PLUGIN_FILE));
    candidates
        .into_iter()
        .find(|p| p.is_file())
        .with_context(|| {
            format!("{PLUGIN_FILE} not found: build it with `cargo build --release -p perfscope-qemu-plugin` or pass --plugin")
        })
}

/// A regular file starting with the ELF magic (a pipe is not looked at: QEMU reads it).
fn is_elf(path: &Path) -> bool {
    let Ok(mut file) = crate::input::InputFile::open(path) else {
        return false;
    };
    file.is_regular() && file.peek(4).is_ok_and(|magic| magic == b"\x7fELF")
}

/// Validate, choose the callchain, prepare the output directory and start QEMU.
pub fn start_qemu(o: &QemuRunOptions) -> anyhow::Result<(QemuFeed, CallchainChoice)> {
    if o.freq_hz == 0 {
        crate::usage!("--freq must be at least 1 Hz");
    }
    if o.max_depth == 0 {
        crate::usage!("--max-depth must be at least 1");
    }
    if o.init_cmd.as_deref().is_some_and(|c| c.trim().is_empty()) {
        bail!("--shell-init-cmd must not be blank");
    }
    for (flag, m) in [
        ("--start-marker", &o.start_marker),
        ("--stop-marker", &o.stop_marker),
    ] {
        if m.as_deref().is_some_and(|m| m.trim().is_empty()) {
            bail!("{flag} must not be blank");
        }
    }
    if o.workload_timeout.is_some_and(|d| d.is_zero()) {
        bail!("--workload-timeout must be more than 0 seconds");
    }
    if !o.kernel.is_file() {
        bail!("--kernel {} does not exist", o.kernel.display());
    }
    let symbols_elf = match (&o.elf, is_elf(&o.kernel)) {
        (Some(elf), _) => elf.clone(),
        (None, true) => o.kernel.clone(),
        (None, false) => bail!(
            "--kernel {} is a raw image: pass the ELF with symbols as --elf",
            o.kernel.display()
        ),
    };
    // Before anything is written: a UEFI boot without its firmware goes no further.
    let ovmf = match o.uefi {
        true => Some(find_ovmf(o.arch, std::env::var_os(OVMF_DIR_ENV).as_deref())?),
        false => None,
    };
    let boot = if o.uefi { Boot::Uefi } else { Boot::Direct };
    // Before anything is written: `--callchain dwarf` of a kernel without CFI goes no further.
    let callchain = choose(o.callchain, &symbols_elf, &KernelUnwindInfo::read(&symbols_elf)?)?;
    let plugin = find_plugin(o.plugin.as_deref())?;
    let layout = OutputLayout::new(&o.out, o.arch.name())?;
    // The recording goes where the artifacts go: never through a planted link.
    refuse_linked_dirs(&o.out, &layout.qperf_dir)?;
    std::fs::create_dir_all(&layout.qperf_dir)
        .with_context(|| format!("cannot create {}", layout.qperf_dir.display()))?;
    refuse_linked_dirs(&o.out, &layout.qperf_dir)?;
    let qperf_bin = layout.qperf_dir.join("qperf.bin");
    // A previous run's recording must not be mistaken for this one's.
    for stale in [
        qperf_bin.clone(),
        crate::sources::qperf_file::sidecar_path(&qperf_bin),
    ] {
        let _ = std::fs::remove_file(stale);
    }
    // The sockets live in a private directory removed at the end, not among the artifacts;
    // a previous run's may still be in the artifact directory.
    let runtime_dir = RuntimeDir::create()?;
    for stale in ["stream.sock", "qmp.sock"] {
        let _ = std::fs::remove_file(layout.qperf_dir.join(stale));
    }
    let stream_socket = runtime_dir.join("stream.sock");
    let qmp_socket = runtime_dir.join("qmp.sock");
    let epoch_ns = monotonic_ns();
    let plugin_arg = PluginOptions {
        library: plugin,
        freq_hz: o.freq_hz,
        out: qperf_bin.clone(),
        max_depth: o.max_depth,
        queue_size: 4096,
        mode: o.mode,
        callchain: callchain.mode,
        kernel_text: kernel_text_of(&symbols_elf)?.map(|text| text.booted_by(boot)),
        filter_kernel: o.kernel_filter,
        stream: Some(stream_socket.clone()),
        epoch_ns,
        counters: o.guest_counters,
        cfi: (callchain.mode == CallchainMode::Dwarf).then(|| symbols_elf.clone()),
    }
    .to_arg()?;
    let firmware = ovmf
        .map(|ovmf| UefiBoot::prepare(&ovmf, &o.kernel, &layout.qperf_dir))
        .transpose()?;
    let launch = QemuLaunch {
        arch: o.arch,
        qemu: o.qemu.clone().unwrap_or_else(|| o.arch.qemu_binary().into()),
        kernel: o.kernel.clone(),
        smp: o.smp,
        firmware,
        plugin: Some(plugin_arg),
        qmp_socket,
        extra: o.qemu_args.clone(),
    };
    let session = SessionOptions {
        launch,
        epoch_ns,
        shell_prompts: match &o.shell_prefix {
            Some(prefix) => vec![prefix.clone()],
            None => STARRY_PROMPTS.iter().map(|p| p.to_string()).collect(),
        },
        init_cmd: o.init_cmd.as_ref().map(|c| c.trim().to_string()),
        start_marker: o.start_marker.clone(),
        stop_marker: o.stop_marker.clone(),
        workload_timeout: o.workload_timeout,
        timeout: o.timeout,
        host_perf_events: o.host_perf.then(|| {
            o.host_perf_events
                .clone()
                .unwrap_or_else(|| DEFAULT_EVENTS.to_string())
        }),
    };
    let feed = QemuFeed::start(QemuSourceOptions {
        session,
        symbols: SymbolSource::Elf(symbols_elf),
        open: OpenOptions {
            style: o.symbol_style,
            kernel_filter: o.kernel_filter,
            boot,
            user_elves: o.user_elves.clone(),
        },
        qperf_bin,
        stream_socket,
        runtime_dir,
        label: format!("qemu {}", o.arch.name()),
        callchain: CallchainFacts {
            method: callchain.method().to_string(),
            chosen_by: callchain.chosen_by_label().to_string(),
            reason: callchain.reason.clone(),
        },
        callchain_warning: callchain.warning.clone(),
    })?;
    Ok((feed, callchain))
}
