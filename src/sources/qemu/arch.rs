//! The guest architectures perfscope runs: their names (in output paths and QEMU's
//! binaries) and the StarryOS templates' machine arguments.

/// A guest architecture perfscope can run.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Arch {
    Riscv64,
    Loongarch64,
    #[value(name = "x86_64", alias = "x86-64")]
    X86_64,
}

impl Arch {
    /// The name used in output paths (`perf/<arch>/latest`) and by QEMU.
    pub fn name(self) -> &'static str {
        match self {
            Arch::Riscv64 => "riscv64",
            Arch::Loongarch64 => "loongarch64",
            Arch::X86_64 => "x86_64",
        }
    }

    pub fn qemu_binary(self) -> &'static str {
        match self {
            Arch::Riscv64 => "qemu-system-riscv64",
            Arch::Loongarch64 => "qemu-system-loongarch64",
            Arch::X86_64 => "qemu-system-x86_64",
        }
    }

    /// Machine arguments (the template defaults, without devices).
    pub fn machine_args(self) -> Vec<String> {
        match self {
            Arch::Riscv64 => vec!["-machine", "virt", "-bios", "default", "-m", "512M"],
            Arch::Loongarch64 => vec!["-machine", "virt", "-cpu", "la464", "-m", "512M"],
            Arch::X86_64 => vec!["-machine", "q35", "-m", "512M"],
        }
        .into_iter()
        .map(String::from)
        .collect()
    }
}
