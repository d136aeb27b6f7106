//! What a guest kernel's ELF offers a stack unwinder, read before QEMU starts: its
//! call-frame information section (`.eh_frame` / `.debug_frame`) and whether its code keeps
//! frame pointers. `--callchain`'s default is chosen from it
//! ([`super::callchain_choice`]).
//!
//! # Does the kernel keep frame pointers?
//!
//! The code says it: a census of the functions' prologues. Each function symbol's first
//! instructions are decoded with the plugin's frame-instruction decoder
//! (`perfscope-frame-ops`): a function *has a frame* when its prologue allocates stack
//! (riscv64 `addi sp,sp,-N`, loongarch64 `addi.d $sp,$sp,-N`; x86_64 a `push %rbp` entry or
//! `sub $N,%rsp`), and *sets the frame pointer* when it also points fp at it (`addi
//! s0,sp,N`, `addi.d $fp,$sp,N`, `mov %rsp,%rbp`). Built with frame pointers, every function
//! with a frame sets it (gcc's riscv64 leaves too); without, none does except the rare one
//! with a variable-sized frame. The kernel keeps frame pointers when at least half of its
//! functions with a frame set one. The symbol table is read, not DWARF: a stripped kernel
//! is censused the same way.
//!
//! The file is mapped, not read: a StarryOS debug build is ~300 MB, of which this reads the
//! headers, the symbol table and the first bytes of each function.

use std::path::Path;

use anyhow::Context;
use object::{Architecture, Object, ObjectSection, ObjectSymbol, SectionKind, SymbolKind};
use perfscope_frame_ops::{FrameOp, Isa, frame_op, instruction_length};

/// How far into a function its prologue is looked for (bytes / instructions): compilers
/// save a few registers before they set fp, gcc's shrink-wrapping runs a test or two first.
const PROLOGUE_BYTES: usize = 64;
const PROLOGUE_INSTRUCTIONS: usize = 24;

/// The functions of a kernel with a stack frame, and those of them that set the frame
/// pointer.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct FramePointerCensus {
    pub functions_with_frame: usize,
    pub functions_setting_fp: usize,
}

impl FramePointerCensus {
    /// At least half of the functions with a frame set the frame pointer.
    pub fn keeps_frame_pointers(&self) -> bool {
        self.functions_with_frame > 0 && self.functions_setting_fp * 2 >= self.functions_with_frame
    }

    /// "12 of 40 functions with a stack frame set the frame pointer".
    pub fn describe(&self) -> String {
        format!(
            "{} of {} functions with a stack frame set the frame pointer",
            self.functions_setting_fp, self.functions_with_frame
        )
    }
}

/// What the kernel ELF offers an unwinder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelUnwindInfo {
    /// `.eh_frame` or `.debug_frame`, the section the plugin's dwarf unwinder would read;
    /// `None` without a non-empty one.
    pub cfi_section: Option<&'static str>,
    /// `None` for an architecture the decoder does not know.
    pub census: Option<FramePointerCensus>,
}

impl KernelUnwindInfo {
    /// Inspect the ELF at `path`.
    pub fn read(path: &Path) -> anyhow::Result<KernelUnwindInfo> {
        let file = std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
        // SAFETY: a read-only map dropped at the end of this function; a file changed
        // underneath gives a wrong census, not unsoundness in the safe code reading it.
        let map =
            unsafe { memmap2::Mmap::map(&file) }.with_context(|| format!("cannot map {}", path.display()))?;
        let elf =
            object::File::parse(&*map).with_context(|| format!("{} is not an ELF file", path.display()))?;
        Ok(KernelUnwindInfo {
            cfi_section: cfi_section(&elf),
            census: isa_of(elf.architecture()).map(|isa| census(&elf, isa)),
        })
    }

    /// Whether the kernel keeps frame pointers (false when the census could not be taken).
    pub fn keeps_frame_pointers(&self) -> bool {
        self.census.is_some_and(|c| c.keeps_frame_pointers())
    }
}

fn cfi_section(elf: &object::File<'_>) -> Option<&'static str> {
    [".eh_frame", ".debug_frame"]
        .into_iter()
        .find(|name| elf.section_by_name(name).is_some_and(|s| s.size() > 0))
}

fn isa_of(arch: Architecture) -> Option<Isa> {
    match arch {
        Architecture::Riscv64 => Some(Isa::Riscv64),
        Architecture::LoongArch64 => Some(Isa::Loongarch64),
        Architecture::X86_64 => Some(Isa::X86_64),
        _ => None,
    }
}

/// The census over every sized function symbol inside an executable section.
fn census(elf: &object::File<'_>, isa: Isa) -> FramePointerCensus {
    let code: Vec<(u64, &[u8])> = elf
        .sections()
        .filter(|s| s.kind() == SectionKind::Text && s.address() > 0)
        .filter_map(|s| Some((s.address(), s.data().ok()?)))
        .collect();
    let mut census = FramePointerCensus::default();
    for symbol in elf.symbols() {
        if symbol.kind() != SymbolKind::Text || symbol.size() == 0 {
            continue;
        }
        let Some(bytes) = function_start(&code, symbol.address(), symbol.size()) else {
            continue;
        };
        let (frame, sets_fp) = prologue(isa, bytes);
        census.functions_with_frame += usize::from(frame);
        census.functions_setting_fp += usize::from(frame && sets_fp);
    }
    census
}

/// The first bytes of the function at `address` (at most its size and [`PROLOGUE_BYTES`]).
fn function_start<'a>(code: &[(u64, &'a [u8])], address: u64, size: u64) -> Option<&'a [u8]> {
    let (start, data) = code
        .iter()
        .find(|(start, data)| (*start..*start + data.len() as u64).contains(&address))?;
    let offset = usize::try_from(address - start).ok()?;
    let len = usize::try_from(size).ok()?.min(PROLOGUE_BYTES);
    data.get(offset..offset.checked_add(len)?.min(data.len()))
}

