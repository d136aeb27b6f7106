//! QEMU command lines per guest architecture: the machine defaults of the StarryOS
//! templates (riscv64 `virt` with OpenSBI, loongarch64 `virt`, x86_64 `q35`), the kernel
//! loaded by QEMU or booted by OVMF from a system partition (uefi.rs), the serial console on
//! stdio, and a QMP socket for a clean stop.

use std::path::PathBuf;

use super::arch::Arch;
use super::uefi::UefiBoot;

/// Everything that makes the QEMU command line.
#[derive(Clone, Debug)]
pub struct QemuLaunch {
    pub arch: Arch,
    /// The QEMU binary (default: the arch's `qemu-system-*` on PATH).
    pub qemu: PathBuf,
    /// The kernel image: QEMU's `-kernel`, or the system partition's boot file under UEFI.
    pub kernel: PathBuf,
    pub smp: Option<u32>,
    /// A UEFI boot (OVMF's flashes and the system partition holding the kernel) instead of
    /// QEMU's own loader.
    pub firmware: Option<UefiBoot>,
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
        args.extend(self.arch.machine_args());
        if let Some(uefi) = &self.firmware {
            args.extend(uefi.drive_args());
        }
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
        if self.firmware.is_none() {
            args.extend(["-kernel".to_string(), self.kernel.display().to_string()]);
        }
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
    fn x86_64_under_uefi_boots_from_the_system_partition_not_by_kernel() {
        let mut l = launch(Arch::X86_64);
        l.kernel = "/k/kernel.efi".into();
        l.firmware = Some(UefiBoot {
            code: "/fw/code.fd".into(),
            vars: "/q/starryos.vars.fd".into(),
            esp: "/q/starryos.esp".into(),
        });
        l.extra = vec!["-qmp".into(), "tcp:1234".into()];
        assert_eq!(
            l.args().join(" "),
            "-plugin /p/lib.so,freq=99 -machine q35 -m 512M \
             -drive if=pflash,format=raw,unit=0,readonly=on,file=/fw/code.fd \
             -drive if=pflash,format=raw,unit=1,file=/q/starryos.vars.fd \
             -drive format=raw,file=fat:rw:/q/starryos.esp -smp 2 -display none -monitor none \
             -serial stdio -qmp tcp:1234",
            "no -kernel, and a user -qmp replaces ours"
        );
        l.firmware = None;
        assert!(
            l.args()
                .join(" ")
                .ends_with("-qmp tcp:1234 -kernel /k/kernel.efi")
        );
        assert_eq!(
            Arch::Loongarch64.machine_args().join(" "),
            "-machine virt -cpu la464 -m 512M"
        );
    }
}
