//! The running kernel's symbols from `/proc/kallsyms` (through the shared kallsyms
//! parser), with module symbols split back into name and module: `ext4_map_blocks [ext4]`
//! becomes the name `ext4_map_blocks` in module `[ext4]`, core kernel symbols are in
//! `[kernel.kallsyms]`, as perf prints them.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::symbols::kallsyms;
use crate::symbols::symtab::SymbolTable;

/// The module perf names the core kernel.
pub const KERNEL_MODULE: &str = "[kernel.kallsyms]";

/// Why the kernel's symbols are not available.
#[derive(Debug, thiserror::Error)]
pub enum KernelSymbolsError {
    #[error(transparent)]
    Read(#[from] kallsyms::KallsymsError),
    #[error(
        "{path} lists every kernel address as 0 (kptr_restrict hides them): run as root or `sysctl kernel.kptr_restrict=0`"
    )]
    AddressesHidden { path: PathBuf },
    #[error("{path} has no kernel text symbols: is it a kallsyms file?")]
    Empty { path: PathBuf },
}

/// One kernel lookup: name, module, offset from the symbol start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelHit<'a> {
    pub name: &'a str,
    pub module: &'a Arc<str>,
    pub offset: u64,
}

/// kallsyms as a lookup table.
pub struct KernelSymbols {
    table: SymbolTable,
    core: Arc<str>,
    modules: FxHashMap<Box<str>, Arc<str>>,
}

impl KernelSymbols {
    /// Read `path` (`/proc/kallsyms`) within the kallsyms caps.
    pub fn load(path: &Path) -> Result<Self, KernelSymbolsError> {
        Self::of(kallsyms::read(path)?, path)
    }

    /// Parse kallsyms text (`path` is for the error message).
    pub fn parse(text: &str, path: &Path) -> Result<Self, KernelSymbolsError> {
        let mut parser = kallsyms::KallsymsParser::default();
        for line in text.lines() {
            parser.add_line(line);
        }
        Self::of(parser.finish(), path)
    }

    fn of(parsed: kallsyms::Kallsyms, path: &Path) -> Result<Self, KernelSymbolsError> {
        let kallsyms::Kallsyms {
            table,
            stats,
            modules: names,
            ..
        } = parsed;
        if table.is_empty() {
            return Err(if stats.zero_addresses > 0 {
                KernelSymbolsError::AddressesHidden {
                    path: path.to_path_buf(),
                }
            } else {
                KernelSymbolsError::Empty {
                    path: path.to_path_buf(),
                }
            });
        }
        let modules: FxHashMap<Box<str>, Arc<str>> = names
            .iter()
            .map(|m| (Box::from(m.as_str()), Arc::from(m.as_str())))
            .collect();
        Ok(Self {
            table,
            core: KERNEL_MODULE.into(),
            modules,
        })
    }

    pub fn lookup(&self, address: u64) -> Option<KernelHit<'_>> {
        let hit = self.table.lookup(address)?;
        // The parser stores module symbols as `name [module]`.
        let (name, module) = match hit.name.rsplit_once(' ') {
            Some((name, module)) if module.starts_with('[') => match self.modules.get(module) {
                Some(m) => (name, m),
                None => (hit.name, &self.core),
            },
            _ => (hit.name, &self.core),
        };
        Some(KernelHit {
            name,
            module,
            offset: hit.offset,
        })
    }

    /// `name+0xoff` for an address, as `%pS` prints it (`None` outside every symbol).
    pub fn name_with_offset(&self, address: u64) -> Option<String> {
        self.lookup(address)
            .map(|hit| format!("{}+{:#x}", hit.name, hit.offset))
    }

    pub fn core_module(&self) -> &Arc<str> {
        &self.core
    }

    pub fn symbol_count(&self) -> usize {
        self.table.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_symbols_keep_their_module() {
        let text = "\
ffffffff81000000 T _text
ffffffff81000100 T schedule
ffffffffc0a01000 t ext4_map_blocks\t[ext4]
ffffffffc0a02000 t nf_hook\t[nf_tables]
";
        let k = KernelSymbols::parse(text, Path::new("kallsyms")).unwrap();
        let hit = k.lookup(0xffffffff81000104).unwrap();
        assert_eq!(
            (hit.name, &**hit.module, hit.offset),
            ("schedule", KERNEL_MODULE, 4)
        );
        let hit = k.lookup(0xffffffffc0a01010).unwrap();
        assert_eq!(
            (hit.name, &**hit.module, hit.offset),
            ("ext4_map_blocks", "[ext4]", 0x10)
        );
        assert_eq!(&**k.lookup(0xffffffffc0a02000).unwrap().module, "[nf_tables]");
    }

    #[test]
    fn hidden_addresses_say_what_to_do() {
        let err = KernelSymbols::parse("0000000000000000 T _text\n", Path::new("/proc/kallsyms"))
            .err()
            .unwrap();
        let message = err.to_string();
        assert!(message.contains("kernel.kptr_restrict=0"), "{message}");
        assert!(message.contains("root"), "{message}");
    }
}
