//! The kernel's `%p` extensions that print the bytes a field holds rather than a number:
//! `%pU` (UUID), `%pI4`/`%pI6`/`%pI6c`/`%pISpc` (IP addresses), `%pM`/`%pm` (MAC) as
//! libtraceevent prints them, and `%*pb`/`%*pbl` (bitmaps) as the kernel does.

use std::fmt::Write;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum BytesStyle {
    /// `%pU` (`b`: as stored, `l`: GUID byte order; upper case for `B`/`L`).
    Uuid {
        guid: bool,
        upper: bool,
    },
    /// `%pI4` (`%pi4`: every byte as three digits).
    Ipv4 {
        leading_zeros: bool,
    },
    /// `%pI6` (`%pi6`: no colons, `%pI6c`: compressed).
    Ipv6 {
        colons: bool,
        compressed: bool,
    },
    /// `%pIS`: a `struct sockaddr_in`/`sockaddr_in6`; `p` adds the port, `c` compresses.
    Sockaddr {
        port: bool,
        compressed: bool,
    },
    /// `%pM` (`aa:bb:...`), `%pMF` (`aa-bb-...`), `%pm` (no separator).
    Mac {
        separator: &'static str,
    },
    /// `%*pbl`: the set bits as ranges, `0-3,8`; `%*pb`: the mask in hex, 32 bits a group.
    BitmapList,
    BitmapMask,
}

impl BytesStyle {
    pub(super) fn is_bitmap(self) -> bool {
        matches!(self, BytesStyle::BitmapList | BytesStyle::BitmapMask)
    }
}

/// The extension after `%p` in `rest`: its style and how many characters it spans.
/// `star` = the conversion had a `*` width (a bitmap's bit count).
pub(super) fn parse(rest: &str, star: bool) -> Option<(BytesStyle, usize)> {
    let b = rest.as_bytes();
    let at = |i: usize| b.get(i).copied().unwrap_or(0);
    Some(match (at(0), at(1)) {
        (b'U', c @ (b'b' | b'B' | b'l' | b'L')) => (
            BytesStyle::Uuid {
                guid: matches!(c, b'l' | b'L'),
                upper: c.is_ascii_uppercase(),
            },
            2,
        ),
        (b'U', _) => (
            BytesStyle::Uuid {
                guid: false,
                upper: false,
            },
            1,
        ),
        (i @ (b'I' | b'i'), b'4') if !matches!(at(2), b'h' | b'n' | b'b' | b'l') => (
            BytesStyle::Ipv4 {
                leading_zeros: i == b'i',
            },
            2,
        ),
        (b'I', b'6') if at(2) == b'c' => (
            BytesStyle::Ipv6 {
                colons: true,
                compressed: true,
            },
            3,
        ),
        (i @ (b'I' | b'i'), b'6') => (
            BytesStyle::Ipv6 {
                colons: i == b'I',
                compressed: false,
            },
            2,
        ),
        (b'I', b'S') => {
            let port = at(2) == b'p';
            let compressed = at(2 + usize::from(port)) == b'c';
            let len = 2 + usize::from(port) + usize::from(compressed);
            if b"fshnbl".contains(&at(len)) && at(len) != 0 {
                return None;
            }
            (BytesStyle::Sockaddr { port, compressed }, len)
        }
        (b'M', b'F') => (BytesStyle::Mac { separator: "-" }, 2),
        (b'M', b'R') | (b'm', b'R') => return None,
        (b'M', _) => (BytesStyle::Mac { separator: ":" }, 1),
        (b'm', _) => (BytesStyle::Mac { separator: "" }, 1),
        (b'b', b'l') if star => (BytesStyle::BitmapList, 2),
        (b'b', _) if star => (BytesStyle::BitmapMask, 1),
        _ => return None,
    })
}

