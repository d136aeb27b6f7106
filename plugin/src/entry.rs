//! The plugin's entry points: install (arguments, output, threads, registrations), vCPU
//! init (register handles), vCPU idle/resume (halted time, `sampler`), translation (hands
//! blocks to `instrument`) and exit (drain the writer, write the sidecar).

use std::ffi::c_void;
use std::fs::File;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;

use qemu_plugin::install::{Args, Info};
use qemu_plugin::plugin::{HasCallbacks, Register};
use qemu_plugin::{PluginId, sys};

use crate::args::{CallchainMode, PluginArgs};
use crate::cfi::StopReason;
use crate::cfi_table::CfiTable;
use crate::instrument::PROFILER;
use crate::sampler::{Profiler, RegisterSet, VcpuBoard};
use crate::unwind::Arch;
use crate::writer::WriterReport;
use crate::{instrument, qemu, sampler, stream, summary, writer};

const NAME: &str = "perfscope-qemu-plugin";

/// The writer thread, joined once at exit.
static WRITER: Mutex<Option<JoinHandle<WriterReport>>> = Mutex::new(None);

/// The plugin object the qemu-plugin crate's install entry point calls. All state lives in
/// [`PROFILER`]: callbacks are registered directly with QEMU, not through the crate's
/// per-callback global lock.
struct PerfscopePlugin;

impl HasCallbacks for PerfscopePlugin {}

impl Register for PerfscopePlugin {
    fn register_default(&mut self, id: PluginId, args: &Args, info: &Info) -> qemu_plugin::Result<()> {
        if let Err(message) = install(id, args, info) {
            // Returning an error makes the crate panic inside an extern "C" function,
            // which aborts QEMU with a core dump; a clear message and exit(1) is what
            // QEMU itself does for a plugin that fails to load.
            eprintln!("{NAME}: {message}");
            std::process::exit(1);
        }
        Ok(())
    }
}

qemu_plugin::register!(PerfscopePlugin);

fn install(id: PluginId, args: &Args, info: &Info) -> Result<(), String> {
    let (parsed, warnings) = PluginArgs::parse(&args.raw)
        .map_err(|e| format!("invalid argument: {e}; fix the -plugin argument list"))?;
    for warning in &warnings.0 {
        eprintln!("{NAME}: warning: {warning}");
    }
    let arch = Arch::from_target(&info.target_name);
    if parsed.callchain.unwinds() && arch.is_none() {
        return Err(format!(
            "callchain={} is not supported for target {}: stack unwinding exists for riscv64, loongarch64 and x86_64; use callchain=leaf",
            parsed.callchain.name(),
            info.target_name
        ));
    }
    let cfi = match (parsed.callchain, &parsed.cfi, arch) {
        (CallchainMode::Dwarf, Some(elf), Some(arch)) => Some(CfiTable::open(elf, arch)?),
        _ => None,
    };
    let epoch_ns = parsed.epoch_ns.unwrap_or_else(qemu::monotonic_ns);
    let file = File::create(&parsed.out).map_err(|e| {
        format!(
            "cannot create out={}: {e}; check that the directory exists and is writable",
            parsed.out.display()
        )
    })?;
    let stream = parsed.stream.as_deref().map(stream::StreamSink::connect);
    let board = VcpuBoard::new().ok_or("QEMU could not allocate a scoreboard")?;
    let (queue, writer) = writer::spawn(file, parsed.out.clone(), stream, parsed.queue_size)
        .map_err(|e| format!("cannot start the writer thread: {e}"))?;
    if let Ok(mut slot) = WRITER.lock() {
        *slot = Some(writer);
    }
    let profiler = Arc::new(Profiler {
        args: parsed,
        arch,
        target: info.target_name.clone(),
        epoch_ns,
        board,
        queue,
        vcpus: AtomicU32::new(0),
        registers: OnceLock::new(),
        skipped: AtomicU64::new(0),
        idle_samples: AtomicU64::new(0),
        stopping: AtomicBool::new(false),
        cfi,
        unwind_stops: Default::default(),
    });
    if PROFILER.set(Arc::clone(&profiler)).is_err() {
        return Err("installed twice in one QEMU; load the plugin once".into());
    }
    // SAFETY: plain registrations with callbacks that live for the program's lifetime.
    unsafe {
        sys::qemu_plugin_register_vcpu_init_cb(id, Some(on_vcpu_init));
        sys::qemu_plugin_register_vcpu_tb_trans_cb(id, Some(on_translate));
        sys::qemu_plugin_register_vcpu_idle_cb(id, Some(on_vcpu_idle));
        sys::qemu_plugin_register_vcpu_resume_cb(id, Some(on_vcpu_resume));
        sys::qemu_plugin_register_atexit_cb(id, Some(on_exit), std::ptr::null_mut());
    }
    sampler::spawn_timer(Arc::clone(&profiler)).map_err(|e| format!("cannot start the timer thread: {e}"))?;
    let a = &profiler.args;
    if let (Some(table), Some(elf)) = (&profiler.cfi, &a.cfi) {
        eprintln!(
            "{NAME}: cfi={}: {} functions with call-frame information",
            elf.display(),
            table.functions()
        );
    }
    eprintln!(
        "{NAME}: loaded (target={} api={}) freq={} Hz mode={} callchain={} out={} stream={} epoch_ns={}",
        info.target_name,
        info.version.current,
        a.freq_hz,
        a.mode.name(),
        a.callchain.name(),
        a.out.display(),
        a.stream
            .as_ref()
            .map_or_else(|| "none".into(), |p| p.display().to_string()),
        epoch_ns
    );
    Ok(())
}

