//! Where a guest address lies, decided before anything names it: the kernel image (at its
//! linked address, or at its physical alias while the MMU is still off), the firmware,
//! user space, or nowhere known.
//!
//! The reference tools alias every address whose low 32 bits fall in the kernel's range,
//! so OpenSBI's PCs and physical stack values got kernel names. Here only the kernel
//! image's own physical range is an alias: its load address from the program headers
//! (`p_paddr` ≠ `p_vaddr`), else from how QEMU boots the arch ([`boot_load_address`]),
//! and its size from its `PT_LOAD` segments. A kernel booted through UEFI has no alias: the
//! firmware loads it wherever it finds room, so its ELF's load addresses say nothing about
//! where it runs (what runs at them may be the firmware's). What lies outside the image is
//! named by its region (`[firmware]`, `[user]`, `[unknown]`), never looked up among kernel
//! symbols.

use object::read::elf::ProgramHeader;
use object::{Architecture, Object};

use super::{AddressRange, Canonical};

/// The region of a (canonical) guest address.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Region {
    /// Inside the kernel image: named by its symbols.
    Kernel,
    /// The machine's firmware (OpenSBI, the reset ROM, BIOS/UEFI flash).
    Firmware,
    /// The lower half of the address space outside the image and the firmware (before the
    /// kernel first runs, the firmware's too: feeds/ingest/address.rs counts it so).
    User,
    /// Anything else (the upper half outside the image, non-canonical values).
    Unknown,
}

impl Region {
    /// The pseudo-frame a sample outside the kernel is shown under.
    pub fn frame_name(self) -> Option<&'static str> {
        match self {
            Region::Kernel => None,
            Region::Firmware => Some("[firmware]"),
            Region::User => Some("[user]"),
            Region::Unknown => Some("[unknown]"),
        }
    }
}

/// How the kernel image got into the guest's memory.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Boot {
    /// QEMU's own loader (`-kernel`: multiboot, OpenSBI's jump, the direct ELF load): at the
    /// load address of its program headers or the arch's boot protocol.
    #[default]
    Direct,
    /// A UEFI firmware (OVMF) loaded it as an EFI application: anywhere.
    Uefi,
}

/// Where the alias's load address came from, for the reports.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum AliasSource {
    /// The image's `PT_LOAD` load address (`p_paddr`).
    ProgramHeaders,
    /// The arch's boot protocol under QEMU ([`boot_load_address`]).
    BootProtocol,
}

/// The kernel image's physical range, which runs as `virt_start + (address − phys.start)`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct KernelAlias {
    pub phys: AddressRange,
    pub virt_start: u64,
    pub source: AliasSource,
}

impl KernelAlias {
    /// What is added to an alias address to get its linked one.
    pub fn offset(&self) -> u64 {
        self.virt_start.wrapping_sub(self.phys.start)
    }
}

/// A guest kernel's address space, from its ELF.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GuestSpace {
    /// The linked span of the image's loadable segments.
    image: AddressRange,
    alias: Option<KernelAlias>,
    firmware: Vec<AddressRange>,
    /// User addresses are below this (the lower half of the arch's virtual space).
    user_end: u64,
}

/// Where QEMU's boot path puts a kernel whose ELF gives no load address of its own, for
/// an image linked at `virt_start`; `None` where the arch has no such rule here.
///
/// - riscv64 (`virt`, OpenSBI `fw_dynamic`/`fw_jump`): the kernel runs at RAM + 2 MiB,
///   0x8020_0000, whatever its link address (a high-half link address says nothing about
///   its low bits).
/// - loongarch64 (`virt`): QEMU loads an ELF at its virtual addresses' low 48 bits (the
///   physical address space; `cpu_loongarch_virt_to_phys`).
/// - x86_64: multiboot/PVH load by `p_paddr` only; no rule.
pub fn boot_load_address(arch: Architecture, virt_start: u64) -> Option<u64> {
    let phys = match arch {
        Architecture::Riscv64 if virt_start >> 63 == 1 => 0x8020_0000,
        Architecture::LoongArch64 => virt_start & ((1 << 48) - 1),
        _ => return None,
    };
    (phys != virt_start).then_some(phys)
}

