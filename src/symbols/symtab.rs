//! A bounded symbol table: address → the function that contains it, with an offset.
//!
//! The reference analyzer picks the nearest preceding symbol with no size or end check,
//! so addresses past the last function get its name with a huge offset, and zero-size
//! assembly labels steal from or lose to their neighbours. Here:
//!
//! - a sized symbol owns exactly `[address, address + size)`;
//! - a zero-size symbol (an assembly routine without `.size`) owns up to the next symbol
//!   of any kind, or to `limit` — unless it lies inside a sized function, where it is an
//!   interior label and owns nothing;
//! - an address owned by no symbol is not resolved.

/// One symbol as read from an ELF symbol table or kallsyms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbol {
    pub address: u64,
    /// 0 when unknown (assembly labels, kallsyms).
    pub size: u64,
    pub name: String,
    /// Code (a candidate for lookups); other symbols only bound zero-size ones.
    pub is_text: bool,
    /// Global binding is preferred over local when several names share an address.
    pub is_global: bool,
}

/// The result of a lookup.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SymbolHit<'a> {
    pub name: &'a str,
    pub start: u64,
    pub offset: u64,
}

#[derive(Clone, Debug)]
struct Entry {
    start: u64,
    end: u64,
    name: Box<str>,
}

/// Text symbols with their owned ranges, sorted by start.
#[derive(Clone, Debug, Default)]
pub struct SymbolTable {
    entries: Vec<Entry>,
}

/// How far a zero-size symbol with nothing after it may reach.
const DEFAULT_TAIL: u64 = 0x1000;

impl SymbolTable {
    /// Build from raw symbols. `limit_for(address)` gives the end of the section that holds
    /// an address (bounds the last zero-size symbol); `None` falls back to one page.
    pub fn new(mut symbols: Vec<Symbol>, limit_for: impl Fn(u64) -> Option<u64>) -> Self {
        symbols.retain(|s| !s.name.is_empty());
        // Address order; at one address: sized first, then global, then by name.
        symbols.sort_by(|a, b| {
            a.address
                .cmp(&b.address)
                .then((b.size > 0).cmp(&(a.size > 0)))
                .then(b.is_global.cmp(&a.is_global))
                .then(a.name.cmp(&b.name))
        });
        let boundaries: Vec<u64> = {
            let mut v: Vec<u64> = symbols.iter().map(|s| s.address).collect();
            v.dedup();
            v
        };
        let next_boundary = |addr: u64| -> Option<u64> {
            let i = boundaries.partition_point(|&b| b <= addr);
            boundaries.get(i).copied()
        };

        let mut entries: Vec<Entry> = Vec::new();
        let mut covered_until = 0u64; // end of the furthest-reaching sized text symbol so far
        let mut last_address = None;
        for s in symbols.into_iter().filter(|s| s.is_text) {
            // One name per address: the first after sorting wins.
            if last_address == Some(s.address) {
                continue;
            }
            last_address = Some(s.address);
            let end = if s.size > 0 {
                let end = s.address.saturating_add(s.size);
                covered_until = covered_until.max(end);
                end
            } else {
                if s.address < covered_until {
                    continue; // an interior label of a sized function
                }
                let section_end = limit_for(s.address);
                let tail = s.address.saturating_add(DEFAULT_TAIL);
                match (next_boundary(s.address), section_end) {
                    (Some(n), Some(e)) => n.min(e),
                    (Some(n), None) => n,
                    (None, Some(e)) => e,
                    (None, None) => tail,
                }
            };
            if end > s.address {
                entries.push(Entry {
                    start: s.address,
                    end,
                    name: s.name.into_boxed_str(),
                });
            }
        }
        Self { entries }
    }

    pub fn lookup(&self, address: u64) -> Option<SymbolHit<'_>> {
        let i = self.entries.partition_point(|e| e.start <= address);
        // Sized symbols may nest (a function and an alias with a smaller size), so look a
        // few entries back for the innermost one that contains the address.
        self.entries[..i]
            .iter()
            .rev()
            .take(8)
            .find(|e| address < e.end)
            .map(|e| SymbolHit {
                name: &e.name,
                start: e.start,
                offset: address - e.start,
            })
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sym(address: u64, size: u64, name: &str) -> Symbol {
        Symbol {
            address,
            size,
            name: name.into(),
            is_text: true,
            is_global: true,
        }
    }

    #[test]
    fn sized_symbols_own_exactly_their_range() {
        let t = SymbolTable::new(vec![sym(0x100, 0x10, "a"), sym(0x200, 0x20, "b")], |_| None);
        assert_eq!(t.lookup(0x100).unwrap().name, "a");
        assert_eq!(t.lookup(0x10f).unwrap().offset, 0xf);
        assert_eq!(t.lookup(0x110), None, "past the end of a is not a");
        assert_eq!(t.lookup(0x21f).unwrap().name, "b");
        assert_eq!(t.lookup(0x220), None, "no huge offsets past the last function");
        assert_eq!(t.lookup(0x50), None);
    }

    #[test]
    fn zero_size_labels_own_up_to_the_next_symbol() {
        let mut data = sym(0x400, 8, "table");
        data.is_text = false;
        let t = SymbolTable::new(
            vec![
                sym(0x100, 0, "trap_entry"),
                sym(0x180, 0x40, "handler"),
                sym(0x300, 0, "tail"),
                data,
            ],
            |a| (a < 0x1000).then_some(0x380),
        );
        assert_eq!(t.lookup(0x17f).unwrap().name, "trap_entry");
        assert_eq!(t.lookup(0x180).unwrap().name, "handler");
        assert_eq!(
            t.lookup(0x37f).unwrap().name,
            "tail",
            "bounded by the data symbol/section"
        );
        assert_eq!(t.lookup(0x380), None, "bounded by the section end");
    }

    #[test]
    fn interior_labels_do_not_steal() {
        let t = SymbolTable::new(
            vec![sym(0x100, 0x100, "func"), sym(0x140, 0, "inner_label")],
            |_| None,
        );
        let hit = t.lookup(0x150).unwrap();
        assert_eq!((hit.name, hit.offset), ("func", 0x50));
    }

    #[test]
    fn aliases_prefer_sized_then_global() {
        let mut local = sym(0x100, 0x10, "local_alias");
        local.is_global = false;
        let t = SymbolTable::new(
            vec![sym(0x100, 0, "label"), local, sym(0x100, 0x10, "global_name")],
            |_| None,
        );
        assert_eq!(t.lookup(0x104).unwrap().name, "global_name");
        assert_eq!(t.len(), 1);
    }
}
