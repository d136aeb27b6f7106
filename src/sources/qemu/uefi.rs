//! UEFI boots (`perfscope qemu --uefi`), as the reference's StarryOS tooling does them:
//! OVMF's code and variable store from `$TGOS_OVMF_DIR` (`code.fd`, `vars.fd`) or Debian's
//! `ovmf` package, the kernel image as the removable-media boot file of an EFI system
//! partition QEMU serves from a directory (`fat:rw:`), and a private copy of the variable
//! store. Owns the discovery and those files; machine.rs puts them on the command line.
//! x86_64 only: OVMF is the one UEFI firmware found here.

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::arch::Arch;

/// The variable naming a directory with the firmware (the reference's override).
pub const OVMF_DIR_ENV: &str = "TGOS_OVMF_DIR";

/// Where Debian's `ovmf` package installs the firmware.
pub const DEBIAN_OVMF_DIR: &str = "/usr/share/OVMF";

/// Debian's code/variable-store pairs, preferred first (the 4 MiB flash layout is what the
/// package builds by default; a pair's halves must match).
const DEBIAN_PAIRS: [(&str, &str); 2] = [
    ("OVMF_CODE_4M.fd", "OVMF_VARS_4M.fd"),
    ("OVMF_CODE.fd", "OVMF_VARS.fd"),
];

/// The boot file a UEFI x86_64 machine starts from removable media.
pub const ESP_BOOT_FILE: &str = "EFI/BOOT/BOOTX64.EFI";

/// Why a UEFI boot cannot be set up.
#[derive(Debug, thiserror::Error)]
pub enum UefiError {
    #[error(
        "--uefi boots x86_64 guests through OVMF; there is no UEFI firmware for {arch} here: drop --uefi"
    )]
    NoFirmwareFor { arch: &'static str },
    #[error(
        "{OVMF_DIR_ENV} is set but empty: unset it to use Debian's ovmf package, or point it at a directory holding code.fd and vars.fd"
    )]
    EmptyOverride,
    #[error(
        "{OVMF_DIR_ENV}={dir} has no {missing}: it must hold OVMF's code.fd and vars.fd (copies of {DEBIAN_OVMF_DIR}/OVMF_CODE_4M.fd and OVMF_VARS_4M.fd from `apt-get install ovmf`), or unset it to use the package"
    )]
    MissingInOverride { dir: String, missing: String },
    #[error(
        "no OVMF firmware for --uefi: looked for {looked}; run `apt-get install ovmf`, or set {OVMF_DIR_ENV} to a directory holding code.fd and vars.fd"
    )]
    NotInstalled { looked: String },
    #[error("cannot prepare the UEFI boot files ({what}): {cause}")]
    Io { what: String, cause: std::io::Error },
}

/// OVMF's two flash images.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ovmf {
    /// The firmware code, mapped read-only.
    pub code: PathBuf,
    /// The variable store's template, copied per run (the guest writes its copy).
    pub vars_template: PathBuf,
}

/// The firmware for a UEFI boot of `arch`: `override_dir` (the value of
/// [`OVMF_DIR_ENV`]) when set, else Debian's package.
pub fn find_ovmf(arch: Arch, override_dir: Option<&OsStr>) -> Result<Ovmf, UefiError> {
    find_ovmf_in(arch, override_dir, Path::new(DEBIAN_OVMF_DIR))
}

fn find_ovmf_in(arch: Arch, override_dir: Option<&OsStr>, system_dir: &Path) -> Result<Ovmf, UefiError> {
    if arch != Arch::X86_64 {
        return Err(UefiError::NoFirmwareFor { arch: arch.name() });
    }
    if let Some(dir) = override_dir {
        if dir.is_empty() {
            return Err(UefiError::EmptyOverride);
        }
        let dir = Path::new(dir);
        let (code, vars) = (dir.join("code.fd"), dir.join("vars.fd"));
        let missing: Vec<&str> = [(&code, "code.fd"), (&vars, "vars.fd")]
            .into_iter()
            .filter(|(path, _)| !path.is_file())
            .map(|(_, name)| name)
            .collect();
        if !missing.is_empty() {
            return Err(UefiError::MissingInOverride {
                dir: dir.display().to_string(),
                missing: missing.join(" and "),
            });
        }
        return Ok(Ovmf {
            code,
            vars_template: vars,
        });
    }
    DEBIAN_PAIRS
        .iter()
        .map(|(code, vars)| (system_dir.join(code), system_dir.join(vars)))
        .find(|(code, vars)| code.is_file() && vars.is_file())
        .map(|(code, vars)| Ovmf {
            code,
            vars_template: vars,
        })
        .ok_or_else(|| UefiError::NotInstalled {
            looked: DEBIAN_PAIRS
                .iter()
                .map(|(code, vars)| format!("{0}/{code} + {0}/{vars}", system_dir.display()))
                .collect::<Vec<_>>()
                .join(" or "),
        })
}

