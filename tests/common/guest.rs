//! The riscv64 test kernel (tests/guest), built once per test process with Debian's cross
//! gcc into `target/test-guest/`. A missing compiler fails the test loudly: the test
//! command (`scripts/test.sh`) installs it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The built kernel: the ELF (symbols, DWARF) and the raw image QEMU loads.
#[derive(Clone, Debug)]
pub struct TestGuest {
    pub elf: PathBuf,
    pub bin: PathBuf,
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"))
}

/// Build (or reuse, when up to date) the test kernel.
pub fn build_test_guest() -> TestGuest {
    static GUEST: OnceLock<TestGuest> = OnceLock::new();
    GUEST
        .get_or_init(|| {
            let out = target_dir().join("test-guest");
            let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/guest");
            let status = Command::new("make")
                .arg("-s")
                .arg("-C")
                .arg(&src)
                .arg(format!("O={}", out.display()))
                .status()
                .expect("cannot run make: install build-essential");
            assert!(
                status.success(),
                "building the test kernel failed (make -C tests/guest); if riscv64-unknown-elf-gcc is missing, run scripts/install-test-deps.sh"
            );
            TestGuest {
                elf: out.join("kernel.elf"),
                bin: out.join("kernel.bin"),
            }
        })
        .clone()
}

/// `[start, end)` of a function, from the ELF's symbol table (`nm -S`).
pub fn symbol_range(elf: &Path, name: &str) -> (u64, u64) {
    let out = Command::new("riscv64-unknown-elf-nm")
        .arg("-S")
        .arg(elf)
        .output()
        .expect("riscv64-unknown-elf-nm: run scripts/install-test-deps.sh");
    assert!(out.status.success(), "nm failed on {}", elf.display());
    let text = String::from_utf8_lossy(&out.stdout);
    for line in text.lines() {
        let parts: Vec<&str> = line.split_whitespace().collect();
        if parts.len() == 4 && parts[3] == name {
            let start = u64::from_str_radix(parts[0], 16).expect("nm address");
            let size = u64::from_str_radix(parts[1], 16).expect("nm size");
            return (start, start + size);
        }
        if parts.len() == 3 && parts[2] == name {
            let start = u64::from_str_radix(parts[0], 16).expect("nm address");
            return (start, start);
        }
    }
    panic!("symbol {name} not found in {}", elf.display());
}

/// The start address of a symbol.
pub fn symbol_address(elf: &Path, name: &str) -> u64 {
    symbol_range(elf, name).0
}

/// The address of the instruction after the first call from `caller` to `callee`: the
/// return address an unwinder finds in `callee`'s frame.
pub fn return_address(elf: &Path, caller: &str, callee: &str) -> u64 {
    let (start, end) = symbol_range(elf, caller);
    let out = Command::new("riscv64-unknown-elf-objdump")
        .arg("-d")
        .arg(format!("--start-address=0x{start:x}"))
        .arg(format!("--stop-address=0x{end:x}"))
        .arg(elf)
        .output()
        .expect("riscv64-unknown-elf-objdump");
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        if line.contains(&format!("<{callee}>")) && (line.contains("jal") || line.contains("call")) {
            let next = lines[i + 1..]
                .iter()
                .find_map(|l| {
                    l.trim()
                        .split(':')
                        .next()
                        .and_then(|a| u64::from_str_radix(a, 16).ok())
                })
                .expect("an instruction after the call");
            return next;
        }
    }
    panic!("no call from {caller} to {callee} in {}", elf.display());
}