/// The firmware's address ranges on QEMU's `virt` / `pc` machines; `below_kernel` is where
/// the kernel's physical image starts (riscv64's OpenSBI sits below it in RAM).
fn firmware_ranges(arch: Architecture, below_kernel: Option<u64>) -> Vec<AddressRange> {
    let range = |start, end| AddressRange { start, end };
    match arch {
        // The reset ROM (mrom) and OpenSBI, which owns RAM up to the kernel.
        Architecture::Riscv64 => vec![
            range(0x1000, 0x1_0000),
            range(
                0x8000_0000,
                below_kernel.filter(|&k| k > 0x8000_0000).unwrap_or(0x8020_0000),
            ),
        ],
        // The BIOS ROM below 1 MiB and the flash under 4 GiB (SeaBIOS, OVMF).
        Architecture::X86_64 => vec![range(0xE_0000, 0x10_0000), range(0xFF00_0000, 0x1_0000_0000)],
        // The boot flash of `virt`.
        Architecture::LoongArch64 => vec![range(0x1C00_0000, 0x1D00_0000)],
        _ => Vec::new(),
    }
}

impl GuestSpace {
    /// The space of the kernel in `object`; `None` when it has no loadable segment.
    pub fn of(object: &object::File<'_>) -> Option<GuestSpace> {
        let object::File::Elf64(elf) = object else {
            return None;
        };
        let endian = elf.endian();
        let loads: Vec<_> = elf
            .elf_program_headers()
            .iter()
            .filter(|ph| ph.p_type(endian) == object::elf::PT_LOAD && ph.p_memsz(endian) > 0)
            .collect();
        let start = loads.iter().map(|ph| ph.p_vaddr(endian)).min()?;
        let end = loads
            .iter()
            .map(|ph| ph.p_vaddr(endian).saturating_add(ph.p_memsz(endian)))
            .max()?;
        let image = AddressRange { start, end };
        let arch = object.architecture();
        // The first segment that loads apart from its link address gives the offset.
        let from_headers = loads
            .iter()
            .find(|ph| ph.p_paddr(endian) != ph.p_vaddr(endian))
            .map(|ph| (ph.p_paddr(endian), ph.p_vaddr(endian)));
        let alias = match from_headers {
            Some((phys, virt)) => Some((virt.wrapping_sub(phys), AliasSource::ProgramHeaders)),
            None => boot_load_address(arch, start)
                .map(|phys| (start.wrapping_sub(phys), AliasSource::BootProtocol)),
        }
        .map(|(offset, source)| {
            let phys_start = start.wrapping_sub(offset);
            KernelAlias {
                phys: AddressRange {
                    start: phys_start,
                    end: phys_start.saturating_add(end - start),
                },
                virt_start: start,
                source,
            }
        });
        Some(GuestSpace {
            image,
            firmware: firmware_ranges(arch, alias.map(|a| a.phys.start).or(Some(start))),
            alias,
            user_end: 1 << 47,
        })
    }

    pub fn alias(&self) -> Option<KernelAlias> {
        self.alias
    }

    /// This space for a kernel booted by `boot`: under UEFI, without its alias.
    pub fn booted_by(self, boot: Boot) -> GuestSpace {
        match boot {
            Boot::Direct => self,
            Boot::Uefi => GuestSpace { alias: None, ..self },
        }
    }

    /// The linked address of `address`: moved only from the image's physical alias.
    pub fn canonicalize(&self, address: u64) -> Canonical {
        match self.alias {
            Some(alias) if !self.image.contains(address) && alias.phys.contains(address) => Canonical {
                address: alias.virt_start + (address - alias.phys.start),
                aliased: true,
            },
            _ => Canonical {
                address,
                aliased: false,
            },
        }
    }

