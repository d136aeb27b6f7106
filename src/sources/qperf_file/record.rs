//! Record layouts of v1, v2 and v3 (spec §1.3), both directions.
//!
//! Fields are decoded in declaration order with no tags or padding. The trace length is
//! checked against the per-record limit, and against the bytes present, before the trace
//! is allocated, so a hostile length costs nothing.

use super::error::{CorruptKind, DecodeError, Field};
use super::varint::{Cursor, encode_u64};
use super::{Callchain, FormatVersion, QperfRecord};

/// Append `record` as a v3 record, every integer in its smallest form. `None` fields are
/// written as 0, so `sp`/`fp` of `Some(0)` read back as `None`, and a missing callchain
/// reads back as [`Callchain::Leaf`].
pub fn encode_v3(record: &QperfRecord, out: &mut Vec<u8>) {
    encode_u64(record.elapsed_ns.unwrap_or(0), out);
    encode_u64(record.pc, out);
    encode_u64(record.sp.unwrap_or(0), out);
    encode_u64(record.fp.unwrap_or(0), out);
    encode_u64(u64::from(record.cpu.unwrap_or(0)), out);
    out.push(record.callchain.map_or(0, Callchain::as_byte));
    encode_trace(&record.trace, out);
}

/// Append `record` in any version; fields the version lacks are dropped (v1 keeps only
/// the trace). Legacy versions exist for reading old files and building test fixtures.
pub fn encode_record(record: &QperfRecord, version: FormatVersion, out: &mut Vec<u8>) {
    match version {
        FormatVersion::V3 => encode_v3(record, out),
        FormatVersion::V2 => {
            encode_u64(record.elapsed_ns.unwrap_or(0), out);
            encode_trace(&record.trace, out);
        }
        FormatVersion::V1 => encode_trace(&record.trace, out),
    }
}

fn encode_trace(trace: &[u64], out: &mut Vec<u8>) {
    encode_u64(trace.len() as u64, out);
    for &address in trace {
        encode_u64(address, out);
    }
}

/// Decode one record from the front of `buf`; returns it and the bytes it took.
///
/// [`DecodeError::Incomplete`] means `buf` is a prefix of a possibly valid record;
/// [`DecodeError::Corrupt`] means no bytes appended to `buf` could make it valid.
pub fn decode_record(buf: &[u8], version: FormatVersion) -> Result<(QperfRecord, usize), DecodeError> {
    let mut cursor = Cursor::new(buf);
    let record = match version {
        FormatVersion::V3 => decode_v3(&mut cursor)?,
        FormatVersion::V2 => {
            let elapsed_ns = cursor.u64(Field::ElapsedNs).map_err(|e| e.plus_rest(1))?;
            let trace = decode_trace(&mut cursor, version)?;
            QperfRecord {
                elapsed_ns: Some(elapsed_ns),
                pc: trace.first().copied().unwrap_or(0),
                trace,
                ..QperfRecord::default()
            }
        }
        FormatVersion::V1 => {
            let trace = decode_trace(&mut cursor, version)?;
            QperfRecord {
                pc: trace.first().copied().unwrap_or(0),
                trace,
                ..QperfRecord::default()
            }
        }
    };
    Ok((record, cursor.position()))
}

fn decode_v3(cursor: &mut Cursor<'_>) -> Result<QperfRecord, DecodeError> {
    // The number is the smallest size of everything after the field: each remaining
    // integer takes at least one byte, as does the raw callchain byte.
    let elapsed_ns = cursor.u64(Field::ElapsedNs).map_err(|e| e.plus_rest(6))?;
    let pc = cursor.u64(Field::Pc).map_err(|e| e.plus_rest(5))?;
    let sp = cursor.u64(Field::Sp).map_err(|e| e.plus_rest(4))?;
    let fp = cursor.u64(Field::Fp).map_err(|e| e.plus_rest(3))?;
    let cpu = cursor.u32(Field::Cpu).map_err(|e| e.plus_rest(2))?;
    let callchain = cursor.u8().map_err(|e| e.plus_rest(1))?;
    let trace = decode_trace(cursor, FormatVersion::V3)?;
    Ok(QperfRecord {
        elapsed_ns: Some(elapsed_ns),
        pc,
        sp: (sp != 0).then_some(sp),
        fp: (fp != 0).then_some(fp),
        cpu: Some(cpu),
        callchain: Some(Callchain::from_byte(callchain)),
        trace,
    })
}

fn decode_trace(cursor: &mut Cursor<'_>, version: FormatVersion) -> Result<Vec<u64>, DecodeError> {
    let at = cursor.position();
    let len = cursor.u64(Field::TraceLen)?;
    let limit = version.max_trace_len();
    if len > limit {
        return Err(CorruptKind::TraceTooLong { len, limit, at }.into());
    }
    // Within the limit, so it fits usize and is at most 32767.
    let len = len as usize;
    if cursor.remaining() < len {
        return Err(DecodeError::Incomplete {
            needed_at_least: len - cursor.remaining(),
        });
    }
    let mut trace = Vec::with_capacity(len);
    for index in 0..len {
        let field = Field::TraceEntry(index as u32);
        let entries_after = len - index - 1;
        trace.push(cursor.u64(field).map_err(|e| e.plus_rest(entries_after))?);
    }
    Ok(trace)
}

#[cfg(test)]
#[path = "record_tests.rs"]
mod tests;