/// The files of one UEFI boot, as QEMU gets them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UefiBoot {
    /// OVMF's code (pflash unit 0, read-only).
    pub code: PathBuf,
    /// This run's variable store (pflash unit 1).
    pub vars: PathBuf,
    /// The directory QEMU serves as the EFI system partition.
    pub esp: PathBuf,
}

impl UefiBoot {
    /// Lay out the boot in `dir` (the run's qperf directory), as the reference does:
    /// `kernel` as `starryos.esp/EFI/BOOT/BOOTX64.EFI` (the partition holds nothing else: a
    /// previous run's is replaced) and a fresh, writable copy of the variable store as
    /// `starryos.vars.fd` (so no run sees another's boot entries).
    pub fn prepare(ovmf: &Ovmf, kernel: &Path, dir: &Path) -> Result<UefiBoot, UefiError> {
        let io = |what: String| move |cause| UefiError::Io { what, cause };
        let esp = dir.join("starryos.esp");
        if esp.exists() {
            std::fs::remove_dir_all(&esp).map_err(io(format!("removing the previous {}", esp.display())))?;
        }
        let boot_file = esp.join(ESP_BOOT_FILE);
        if let Some(parent) = boot_file.parent() {
            std::fs::create_dir_all(parent).map_err(io(format!("creating {}", parent.display())))?;
        }
        std::fs::copy(kernel, &boot_file).map_err(io(format!(
            "copying {} to {}",
            kernel.display(),
            boot_file.display()
        )))?;
        let vars = dir.join("starryos.vars.fd");
        let _ = std::fs::remove_file(&vars);
        std::fs::copy(&ovmf.vars_template, &vars).map_err(io(format!(
            "copying {} to {}",
            ovmf.vars_template.display(),
            vars.display()
        )))?;
        // A read-only template (a packaged or store copy) gives a read-only copy: the guest
        // must write it, so its owner may.
        let mut permissions = std::fs::metadata(&vars)
            .map_err(io(format!("reading {}", vars.display())))?
            .permissions();
        permissions.set_mode(permissions.mode() | 0o200);
        std::fs::set_permissions(&vars, permissions)
            .map_err(io(format!("making {} writable", vars.display())))?;
        Ok(UefiBoot {
            code: ovmf.code.clone(),
            vars,
            esp,
        })
    }

    /// The firmware's two flashes and the system partition (in place of `-kernel`).
    pub fn drive_args(&self) -> Vec<String> {
        [
            format!(
                "if=pflash,format=raw,unit=0,readonly=on,file={}",
                option_value(&self.code)
            ),
            format!("if=pflash,format=raw,unit=1,file={}", option_value(&self.vars)),
            format!("format=raw,file=fat:rw:{}", option_value(&self.esp)),
        ]
        .into_iter()
        .flat_map(|drive| ["-drive".to_string(), drive])
        .collect()
    }
}

