//! `perfscope qemu`: its arguments and what it runs — a guest kernel in QEMU with the
//! sampling plugin, shown live in the terminal UI (or echoed with `--no-tui`), recorded
//! with `--record`, and the full artifact set written when the run ends.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Args;

use crate::app::launch::run_tui;
use crate::batch::headless::{self, ConsoleEcho, Headless, WaitingNotice};
use crate::batch::report;
use crate::engine::export::ExportRequest;
use crate::feeds::qemu_setup::{QemuRunOptions, start_qemu};
use crate::model::Selection;
use crate::sources::qemu::Arch;
use crate::sources::qemu::callchain_choice::CallchainChoice;
use crate::sources::qemu::plugin_args::{CallchainMode, SampleMode};
use crate::store::{Recorder, SessionMeta};
use crate::views::ViewKind;

use super::exit::Outcome;
use super::recorded::{ArtifactArgs, StyleArg, focus_of};
use super::tui::TuiArgs;
use super::units::{parse_positive_seconds, parse_seconds};

#[derive(Args)]
pub struct QemuArgs {
    #[arg(long, value_enum, default_value_t = Arch::Riscv64, ignore_case = true)]
    pub arch: Arch,
    /// The kernel QEMU boots (an ELF, or a raw image with --elf for the symbols).
    #[arg(long, value_name = "ELF|IMAGE")]
    pub kernel: PathBuf,
    /// The ELF with symbols (default: --kernel when it is an ELF).
    #[arg(long, value_name = "ELF")]
    pub elf: Option<PathBuf>,
    /// A guest user program (ELF) whose symbols name the user-space samples inside its text,
    /// under `[user]` (repeatable).
    #[arg(long = "user-elf", value_name = "ELF", conflicts_with = "kernel_filter")]
    pub user_elves: Vec<PathBuf>,
    /// The QEMU binary (default: qemu-system-<arch> on PATH).
    #[arg(long, value_name = "BINARY")]
    pub qemu: Option<PathBuf>,
    /// An extra QEMU argument (repeatable; values may start with '-').
    #[arg(long = "qemu-arg", value_name = "ARG", allow_hyphen_values = true)]
    pub qemu_args: Vec<String>,
    /// The plugin library (default: libperfscope_qemu_plugin.so beside perfscope or in target/).
    #[arg(long, value_name = "SO")]
    pub plugin: Option<PathBuf>,
    #[arg(long, value_name = "N")]
    pub smp: Option<u32>,
    /// Boot x86_64 through OVMF (found in $TGOS_OVMF_DIR or /usr/share/OVMF).
    #[arg(long)]
    pub uefi: bool,
    /// Samples per second per vCPU. 1 kHz gives a sub-second workload enough samples to
    /// read (99 Hz left ~70 for 0.7 s).
    #[arg(long, value_name = "HZ", default_value_t = 1000)]
    pub freq: u32,
    #[arg(long, value_enum, default_value_t = SampleMode::Tb, ignore_case = true)]
    pub mode: SampleMode,
    /// Call stacks: `fp` walks the guest's frame pointers (build the kernel with them),
    /// `dwarf` (alias `logical`) unwinds with the kernel ELF's call-frame information (a
    /// normal `-g` build, no frame pointers needed), `leaf` records only the sampled
    /// address (a flat profile). [default: what the kernel supports: fp when its code keeps
    /// frame pointers, else dwarf when it has .eh_frame/.debug_frame, else leaf with a warning]
    #[arg(long, visible_alias = "perf-callchain", value_enum, ignore_case = true)]
    pub callchain: Option<CallchainMode>,
    #[arg(long, value_name = "N", default_value_t = 128)]
    pub max_depth: u32,
    /// Record the run (samples with their stacks, console lines, markers) into an SQLite
    /// session, replayed with `perfscope open FILE.db` and queried with `perfscope sql`.
    #[arg(long, value_name = "FILE.db")]
    pub record: Option<PathBuf>,
    /// Let --record replace an existing session file (without it an existing file is refused).
    #[arg(long, requires = "record")]
    pub force: bool,
    /// Keep only kernel-text samples (firmware and user space are dropped and counted).
    #[arg(long)]
    pub kernel_filter: bool,
    #[arg(long, value_enum, default_value_t = StyleArg::Full, ignore_case = true)]
    pub symbol_style: StyleArg,
    /// Text of the guest shell prompt the init command waits for [default: either StarryOS
    /// prompt, 'root@starry:' or 'starry:~# ']. While it waits, the status line (stderr with
    /// --no-tui) says so.
    #[arg(long, value_name = "S")]
    pub shell_prefix: Option<String>,
    /// Typed into the guest shell once the prompt is up.
    #[arg(long, visible_alias = "workload", value_name = "CMD")]
    pub shell_init_cmd: Option<String>,
    /// Console text that opens the workload window.
    #[arg(long, value_name = "M")]
    pub start_marker: Option<String>,
    /// Console text that closes the window and stops QEMU.
    #[arg(long, value_name = "M")]
    pub stop_marker: Option<String>,
    /// Stop QEMU this many seconds after the start marker if no stop marker came.
    #[arg(long, value_name = "S", value_parser = parse_positive_seconds, allow_negative_numbers = true)]
    pub workload_timeout: Option<Duration>,
    /// Stop QEMU after this many seconds in any case (0: no limit; at most 4611686018).
    #[arg(long, value_name = "S", default_value = "0", value_parser = parse_seconds, allow_negative_numbers = true)]
    pub timeout: Duration,
    /// Show only stacks with a frame matching REGEX (also writes *.focus.* artifacts).
    #[arg(long, value_name = "REGEX")]
    pub focus: Option<String>,
    /// Write qemu.time.txt (always on; kept for xtask compatibility).
    #[arg(long)]
    pub host_time: bool,
    /// Count perf_event host counters of the QEMU process into qemu.perf.csv.
    #[arg(long)]
    pub host_perf: bool,
    /// Events for --host-perf (perf names, comma-separated).
    #[arg(long, value_name = "LIST", requires = "host_perf")]
    pub host_perf_events: Option<String>,
    /// Count the guest's executed instructions and blocks (the plugin summary's
    /// executed_instructions/executed_blocks, report.json's per-MB figures). Off by
    /// default: the count costs 4-6 % of guest time.
    #[arg(long)]
    pub guest_counters: bool,
    /// Output root: artifacts go to <DIR>/perf/<arch>/latest/.
    #[arg(
        long,
        short = 'o',
        value_name = "DIR",
        default_value = "target/qperf/perfscope"
    )]
    pub out: PathBuf,
    /// Batch mode for scripts and CI: no terminal UI, console echoed to stdout.
    #[arg(long)]
    pub no_tui: bool,
    #[command(flatten)]
    pub artifacts: ArtifactArgs,
    #[command(flatten)]
    pub tui: TuiArgs,
}