/// `bytes` printed in `style`; `None` when they are the wrong size for it (what
/// libtraceevent prints as `INVALIDUUID` and the like). `bits`: a bitmap's bit count.
pub(super) fn format(style: BytesStyle, bytes: &[u8], bits: usize) -> Option<String> {
    let mut out = String::new();
    match style {
        BytesStyle::Uuid { guid, upper } => {
            let bytes: &[u8; 16] = bytes.get(..16)?.try_into().ok()?;
            const GUID: [usize; 16] = [3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15];
            for i in 0..16 {
                let byte = bytes[if guid { GUID[i] } else { i }];
                let _ = if upper {
                    write!(out, "{byte:02X}")
                } else {
                    write!(out, "{byte:02x}")
                };
                if matches!(i, 3 | 5 | 7 | 9) {
                    out.push('-');
                }
            }
        }
        BytesStyle::Ipv4 { leading_zeros } => ipv4(&mut out, bytes.get(..4)?, leading_zeros),
        BytesStyle::Ipv6 { colons, compressed } => {
            let addr: &[u8; 16] = bytes.get(..16)?.try_into().ok()?;
            ipv6(&mut out, addr, colons, compressed);
        }
        BytesStyle::Sockaddr { port, compressed } => {
            let family = u16::from_le_bytes(bytes.get(..2)?.try_into().ok()?);
            let port_number = u16::from_be_bytes(bytes.get(2..4)?.try_into().ok()?);
            match i32::from(family) {
                libc::AF_INET => {
                    ipv4(&mut out, bytes.get(4..8)?, false);
                    if port {
                        let _ = write!(out, ":{port_number}");
                    }
                }
                libc::AF_INET6 => {
                    // sockaddr_in6: family, port, flowinfo (4), then the address.
                    let addr: &[u8; 16] = bytes.get(8..24)?.try_into().ok()?;
                    if port {
                        out.push('[');
                    }
                    ipv6(&mut out, addr, true, compressed);
                    if port {
                        let _ = write!(out, "]:{port_number}");
                    }
                }
                _ => {}
            }
        }
        BytesStyle::Mac { separator } => {
            for (i, byte) in bytes.get(..6)?.iter().enumerate() {
                if i > 0 {
                    out.push_str(separator);
                }
                let _ = write!(out, "{byte:02x}");
            }
        }
        BytesStyle::BitmapList => bitmap_list(&mut out, bytes.get(..bits.div_ceil(8))?, bits),
        BytesStyle::BitmapMask => bitmap_mask(&mut out, bytes.get(..bits.div_ceil(8))?, bits),
    }
    Some(out)
}

fn ipv4(out: &mut String, b: &[u8], leading_zeros: bool) {
    let _ = if leading_zeros {
        write!(out, "{:03}.{:03}.{:03}.{:03}", b[0], b[1], b[2], b[3])
    } else {
        write!(out, "{}.{}.{}.{}", b[0], b[1], b[2], b[3])
    };
}

/// `%pI6` (every group, 4 digits), `%pi6` (no colons) and `%pI6c`: the longest run of
/// two or more zero groups as `::`, an IPv4-mapped or ISATAP tail as dotted quad.
fn ipv6(out: &mut String, addr: &[u8; 16], colons: bool, compressed: bool) {
    let groups: Vec<u16> = addr
        .chunks_exact(2)
        .map(|c| u16::from_be_bytes([c[0], c[1]]))
        .collect();
    if !compressed {
        for (i, group) in groups.iter().enumerate() {
            if colons && i > 0 {
                out.push(':');
            }
            let _ = write!(out, "{group:04x}");
        }
        return;
    }
    let v4_mapped = groups[..5].iter().all(|&g| g == 0) && groups[5] == 0xffff;
    let isatap = (groups[4] | 0x0200) == 0x0200 && groups[5] == 0x5efe;
    let use_v4 = v4_mapped || isatap;
    let range = if use_v4 { 6 } else { 8 };
    let (mut best_start, mut best_len) = (None, 1);
    for start in 0..range {
        let len = groups[start..range].iter().take_while(|&&g| g == 0).count();
        if len > best_len {
            (best_start, best_len) = (Some(start), len);
        }
    }
    let mut need_colon = false;
    let mut i = 0;
    while i < range {
        if Some(i) == best_start {
            if need_colon || i == 0 {
                out.push(':');
            }
            out.push(':');
            need_colon = false;
            i += best_len;
            continue;
        }
        if need_colon {
            out.push(':');
        }
        let _ = write!(out, "{:x}", groups[i]);
        need_colon = true;
        i += 1;
    }
    if use_v4 {
        if need_colon {
            out.push(':');
        }
        ipv4(out, &addr[12..16], false);
    }
}

fn bit(bytes: &[u8], n: usize) -> bool {
    bytes[n / 8] & (1 << (n % 8)) != 0
}

