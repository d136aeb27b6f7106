//! The test kernel (tests/guest) per architecture, built once per test process into
//! `target/test-guest/` (riscv64, Debian's bare-metal cross gcc), `target/test-guest-x86_64/`
//! (Debian's native gcc) or `target/test-guest-loongarch64/` (zig's clang from PyPI). A
//! missing compiler fails the test loudly: the test command (`scripts/test.sh`) installs it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use perfscope::sources::qemu::Arch;

use super::{OnceCache, once_per};

/// The architectures tests/guest builds the kernel for.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum GuestArch {
    Riscv64,
    X86_64,
    Loongarch64,
}

impl GuestArch {
    /// The name `make ARCH=` and perfscope's `--arch` take.
    pub fn name(self) -> &'static str {
        self.runner_arch().name()
    }

    /// The same architecture as the runner (`perfscope qemu`) knows it.
    pub fn runner_arch(self) -> Arch {
        match self {
            GuestArch::Riscv64 => Arch::Riscv64,
            GuestArch::X86_64 => Arch::X86_64,
            GuestArch::Loongarch64 => Arch::Loongarch64,
        }
    }

    /// The binutils prefix of the disassembler for this architecture's ELF (Debian 12 has
    /// none for loongarch64: its tests read instructions without one).
    fn binutils_prefix(self) -> &'static str {
        match self {
            GuestArch::Riscv64 => "riscv64-unknown-elf-",
            GuestArch::X86_64 => "x86_64-linux-gnu-",
            GuestArch::Loongarch64 => "loongarch64-linux-gnu-",
        }
    }

    /// What builds this architecture's kernel, for the message when the build fails.
    fn compiler(self) -> &'static str {
        match self {
            GuestArch::Loongarch64 => "zig's clang (python3 -m ziglang)",
            GuestArch::Riscv64 | GuestArch::X86_64 => self.binutils_prefix(),
        }
    }

    fn out_dir(self) -> PathBuf {
        match self {
            GuestArch::Riscv64 => target_dir().join("test-guest"),
            GuestArch::X86_64 => target_dir().join("test-guest-x86_64"),
            GuestArch::Loongarch64 => target_dir().join("test-guest-loongarch64"),
        }
    }

    /// The image QEMU's `-kernel` loads: the raw binary, except on loongarch64, whose
    /// direct boot takes only an ELF.
    fn image(self) -> &'static str {
        match self {
            GuestArch::Loongarch64 => "kernel.elf",
            GuestArch::Riscv64 | GuestArch::X86_64 => "kernel.bin",
        }
    }

    /// From the ELF header's `e_machine`.
    pub fn of_elf(elf: &Path) -> GuestArch {
        let bytes = std::fs::read(elf).unwrap_or_else(|e| panic!("{}: {e}", elf.display()));
        match bytes.get(18..20) {
            Some([0xf3, 0]) => GuestArch::Riscv64,
            Some([0x3e, 0]) => GuestArch::X86_64,
            Some([0x02, 0x01]) => GuestArch::Loongarch64,
            other => panic!(
                "{}: not a riscv64, x86_64 or loongarch64 ELF (e_machine {other:?})",
                elf.display()
            ),
        }
    }

    /// A binutils tool (`objdump`) for this architecture's ELF.
    pub fn tool(self, name: &str) -> Command {
        Command::new(format!("{}{name}", self.binutils_prefix()))
    }
}

/// The built kernel: the ELF (symbols, DWARF) and the image QEMU loads.
#[derive(Clone, Debug)]
pub struct TestGuest {
    pub arch: GuestArch,
    pub elf: PathBuf,
    pub bin: PathBuf,
    /// The user program `user N` runs in U-mode (riscv64 only).
    pub user_elf: Option<PathBuf>,
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"))
}

/// Build (or reuse, when up to date) the riscv64 test kernel.
pub fn build_test_guest() -> TestGuest {
    build_test_guest_for(GuestArch::Riscv64)
}

/// Build (or reuse, when up to date) the test kernel for `arch`.
pub fn build_test_guest_for(arch: GuestArch) -> TestGuest {
    build(arch, FramePointers::Kept)
}