impl QemuArgs {
    /// report.json `parameters` under the reference's keys (notes/qperf-format.md §6.2),
    /// `callchain` the one the run used. The build options xtask records (`debug`,
    /// `full_stack`, `perf_debuginfo`, …) are false: perfscope profiles the kernel it is
    /// given and builds nothing.
    fn reference_parameters(&self, callchain: &CallchainChoice) -> serde_json::Value {
        fn name(v: &impl clap::ValueEnum) -> String {
            v.to_possible_value()
                .map(|p| p.get_name().to_string())
                .unwrap_or_default()
        }
        serde_json::json!({
            "timeout": self.timeout.as_secs_f64(),
            "format": name(&self.artifacts.format),
            "flamegraph_kind": name(&self.artifacts.flamegraph_kind),
            "freq": self.freq,
            "max_depth": self.max_depth,
            "mode": name(&self.mode),
            "callchain": callchain.method(),
            "top": self.artifacts.top,
            "min_percent": self.artifacts.min_percent,
            "symbol_style": name(&self.symbol_style),
            "focus": self.focus,
            "no_truncate": self.artifacts.no_truncate,
            "debug": false,
            "kernel_filter": self.kernel_filter,
            "user_elves": self.user_elves,
            "host_time": true,
            "host_perf": self.host_perf,
            "host_perf_events": self.host_perf_events,
            "shell_init_cmd": self.shell_init_cmd,
            "shell_prefix": self.shell_prefix,
            "start_marker": self.start_marker,
            "stop_marker": self.stop_marker,
            "workload_timeout": self.workload_timeout.map(|d| d.as_secs_f64()),
            "qperf_metrics": false,
            "guest_counters": self.guest_counters,
            "full_stack": false,
            "perf_debuginfo": false,
            "perf_force_frame_pointers": false,
            "qemu_args": self.qemu_args,
            "smp": self.smp,
            "uefi": self.uefi,
        })
    }
}

