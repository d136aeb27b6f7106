//! The ELF symbolizer on the freshly built test kernel, checked against binutils' own
//! `addr2line` and `nm` for the same file.

mod common;

use std::path::Path;
use std::process::Command;

use common::guest::{build_test_guest, symbol_range};
use perfscope::symbols::{ElfImage, SymbolFrame, Symbolizer};

/// `riscv64-unknown-elf-addr2line -f -i` for many addresses: per address, (function, line)
/// innermost first.
fn binutils_frames(elf: &Path, addresses: &[u64]) -> Vec<Vec<(String, u32)>> {
    let out = Command::new("riscv64-unknown-elf-addr2line")
        .arg("-a")
        .arg("-f")
        .arg("-i")
        .arg("-e")
        .arg(elf)
        .args(addresses.iter().map(|a| format!("{a:#x}")))
        .output()
        .expect("riscv64-unknown-elf-addr2line");
    let text = String::from_utf8_lossy(&out.stdout);
    let mut result: Vec<Vec<(String, u32)>> = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(l) = lines.next() {
        if l.starts_with("0x") {
            result.push(Vec::new());
            continue;
        }
        let location = lines.next().unwrap_or("");
        let line = location
            .rsplit(':')
            .next()
            .and_then(|n| n.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        result
            .last_mut()
            .expect("an address line first")
            .push((l.to_string(), line));
    }
    result
}

fn ours(frames: &[SymbolFrame]) -> Vec<(String, u32)> {
    frames.iter().map(|f| (f.name.clone(), f.line)).collect()
}

#[test]
fn every_address_of_the_workload_matches_binutils_addr2line() {
    let guest = build_test_guest();
    let image = ElfImage::open(&guest.elf).unwrap();
    assert_eq!(image.arch(), Some("riscv64"));
    assert!(image.has_dwarf());
    let mut addresses = Vec::new();
    for f in [
        "mix_leaf",
        "hash_block",
        "hash_workload",
        "tree_walk",
        "run_bench",
        "kmain",
    ] {
        let (start, end) = symbol_range(&guest.elf, f);
        addresses.extend((start..end).step_by(2));
    }
    let expected = binutils_frames(&guest.elf, &addresses);
    assert_eq!(expected.len(), addresses.len());
    let mut inline_seen = 0;
    for (address, want) in addresses.iter().zip(&expected) {
        let got = ours(&image.symbolize(*address));
        assert_eq!(&got, want, "at {address:#x}");
        if got.len() > 1 {
            inline_seen += 1;
        }
    }
    assert!(
        inline_seen > 0,
        "the test kernel has inline frames (fold_index in hash_block)"
    );
    let inline = addresses
        .iter()
        .map(|&a| image.symbolize(a))
        .find(|f| f.len() > 1 && f[0].name == "fold_index")
        .expect("fold_index inlined");
    assert_eq!(inline[1].name, "hash_block", "outermost last");
    assert!(inline[0].file.as_deref().is_some_and(|f| f.ends_with("kernel.c")));
}

#[test]
fn without_dwarf_the_bounded_symbol_table_answers_with_offsets() {
    let guest = build_test_guest();
    let dir = tempfile::tempdir().unwrap();
    let stripped = dir.path().join("kernel.stripped.elf");
    let status = Command::new("riscv64-unknown-elf-objcopy")
        .arg("--strip-debug")
        .arg(&guest.elf)
        .arg(&stripped)
        .status()
        .unwrap();
    assert!(status.success());
    let image = ElfImage::open(&stripped).unwrap();
    assert!(!image.has_dwarf());
    let (start, end) = symbol_range(&stripped, "mix_leaf");
    let f = image.symbolize(start + 6);
    assert_eq!(f.len(), 1);
    assert_eq!((f[0].name.as_str(), f[0].offset), ("mix_leaf", Some(6)));
    let f = image.symbolize(start);
    assert_eq!(f[0].offset, Some(0));
    // The assembly routine without .size owns up to the next symbol.
    let (enter_user, _) = symbol_range(&stripped, "enter_user");
    assert_eq!(image.symbolize(enter_user + 4)[0].name, "enter_user");
    // Past the end of the text: nothing, instead of the last function with a huge offset.
    let (etext, _) = symbol_range(&stripped, "_etext");
    assert!(image.symbolize(etext + 0x40).is_empty());
    assert!(end <= etext);
}

#[test]
fn the_kernel_text_and_physical_alias_come_from_the_elf() {
    let guest = build_test_guest();
    let image = ElfImage::open(&guest.elf).unwrap();
    let text = image.kernel_text().unwrap();
    let (stext, _) = symbol_range(&guest.elf, "_stext");
    let (etext, _) = symbol_range(&guest.elf, "_etext");
    assert_eq!((text.start, text.end), (stext, etext));
    let (mix, _) = symbol_range(&guest.elf, "mix_leaf");
    // linker.ld: VMA 0xffffffc080200000, LMA 0x80200000.
    let phys = mix - 0xffffffc0_00000000;
    let c = image.canonicalize(phys + 4);
    assert!(c.aliased);
    assert_eq!(c.address, mix + 4);
    assert_eq!(image.symbolize(c.address)[0].name, "mix_leaf");
    let firmware = image.canonicalize(0x8000_1000);
    assert!(
        !firmware.aliased,
        "OpenSBI below the kernel's load address is not the kernel"
    );
    assert_eq!(firmware.address, 0x8000_1000);
}

/// Only code can hold a return address: inside an executable section and inside a function
/// (zig's clang aligns loongarch64 functions to 32 bytes: padding that runs nothing follows
/// the assembly victim_spin).
#[test]
fn code_is_inside_a_function_of_an_executable_section() {
    let guest = common::guest::build_test_guest_for(common::guest::GuestArch::Loongarch64);
    let image = ElfImage::open(&guest.elf).unwrap();
    let (_, victim_end) = symbol_range(&guest.elf, "victim_spin");
    let (mix_leaf, _) = symbol_range(&guest.elf, "mix_leaf");
    assert!(victim_end < mix_leaf, "the alignment leaves a gap");
    assert!(image.is_code(victim_end - 4) && image.is_code(mix_leaf));
    assert!(!image.is_code(victim_end), "padding");
    let (data, _) = symbol_range(&guest.elf, "fake_frame");
    assert!(!image.is_code(data));
}
