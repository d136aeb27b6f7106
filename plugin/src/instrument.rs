//! What happens when QEMU translates a block: decide whether it is profiled (the address
//! filter), add the inline counters, and attach the conditional sampling callbacks.
//!
//! The callbacks are plain `extern "C"` functions whose user-data pointer *is* the
//! canonical PC, and whose identity carries the [`FrameState`]. So a translation allocates
//! nothing: the reference (through the qemu-plugin crate) leaked one boxed closure holding
//! a profiler clone per translated block or instruction, and took the crate's global lock
//! on every translation.

use std::ffi::{c_uint, c_void};

use qemu_plugin::sys;

use crate::args::SampleMode;
use crate::counters;
use crate::halt;
use crate::prologue::block_frame_states;
use crate::sampler::{Profiler, VcpuBoard};
use crate::unwind::FrameState;

/// Longest instruction of any supported target (x86_64: 15 bytes).
const MAX_INSN_BYTES: usize = 16;

/// Set once at install; the callbacks below read it.
pub static PROFILER: std::sync::OnceLock<std::sync::Arc<Profiler>> = std::sync::OnceLock::new();

unsafe extern "C" fn sample_established(vcpu: c_uint, pc: *mut c_void) {
    if let Some(profiler) = PROFILER.get() {
        profiler.sample(vcpu, pc as u64, FrameState::Established);
    }
}

unsafe extern "C" fn sample_before_frame(vcpu: c_uint, pc: *mut c_void) {
    if let Some(profiler) = PROFILER.get() {
        profiler.sample(vcpu, pc as u64, FrameState::BeforeFrame);
    }
}

unsafe extern "C" fn sample_fp_pushed(vcpu: c_uint, pc: *mut c_void) {
    if let Some(profiler) = PROFILER.get() {
        profiler.sample(vcpu, pc as u64, FrameState::FpPushed);
    }
}

unsafe extern "C" fn sample_fp_restored(vcpu: c_uint, pc: *mut c_void) {
    if let Some(profiler) = PROFILER.get() {
        profiler.sample(vcpu, pc as u64, FrameState::FpRestored);
    }
}

fn callback_for(state: FrameState) -> sys::qemu_plugin_vcpu_udata_cb_t {
    match state {
        FrameState::Established => Some(sample_established),
        FrameState::BeforeFrame => Some(sample_before_frame),
        FrameState::FpPushed => Some(sample_fp_pushed),
        FrameState::FpRestored => Some(sample_fp_restored),
    }
}

fn insn_bytes(insn: *mut sys::qemu_plugin_insn) -> Vec<u8> {
    let mut bytes = [0u8; MAX_INSN_BYTES];
    // SAFETY: the handle is valid during the translation callback; QEMU copies at most
    // `len` bytes and returns how many it copied.
    let n = unsafe { sys::qemu_plugin_insn_data(insn, bytes.as_mut_ptr().cast(), bytes.len()) };
    bytes[..n.min(MAX_INSN_BYTES)].to_vec()
}

/// One inline add per executed block into the slot of its length ([`counters`]).
///
/// # Safety
/// `tb` must be the handle QEMU passed to the translation callback.
unsafe fn count_block(board: &VcpuBoard, tb: *mut sys::qemu_plugin_tb, n_insns: usize) {
    let add = sys::qemu_plugin_op::QEMU_PLUGIN_INLINE_ADD_U64;
    // SAFETY: `tb` is valid during the translation callback; the entries live forever.
    unsafe {
        match counters::slot_of(n_insns) {
            counters::Slot::Length(n) => {
                sys::qemu_plugin_register_vcpu_tb_exec_inline_per_vcpu(tb, add, board.block_lengths[n].0, 1)
            }
            counters::Slot::Long(n) => {
                sys::qemu_plugin_register_vcpu_tb_exec_inline_per_vcpu(tb, add, board.block_lengths[0].0, 1);
                sys::qemu_plugin_register_vcpu_tb_exec_inline_per_vcpu(
                    tb,
                    add,
                    board.long_block_instructions.0,
                    n,
                );
            }
        }
    }
}

