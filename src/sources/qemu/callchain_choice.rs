//! Which call stacks a QEMU session collects: what `--callchain` asked for, or, without it,
//! what the kernel supports ([`KernelUnwindInfo`]): its frame pointers when it keeps them
//! (the cheapest walk), its call-frame information when it has `.eh_frame`/`.debug_frame`
//! but no frame pointers, else the sampled address alone, with a warning. The choice and
//! its reason are said on stderr, in report.json and on the status line.

use std::path::Path;

use anyhow::bail;

use super::kernel_unwind::KernelUnwindInfo;
use super::plugin_args::CallchainMode;

/// Who decided the callchain.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ChosenBy {
    /// `--callchain` on the command line.
    Flag,
    /// The default: picked from what the kernel supports.
    Kernel,
}

/// The callchain a session collects, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallchainChoice {
    pub mode: CallchainMode,
    pub chosen_by: ChosenBy,
    /// "kernel.elf keeps no frame pointers (0 of 15 …) and has .debug_frame".
    pub reason: String,
    /// Said when the choice leaves the profile without stacks, or asks for a walk the
    /// kernel cannot give.
    pub warning: Option<String>,
}

impl CallchainChoice {
    pub fn method(&self) -> &'static str {
        match self.mode {
            CallchainMode::Leaf => "leaf",
            CallchainMode::Fp => "fp",
            CallchainMode::Dwarf => "dwarf",
        }
    }

    /// `--callchain` or `default`.
    pub fn chosen_by_label(&self) -> &'static str {
        match self.chosen_by {
            ChosenBy::Flag => "--callchain",
            ChosenBy::Kernel => "default",
        }
    }

    /// The stderr line: "callchain dwarf (default): kernel.elf keeps no frame pointers …".
    pub fn describe(&self) -> String {
        format!(
            "callchain {} ({}): {}",
            self.method(),
            self.chosen_by_label(),
            self.reason
        )
    }
}

/// The callchain for `requested` (`None`: the default) on the kernel `elf` described by
/// `info`. `Err` when `--callchain dwarf` is asked of a kernel without CFI.
pub fn choose(
    requested: Option<CallchainMode>,
    elf: &Path,
    info: &KernelUnwindInfo,
) -> anyhow::Result<CallchainChoice> {
    let name = elf
        .file_name()
        .map_or_else(|| elf.display().to_string(), |n| n.to_string_lossy().into_owned());
    let frame_pointers = match &info.census {
        Some(census) if census.keeps_frame_pointers() => {
            format!("keeps frame pointers ({})", census.describe())
        }
        Some(census) => format!("keeps no frame pointers ({})", census.describe()),
        None => "has code this build cannot read for frame pointers".to_string(),
    };
    let cfi = match info.cfi_section {
        Some(section) => format!("has {section}"),
        None => "has no .eh_frame or .debug_frame".to_string(),
    };
    let keeps_fp = info.keeps_frame_pointers();
    let choice = |mode, chosen_by, reason: String, warning: Option<String>| CallchainChoice {
        mode,
        chosen_by,
        reason,
        warning,
    };
    Ok(match requested {
        Some(CallchainMode::Dwarf) if info.cfi_section.is_none() => bail!(
            "--callchain dwarf: {} has no .eh_frame or .debug_frame: build the kernel with debug info (-g), or use --callchain fp",
            elf.display()
        ),
        Some(mode) => {
            let warning = (mode == CallchainMode::Fp && !keeps_fp).then(|| {
                format!(
                    "--callchain fp: {name} {frame_pointers}; its stacks will be cut short{}",
                    match info.cfi_section {
                        Some(_) => " (the default, --callchain dwarf, unwinds it with its CFI)",
                        None => "",
                    }
                )
            });
            choice(
                mode,
                ChosenBy::Flag,
                format!("{name} {frame_pointers} and {cfi}"),
                warning,
            )
        }
        None if keeps_fp => choice(
            CallchainMode::Fp,
            ChosenBy::Kernel,
            format!("{name} {frame_pointers}"),
            None,
        ),
        None if info.cfi_section.is_some() => choice(
            CallchainMode::Dwarf,
            ChosenBy::Kernel,
            format!("{name} {frame_pointers} and {cfi}"),
            None,
        ),
        None => choice(
            CallchainMode::Leaf,
            ChosenBy::Kernel,
            format!("{name} {frame_pointers} and {cfi}"),
            Some(format!(
                "no call stacks: {name} keeps no frame pointers and has no call-frame information; build it with frame pointers (-C force-frame-pointers=yes, -fno-omit-frame-pointer) or debug info (-g)"
            )),
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::qemu::kernel_unwind::FramePointerCensus;

    fn info(setting_fp: usize, cfi: Option<&'static str>) -> KernelUnwindInfo {
        KernelUnwindInfo {
            cfi_section: cfi,
            census: Some(FramePointerCensus {
                functions_with_frame: 20,
                functions_setting_fp: setting_fp,
            }),
        }
    }

    fn elf() -> &'static Path {
        Path::new("/k/kernel.elf")
    }

    #[test]
    fn the_default_is_what_the_kernel_supports() {
        let fp = choose(None, elf(), &info(20, Some(".debug_frame"))).unwrap();
        assert_eq!(
            (fp.mode, fp.chosen_by, fp.warning.clone()),
            (CallchainMode::Fp, ChosenBy::Kernel, None)
        );
        assert_eq!(
            fp.describe(),
            "callchain fp (default): kernel.elf keeps frame pointers (20 of 20 functions with a stack frame set the frame pointer)"
        );
        let dwarf = choose(None, elf(), &info(1, Some(".debug_frame"))).unwrap();
        assert_eq!((dwarf.mode, dwarf.warning.clone()), (CallchainMode::Dwarf, None));
        assert!(dwarf.reason.ends_with("and has .debug_frame"), "{}", dwarf.reason);
        let leaf = choose(None, elf(), &info(0, None)).unwrap();
        assert_eq!(leaf.mode, CallchainMode::Leaf);
        assert!(
            leaf.warning
                .as_deref()
                .is_some_and(|w| w.starts_with("no call stacks"))
        );
        // Frame pointers without CFI: fp.
        assert_eq!(
            choose(None, elf(), &info(20, None)).unwrap().mode,
            CallchainMode::Fp
        );
    }

    #[test]
    fn the_flag_overrides_and_says_what_it_costs() {
        let forced = choose(Some(CallchainMode::Fp), elf(), &info(0, Some(".eh_frame"))).unwrap();
        assert_eq!(
            (forced.mode, forced.chosen_by),
            (CallchainMode::Fp, ChosenBy::Flag)
        );
        assert!(forced.warning.as_deref().is_some_and(|w| w.contains("cut short")));
        let leaf = choose(Some(CallchainMode::Leaf), elf(), &info(20, None)).unwrap();
        assert_eq!((leaf.mode, leaf.warning), (CallchainMode::Leaf, None));
        let err = choose(Some(CallchainMode::Dwarf), elf(), &info(0, None)).unwrap_err();
        assert!(
            err.to_string().contains("has no .eh_frame or .debug_frame"),
            "{err}"
        );
    }
}
