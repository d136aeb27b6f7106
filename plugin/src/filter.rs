//! Which guest addresses are profiled, and the address each one is recorded as
//! (notes/qperf-format.md §2.4). Applied when QEMU translates a block, so code outside the
//! kernel text costs nothing at run time when `filter_kernel` is on.

/// The kernel's linked text range `[start, end)`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TextRange {
    pub start: u64,
    pub end: u64,
}

/// A physical alias of the text (`[start, end)` runs the same code as `start + offset`),
/// e.g. early boot before the MMU is on.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct AliasRange {
    pub start: u64,
    pub end: u64,
    pub offset: u64,
}

#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct AddressFilter {
    pub text: Option<TextRange>,
    pub alias: Option<AliasRange>,
    /// Drop (do not instrument) code that is neither in the text nor in its alias.
    pub kernel_only: bool,
}

impl AddressFilter {
    /// The linked address of `ip` if it is kernel code (directly or through the alias).
    pub fn canonicalize(&self, ip: u64) -> Option<u64> {
        if let Some(text) = self.text
            && text.start <= ip
            && ip < text.end
        {
            return Some(ip);
        }
        if let Some(alias) = self.alias
            && alias.start <= ip
            && ip < alias.end
        {
            return Some(ip.wrapping_add(alias.offset));
        }
        None
    }

    /// The address a sample at `ip` is recorded as; `None` = do not instrument it.
    pub fn sample_ip(&self, ip: u64) -> Option<u64> {
        match self.canonicalize(ip) {
            Some(canonical) => Some(canonical),
            None if self.kernel_only => None,
            None => Some(ip),
        }
    }

    /// The value an unwound return address is recorded as; `None` ends the walk.
    ///
    /// A return address is accepted only inside known code: the kernel's text (or its
    /// alias), whatever `filter_kernel` says. Walks start only at kernel leaves (a leaf in
    /// firmware or user space is recorded alone), and a kernel stack never legitimately
    /// returns into anything but kernel text (a trap starts a new chain), so a value outside
    /// it was read from something that is no frame record: a data pointer in a register
    /// used as a frame pointer, a stale slot. The walk ends there instead of recording an
    /// address no function can name. Without a text range nothing is known and every
    /// non-zero value is taken.
    pub fn return_address(&self, ip: u64) -> Option<u64> {
        if ip == 0 {
            return None;
        }
        match self.text {
            Some(_) => self.canonicalize(ip),
            None => Some(ip),
        }
    }

    /// Whether `value` is known kernel code. Without a text range nothing is known.
    pub fn is_kernel_code(&self, value: u64) -> bool {
        self.canonicalize(value).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn riscv_kernel(kernel_only: bool) -> AddressFilter {
        AddressFilter {
            text: Some(TextRange {
                start: 0xffffffc080200000,
                end: 0xffffffc080201000,
            }),
            alias: Some(AliasRange {
                start: 0x80200000,
                end: 0x80201000,
                offset: 0xffffffc000000000,
            }),
            kernel_only,
        }
    }

    #[test]
    fn text_alias_and_outside() {
        let f = riscv_kernel(true);
        assert_eq!(f.sample_ip(0xffffffc080200010), Some(0xffffffc080200010));
        assert_eq!(f.sample_ip(0x80200010), Some(0xffffffc080200010));
        assert_eq!(f.sample_ip(0xffffffc080201000), None, "end is exclusive");
        assert_eq!(f.sample_ip(0x80000000), None, "OpenSBI is not the kernel");
        assert_eq!(f.return_address(0), None);
        let open = riscv_kernel(false);
        // Outside the text a return address is no code, filter or not: kernel data,
        // OpenSBI, user space all end a walk.
        for (filter, what) in [(&f, "filtered"), (&open, "unfiltered")] {
            assert_eq!(
                filter.return_address(0xffffffc080201008),
                None,
                "{what}: kernel data"
            );
            assert_eq!(filter.return_address(0x80000000), None, "{what}: OpenSBI");
            assert_eq!(
                filter.return_address(0x80200010),
                Some(0xffffffc080200010),
                "{what}: the alias is the text"
            );
        }
        assert_eq!(
            AddressFilter::default().return_address(0x1234),
            Some(0x1234),
            "no range: taken"
        );
        assert_eq!(open.sample_ip(0x80000000), Some(0x80000000), "kept raw");
        assert_eq!(
            open.sample_ip(0x80200010),
            Some(0xffffffc080200010),
            "still canonical"
        );
        assert!(!AddressFilter::default().is_kernel_code(0x80200010));
        assert_eq!(AddressFilter::default().sample_ip(5), Some(5));
    }
}