/// Before each halting instruction (WFI, HLT, `idle`), an inline store marks the vCPU as
/// halting ([`VcpuBoard::halting`]): only the few blocks that hold one pay for it.
///
/// # Safety
/// The handles must be the current translation's instructions.
unsafe fn mark_halting_instructions(
    arch: crate::unwind::Arch,
    board: &VcpuBoard,
    insns: &[*mut sys::qemu_plugin_insn],
) {
    for &insn in insns {
        // SAFETY: valid during the translation callback; the scoreboard lives forever.
        unsafe {
            // Every halting instruction is 4 bytes (riscv64, loongarch64) or 1 (x86_64).
            if !matches!(sys::qemu_plugin_insn_size(insn), 1 | 4) || !halt::halts(arch, &insn_bytes(insn)) {
                continue;
            }
            sys::qemu_plugin_register_vcpu_insn_exec_inline_per_vcpu(
                insn,
                sys::qemu_plugin_op::QEMU_PLUGIN_INLINE_STORE_U64,
                board.halting.0,
                1,
            );
        }
    }
}

/// Instrument one block. Only called from QEMU's translation callback.
///
/// # Safety
/// `tb` must be the handle QEMU passed to that callback.
pub unsafe fn instrument_block(profiler: &Profiler, tb: *mut sys::qemu_plugin_tb) {
    // SAFETY (whole function): `tb` and the instruction handles derived from it are valid
    // for the duration of the translation callback, which is where we are.
    unsafe {
        let Some(block_pc) = profiler.args.filter.sample_ip(sys::qemu_plugin_tb_vaddr(tb)) else {
            return;
        };
        let n_insns = sys::qemu_plugin_tb_n_insns(tb);
        if n_insns == 0 {
            return;
        }
        let board = &profiler.board;
        if profiler.args.counters {
            count_block(board, tb, n_insns);
        }

        // Frame states serve the frame-pointer walk and, with dwarf, its fallback for code
        // without CFI.
        let fp_mode = profiler.args.callchain.unwinds() && profiler.arch.is_some();
        let flags = if fp_mode {
            sys::qemu_plugin_cb_flags::QEMU_PLUGIN_CB_R_REGS
        } else {
            sys::qemu_plugin_cb_flags::QEMU_PLUGIN_CB_NO_REGS
        };
        let cond = sys::qemu_plugin_cond::QEMU_PLUGIN_COND_NE;
        let insns: Vec<*mut sys::qemu_plugin_insn> = (0..n_insns)
            .map(|i| sys::qemu_plugin_tb_get_insn(tb, i))
            .collect();
        if let Some(arch) = profiler.arch {
            mark_halting_instructions(arch, board, &insns);
        }
        // Frame states only matter when unwinding; in tb mode only the first one is used.
        let states = match (fp_mode, profiler.arch) {
            (true, Some(arch)) => {
                let wanted = if profiler.args.mode == SampleMode::Tb {
                    1
                } else {
                    insns.len()
                };
                let bytes: Vec<Vec<u8>> = insns[..wanted].iter().map(|&insn| insn_bytes(insn)).collect();
                block_frame_states(arch, &bytes)
            }
            _ => Vec::new(),
        };
        let state_at = |i: usize| states.get(i).copied().unwrap_or(FrameState::Established);

        match profiler.args.mode {
            SampleMode::Tb => sys::qemu_plugin_register_vcpu_tb_exec_cond_cb(
                tb,
                callback_for(state_at(0)),
                flags,
                cond,
                board.flag.0,
                0,
                block_pc as *mut c_void,
            ),
            SampleMode::Insn => {
                for (i, &insn) in insns.iter().enumerate() {
                    let Some(pc) = profiler.args.filter.sample_ip(sys::qemu_plugin_insn_vaddr(insn)) else {
                        continue;
                    };
                    sys::qemu_plugin_register_vcpu_insn_exec_cond_cb(
                        insn,
                        callback_for(state_at(i)),
                        flags,
                        cond,
                        board.flag.0,
                        0,
                        pc as *mut c_void,
                    );
                }
            }
        }
    }
}
