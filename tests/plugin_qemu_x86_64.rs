//! The x86_64 test kernel (tests/guest, multiboot, high half at 0xffffffff80100000) on real
//! qemu-system-x86_64 (q35, TCG) with perfscope's plugin, given the arguments the runner
//! builds: leaf sampling, rbp-chain call paths (with the `[rsp]` rules for code that runs
//! before a frame exists), recursion, and `perfscope qemu --arch x86_64` end to end.
//! QEMU or gcc missing fails these tests.

mod common;

use common::arch_suite::{self, Recording};
use common::guest::{GuestArch, TestGuest, build_test_guest_for, instruction_addresses, symbol_range};
use common::profile::KernelSymbols;
use perfscope::sources::qemu::plugin_args::{CallchainMode, SampleMode, kernel_text_of};

const ARCH: GuestArch = GuestArch::X86_64;

fn guest() -> TestGuest {
    build_test_guest_for(ARCH)
}

fn symbols() -> &'static KernelSymbols {
    arch_suite::symbols(ARCH)
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

#[test]
fn the_kernel_text_alias_is_the_multiboot_load_address() {
    let g = guest();
    let text = kernel_text_of(&g.elf).unwrap().expect("a .text section");
    let (stext, _) = symbol_range(&g.elf, "_stext");
    let (etext, _) = symbol_range(&g.elf, "_etext");
    assert_eq!((text.start, text.end), (stext, etext));
    assert_eq!(stext, 0xffffffff80100000);
    // From the program headers (linker.ld's AT()), not the low 32 bits (0x80100000).
    assert_eq!(
        text.alias,
        Some((0x100000, 0x100000 + (etext - stext), 0xffffffff80000000))
    );
}

#[test]
fn boots_through_multiboot_and_powers_off_cleanly() {
    arch_suite::assert_boots_and_powers_off(ARCH, leaf_recording(), "0xffffffff8010");
}

/// filter_kernel with the alias: every pc is kernel text at its linked (high) address,
/// including any taken in the 32-bit boot code, which runs at its physical address.
#[test]
fn leaf_mode_hottest_self_function_in_the_bench_is_mix_leaf() {
    arch_suite::assert_leaf_ranking(ARCH, leaf_recording());
}

#[test]
fn fp_mode_recovers_the_full_path_to_the_frameless_mix_leaf() {
    // gcc gives mix_leaf no frame at all (a leaf using no stack): rbp is hash_block's in
    // its whole body, so its caller comes only from [rsp] (the frameless rule).
    arch_suite::assert_full_paths_to_mix_leaf(ARCH, "tb+fp", fp_recording());
    let g = guest();
    assert!(
        instruction_addresses(&g.elf, "mix_leaf", |t| t.contains("%rbp")).is_empty(),
        "mix_leaf touches rbp: the test no longer covers a frameless leaf"
    );
}

/// hash_block is shrink-wrapped: `mov; test; jle` run on hash_workload's rbp, then a block
/// starting with `push %rbp` ([rsp] is the caller), instructions scheduled before
/// `mov %rsp,%rbp` ([rsp+8]), then the body on its own frame. Every sample in it, at
/// block starts (tb) or anywhere (insn), has hash_workload as its caller.
#[test]
fn hash_block_keeps_its_caller_before_during_and_after_its_delayed_prologue() {
    let g = guest();
    let push = instruction_addresses(&g.elf, "hash_block", |t| t == "push %rbp");
    let set = instruction_addresses(&g.elf, "hash_block", |t| t == "mov %rsp,%rbp");
    let (entry, _) = symbol_range(&g.elf, "hash_block");
    assert_eq!(
        (push.len(), set.len()),
        (1, 1),
        "one push %rbp and one mov %rsp,%rbp"
    );
    assert!(entry < push[0], "the prologue is delayed (shrink-wrapped)");
    let want = "kmain;run_bench;hash_workload;hash_block";
    for (label, rec) in [("tb+fp", fp_recording()), ("insn+fp", insn_fp_recording())] {
        let in_block: Vec<(u64, String)> = rec
            .in_bench()
            .iter()
            .filter(|r| symbols().function(r.pc, false) == "hash_block")
            .map(|r| (r.pc, symbols().path(r)))
            .collect();
        let before_frame = in_block.iter().filter(|(pc, _)| *pc <= set[0]).count();
        eprintln!(
            "x86_64 {label}: {} samples in hash_block, {before_frame} before its frame is set",
            in_block.len()
        );
        assert!(!in_block.is_empty(), "{label}: samples in hash_block");
        for (pc, p) in &in_block {
            assert!(p.ends_with(want), "{label} sample at {pc:#x}: {p}");
        }
    }
}

#[test]
fn fp_mode_shows_tree_walk_recursion_bounded_by_its_depth() {
    arch_suite::assert_tree_walk_recursion(ARCH, fp_recording());
}

/// insn mode samples inside prologues too: between `push %rbp` and `mov %rsp,%rbp` the
/// return address is at [rsp+8].
#[test]
fn insn_mode_keeps_the_full_path_inside_blocks() {
    let rec = insn_fp_recording();
    arch_suite::assert_full_paths_to_mix_leaf(ARCH, "insn+fp", rec);
    arch_suite::assert_insn_pcs_inside_blocks(ARCH, rec);
}

#[test]
fn perfscope_qemu_x86_64_writes_the_workload_window_and_every_artifact() {
    arch_suite::assert_perfscope_qemu_end_to_end(ARCH, 300);
}
