//! Linux kallsyms files (`/proc/kallsyms`, or a dump taken inside a guest):
//! `ffffffff81000000 T _text` or `ffffffffc0a01000 t foo_init [foo]` per line.
//!
//! A file is read line by line through the bounded reader ([`crate::input`]: lines of at
//! most 4 KiB, at most 64 MiB), its text never held: only the symbols are kept. A file
//! whose first line is not a kallsyms line is refused at that line, so `/dev/zero` or a
//! wrong file ends at once instead of being read to the cap.

use std::path::{Path, PathBuf};

use crate::input::{BoundedLines, InputError, InputFile, InputKind};

use super::AddressRange;
use super::symtab::{Symbol, SymbolTable};

/// Parse kallsyms text. Lines that do not parse are skipped and counted; symbols of
/// modules get a ` [module]` suffix, as perf shows them.
pub fn parse(text: &str) -> (SymbolTable, KallsymsStats) {
    let mut parser = KallsymsParser::default();
    for line in text.lines() {
        parser.add_line(line);
    }
    let kallsyms = parser.finish();
    (kallsyms.table, kallsyms.stats)
}

/// What parsing found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KallsymsStats {
    pub text_symbols: usize,
    pub skipped_lines: usize,
    /// Symbols listed at address 0 (kptr_restrict hides addresses from this reader).
    pub zero_addresses: usize,
}

/// A parsed kallsyms file.
pub struct Kallsyms {
    pub table: SymbolTable,
    pub stats: KallsymsStats,
    /// The kernel text, `_stext` (or `_text`) … `_etext`, when both are listed.
    pub text: Option<AddressRange>,
    /// The modules named, each once, in the order they first appear (`[ext4]`).
    pub modules: Vec<String>,
}

/// Why a kallsyms file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum KallsymsError {
    #[error(transparent)]
    Input(#[from] InputError),
    #[error(
        "line {line_number} of {} is not a kallsyms line (`ffffffff81000000 T _text`): is it \
         a kallsyms file?",
        path.display()
    )]
    NotKallsyms { path: PathBuf, line_number: u64 },
}

/// Read and parse a kallsyms file within its caps.
pub fn read(path: &Path) -> Result<Kallsyms, KallsymsError> {
    let mut lines = BoundedLines::new(InputFile::open(path)?, path, InputKind::Kallsyms);
    let mut parser = KallsymsParser::default();
    let mut decided = false;
    while let Some(bytes) = lines.next_line()? {
        let line = String::from_utf8_lossy(bytes);
        let parsed = parser.add_line(&line);
        // The first line that is not blank decides whether this is a kallsyms file at all.
        if !decided && !line.trim().is_empty() {
            if !parsed {
                return Err(KallsymsError::NotKallsyms {
                    path: path.to_path_buf(),
                    line_number: lines.line_number(),
                });
            }
            decided = true;
        }
    }
    Ok(parser.finish())
}

/// kallsyms text fed a line at a time.
#[derive(Default)]
pub struct KallsymsParser {
    symbols: Vec<Symbol>,
    stats: KallsymsStats,
    stext: Option<u64>,
    text_start: Option<u64>,
    etext: Option<u64>,
    modules: Vec<String>,
}

