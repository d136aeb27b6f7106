//! One perf mmap ring: a control page then 2^n data pages the kernel writes records into.
//!
//! Records are handed out in place (a slice of the mapping); only a record that wraps
//! around the end of the data area is copied, into a reusable scratch buffer, and never
//! more than that one record. `data_head` is read with acquire ordering (the kernel's
//! writes of the records before it are then visible) and `data_tail` is written with
//! release ordering once the records are consumed (the kernel may then overwrite them).
//! The walk over `[tail, head)` is [`read_records`], a pure function so it can be tested
//! and benchmarked on an in-memory ring image.

use std::os::fd::{AsRawFd, BorrowedFd};
use std::sync::atomic::{AtomicU64, Ordering};

use perf_event_open_sys::bindings::perf_event_mmap_page;

use super::error::PerfEventError;
use super::record::HEADER_BYTES;

/// Counters of what a ring delivered.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct RingStats {
    pub bytes_read: u64,
    pub records_read: u64,
    /// Records that wrapped around the end and were copied into scratch.
    pub wrapped_records: u64,
    /// Times a torn or impossible header made the reader skip to `data_head`.
    pub resyncs: u64,
}

/// What [`read_records`] got through.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ReadOutcome {
    /// Where the consumer is now (the new `data_tail`).
    pub tail: u64,
    pub records: u64,
    pub bytes: u64,
    pub wrapped: u64,
    /// A header was impossible (size < 8, or past `head`): the rest was skipped.
    pub resynced: bool,
}

/// Walk the records in `[tail, head)` of a ring data area whose length is a power of two,
/// calling `on_record` with each whole record (header included). A record that wraps is
/// assembled in `scratch` (kept u64-aligned, reused across calls).
pub fn read_records(
    data: &[u8],
    tail: u64,
    head: u64,
    scratch: &mut Vec<u64>,
    on_record: impl FnMut(&[u8]),
) -> ReadOutcome {
    read_records_up_to(data, tail, head, u64::MAX, scratch, on_record)
}

/// [`read_records`], stopping at the first record boundary at or past `budget` bytes
/// (the outcome's `tail` says where the next read starts).
pub fn read_records_up_to(
    data: &[u8],
    mut tail: u64,
    head: u64,
    budget: u64,
    scratch: &mut Vec<u64>,
    mut on_record: impl FnMut(&[u8]),
) -> ReadOutcome {
    let size = data.len() as u64;
    let mask = size.wrapping_sub(1);
    let mut outcome = ReadOutcome {
        tail,
        records: 0,
        bytes: 0,
        wrapped: 0,
        resynced: false,
    };
    if size == 0 || !size.is_power_of_two() || head.wrapping_sub(tail) > size {
        outcome.resynced = head != tail;
        outcome.tail = head;
        return outcome;
    }
    while head.wrapping_sub(tail) >= HEADER_BYTES as u64 && outcome.bytes < budget {
        let start = (tail & mask) as usize;
        // The header is 8 bytes and records are 8-aligned, so a header never wraps.
        let Some(header) = data.get(start..start + HEADER_BYTES) else {
            outcome.resynced = true;
            break;
        };
        let len = usize::from(u16::from_le_bytes([header[6], header[7]]));
        if len < HEADER_BYTES || len as u64 > head.wrapping_sub(tail) {
            outcome.resynced = true;
            break;
        }
        if start + len <= data.len() {
            on_record(&data[start..start + len]);
        } else {
            let first = data.len() - start;
            scratch.clear();
            scratch.resize(len.div_ceil(8), 0);
            // SAFETY: a u64 buffer viewed as bytes; `len <= scratch.len() * 8`.
            let bytes = unsafe { std::slice::from_raw_parts_mut(scratch.as_mut_ptr().cast::<u8>(), len) };
            bytes[..first].copy_from_slice(&data[start..]);
            bytes[first..].copy_from_slice(&data[..len - first]);
            on_record(bytes);
            outcome.wrapped += 1;
        }
        tail = tail.wrapping_add(len as u64);
        outcome.records += 1;
        outcome.bytes += len as u64;
    }
    outcome.tail = if outcome.resynced { head } else { tail };
    outcome
}

/// What one [`RingBuffer::read_up_to`] read.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ReadPass {
    pub records: u64,
    pub bytes: u64,
    /// The ring was read to the head it showed (it was empty then).
    pub drained: bool,
}