fn bitmap_list(out: &mut String, bytes: &[u8], bits: usize) {
    let mut n = 0;
    while n < bits {
        if !bit(bytes, n) {
            n += 1;
            continue;
        }
        let start = n;
        while n + 1 < bits && bit(bytes, n + 1) {
            n += 1;
        }
        if !out.is_empty() {
            out.push(',');
        }
        let _ = if start == n {
            write!(out, "{start}")
        } else {
            write!(out, "{start}-{n}")
        };
        n += 1;
    }
}

/// The kernel's `bitmap_string`: 32-bit groups, most significant first, comma-separated;
/// the top group only as wide as its bits need.
fn bitmap_mask(out: &mut String, bytes: &[u8], bits: usize) {
    let groups = bits.div_ceil(32);
    for group in (0..groups).rev() {
        let mut word = 0u32;
        for i in 0..32 {
            let n = group * 32 + i;
            if n < bits && bit(bytes, n) {
                word |= 1 << i;
            }
        }
        let width = if group == groups - 1 && !bits.is_multiple_of(32) {
            (bits % 32).div_ceil(4)
        } else {
            8
        };
        if group != groups - 1 {
            out.push(',');
        }
        let _ = write!(out, "{word:0width$x}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(spec: &str, bytes: &[u8], bits: usize) -> String {
        let (style, len) = parse(spec, bits > 0).expect("a known extension");
        assert_eq!(len, spec.len(), "{spec}");
        format(style, bytes, bits).expect("formats")
    }

    #[test]
    fn uuids_and_macs() {
        let uuid: Vec<u8> = (0..16).collect();
        assert_eq!(text("U", &uuid, 0), "00010203-0405-0607-0809-0a0b0c0d0e0f");
        assert_eq!(text("UL", &uuid, 0), "03020100-0504-0706-0809-0A0B0C0D0E0F");
        assert_eq!(
            text("M", &[0, 0x1b, 0x21, 0xa, 0xb, 0xff], 0),
            "00:1b:21:0a:0b:ff"
        );
        assert_eq!(text("m", &[0, 0x1b, 0x21, 0xa, 0xb, 0xff], 0), "001b210a0bff");
        assert_eq!(format(BytesStyle::Mac { separator: ":" }, &[1, 2], 0), None);
    }

    #[test]
    fn ip_addresses() {
        assert_eq!(text("I4", &[10, 0, 2, 15], 0), "10.0.2.15");
        assert_eq!(text("i4", &[10, 0, 2, 15], 0), "010.000.002.015");
        let mut v6 = [0u8; 16];
        v6[..2].copy_from_slice(&[0xfe, 0x80]);
        v6[15] = 1;
        assert_eq!(text("I6c", &v6, 0), "fe80::1");
        assert_eq!(text("I6", &v6, 0), "fe80:0000:0000:0000:0000:0000:0000:0001");
        let mut mapped = [0u8; 16];
        mapped[10..].copy_from_slice(&[0xff, 0xff, 192, 168, 1, 2]);
        assert_eq!(text("I6c", &mapped, 0), "::ffff:192.168.1.2");
        assert_eq!(text("I6c", &[0; 16], 0), "::");
        // sockaddr_in: AF_INET (2), port 8080 (network order), 127.0.0.1.
        let mut sin = vec![2, 0, 0x1f, 0x90, 127, 0, 0, 1];
        sin.resize(28, 0);
        assert_eq!(text("ISpc", &sin, 0), "127.0.0.1:8080");
        let mut sin6 = vec![10, 0, 0, 80, 0, 0, 0, 0];
        sin6.extend_from_slice(&v6);
        sin6.resize(28, 0);
        assert_eq!(text("ISpc", &sin6, 0), "[fe80::1]:80");
    }

    #[test]
    fn bitmaps_as_the_kernel_prints_them() {
        let bytes = [0b0000_1111, 0b0000_0001, 0, 0, 0, 0, 0, 0x80];
        assert_eq!(text("bl", &bytes, 64), "0-3,8,63");
        assert_eq!(text("b", &bytes, 64), "80000000,0000010f");
        assert_eq!(text("b", &bytes[..1], 4), "f");
        assert_eq!(text("bl", &[0; 8], 64), "");
        assert_eq!(parse("bl", false), None, "a bitmap needs its bit count");
    }
}
