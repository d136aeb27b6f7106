//! QEMU command lines per guest architecture: the machine defaults of the StarryOS
//! templates (riscv64 `virt` with OpenSBI, loongarch64 `virt`, x86_64 `q35` with OVMF when
//! asked), the serial console on stdio, and a QMP socket for a clean stop.

use std::path::{Path, PathBuf};

use anyhow::bail;

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

    /// Machine and firmware arguments (the template defaults, without devices).
    pub fn machine_args(self, firmware: Option<&Firmware>) -> Vec<String> {
        let mut args: Vec<String> = match self {
            Arch::Riscv64 => vec!["-machine", "virt", "-bios", "default", "-m", "512M"],
            Arch::Loongarch64 => vec!["-machine", "virt", "-cpu", "la464", "-m", "512M"],
            Arch::X86_64 => vec!["-machine", "q35", "-m", "512M"],
        }
        .into_iter()
        .map(String::from)
        .collect();
        match firmware {
            Some(Firmware::Bios(path)) => {
                // OVMF replaces the default firmware; riscv64's `-bios default` goes.
                if let Some(i) = args.iter().position(|a| a == "-bios") {
                    args.drain(i..i + 2);
                }
                args.extend(["-bios".to_string(), path.display().to_string()]);
            }
            Some(Firmware::Pflash(code)) => args.extend([
                "-drive".to_string(),
                format!("if=pflash,format=raw,readonly=on,file={}", code.display()),
            ]),
            None => {}
        }
        args
    }
}

/// UEFI firmware for the guest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Firmware {
    /// A combined image (`OVMF.fd`) passed with `-bios`.
    Bios(PathBuf),
    /// A code-only image (`OVMF_CODE.fd`) mapped as read-only pflash.
    Pflash(PathBuf),
}

/// Find OVMF for x86_64 UEFI boots: `$TGOS_OVMF_DIR` first (as the StarryOS tooling), then
/// Debian's `/usr/share/OVMF`.
pub fn find_ovmf(tgos_ovmf_dir: Option<&Path>) -> anyhow::Result<Firmware> {
    let mut dirs: Vec<PathBuf> = tgos_ovmf_dir.map(Path::to_path_buf).into_iter().collect();
    dirs.push(PathBuf::from("/usr/share/OVMF"));
    for dir in &dirs {
        if dir.join("OVMF.fd").is_file() {
            return Ok(Firmware::Bios(dir.join("OVMF.fd")));
        }
        for code in ["OVMF_CODE.fd", "OVMF_CODE_4M.fd"] {
            if dir.join(code).is_file() {
                return Ok(Firmware::Pflash(dir.join(code)));
            }
        }
    }
    bail!(
        "no OVMF firmware in {}: set TGOS_OVMF_DIR or `apt-get install ovmf`",
        dirs.iter()
            .map(|d| d.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// Everything that makes the QEMU command line.
#[derive(Clone, Debug)]
pub struct QemuLaunch {
    pub arch: Arch,
    /// The QEMU binary (default: the arch's `qemu-system-*` on PATH).
    pub qemu: PathBuf,
    pub kernel: PathBuf,
    pub smp: Option<u32>,
    pub firmware: Option<Firmware>,
    /// The `-plugin` value (see `plugin_args`).
    pub plugin: Option<String>,
    pub qmp_socket: PathBuf,
    /// `--qemu-arg` values, after the defaults (so they can add devices or override).
    pub extra: Vec<String>,
}

impl QemuLaunch {
    /// The arguments after the binary.
    pub fn args(&self) -> Vec<String> {
        let mut args = Vec::new();
        if let Some(plugin) = &self.plugin {
            args.extend(["-plugin".to_string(), plugin.clone()]);
        }
        args.extend(self.arch.machine_args(self.firmware.as_ref()));
        if let Some(n) = self.smp {
            args.extend(["-smp".to_string(), n.to_string()]);
        }
        // The serial console on our stdio; no monitor there, so typed text reaches the guest.
        for a in ["-display", "none", "-monitor", "none", "-serial", "stdio"] {
            args.push(a.to_string());
        }
        args.extend(self.extra.iter().cloned());
        if !self.extra.iter().any(|a| a == "-qmp") {
            args.extend([
                "-qmp".to_string(),
                format!("unix:{},server=on,wait=off", self.qmp_socket.display()),
            ]);
        }
        args.extend(["-kernel".to_string(), self.kernel.display().to_string()]);
        args
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(arch: Arch) -> QemuLaunch {
        QemuLaunch {
            arch,
            qemu: arch.qemu_binary().into(),
            kernel: "/k/kernel.bin".into(),
            smp: Some(2),
            firmware: None,
            plugin: Some("/p/lib.so,freq=99".into()),
            qmp_socket: "/t/qmp.sock".into(),
            extra: vec!["-device".into(), "virtio-net-pci".into()],
        }
    }

    #[test]
    fn riscv64_uses_virt_with_opensbi_and_a_qmp_socket() {
        assert_eq!(
            launch(Arch::Riscv64).args().join(" "),
            "-plugin /p/lib.so,freq=99 -machine virt -bios default -m 512M -smp 2 -display none \
             -monitor none -serial stdio -device virtio-net-pci -qmp unix:/t/qmp.sock,server=on,wait=off \
             -kernel /k/kernel.bin"
        );
    }

    #[test]
    fn x86_64_is_q35_and_takes_ovmf() {
        let mut l = launch(Arch::X86_64);
        l.firmware = Some(Firmware::Pflash("/ovmf/OVMF_CODE.fd".into()));
        l.extra = vec!["-qmp".into(), "tcp:1234".into()];
        let args = l.args().join(" ");
        assert!(args.contains(
            "-machine q35 -m 512M -drive if=pflash,format=raw,readonly=on,file=/ovmf/OVMF_CODE.fd"
        ));
        assert_eq!(args.matches("-qmp").count(), 1, "a user -qmp replaces ours");
        assert_eq!(
            Arch::Loongarch64.machine_args(None).join(" "),
            "-machine virt -cpu la464 -m 512M"
        );
        let bios = Arch::Riscv64.machine_args(Some(&Firmware::Bios("/f/OVMF.fd".into())));
        assert_eq!(bios.join(" "), "-machine virt -m 512M -bios /f/OVMF.fd");
    }

    #[test]
    fn ovmf_is_found_in_the_tgos_dir_first() {
        let dir = tempfile::tempdir().unwrap();
        assert!(find_ovmf(Some(dir.path())).is_err() || Path::new("/usr/share/OVMF").is_dir());
        std::fs::write(dir.path().join("OVMF_CODE.fd"), b"x").unwrap();
        assert_eq!(
            find_ovmf(Some(dir.path())).unwrap(),
            Firmware::Pflash(dir.path().join("OVMF_CODE.fd"))
        );
        std::fs::write(dir.path().join("OVMF.fd"), b"x").unwrap();
        assert_eq!(
            find_ovmf(Some(dir.path())).unwrap(),
            Firmware::Bios(dir.path().join("OVMF.fd"))
        );
    }
}
