//! bincode 2 `standard()` integers: unsigned varints (one marker byte, then 0, 2, 4 or 8
//! little-endian bytes) and raw `u8` bytes.
//!
//! The decoder accepts every form the marker allows, not only the smallest, because
//! bincode does; the encoder always writes the smallest form, as bincode does.

use super::error::{CorruptKind, DecodeError, Field};

/// Marker bytes from the bincode varint module.
const U16_MARKER: u8 = 0xFB;
const U32_MARKER: u8 = 0xFC;
const U64_MARKER: u8 = 0xFD;
const U128_MARKER: u8 = 0xFE;
const RESERVED_MARKER: u8 = 0xFF;
/// Values up to this are their own single byte.
const SINGLE_BYTE_MAX: u8 = 0xFA;

/// The 9-byte form: marker + u64.
pub(super) const MAX_VARINT_BYTES: usize = 9;

/// Append `value` in its smallest varint form.
pub(super) fn encode_u64(value: u64, out: &mut Vec<u8>) {
    if value <= u64::from(SINGLE_BYTE_MAX) {
        out.push(value as u8);
    } else if let Ok(v) = u16::try_from(value) {
        out.push(U16_MARKER);
        out.extend_from_slice(&v.to_le_bytes());
    } else if let Ok(v) = u32::try_from(value) {
        out.push(U32_MARKER);
        out.extend_from_slice(&v.to_le_bytes());
    } else {
        out.push(U64_MARKER);
        out.extend_from_slice(&value.to_le_bytes());
    }
}

