//! Linux kallsyms files (`/proc/kallsyms`, or a dump taken inside a guest):
//! `ffffffff81000000 T _text` or `ffffffffc0a01000 t foo_init [foo]` per line.

use super::symtab::{Symbol, SymbolTable};

/// Parse kallsyms text. Lines that do not parse are skipped and counted; symbols of
/// modules get a ` [module]` suffix, as perf shows them.
pub fn parse(text: &str) -> (SymbolTable, KallsymsStats) {
    let mut stats = KallsymsStats::default();
    let mut symbols = Vec::new();
    for line in text.lines() {
        let mut parts = line.split_whitespace();
        let (Some(addr), Some(kind), Some(name)) = (parts.next(), parts.next(), parts.next()) else {
            if !line.trim().is_empty() {
                stats.skipped_lines += 1;
            }
            continue;
        };
        let Ok(address) = u64::from_str_radix(addr, 16) else {
            stats.skipped_lines += 1;
            continue;
        };
        let Some(kind) = kind.chars().next().filter(|_| kind.len() == 1) else {
            stats.skipped_lines += 1;
            continue;
        };
        // Unprivileged readers see every address as 0: nothing can be resolved.
        if address == 0 {
            stats.zero_addresses += 1;
            continue;
        }
        let name = match parts.next() {
            Some(module) => format!("{name} {module}"),
            None => name.to_string(),
        };
        let is_text = matches!(kind, 't' | 'T' | 'w' | 'W');
        stats.text_symbols += usize::from(is_text);
        symbols.push(Symbol {
            address,
            size: 0,
            name,
            is_text,
            is_global: kind.is_ascii_uppercase(),
        });
    }
    (SymbolTable::new(symbols, |_| None), stats)
}

/// What parsing found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KallsymsStats {
    pub text_symbols: usize,
    pub skipped_lines: usize,
    /// Symbols listed at address 0 (kptr_restrict hides addresses from this reader).
    pub zero_addresses: usize,
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
    fn hidden_addresses_are_counted() {
        let (t, stats) = parse("0000000000000000 T _text\n0000000000000000 t foo\n");
        assert!(t.is_empty());
        assert_eq!(stats.zero_addresses, 2);
    }
}