impl KallsymsParser {
    /// Take one line; `false` when it is not a kallsyms line (skipped and counted; a
    /// blank line is neither).
    pub fn add_line(&mut self, line: &str) -> bool {
        let mut parts = line.split_whitespace();
        let (Some(addr), Some(kind), Some(name)) = (parts.next(), parts.next(), parts.next()) else {
            if !line.trim().is_empty() {
                self.stats.skipped_lines += 1;
            }
            return false;
        };
        let Ok(address) = u64::from_str_radix(addr, 16) else {
            self.stats.skipped_lines += 1;
            return false;
        };
        let Some(kind) = kind.chars().next().filter(|_| kind.len() == 1) else {
            self.stats.skipped_lines += 1;
            return false;
        };
        // Unprivileged readers see every address as 0: nothing can be resolved.
        if address == 0 {
            self.stats.zero_addresses += 1;
            return true;
        }
        match name {
            "_stext" => self.stext = self.stext.or(Some(address)),
            "_text" => self.text_start = self.text_start.or(Some(address)),
            "_etext" => self.etext = self.etext.or(Some(address)),
            _ => {}
        }
        let name = match parts.next() {
            Some(module) => {
                if !self.modules.iter().any(|m| m == module) {
                    self.modules.push(module.to_string());
                }
                format!("{name} {module}")
            }
            None => name.to_string(),
        };
        let is_text = matches!(kind, 't' | 'T' | 'w' | 'W');
        self.stats.text_symbols += usize::from(is_text);
        self.symbols.push(Symbol {
            address,
            size: 0,
            name,
            is_text,
            is_global: kind.is_ascii_uppercase(),
        });
        true
    }

    pub fn finish(self) -> Kallsyms {
        let text = match (self.stext.or(self.text_start), self.etext) {
            (Some(start), Some(end)) if end > start => Some(AddressRange { start, end }),
            _ => None,
        };
        Kallsyms {
            table: SymbolTable::new(self.symbols, |_| None),
            stats: self.stats,
            text,
            modules: self.modules,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_kernel_and_module_symbols() {
        let text = "\
ffffffff81000000 T _text
ffffffff81000000 T startup_64
ffffffff81000100 t secondary_startup_64
ffffffff81001000 D some_data
garbage
ffffffffc0a01000 t foo_init\t[foo]
ffffffffc0a01080 T foo_exit\t[foo]
ffffffffc0a02000 d foo_data\t[foo]
";
        let (t, stats) = parse(text);
        assert_eq!(stats.skipped_lines, 1);
        assert_eq!(stats.text_symbols, 5);
        let hit = t.lookup(0xffffffff81000010).unwrap();
        assert_eq!((hit.name, hit.offset), ("_text", 0x10));
        assert_eq!(t.lookup(0xffffffff81000200).unwrap().name, "secondary_startup_64");
        assert_eq!(t.lookup(0xffffffff81001000), None, "data is not code");
        assert_eq!(t.lookup(0xffffffffc0a01004).unwrap().name, "foo_init [foo]");
        assert_eq!(t.lookup(0xffffffffc0a01fff).unwrap().name, "foo_exit [foo]");
    }

    #[test]
    fn a_file_is_read_within_its_caps_and_refused_at_a_first_line_that_is_not_kallsyms() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kallsyms");
        std::fs::write(
            &path,
            "\nffffffff81000000 T _stext\nffffffff81000100 t f\t[m]\nffffffff81001000 T _etext\n",
        )
        .unwrap();
        let k = read(&path).unwrap();
        assert_eq!(
            k.text,
            Some(AddressRange {
                start: 0xffffffff81000000,
                end: 0xffffffff81001000
            })
        );
        assert_eq!(k.modules, ["[m]"]);
        assert_eq!(k.table.lookup(0xffffffff81000104).unwrap().name, "f [m]");
        std::fs::write(&path, "\nnot kallsyms\nffffffff81000000 T _stext\n").unwrap();
        let e = read(&path).err().unwrap().to_string();
        assert!(e.starts_with("line 2 of "), "{e}");
        assert!(e.ends_with("is not a kallsyms line (`ffffffff81000000 T _text`): is it a kallsyms file?"));
        let e = read(Path::new("/dev/zero")).err().unwrap().to_string();
        assert!(e.starts_with("line 1 of /dev/zero is longer than 4 KiB"), "{e}");
    }

    #[test]
    fn hidden_addresses_are_counted() {
        let (t, stats) = parse("0000000000000000 T _text\n0000000000000000 t foo\n");
        assert!(t.is_empty());
        assert_eq!(stats.zero_addresses, 2);
    }
}