/// Reads integers from the front of a record, remembering how far it got.
pub(super) struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    pub(super) fn new(bytes: &'a [u8]) -> Self {
        Cursor { bytes, pos: 0 }
    }

    pub(super) fn position(&self) -> usize {
        self.pos
    }

    pub(super) fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    fn take<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let rest = &self.bytes[self.pos..];
        match rest.get(..N).and_then(|s| <[u8; N]>::try_from(s).ok()) {
            Some(array) => {
                self.pos += N;
                Ok(array)
            }
            None => Err(DecodeError::Incomplete {
                needed_at_least: N - rest.len(),
            }),
        }
    }

    /// A raw byte: bincode writes `u8` as itself, never as a varint.
    pub(super) fn u8(&mut self) -> Result<u8, DecodeError> {
        self.take::<1>().map(|[b]| b)
    }

    pub(super) fn u64(&mut self, field: Field) -> Result<u64, DecodeError> {
        self.varint(field, false)
    }

    pub(super) fn u32(&mut self, field: Field) -> Result<u32, DecodeError> {
        // The u32 path never reads the 9-byte form, so the value always fits.
        self.varint(field, true).map(|v| v as u32)
    }

    /// bincode rejects a too-wide marker as soon as it reads it, before the bytes it
    /// announces, so a truncated file cannot hide a corrupt marker.
    fn varint(&mut self, field: Field, is_u32: bool) -> Result<u64, DecodeError> {
        let at = self.pos;
        let marker = self.u8()?;
        match marker {
            0..=SINGLE_BYTE_MAX => Ok(u64::from(marker)),
            U16_MARKER => self.take::<2>().map(|b| u64::from(u16::from_le_bytes(b))),
            U32_MARKER => self.take::<4>().map(|b| u64::from(u32::from_le_bytes(b))),
            U64_MARKER if is_u32 => Err(CorruptKind::U64MarkerOnU32 { field, at }.into()),
            U64_MARKER => self.take::<8>().map(u64::from_le_bytes),
            U128_MARKER => Err(CorruptKind::U128Marker { field, at }.into()),
            RESERVED_MARKER => Err(CorruptKind::ReservedMarker { field, at }.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encoded(value: u64) -> Vec<u8> {
        let mut out = Vec::new();
        encode_u64(value, &mut out);
        out
    }

    fn decoded_u64(bytes: &[u8]) -> Result<(u64, usize), DecodeError> {
        let mut cursor = Cursor::new(bytes);
        let value = cursor.u64(Field::Pc)?;
        Ok((value, cursor.position()))
    }

    #[test]
    fn encoder_picks_the_smallest_form_at_every_boundary() {
        let cases: [(u64, &[u8]); 8] = [
            (0, &[0x00]),
            (250, &[0xFA]),
            (251, &[0xFB, 0xFB, 0x00]),
            (0xFFFF, &[0xFB, 0xFF, 0xFF]),
            (0x1_0000, &[0xFC, 0x00, 0x00, 0x01, 0x00]),
            (0xFFFF_FFFF, &[0xFC, 0xFF, 0xFF, 0xFF, 0xFF]),
            (1 << 32, &[0xFD, 0, 0, 0, 0, 1, 0, 0, 0]),
            (u64::MAX, &[0xFD, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]),
        ];
        for (value, bytes) in cases {
            assert_eq!(encoded(value), bytes, "encoding {value:#x}");
            assert_eq!(
                decoded_u64(bytes),
                Ok((value, bytes.len())),
                "decoding {value:#x}"
            );
        }
    }

    #[test]
    fn decoder_accepts_non_canonical_forms() {
        assert_eq!(decoded_u64(&[0xFB, 0x05, 0x00]), Ok((5, 3)));
        assert_eq!(decoded_u64(&[0xFC, 0x05, 0, 0, 0]), Ok((5, 5)));
        assert_eq!(decoded_u64(&[0xFD, 0x05, 0, 0, 0, 0, 0, 0, 0]), Ok((5, 9)));
        let mut cursor = Cursor::new(&[0xFB, 0x05, 0x00]);
        assert_eq!(cursor.u32(Field::Cpu), Ok(5));
    }

    #[test]
    fn reserved_marker_is_corrupt_on_every_width() {
        let at_two = [0x01, 0x02, 0xFF, 0x00];
        let mut cursor = Cursor::new(&at_two);
        assert_eq!(cursor.u64(Field::ElapsedNs), Ok(1));
        assert_eq!(cursor.u32(Field::Cpu), Ok(2));
        assert_eq!(
            cursor.u64(Field::Sp),
            Err(DecodeError::Corrupt(CorruptKind::ReservedMarker {
                field: Field::Sp,
                at: 2
            }))
        );
        assert_eq!(
            Cursor::new(&[0xFF]).u32(Field::Cpu),
            Err(DecodeError::Corrupt(CorruptKind::ReservedMarker {
                field: Field::Cpu,
                at: 0
            }))
        );
    }

    #[test]
    fn u128_marker_on_a_u64_field_is_corrupt_even_without_its_bytes() {
        assert_eq!(
            decoded_u64(&[0xFE]),
            Err(DecodeError::Corrupt(CorruptKind::U128Marker {
                field: Field::Pc,
                at: 0
            }))
        );
    }

    #[test]
    fn u64_marker_on_the_u32_cpu_field_is_corrupt() {
        let bytes = [0xFD, 1, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(
            Cursor::new(&bytes).u32(Field::Cpu),
            Err(DecodeError::Corrupt(CorruptKind::U64MarkerOnU32 {
                field: Field::Cpu,
                at: 0
            }))
        );
        assert_eq!(
            Cursor::new(&[0xFE]).u32(Field::Cpu),
            Err(DecodeError::Corrupt(CorruptKind::U128Marker {
                field: Field::Cpu,
                at: 0
            }))
        );
        assert_eq!(
            Cursor::new(&[0xFC, 0xFF, 0xFF, 0xFF, 0xFF]).u32(Field::Cpu),
            Ok(u32::MAX)
        );
    }

    #[test]
    fn u8_is_one_raw_byte_even_for_marker_values() {
        let mut cursor = Cursor::new(&[0xFF, 0xFB, 0x07]);
        assert_eq!(cursor.u8(), Ok(0xFF));
        assert_eq!(cursor.u8(), Ok(0xFB));
        assert_eq!(cursor.position(), 2);
        assert_eq!(cursor.remaining(), 1);
    }

    #[test]
    fn short_buffers_report_how_many_bytes_are_missing() {
        assert_eq!(
            decoded_u64(&[]),
            Err(DecodeError::Incomplete { needed_at_least: 1 })
        );
        assert_eq!(
            decoded_u64(&[0xFD, 1, 2, 3]),
            Err(DecodeError::Incomplete { needed_at_least: 5 })
        );
        assert_eq!(
            decoded_u64(&[0xFB]),
            Err(DecodeError::Incomplete { needed_at_least: 2 })
        );
        assert_eq!(
            Cursor::new(&[]).u8(),
            Err(DecodeError::Incomplete { needed_at_least: 1 })
        );
    }
}