unsafe extern "C" fn on_vcpu_init(_id: sys::qemu_plugin_id_t, vcpu: std::ffi::c_uint) {
    let Some(profiler) = PROFILER.get() else {
        return;
    };
    if profiler.args.callchain.unwinds()
        && let Some(arch) = profiler.arch
    {
        profiler.registers.get_or_init(|| find_registers(arch));
    }
    // Release: the timer thread only raises flags of vCPUs it has seen initialised.
    profiler.vcpus.fetch_max(vcpu + 1, Ordering::Release);
}

fn find_registers(arch: Arch) -> Option<RegisterSet> {
    let names = arch.registers();
    let all = qemu::registers();
    let find = |name: &str| all.iter().find(|(n, _)| n == name).map(|(_, h)| *h);
    match (find(names.sp), find(names.fp)) {
        (Some(sp), Some(fp)) => Some(RegisterSet {
            sp,
            fp,
            link: names.link.and_then(find),
        }),
        _ => {
            eprintln!(
                "{NAME}: warning: QEMU has no `{}`/`{}` registers for this CPU; fp samples will count as sample_failures (use callchain=leaf)",
                names.sp, names.fp
            );
            None
        }
    }
}

unsafe extern "C" fn on_vcpu_idle(_id: sys::qemu_plugin_id_t, vcpu: std::ffi::c_uint) {
    if let Some(profiler) = PROFILER.get() {
        profiler.vcpu_idle(vcpu);
    }
}

unsafe extern "C" fn on_vcpu_resume(_id: sys::qemu_plugin_id_t, vcpu: std::ffi::c_uint) {
    if let Some(profiler) = PROFILER.get() {
        profiler.vcpu_resume(vcpu);
    }
}

unsafe extern "C" fn on_translate(_id: sys::qemu_plugin_id_t, tb: *mut sys::qemu_plugin_tb) {
    if let Some(profiler) = PROFILER.get() {
        // SAFETY: `tb` is the handle QEMU passed to this translation callback.
        unsafe { instrument::instrument_block(profiler, tb) };
    }
}

unsafe extern "C" fn on_exit(_id: sys::qemu_plugin_id_t, _userdata: *mut c_void) {
    let Some(profiler) = PROFILER.get() else {
        return;
    };
    profiler.stopping.store(true, Ordering::Relaxed);
    let report = if profiler.queue.send_shutdown() {
        WRITER
            .lock()
            .ok()
            .and_then(|mut slot| slot.take())
            .and_then(|handle| handle.join().ok())
            .unwrap_or_default()
    } else {
        WriterReport::default()
    };
    let queue = &profiler.queue;
    let (executed_blocks, executed_instructions) = profiler.board.executed();
    let text = summary::Summary {
        args: &profiler.args,
        arch: &profiler.target,
        samples: queue.samples.load(Ordering::Relaxed),
        dropped_samples: queue.dropped.load(Ordering::Relaxed),
        sample_failures: queue.failures.load(Ordering::Relaxed) + report.write_failures,
        executed_instructions,
        executed_blocks,
        skipped_samples: profiler.skipped.load(Ordering::Relaxed),
        idle_samples: profiler.idle_samples.load(Ordering::Relaxed),
        epoch_ns: profiler.epoch_ns,
        stream_errors: report.stream_errors,
        written_records: report.written_records,
        unwind_stops: profiler.cfi.as_ref().map(|_| {
            StopReason::ALL.map(|reason| {
                (
                    reason.name(),
                    profiler.unwind_stops[reason.index()].load(Ordering::Relaxed),
                )
            })
        }),
    }
    .to_text();
    let path = summary::sidecar_path(&profiler.args.out);
    if let Err(e) = std::fs::write(&path, &text) {
        eprintln!("{NAME}: cannot write the summary {}: {e}", path.display());
    }
}