/// The mapping of one perf fd's ring.
pub struct RingBuffer {
    base: *mut u8,
    map_len: usize,
    data_offset: usize,
    data_size: usize,
    scratch: Vec<u64>,
    stats: RingStats,
}

// SAFETY: the mapping is owned by this value alone; the kernel is the only other writer
// and the head/tail protocol (atomics) is what synchronizes with it, not thread identity.
unsafe impl Send for RingBuffer {}

pub fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(size).unwrap_or(4096)
}

impl RingBuffer {
    /// Map `data_pages` (a power of two) data pages plus the control page of `fd`.
    pub fn map(fd: BorrowedFd<'_>, data_pages: usize) -> Result<RingBuffer, PerfEventError> {
        if !data_pages.is_power_of_two() {
            return Err(PerfEventError::PagesNotPowerOfTwo(data_pages));
        }
        let page = page_size();
        let map_len = (data_pages + 1) * page;
        // SAFETY: a fresh shared mapping of a perf fd; checked for MAP_FAILED below.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(PerfEventError::Mmap {
                bytes: map_len,
                cause: std::io::Error::last_os_error(),
            });
        }
        let base = base.cast::<u8>();
        // SAFETY: the first page of the mapping is the control page.
        let control = unsafe { &*base.cast::<perf_event_mmap_page>() };
        // Kernels before 4.1 leave these 0: the data then starts at the second page.
        let (data_offset, data_size) = match (control.data_offset, control.data_size) {
            (offset, size) if size != 0 => (offset as usize, size as usize),
            _ => (page, data_pages * page),
        };
        Ok(RingBuffer {
            base,
            map_len,
            data_offset,
            data_size,
            scratch: Vec::new(),
            stats: RingStats::default(),
        })
    }

    fn control(&self) -> *mut perf_event_mmap_page {
        self.base.cast()
    }

    fn head(&self) -> u64 {
        // SAFETY: data_head is an aligned u64 in the live control page.
        let head = unsafe { &*(&raw mut (*self.control()).data_head).cast::<AtomicU64>() };
        head.load(Ordering::Acquire)
    }

    fn tail_atomic(&self) -> &AtomicU64 {
        // SAFETY: data_tail is an aligned u64 in the live control page that only we write.
        unsafe { &*(&raw mut (*self.control()).data_tail).cast::<AtomicU64>() }
    }

    /// Bytes written by the kernel and not yet read.
    pub fn pending_bytes(&self) -> u64 {
        self.head()
            .wrapping_sub(self.tail_atomic().load(Ordering::Relaxed))
    }

    pub fn data_size(&self) -> usize {
        self.data_size
    }

    pub fn stats(&self) -> RingStats {
        self.stats
    }

    /// Hand every record written so far to `on_record`, then give the space back to the
    /// kernel. Returns how many records were read.
    pub fn read(&mut self, on_record: impl FnMut(&[u8])) -> u64 {
        self.read_up_to(u64::MAX, on_record).records
    }

    /// Read records until `budget` bytes were read or the ring is empty.
    pub fn read_up_to(&mut self, budget: u64, on_record: impl FnMut(&[u8])) -> ReadPass {
        let head = self.head();
        let tail = self.tail_atomic().load(Ordering::Relaxed);
        if head == tail {
            return ReadPass {
                records: 0,
                bytes: 0,
                drained: true,
            };
        }
        // SAFETY: the data area lies inside the mapping; the kernel only writes past
        // `head`, which this slice's reads never reach before `tail` is released.
        let data = unsafe { std::slice::from_raw_parts(self.base.add(self.data_offset), self.data_size) };
        let outcome = read_records_up_to(data, tail, head, budget, &mut self.scratch, on_record);
        self.tail_atomic().store(outcome.tail, Ordering::Release);
        self.stats.bytes_read += outcome.bytes;
        self.stats.records_read += outcome.records;
        self.stats.wrapped_records += outcome.wrapped;
        self.stats.resyncs += u64::from(outcome.resynced);
        ReadPass {
            records: outcome.records,
            bytes: outcome.bytes,
            drained: outcome.tail == head,
        }
    }
}