/// Run `perfscope qemu`.
pub fn run_qemu(a: QemuArgs) -> anyhow::Result<Outcome> {
    a.tui.check()?;
    let focus = focus_of(a.focus.as_deref())?;
    let options = QemuRunOptions {
        arch: a.arch,
        kernel: a.kernel.clone(),
        elf: a.elf.clone(),
        user_elves: a.user_elves.clone(),
        qemu: a.qemu.clone(),
        qemu_args: a.qemu_args.clone(),
        plugin: a.plugin.clone(),
        smp: a.smp,
        uefi: a.uefi,
        freq_hz: a.freq,
        mode: a.mode,
        callchain: a.callchain,
        max_depth: a.max_depth,
        kernel_filter: a.kernel_filter,
        symbol_style: a.symbol_style.style(),
        shell_prefix: a.shell_prefix.clone(),
        init_cmd: a.shell_init_cmd.clone(),
        start_marker: a.start_marker.clone(),
        stop_marker: a.stop_marker.clone(),
        workload_timeout: a.workload_timeout,
        timeout: Some(a.timeout).filter(|d| !d.is_zero()),
        host_perf: a.host_perf,
        host_perf_events: a.host_perf_events.clone(),
        guest_counters: a.guest_counters,
        out: a.out.clone(),
    };
    let artifacts = a.artifacts.options()?;
    let mut export = ExportRequest {
        out_dir: a.out.clone(),
        arch: Some(a.arch.name().to_string()),
        artifacts,
    };
    let recording = match &a.record {
        Some(path) => {
            let mut meta = SessionMeta::now("qemu", &a.kernel.display().to_string());
            meta.arch = Some(a.arch.name().to_string());
            Some(
                Recorder::create_with(path, &meta, a.force)
                    .with_context(|| format!("--record {}", path.display()))?,
            )
        }
        None => None,
    };
    let (feed, callchain) = start_qemu(&options)?;
    // Said before the run: which stacks this profile will have, and why.
    crate::stdio::say(&format!("perfscope qemu: {}", callchain.describe()));
    if let Some(warning) = &callchain.warning {
        crate::stdio::say(&format!("perfscope qemu: warning: {warning}"));
    }
    export.artifacts.parameters = a.reference_parameters(&callchain);
    let work_dir = export.out_dir.join("perf").join(a.arch.name()).join("latest");
    if a.no_tui {
        let mut echo = ConsoleEcho::default();
        let mut waiting = WaitingNotice::default();
        let outcome = headless::run(
            Box::new(feed),
            Headless {
                selection: Selection::all().with_focus(focus),
                export: Some(export),
                recording,
                progress: None,
            },
            &mut [&mut echo, &mut waiting],
        )?;
        if let Some(set) = &outcome.exported {
            report::print_summary(set, 10)?;
        }
        return Outcome::of_headless(&outcome);
    }
    let mut config = a.tui.config(export.clone(), Selection::all().with_focus(focus))?;
    config.export_on_finish = Some(export);
    config.recording = recording;
    // What the artifacts show is the workload: the views switch to it when it is over.
    config.select_workload_on_stop = a.stop_marker.is_some();
    if a.tui.view.is_none() {
        // Booting is what there is to see first; 2 shows the flamegraph.
        config.initial_view = ViewKind::Console;
    }
    let end = run_tui(config, Box::new(feed), &format!("qemu {}", a.arch.name()))?;
    match &end.export {
        Some(Ok(dir)) => crate::stdio::print(&format!("perfscope qemu: artifacts in {}\n", dir.display()))?,
        Some(Err(e)) => bail!("writing the artifacts to {} failed: {e}", work_dir.display()),
        None => crate::stdio::print("perfscope qemu: no artifacts written\n")?,
    }
    Outcome::of_verdict(&end.verdict)
}
