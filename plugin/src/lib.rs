//! perfscope's QEMU TCG sampling plugin (plugin API v4: QEMU 10.0 and newer).
//!
//! A timer thread raises a per-vCPU flag at `freq`; every instrumented block (or
//! instruction) carries a conditional callback on it, which QEMU checks inline, so the
//! host is called once per tick (`sampler`). A sample is the canonical PC plus, in fp
//! mode, a frame-pointer walk that also reads the link register when the sampled code has
//! not set up its frame yet (`unwind`, `prologue`). Records are queued to a writer thread
//! that writes qperf.bin v3 and mirrors the same bytes to perfscope's Unix socket
//! (`writer`, `stream`, `record`); at exit the queue is drained and the sidecar summary is
//! written with the inline instruction/block counters (`summary`).
//!
//! Installation goes through the `qemu-plugin` crate (it owns `qemu_plugin_install`), but
//! only our raw callbacks are registered: the crate's defaults take a global lock and
//! leak a boxed closure per translated block.

mod args;
mod filter;
mod instrument;
mod prologue;
mod qemu;
mod record;
mod sampler;
mod stream;
mod summary;
mod unwind;
mod writer;

use std::ffi::{c_uint, c_void};
use std::fs::File;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;

use qemu_plugin::install::{Args, Info};
use qemu_plugin::plugin::{HasCallbacks, Register};
use qemu_plugin::{PluginId, sys};

use args::{CallchainMode, PluginArgs};
use instrument::{PROFILER, instrument_block};
use sampler::{Profiler, RegisterSet, VcpuBoard};
use writer::WriterReport;

/// The writer thread, joined at exit.
static WRITER: OnceLock<Mutex<Option<JoinHandle<WriterReport>>>> = OnceLock::new();

fn say(message: &str) {
    eprintln!("perfscope-qemu-plugin: {message}");
}

unsafe extern "C" fn on_vcpu_init(_id: sys::qemu_plugin_id_t, vcpu: c_uint) {
    let Some(profiler) = PROFILER.get() else { return };
    profiler.vcpus.fetch_max(vcpu + 1, Ordering::AcqRel);
    if profiler.args.callchain == CallchainMode::FramePointer
        && let Some(arch) = profiler.arch
    {
        profiler.registers.get_or_init(|| {
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
                    say(&format!(
                        "registers {} / {} not found: fp samples will fail (counted as sample_failures)",
                        names.sp, names.fp
                    ));
                    None
                }
            }
        });
    }
}

unsafe extern "C" fn on_tb_translate(_id: sys::qemu_plugin_id_t, tb: *mut sys::qemu_plugin_tb) {
    if let Some(profiler) = PROFILER.get() {
        // SAFETY: `tb` is the handle of this translation callback.
        unsafe { instrument_block(profiler, tb) };
    }
}

unsafe extern "C" fn on_exit(_id: sys::qemu_plugin_id_t, _data: *mut c_void) {
    let Some(profiler) = PROFILER.get() else { return };
    profiler.stopping.store(true, Ordering::Relaxed);
    // Everything queued before this message is written when the writer returns.
    profiler.queue.send_shutdown();
    let report = WRITER
        .get()
        .and_then(|w| w.lock().ok()?.take())
        .and_then(|handle| handle.join().ok())
        .unwrap_or_default();
    let summary = summary::Summary {
        args: &profiler.args,
        arch: &profiler.target,
        samples: profiler.queue.samples.load(Ordering::Relaxed),
        dropped_samples: profiler.queue.dropped.load(Ordering::Relaxed),
        sample_failures: profiler.queue.failures.load(Ordering::Relaxed) + report.write_failures,
        executed_instructions: profiler.board.instructions.sum(),
        executed_blocks: profiler.board.blocks.sum(),
        skipped_samples: profiler.skipped.load(Ordering::Relaxed),
        epoch_ns: profiler.epoch_ns,
        stream_errors: report.stream_errors,
        written_records: report.written_records,
    };
    let path = summary::sidecar_path(&profiler.args.out);
    if let Err(e) = std::fs::write(&path, summary.to_text()) {
        say(&format!("cannot write {}: {e}", path.display()));
    }
}

/// The plugin object the crate installs.
#[derive(Default)]
struct PerfscopePlugin;

impl HasCallbacks for PerfscopePlugin {}

impl Register for PerfscopePlugin {
    fn register_default(&mut self, id: PluginId, args: &Args, info: &Info) -> qemu_plugin::Result<()> {
        let fail = |message: String| {
            say(&message);
            qemu_plugin::Error::from(anyhow::anyhow!(message))
        };
        let (parsed, warnings) = PluginArgs::parse(&args.raw).map_err(|e| fail(e.to_string()))?;
        for w in &warnings.0 {
            say(w);
        }
        let target = info.target_name.clone();
        let arch = unwind::Arch::from_target(&target);
        if parsed.callchain == CallchainMode::FramePointer && arch.is_none() {
            say(&format!(
                "no frame layout for target {target}: recording leaf samples only"
            ));
        }
        let file = File::create(&parsed.out)
            .map_err(|e| fail(format!("cannot create {}: {e}", parsed.out.display())))?;
        let stream = parsed.stream.as_deref().map(stream::StreamSink::connect);
        let (queue, handle) = writer::spawn(file, parsed.out.clone(), stream, parsed.queue_size)
            .map_err(|e| fail(format!("cannot start the writer thread: {e}")))?;
        let board = qemu::new_scoreboard(3).ok_or_else(|| fail("QEMU refused a scoreboard".into()))?;
        let board = VcpuBoard {
            flag: board[0],
            blocks: board[1],
            instructions: board[2],
        };
        let epoch_ns = parsed.epoch_ns.unwrap_or_else(qemu::monotonic_ns);
        let banner = format!(
            "loaded: target={target} api=v4 freq={}Hz mode={} callchain={} out={} stream={}",
            parsed.freq_hz,
            parsed.mode.name(),
            parsed.callchain.name(),
            parsed.out.display(),
            parsed
                .stream
                .as_ref()
                .map_or("none".into(), |p| p.display().to_string())
        );
        let profiler = Arc::new(Profiler {
            args: parsed,
            arch,
            target,
            epoch_ns,
            board,
            queue,
            vcpus: AtomicU32::new(0),
            registers: OnceLock::new(),
            skipped: AtomicU64::new(0),
            stopping: AtomicBool::new(false),
        });
        if PROFILER.set(profiler.clone()).is_err() {
            return Err(fail("installed twice".into()));
        }
        let _ = WRITER.set(Mutex::new(Some(handle)));
        // SAFETY: registering plain extern "C" callbacks with our plugin id at install.
        unsafe {
            sys::qemu_plugin_register_vcpu_init_cb(id, Some(on_vcpu_init));
            sys::qemu_plugin_register_vcpu_tb_trans_cb(id, Some(on_tb_translate));
            sys::qemu_plugin_register_atexit_cb(id, Some(on_exit), std::ptr::null_mut());
        }
        sampler::spawn_timer(profiler).map_err(|e| fail(format!("cannot start the timer thread: {e}")))?;
        say(&banner);
        Ok(())
    }
}

qemu_plugin::register!(PerfscopePlugin);