/// A path as the value of a QEMU option: a comma would end it, so it is doubled.
fn option_value(path: &Path) -> String {
    path.display().to_string().replace(',', ",,")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(path: &Path) {
        std::fs::write(path, b"fd").unwrap();
    }

    #[test]
    fn the_override_needs_code_and_vars_and_is_never_mixed_with_the_package() {
        let system = tempfile::tempdir().unwrap();
        for (code, vars) in DEBIAN_PAIRS {
            touch(&system.path().join(code));
            touch(&system.path().join(vars));
        }
        let over = tempfile::tempdir().unwrap();
        let find = |dir: &OsStr| find_ovmf_in(Arch::X86_64, Some(dir), system.path());
        let err = find(over.path().as_os_str()).unwrap_err().to_string();
        assert!(err.contains("has no code.fd and vars.fd"), "{err}");
        assert!(err.contains("apt-get install ovmf"), "{err}");
        touch(&over.path().join("code.fd"));
        let err = find(over.path().as_os_str()).unwrap_err().to_string();
        assert!(err.contains("has no vars.fd:"), "{err}");
        touch(&over.path().join("vars.fd"));
        assert_eq!(
            find(over.path().as_os_str()).unwrap(),
            Ovmf {
                code: over.path().join("code.fd"),
                vars_template: over.path().join("vars.fd"),
            }
        );
        let err = find(OsStr::new("")).unwrap_err().to_string();
        assert!(err.starts_with("TGOS_OVMF_DIR is set but empty"), "{err}");
    }

    #[test]
    fn debian_pairs_are_taken_whole_4m_first() {
        let system = tempfile::tempdir().unwrap();
        let find = || find_ovmf_in(Arch::X86_64, None, system.path());
        let err = find().unwrap_err().to_string();
        assert!(
            err.contains("OVMF_CODE_4M.fd + ") && err.contains("OVMF_VARS.fd; run `apt-get install ovmf`"),
            "{err}"
        );
        // 4M code without its vars is no pair; the 2M pair is.
        touch(&system.path().join("OVMF_CODE_4M.fd"));
        touch(&system.path().join("OVMF_CODE.fd"));
        touch(&system.path().join("OVMF_VARS.fd"));
        assert_eq!(find().unwrap().code, system.path().join("OVMF_CODE.fd"));
        touch(&system.path().join("OVMF_VARS_4M.fd"));
        let ovmf = find().unwrap();
        assert_eq!(
            (ovmf.code, ovmf.vars_template),
            (
                system.path().join("OVMF_CODE_4M.fd"),
                system.path().join("OVMF_VARS_4M.fd")
            )
        );
    }

    #[test]
    fn only_x86_64_has_firmware() {
        for arch in [Arch::Riscv64, Arch::Loongarch64] {
            let err = find_ovmf(arch, None).unwrap_err().to_string();
            assert!(
                err.contains(&format!("no UEFI firmware for {}", arch.name())),
                "{err}"
            );
        }
    }

    #[test]
    fn the_kernel_goes_onto_the_esp_and_the_vars_are_a_private_writable_copy() {
        let fw = tempfile::tempdir().unwrap();
        let ovmf = Ovmf {
            code: fw.path().join("code.fd"),
            vars_template: fw.path().join("vars.fd"),
        };
        touch(&ovmf.code);
        std::fs::write(&ovmf.vars_template, b"template").unwrap();
        let mut readonly = std::fs::metadata(&ovmf.vars_template).unwrap().permissions();
        readonly.set_readonly(true);
        std::fs::set_permissions(&ovmf.vars_template, readonly).unwrap();
        let run = tempfile::tempdir().unwrap();
        let kernel = run.path().join("kernel.efi");
        std::fs::write(&kernel, b"MZ kernel").unwrap();
        let dir = run.path().join("q,perf");
        std::fs::create_dir(&dir).unwrap();
        // A previous run's partition is replaced whole.
        std::fs::create_dir_all(dir.join("starryos.esp/old")).unwrap();
        let boot = UefiBoot::prepare(&ovmf, &kernel, &dir).unwrap();
        assert_eq!(boot.esp, dir.join("starryos.esp"));
        assert_eq!(std::fs::read(boot.esp.join(ESP_BOOT_FILE)).unwrap(), b"MZ kernel");
        assert!(!boot.esp.join("old").exists());
        assert_eq!(boot.vars, dir.join("starryos.vars.fd"));
        assert_eq!(std::fs::read(&boot.vars).unwrap(), b"template");
        assert!(!std::fs::metadata(&boot.vars).unwrap().permissions().readonly());
        let d = dir.display().to_string().replace(',', ",,");
        assert!(
            d.ends_with("q,,perf"),
            "a comma in a drive's file is doubled: {d}"
        );
        let c = ovmf.code.display();
        assert_eq!(
            boot.drive_args().join(" "),
            format!(
                "-drive if=pflash,format=raw,unit=0,readonly=on,file={c} \
                 -drive if=pflash,format=raw,unit=1,file={d}/starryos.vars.fd \
                 -drive format=raw,file=fat:rw:{d}/starryos.esp"
            )
        );
    }
}