impl Drop for RingBuffer {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `map`, unmapped once.
        unsafe { libc::munmap(self.base.cast(), self.map_len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ring data area of `size` bytes with `records` written from `start`, wrapping.
    fn ring_image(size: usize, start: u64, records: &[Vec<u8>]) -> (Vec<u64>, u64) {
        let mut words = vec![0u64; size / 8];
        // SAFETY: the u64 buffer viewed as bytes.
        let data = unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u8>(), size) };
        let mut head = start;
        for record in records {
            for &byte in record {
                data[(head as usize) & (size - 1)] = byte;
                head += 1;
            }
        }
        (words, head)
    }

    fn record(record_type: u32, fill: u8, len: usize) -> Vec<u8> {
        let mut r = record_type.to_le_bytes().to_vec();
        r.extend_from_slice(&[0, 0]);
        r.extend_from_slice(&(len as u16).to_le_bytes());
        r.resize(len, fill);
        r
    }

    fn bytes_of(words: &[u64]) -> &[u8] {
        // SAFETY: a u64 slice viewed as bytes.
        unsafe { std::slice::from_raw_parts(words.as_ptr().cast::<u8>(), words.len() * 8) }
    }

    /// A budget stops the walk at the first record boundary at or past it; the next walk
    /// from the returned tail reads the rest.
    #[test]
    fn a_budget_stops_at_a_record_boundary_and_the_rest_follows() {
        let records = vec![record(9, 1, 24), record(9, 2, 32), record(3, 3, 40)];
        let (words, head) = ring_image(128, 0, &records);
        let mut seen = Vec::new();
        let first = read_records_up_to(bytes_of(&words), 0, head, 30, &mut Vec::new(), |r| {
            seen.push(r.to_vec())
        });
        assert_eq!((first.records, first.bytes, first.tail), (2, 56, 56));
        let rest = read_records_up_to(bytes_of(&words), first.tail, head, 30, &mut Vec::new(), |r| {
            seen.push(r.to_vec())
        });
        assert_eq!((rest.records, rest.tail), (1, head));
        assert_eq!(seen, records);
    }

    #[test]
    fn records_are_read_in_order_and_a_wrapping_one_is_reassembled() {
        let records = vec![record(9, 1, 24), record(9, 2, 32), record(3, 3, 40)];
        // Start 8 bytes before the end of a 128-byte ring (laps ago): the first record wraps.
        let start = 120 + 128 * 3;
        let (words, head) = ring_image(128, start, &records);
        let mut seen = Vec::new();
        let mut scratch = Vec::new();
        let out = read_records(bytes_of(&words), start, head, &mut scratch, |r| {
            seen.push(r.to_vec())
        });
        assert_eq!(seen, records);
        assert_eq!(
            (out.records, out.bytes, out.wrapped, out.resynced, out.tail),
            (3, 96, 1, false, head)
        );
        assert_eq!(scratch.len() * 8, 24, "scratch holds the one wrapped record");
    }

    #[test]
    fn a_partial_header_waits_and_a_torn_one_resyncs() {
        let (words, head) = ring_image(64, 0, &[record(9, 1, 16)]);
        let mut n = 0;
        let out = read_records(bytes_of(&words), 0, head - 12, &mut Vec::new(), |_| n += 1);
        assert_eq!(
            (n, out.tail, out.resynced),
            (0, 0, false),
            "less than a header: nothing to read"
        );
        let out = read_records(bytes_of(&words), 0, head - 4, &mut Vec::new(), |_| n += 1);
        assert_eq!(
            (n, out.tail, out.resynced),
            (0, head - 4, true),
            "head inside a record is impossible"
        );

        let mut torn = record(9, 1, 16);
        torn[6..8].copy_from_slice(&4u16.to_le_bytes());
        let (words, head) = ring_image(64, 0, &[torn]);
        let out = read_records(bytes_of(&words), 0, head, &mut Vec::new(), |_| n += 1);
        assert_eq!((n, out.tail, out.resynced), (0, head, true));
        let out = read_records(bytes_of(&words), 0, 1000, &mut Vec::new(), |_| n += 1);
        assert!(
            out.resynced && out.tail == 1000,
            "head - tail larger than the ring"
        );
    }

    #[test]
    fn a_non_power_of_two_ring_is_refused_before_mapping() {
        let file = std::fs::File::open("/dev/null").unwrap();
        use std::os::fd::AsFd;
        let err = RingBuffer::map(file.as_fd(), 3).err().unwrap();
        assert!(err.to_string().contains("power of two"), "{err}");
    }
}