    /// The region of a canonical address.
    pub fn region(&self, address: u64) -> Region {
        if self.image.contains(address) {
            Region::Kernel
        } else if self.firmware.iter().any(|r| r.contains(address)) {
            Region::Firmware
        } else if address < self.user_end {
            Region::User
        } else {
            Region::Unknown
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn space(image: (u64, u64), alias: Option<(u64, AliasSource)>, arch: Architecture) -> GuestSpace {
        let alias = alias.map(|(phys, source)| KernelAlias {
            phys: AddressRange {
                start: phys,
                end: phys + (image.1 - image.0),
            },
            virt_start: image.0,
            source,
        });
        GuestSpace {
            image: AddressRange {
                start: image.0,
                end: image.1,
            },
            firmware: firmware_ranges(arch, alias.map(|a| a.phys.start)),
            alias,
            user_end: 1 << 47,
        }
    }

    #[test]
    fn a_kernel_linked_at_ram_base_aliases_only_its_load_address() {
        // StarryOS-like: linked at 0xffffffc080000000, no LMA: OpenSBI jumps to 0x80200000.
        // Masking the low 32 bits would alias 0x80000000 (OpenSBI) onto the kernel's start.
        let start = 0xffff_ffc0_8000_0000;
        let load = boot_load_address(Architecture::Riscv64, start).unwrap();
        assert_eq!(load, 0x8020_0000);
        let s = space(
            (start, start + 0x10_0000),
            Some((load, AliasSource::BootProtocol)),
            Architecture::Riscv64,
        );
        let opensbi = s.canonicalize(0x8000_1234);
        assert!(!opensbi.aliased);
        assert_eq!(s.region(opensbi.address), Region::Firmware);
        let early = s.canonicalize(0x8020_0010);
        assert_eq!((early.address, early.aliased), (start + 0x10, true));
        assert_eq!(s.region(early.address), Region::Kernel);
        // Past the image's physical end is not the kernel either.
        let past = s.canonicalize(0x8030_0000);
        assert!(!past.aliased);
        assert_eq!(s.region(0x1010), Region::Firmware, "the reset ROM");
        assert_eq!(s.region(0x1_0000), Region::User);
        assert_eq!(s.region(0x3f_ffff_f000), Region::User);
        assert_eq!(s.region(0xffff_ffc0_0000_1000), Region::Unknown);
        assert_eq!(s.region(start - 1), Region::Unknown);
        assert_eq!(
            s.region(start + 0x10_0000),
            Region::Unknown,
            "the end is exclusive"
        );
    }

    #[test]
    fn boot_rules_per_arch() {
        assert_eq!(
            boot_load_address(Architecture::LoongArch64, 0x9000_0000_0020_0000),
            Some(0x20_0000)
        );
        assert_eq!(boot_load_address(Architecture::LoongArch64, 0x20_0000), None);
        assert_eq!(
            boot_load_address(Architecture::X86_64, 0xffff_ffff_8010_0000),
            None
        );
        assert_eq!(
            boot_load_address(Architecture::Riscv64, 0x8020_0000),
            None,
            "a kernel linked at its load address has no alias"
        );
        let x86 = space(
            (0xffff_ffff_8010_0000, 0xffff_ffff_8020_0000),
            None,
            Architecture::X86_64,
        );
        assert_eq!(x86.region(0xF_FFF0), Region::Firmware, "the reset vector's ROM");
        assert_eq!(x86.region(0xFFFF_FFF0), Region::Firmware, "the flash");
        assert_eq!(x86.region(0x40_1000), Region::User);
        let la = space(
            (0x9000_0000_0020_0000, 0x9000_0000_0040_0000),
            Some((0x20_0000, AliasSource::BootProtocol)),
            Architecture::LoongArch64,
        );
        assert_eq!(la.region(0x1C00_0100), Region::Firmware);
        assert_eq!(la.canonicalize(0x20_0100).address, 0x9000_0000_0020_0100);
    }

    #[test]
    fn a_uefi_boot_has_no_alias_at_the_program_headers_load_address() {
        // The x86_64 test kernel: linked at 0xffffffff80100000, loaded (AT) at 1 MiB by
        // multiboot; OVMF loads kernel.efi wherever it has room (0x1dc0c000 in one run).
        let start = 0xffff_ffff_8010_0000;
        let direct = space(
            (start, start + 0x3_0000),
            Some((0x10_0000, AliasSource::ProgramHeaders)),
            Architecture::X86_64,
        );
        let early = direct.canonicalize(0x10_0010);
        assert_eq!((early.address, early.aliased), (start + 0x10, true));
        let uefi = direct.clone().booted_by(Boot::Uefi);
        assert_eq!(uefi.alias(), None);
        let at_1m = uefi.canonicalize(0x10_0010);
        assert_eq!((at_1m.address, at_1m.aliased), (0x10_0010, false));
        assert_eq!(uefi.region(at_1m.address), Region::User, "not a kernel name");
        assert_eq!(uefi.region(0x1dc0_c000), Region::User);
        assert_eq!(uefi.region(0xffc8_4000), Region::Firmware, "OVMF's flash");
        assert_eq!(uefi.region(start + 0x10), Region::Kernel);
        assert_eq!(direct.clone().booted_by(Boot::Direct), direct);
    }
}
