//! The loongarch64 test kernel (tests/guest, QEMU `virt` direct boot, linked in the cached
//! direct-mapped window at 0x9000_0000_0020_0000) on real qemu-system-loongarch64 (la464,
//! TCG) with perfscope's plugin, given the arguments the runner builds: leaf sampling,
//! frame-pointer call paths (with the `ra` rule for code before a frame exists), recursion,
//! insn sampling, and `perfscope qemu --arch loongarch64` end to end — the riscv64 and
//! x86_64 checks, on a third architecture. QEMU or zig's clang missing fails these tests.

mod common;

use common::arch_suite::{self, Recording};
use common::guest::{GuestArch, TestGuest, build_test_guest_for, symbol_range};
use perfscope::sources::qemu::plugin_args::{CallchainMode, SampleMode, kernel_text_of};

const ARCH: GuestArch = GuestArch::Loongarch64;

fn guest() -> TestGuest {
    build_test_guest_for(ARCH)
}

fn leaf_recording() -> &'static Recording {
    arch_suite::recording(ARCH, SampleMode::Tb, CallchainMode::Leaf)
}

fn fp_recording() -> &'static Recording {
    arch_suite::recording(ARCH, SampleMode::Tb, CallchainMode::Fp)
}

fn insn_fp_recording() -> &'static Recording {
    arch_suite::recording(ARCH, SampleMode::Insn, CallchainMode::Fp)
}

/// No AT() in the link: the program headers say nothing about the load address, so the
/// alias comes from the boot protocol (QEMU loads at the address's low 48 bits).
#[test]
fn the_kernel_text_alias_is_the_direct_boot_load_address() {
    let g = guest();
    let text = kernel_text_of(&g.elf).unwrap().expect("a .text section");
    let (stext, _) = symbol_range(&g.elf, "_stext");
    let (etext, _) = symbol_range(&g.elf, "_etext");
    assert_eq!((text.start, text.end), (stext, etext));
    assert_eq!(stext, 0x9000_0000_0020_0000);
    assert_eq!(
        text.alias,
        Some((0x20_0000, 0x20_0000 + (etext - stext), 0x9000_0000_0000_0000))
    );
}

#[test]
fn boots_through_the_direct_loader_and_powers_off_cleanly() {
    arch_suite::assert_boots_and_powers_off(ARCH, leaf_recording(), "0x90000000002");
}

#[test]
fn leaf_mode_hottest_self_function_in_the_bench_is_mix_leaf() {
    arch_suite::assert_leaf_ranking(ARCH, leaf_recording());
}

#[test]
fn fp_mode_recovers_the_full_path_to_mix_leaf() {
    arch_suite::assert_full_paths_to_mix_leaf(ARCH, "tb+fp", fp_recording());
}

#[test]
fn fp_mode_shows_tree_walk_recursion_bounded_by_its_depth() {
    arch_suite::assert_tree_walk_recursion(ARCH, fp_recording());
}

/// insn mode samples anywhere, also between `addi.d $sp` and `addi.d $fp` in prologues and
/// after `ld.d $fp` in epilogues: the paths stay as complete as at block starts.
#[test]
fn insn_mode_keeps_the_full_path_inside_blocks() {
    let rec = insn_fp_recording();
    arch_suite::assert_full_paths_to_mix_leaf(ARCH, "insn+fp", rec);
    arch_suite::assert_insn_pcs_inside_blocks(ARCH, rec);
}

#[test]
fn perfscope_qemu_loongarch64_writes_the_workload_window_and_every_artifact() {
    arch_suite::assert_perfscope_qemu_end_to_end(ARCH, 300);
}
