//! A raw event as one line of `name=value` pairs (the non-common fields, in format
//! order): strings as text, pointers and array elements in hex (`{0x1,0x2}`), integers
//! in decimal with their sign: raw event lines of events whose print fmt perfscope cannot
//! read (see [`super::EventPrinter`]).

use std::fmt::Write;

use crate::trace::event::{EventLayout, FieldKind, FieldLayout};
use crate::trace::expr::ctype;

/// The non-common fields of `raw` read through `layout`; a field the record is too short
/// for prints as `?`.
pub fn format_fields(layout: &EventLayout, raw: &[u8]) -> String {
    let mut out = String::new();
    for field in layout.fields.iter().filter(|f| !f.name.starts_with("common_")) {
        if !out.is_empty() {
            out.push(' ');
        }
        let _ = write!(out, "{}=", field.name);
        if write_value(&mut out, field, raw).is_none() {
            out.push('?');
        }
    }
    out
}

fn write_value(out: &mut String, field: &FieldLayout, raw: &[u8]) -> Option<()> {
    if field.is_string() {
        let text = if field.size == 0 && field.kind == FieldKind::CharArray {
            // `char buf[]`: a flexible array running to the end of the record.
            let bytes = raw.get(field.offset..)?;
            let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
            String::from_utf8_lossy(&bytes[..end]).into_owned()
        } else {
            field.read_str(raw)?.into_owned()
        };
        out.push_str(&text);
        return Some(());
    }
    let element_type = ctype::element_type(&field.declaration);
    match field.kind {
        FieldKind::Unsigned if element_type.ends_with('*') => {
            let _ = write!(out, "{:#x}", field.read_u64(raw)?);
        }
        FieldKind::Unsigned => {
            let _ = write!(out, "{}", field.read_u64(raw)?);
        }
        FieldKind::Signed => {
            let _ = write!(out, "{}", field.read_i64(raw)?);
        }
        FieldKind::Array { element_size } => {
            let bytes = if field.size == 0 {
                raw.get(field.offset..)?
            } else {
                raw.get(field.offset..field.offset.checked_add(field.size)?)?
            };
            write_elements(out, bytes, element_size)?;
        }
        FieldKind::DataLoc { .. } | FieldKind::RelLoc { .. } => {
            let element_size = ctype::scalar_size(element_type).unwrap_or(1);
            write_elements(out, field.payload(raw)?, element_size)?;
        }
        FieldKind::CharArray => {}
    }
    Some(())
}

fn write_elements(out: &mut String, bytes: &[u8], element_size: usize) -> Option<()> {
    if element_size == 0 || !matches!(element_size, 1 | 2 | 4 | 8) {
        return None;
    }
    out.push('{');
    for (i, chunk) in bytes.chunks_exact(element_size).enumerate() {
        if i > 0 {
            out.push(',');
        }
        let mut word = [0u8; 8];
        word[..element_size].copy_from_slice(chunk);
        let _ = write!(out, "{:#x}", u64::from_le_bytes(word));
    }
    out.push('}');
    Some(())
}

#[cfg(test)]
mod tests {
    use super::super::fixture_tracefs;
    use super::*;

    #[test]
    fn fields_print_as_name_value_pairs() {
        let tracefs = fixture_tracefs();
        let enter = tracefs.layout("raw_syscalls", "sys_enter").expect("layout");
        let mut raw = vec![0u8; 64];
        raw[8..16].copy_from_slice(&(-1i64).to_le_bytes());
        raw[16..24].copy_from_slice(&1u64.to_le_bytes());
        raw[24..32].copy_from_slice(&0xffu64.to_le_bytes());
        assert_eq!(
            format_fields(&enter, &raw),
            "id=-1 args={0x1,0xff,0x0,0x0,0x0,0x0}"
        );
        let runtime = tracefs.layout("sched", "sched_stat_runtime").expect("layout");
        let mut raw = vec![0u8; 24];
        raw[8..12].copy_from_slice(&(24u32 | (3 << 16)).to_le_bytes());
        raw[12..16].copy_from_slice(&7i32.to_le_bytes());
        raw[16..24].copy_from_slice(&1500u64.to_le_bytes());
        raw.extend_from_slice(b"sh\0");
        assert_eq!(format_fields(&runtime, &raw), "comm=sh pid=7 runtime=1500");
        assert_eq!(
            format_fields(&runtime, &raw[..20]),
            "comm=? pid=7 runtime=?",
            "a cut record prints '?'"
        );
        let dma = tracefs.layout("dma", "dma_map_sg").expect("layout");
        let mut raw = vec![0u8; 48];
        raw[8..12].copy_from_slice(&(48u32 | (4 << 16)).to_le_bytes());
        raw[24..28].copy_from_slice(&(52u32 | (8 << 16)).to_le_bytes());
        raw[28..32].copy_from_slice(&(60u32 << 16 >> 16).to_le_bytes());
        raw[32..36].copy_from_slice(&(60u32 | (8 << 16)).to_le_bytes());
        raw[20] = 1;
        raw.extend_from_slice(b"vda\0");
        raw.extend_from_slice(&0x1000u64.to_le_bytes());
        raw.extend_from_slice(&[1, 0, 0, 0, 2, 0, 0, 0]);
        assert_eq!(
            format_fields(&dma, &raw),
            "device=vda full_nents=0 full_ents=0 truncated=1 phys_addrs={0x1000} \
             dma_addrs={} lengths={0x1,0x2} dir=0 attrs=0"
        );
    }
}