/// `(has a stack frame, sets the frame pointer)` from a function's first bytes.
fn prologue(isa: Isa, bytes: &[u8]) -> (bool, bool) {
    match isa {
        Isa::Riscv64 | Isa::Loongarch64 => {
            let (mut frame, mut sets_fp, mut at) = (false, false, 0);
            for _ in 0..PROLOGUE_INSTRUCTIONS {
                let Some(len) = instruction_length(isa, &bytes[at..]) else {
                    break;
                };
                match frame_op(isa, &bytes[at..at + len]) {
                    FrameOp::OpenFrame => frame = true,
                    FrameOp::SetFp if frame => sets_fp = true,
                    _ => {}
                }
                at += len;
            }
            (frame, sets_fp)
        }
        // No x86_64 instruction decoder here: the frame instructions are found as byte
        // patterns, which these encodings make unambiguous enough for a census.
        Isa::X86_64 => {
            let after_endbr = bytes.strip_prefix(&[0xf3, 0x0f, 0x1e, 0xfa]).unwrap_or(bytes);
            let pushes_rbp = after_endbr.first() == Some(&0x55);
            let sets_fp = bytes
                .windows(3)
                .any(|w| frame_op(Isa::X86_64, w) == FrameOp::SetFp);
            // sub $imm8,%rsp / sub $imm32,%rsp
            let allocates = bytes
                .windows(3)
                .any(|w| w == [0x48, 0x83, 0xec] || w == [0x48, 0x81, 0xec]);
            (pushes_rbp || allocates || sets_fp, sets_fp)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn le(words: &[u32]) -> Vec<u8> {
        words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    #[test]
    fn riscv64_prologues_with_and_without_frame_pointers() {
        // addi sp,sp,-32 ; sd ra,24(sp) ; sd s0,16(sp) ; addi s0,sp,32
        let with_fp = le(&[0xfe010113, 0x00113c23, 0x00813823, 0x02010413]);
        assert_eq!(prologue(Isa::Riscv64, &with_fp), (true, true));
        // addi sp,sp,-32 ; sd ra,24(sp) ; mv a5,a0
        let without = le(&[0xfe010113, 0x00113c23, 0x00050793]);
        assert_eq!(prologue(Isa::Riscv64, &without), (true, false));
        // A leaf with no stack: c.li a5,0 ; c.jr ra
        let leaf: Vec<u8> = [0x4781u16, 0x8082].iter().flat_map(|h| h.to_le_bytes()).collect();
        assert_eq!(prologue(Isa::Riscv64, &leaf), (false, false));
        // gcc's compressed leaf frame: c.addi sp,-16 ; c.sdsp s0,8(sp) ; c.addi4spn s0,sp,16
        let compressed: Vec<u8> = [0x1141u16, 0xe422, 0x0800]
            .iter()
            .flat_map(|h| h.to_le_bytes())
            .collect();
        assert_eq!(prologue(Isa::Riscv64, &compressed), (true, true));
        // Cut mid-instruction: what was decoded counts, nothing panics.
        assert_eq!(prologue(Isa::Riscv64, &with_fp[..14]), (true, false));
    }

    #[test]
    fn x86_64_prologues_by_pattern() {
        // endbr64 ; push %rbp ; mov %rsp,%rbp
        let with_fp = [0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48, 0x89, 0xe5, 0xc3];
        assert_eq!(prologue(Isa::X86_64, &with_fp), (true, true));
        // push %rbx ; sub $0x20,%rsp
        assert_eq!(
            prologue(Isa::X86_64, &[0x53, 0x48, 0x83, 0xec, 0x20]),
            (true, false)
        );
        // A frameless leaf: mov %rdi,%rax ; ret
        assert_eq!(prologue(Isa::X86_64, &[0x48, 0x89, 0xf8, 0xc3]), (false, false));
    }

    #[test]
    fn the_test_kernel_keeps_frame_pointers_and_has_cfi_until_it_is_renamed_away() {
        let elf = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/tinyk-riscv64.elf");
        let info = KernelUnwindInfo::read(&elf).unwrap();
        assert_eq!(info.cfi_section, Some(".debug_frame"), "a -g build");
        assert!(info.keeps_frame_pointers(), "{info:?}");
        let dir = tempfile::tempdir().unwrap();
        let bytes = std::fs::read(&elf).unwrap();
        // The same ELF with its CFI section renamed away.
        let needle = b".debug_frame";
        let at = bytes.windows(needle.len()).position(|w| w == needle).unwrap();
        let mut renamed = bytes.clone();
        renamed[at..at + needle.len()].copy_from_slice(b".debug_fxxxx");
        let stripped = dir.path().join("stripped.elf");
        std::fs::write(&stripped, renamed).unwrap();
        let info = KernelUnwindInfo::read(&stripped).unwrap();
        assert_eq!(info.cfi_section, None);
        assert!(info.keeps_frame_pointers(), "the code is the same");
    }

    #[test]
    fn half_the_framed_functions_is_the_threshold() {
        let census = |with_frame, setting_fp| FramePointerCensus {
            functions_with_frame: with_frame,
            functions_setting_fp: setting_fp,
        };
        assert!(census(40, 40).keeps_frame_pointers());
        assert!(census(40, 20).keeps_frame_pointers());
        assert!(!census(40, 19).keeps_frame_pointers());
        assert!(!census(0, 0).keeps_frame_pointers(), "nothing to tell by");
        assert_eq!(
            census(40, 2).describe(),
            "2 of 40 functions with a stack frame set the frame pointer"
        );
    }
}