/// The same kernel as a normal debug build without frame pointers (`FRAME_POINTERS=no`):
/// only its `.debug_frame` describes its frames (`--callchain dwarf`).
pub fn build_test_guest_without_frame_pointers(arch: GuestArch) -> TestGuest {
    build(arch, FramePointers::Omitted)
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum FramePointers {
    Kept,
    Omitted,
}

fn build(arch: GuestArch, frame_pointers: FramePointers) -> TestGuest {
    static BUILDS: OnceCache<(GuestArch, FramePointers), TestGuest> = Mutex::new(Vec::new());
    once_per(&BUILDS, (arch, frame_pointers)).get_or_init(|| {
        let (out, make_var) = match frame_pointers {
            FramePointers::Kept => (arch.out_dir(), "FRAME_POINTERS=yes"),
            FramePointers::Omitted => {
                let dir = arch.out_dir();
                let name = format!("{}-nofp", dir.file_name().unwrap().to_string_lossy());
                (dir.with_file_name(name), "FRAME_POINTERS=no")
            }
        };
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/guest");
        let status = Command::new("make")
            .arg("-s")
            .arg("-C")
            .arg(&src)
            .arg(format!("ARCH={}", arch.name()))
            .arg(make_var)
            .arg(format!("O={}", out.display()))
            .status()
            .expect("cannot run make: install build-essential");
        assert!(
            status.success(),
            "building the {} test kernel failed (make -C tests/guest ARCH={} {make_var}); if {} is missing, run scripts/install-test-deps.sh",
            arch.name(),
            arch.name(),
            arch.compiler()
        );
        TestGuest {
            arch,
            elf: out.join("kernel.elf"),
            bin: out.join(arch.image()),
            user_elf: (arch == GuestArch::Riscv64).then(|| out.join("user.elf")),
        }
    })
    .clone()
}

/// The x86_64 test kernel as a UEFI application: `kernel.efi` (kernel.bin behind a PE32+
/// header, entered at efi_main; tests/guest/README.md), built beside kernel.elf, whose
/// symbols it shares. `bin` is that image.
pub fn build_test_guest_efi() -> TestGuest {
    let guest = build_test_guest_for(GuestArch::X86_64);
    let efi = guest.elf.with_file_name("kernel.efi");
    assert!(
        efi.is_file(),
        "make -C tests/guest ARCH=x86_64 built no {}",
        efi.display()
    );
    TestGuest { bin: efi, ..guest }
}

/// `[start, end)` of a symbol, from the ELF's symbol table (what `nm -S` prints; read
/// here, so no binutils for the kernel's architecture are needed).
pub fn symbol_range(elf: &Path, name: &str) -> (u64, u64) {
    use object::{Object, ObjectSymbol};
    let bytes = std::fs::read(elf).unwrap_or_else(|e| panic!("{}: {e}", elf.display()));
    let file = object::File::parse(&*bytes).unwrap_or_else(|e| panic!("{}: {e}", elf.display()));
    file.symbols()
        .find(|s| s.name() == Ok(name))
        .map(|s| (s.address(), s.address() + s.size()))
        .unwrap_or_else(|| panic!("symbol {name} not found in {}", elf.display()))
}

/// The start address of a symbol.
pub fn symbol_address(elf: &Path, name: &str) -> u64 {
    symbol_range(elf, name).0
}

/// The address of the instruction after the first call from `caller` to `callee`: the
/// return address an unwinder finds in `callee`'s frame.
pub fn return_address(elf: &Path, caller: &str, callee: &str) -> u64 {
    let (start, end) = symbol_range(elf, caller);
    let out = GuestArch::of_elf(elf)
        .tool("objdump")
        .arg("-d")
        .arg(format!("--start-address=0x{start:x}"))
        .arg(format!("--stop-address=0x{end:x}"))
        .arg(elf)
        .output()
        .expect("binutils objdump for the kernel's architecture");
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

/// Addresses of the instructions of `function` whose objdump text (`mnemonic operands`)
/// satisfies `matches`, e.g. x86_64's `push %rbp`.
pub fn instruction_addresses(elf: &Path, function: &str, matches: impl Fn(&str) -> bool) -> Vec<u64> {
    let (start, end) = symbol_range(elf, function);
    let out = GuestArch::of_elf(elf)
        .tool("objdump")
        .args(["-d", "--no-show-raw-insn"])
        .arg(format!("--start-address=0x{start:x}"))
        .arg(format!("--stop-address=0x{end:x}"))
        .arg(elf)
        .output()
        .expect("binutils objdump for the kernel's architecture");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| {
            let (address, text) = line.trim().split_once(':')?;
            let address = u64::from_str_radix(address, 16).ok()?;
            let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
            matches(&text).then_some(address)
        })
        .collect()
}
