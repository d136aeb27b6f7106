//! [`PerfEvents`]: a list of events opened on a list of targets, one ring per CPU or
//! per unbound thread (the other events of that CPU or thread, and the other inheriting
//! threads on that CPU, write into it with SET_OUTPUT), read by one thread that sleeps in
//! poll(2) until a ring reaches its watermark.
//!
//! Records go to a callback as [`RecordRef`]s borrowed from the ring (no copy), tagged
//! with the index of the event they belong to (from `PERF_SAMPLE_IDENTIFIER` and
//! `PERF_EVENT_IOC_ID`), or in time order across rings through [`OrderedMerge`].
//! Dropping it disables the events, unmaps the rings and closes the fds, in that order.

use std::time::{Duration, Instant};

use rustc_hash::FxHashMap;

use crate::model::verdict::SourceCounts;
use crate::trace::event::{EventIndex, TraceEvent};

use super::attr::{EventAttr, EventKind};
use super::error::PerfEventError;
use super::fd::{PerfEventFd, own_pid};
use super::merge::{OrderedMerge, Released};
use super::record::{self, Record, SampleFormat};
use super::ring::{RingBuffer, RingStats, page_size};
use super::sample_layout::SampleLayout;
use super::targets::Target;
use crate::sources::clock::monotonic_ns;

pub use super::merge::LostSpan as LostRange;

/// How big each ring is.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RingOptions {
    /// Data pages per ring (`-m`), a power of two.
    pub data_pages: usize,
}

/// One record with where it came from.
#[derive(Copy, Clone, Debug)]
pub struct RecordRef<'a> {
    /// Index of the ring it was read from.
    pub ring: usize,
    /// The target that owns the ring (the first one opened on its CPU).
    pub target: Target,
    /// The event it belongs to; `None` when its id is unknown (no identifier).
    pub event: Option<EventIndex>,
    pub record: Record<'a>,
}

impl<'a> RecordRef<'a> {
    /// A sample as the model's [`TraceEvent`] (what analyzers consume). `None` for other
    /// records, samples of unknown events, or samples lacking time/cpu/tid.
    pub fn trace_event(&self) -> Option<TraceEvent<'a>> {
        let Record::Sample(s) = self.record else {
            return None;
        };
        Some(TraceEvent {
            time_ns: s.time?,
            cpu: s.cpu?,
            pid: s.pid?,
            tid: s.tid?,
            event: self.event?,
            raw: s.raw,
            // Ring records are u64-aligned, so the slice view always exists for them.
            callchain: s.callchain.as_words().unwrap_or(&[]),
            rebuilt: false,
        })
    }

    /// `--exclude-self`: the record is a sample of process `pid` (pass
    /// [`PerfEvents::own_pid`]).
    pub fn is_sample_of(&self, pid: u32) -> bool {
        matches!(self.record, Record::Sample(s) if s.pid == Some(pid))
    }
}

/// What an ordered drain hands out.
// Handed by value to a callback, never stored in bulk: boxing the record would cost an
// allocation per record for nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Copy, Clone, Debug)]
pub enum Ordered<'a> {
    Record(RecordRef<'a>),
    /// A sample of a known event, read in place (only after
    /// [`PerfEvents::deliver_samples_as_events`]; the others stay records).
    Event(TraceEvent<'a>),
    /// Records lost on a ring, with the time range the gap covers.
    Lost(LostRange),
}

/// What one ring delivered and lost.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RingCounters {
    pub target: Target,
    /// Records the kernel dropped because the ring was full (sum of LOST records).
    pub lost: u64,
    /// Samples dropped before reaching the ring (LOST_SAMPLES).
    pub lost_samples: u64,
    pub throttles: u64,
    pub unthrottles: u64,
    /// Records whose bytes did not decode.
    pub decode_errors: u64,
    pub ring: RingStats,
}

/// What a poll saw.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct PollOutcome {
    /// Rings with data ready.
    pub ready: usize,
    /// Rings whose thread has exited (they will get no more data and are no longer polled).
    pub hung_up: usize,
    /// Every ring has hung up: a per-thread session is over.
    pub all_hung_up: bool,
}

struct RingSlot {
    target: Target,
    /// `(event, index in PerfEvents::fds[event])` of the fd the ring is mapped from.
    owner: (usize, usize),
    ring: RingBuffer,
    counters: RingCounters,
}

/// How records find their event and format.
struct Decoding {
    ids: FxHashMap<u64, EventIndex>,
    formats: Vec<SampleFormat>,
    /// Where each format's sample fields sit, by event.
    layouts: Vec<SampleLayout>,
    /// All events share one format: no need to peek at identifiers.
    uniform: Option<SampleFormat>,
    /// Samples of known events leave the ordered drain as [`Ordered::Event`]s, read by
    /// their layout ([`PerfEvents::deliver_samples_as_events`]).
    samples_as_events: bool,
}

impl Decoding {
    fn new(ids: FxHashMap<u64, EventIndex>, formats: Vec<SampleFormat>) -> Decoding {
        let uniform = formats.iter().all(|f| *f == formats[0]).then_some(formats[0]);
        Decoding {
            ids,
            layouts: formats.iter().map(SampleLayout::new).collect(),
            formats,
            uniform,
            samples_as_events: false,
        }
    }

    /// The record's identifier and its event, when it names one of ours.
    fn peek(&self, bytes: &[u8]) -> Option<(u64, EventIndex)> {
        record::peek_identifier(bytes).and_then(|id| Some((id, *self.ids.get(&id)?)))
    }

    /// The format that decodes a record of `event` (a ring shared by events of different
    /// formats tells by the identifier; an unknown one decodes with the first format).
    fn format_of(&self, event: Option<EventIndex>) -> SampleFormat {
        match (self.uniform, event) {
            (Some(format), _) => format,
            (None, Some(event)) => self.formats[usize::from(event.0)],
            (None, None) => self.formats[0],
        }
    }

    /// A sample's time without decoding it, read at its format's offset.
    fn sample_time(&self, bytes: &[u8]) -> Option<u64> {
        let layout = match self.uniform {
            Some(_) => &self.layouts[0],
            None => &self.layouts[self.peek(bytes).map_or(0, |(_, event)| usize::from(event.0))],
        };
        layout.time(bytes)
    }

    /// A sample of one of our events as a [`TraceEvent`], read in place by its layout;
    /// `None` when samples are not wanted that way, for other records, and for samples
    /// the layout cannot read (the full decode then handles them, or counts them bad).
    fn trace_event<'a>(&self, bytes: &'a [u8]) -> Option<TraceEvent<'a>> {
        if !self.samples_as_events {
            return None;
        }
        let (_, event) = self.peek(bytes)?;
        let format = &self.formats[usize::from(event.0)];
        // Without an identifier in its samples, the first word matched an id by chance.
        if format.sample_type & u64::from(perf_event_open_sys::bindings::PERF_SAMPLE_IDENTIFIER) == 0 {
            return None;
        }
        let fields = self.layouts[usize::from(event.0)].fields(bytes)?;
        Some(TraceEvent {
            time_ns: fields.time_ns,
            cpu: fields.cpu,
            pid: fields.pid,
            tid: fields.tid,
            event,
            raw: fields.raw,
            // Ring records are u64-aligned, so the slice view always exists for them.
            callchain: fields.callchain.as_words().unwrap_or(&[]),
            rebuilt: false,
        })
    }

    fn decode<'a>(&self, bytes: &'a [u8]) -> Result<(Option<EventIndex>, Record<'a>), record::DecodeError> {
        // The identifier is looked up once: it picks the format and names the event.
        let peeked = self.peek(bytes);
        let format = self.format_of(peeked.map(|(_, event)| event));
        let record = record::decode(bytes, &format)?;
        let identifier = match &record {
            Record::Sample(s) => s.identifier,
            Record::Lost { sample_id, .. }
            | Record::LostSamples { sample_id, .. }
            | Record::Fork(record::TaskEvent { sample_id, .. })
            | Record::Exit(record::TaskEvent { sample_id, .. })
            | Record::Throttle(record::Throttle { sample_id, .. })
            | Record::Unthrottle(record::Throttle { sample_id, .. }) => sample_id.identifier,
            Record::Comm(c) => c.sample_id.identifier,
            Record::Mmap2(m) => m.sample_id.identifier,
            Record::Switch(s) => s.sample_id.identifier,
            Record::Other { .. } => None,
        };
        let event = match (identifier, peeked) {
            (Some(id), Some((peeked_id, event))) if id == peeked_id => Some(event),
            (id, _) => id.and_then(|id| self.ids.get(&id).copied()),
        };
        Ok((event, record))
    }
}

impl RingCounters {
    /// Nothing delivered or lost yet.
    fn new(target: Target) -> Self {
        Self {
            target,
            lost: 0,
            lost_samples: 0,
            throttles: 0,
            unthrottles: 0,
            decode_errors: 0,
            ring: RingStats::default(),
        }
    }
}

fn count(counters: &mut RingCounters, record: &Record<'_>) {
    match record {
        Record::Lost { count, .. } => counters.lost += count,
        Record::LostSamples { count, .. } => counters.lost_samples += count,
        Record::Throttle(_) => counters.throttles += 1,
        Record::Unthrottle(_) => counters.unthrottles += 1,
        _ => {}
    }
}

/// How often [`PerfEvents::lost`] reads the kernel's exact per-event lost counters.
const EXACT_LOST_EVERY: Duration = Duration::from_secs(1);

/// How much of one ring an ordered drain reads before it releases what it can (see
/// [`PerfEvents::drain_ordered`]).
const ORDERED_PASS_BYTES: u64 = 32 * 1024;

/// A ring found drained is complete up to the clock read before it, less this margin
/// for an event stamped just before but committed just after (the kernel's output path
/// takes microseconds).
const DRAIN_MARGIN_NS: u64 = 1_000_000;

/// Events opened on targets, with their rings.
pub struct PerfEvents {
    // Field order is drop order: rings are unmapped before the fds close.
    rings: Vec<RingSlot>,
    /// `fds[event][target]` (a target whose ring is shared has fds but no ring).
    fds: Vec<Vec<PerfEventFd>>,
    events: Vec<EventAttr>,
    decoding: Decoding,
    pollfds: Vec<libc::pollfd>,
    merge: OrderedMerge,
    /// The last exact lost count and when it was read ([`PerfEvents::lost`]).
    lost_counted: u64,
    lost_counted_at: Option<Instant>,
    /// Close the fds in this process even when they are many (see [`PerfEvents::close_here`]).
    close_here: bool,
}

impl PerfEvents {
    /// Open every event on every target (disabled; call [`PerfEvents::enable`]). Threads
    /// that exited since they were listed are skipped; any other refusal is an error.
    pub fn open(
        events: &[EventAttr],
        targets: &[Target],
        options: RingOptions,
    ) -> Result<PerfEvents, PerfEventError> {
        Self::open_where(events, targets, options, |_, _| true, |_| false)
    }

    /// [`PerfEvents::open`], each event only on the targets `wanted(event index, target)`
    /// accepts (a selector's `cpus=`). A target no event wants gets no ring. The events
    /// `apart(event index)` names get rings of their own (one per CPU), which a flood of
    /// the others cannot overflow.
    pub fn open_where(
        events: &[EventAttr],
        targets: &[Target],
        options: RingOptions,
        wanted: impl Fn(usize, Target) -> bool,
        apart: impl Fn(usize) -> bool,
    ) -> Result<PerfEvents, PerfEventError> {
        if events.is_empty() {
            return Err(PerfEventError::NoEvents);
        }
        if !options.data_pages.is_power_of_two() {
            return Err(PerfEventError::PagesNotPowerOfTwo(options.data_pages));
        }
        let ring_bytes = options.data_pages * page_size();
        let mut effective = events.to_vec();
        let mut fds: Vec<Vec<PerfEventFd>> = events.iter().map(|_| Vec::new()).collect();
        let mut rings: Vec<RingSlot> = Vec::new();
        let mut ids = FxHashMap::default();
        let mut pollfds = Vec::new();
        // Rings of CPU-bound targets, by CPU (and apart or not): inheriting threads on one
        // CPU share one.
        let mut ring_of_cpu: FxHashMap<(u32, bool), usize> = FxHashMap::default();
        let total = events.len() * targets.len();
        let mut done = 0;
        'targets: for &target in targets {
            let mut opened = Vec::with_capacity(events.len());
            for (index, event) in effective.iter_mut().enumerate() {
                if !wanted(index, target) {
                    continue;
                }
                crate::stop::check(|| format!("opening the events ({done} of {total} done)"))
                    .map_err(PerfEventError::Stopped)?;
                done += 1;
                let fd = match PerfEventFd::open(event, target, ring_bytes) {
                    Ok(fd) => fd,
                    Err(PerfEventError::NoSuchThread { .. }) if target.is_task() => {
                        continue 'targets;
                    }
                    Err(err) => return Err(err),
                };
                if fd.kind() != event.kind {
                    // The PMU is missing: every target uses the fallback from now on.
                    *event = event.fallback().unwrap_or_else(|| event.clone());
                }
                opened.push((index, fd));
            }
            let (alone, opened): (Vec<_>, Vec<_>) = opened.into_iter().partition(|(i, _)| apart(*i));
            for (is_apart, opened) in [(false, opened), (true, alone)] {
                let Some(&(first_event, _)) = opened.first() else {
                    continue;
                };
                let shared = target
                    .cpu()
                    .and_then(|cpu| ring_of_cpu.get(&(cpu, is_apart)).copied());
                match shared {
                    Some(ring) => {
                        let (event, at) = rings[ring].owner;
                        let owner = &fds[event][at];
                        for (_, fd) in &opened {
                            fd.set_output(owner)?;
                        }
                    }
                    None => {
                        let first = &opened[0].1;
                        let ring = RingBuffer::map(std::os::fd::AsFd::as_fd(first), options.data_pages)?;
                        for (_, fd) in &opened[1..] {
                            fd.set_output(first)?;
                        }
                        pollfds.push(libc::pollfd {
                            fd: std::os::fd::AsRawFd::as_raw_fd(&std::os::fd::AsFd::as_fd(first)),
                            events: libc::POLLIN,
                            revents: 0,
                        });
                        if let Some(cpu) = target.cpu() {
                            ring_of_cpu.insert((cpu, is_apart), rings.len());
                        }
                        rings.push(RingSlot {
                            target,
                            owner: (first_event, fds[first_event].len()),
                            ring,
                            counters: RingCounters::new(target),
                        });
                    }
                }
                for (index, fd) in opened {
                    ids.insert(fd.id()?, EventIndex(index as u16));
                    fds[index].push(fd);
                }
            }
        }
        if rings.is_empty() {
            return Err(PerfEventError::NoTargets);
        }
        let formats: Vec<SampleFormat> = effective.iter().map(EventAttr::sample_format).collect();
        let merge = OrderedMerge::new(rings.len());
        Ok(PerfEvents {
            rings,
            fds,
            events: effective,
            decoding: Decoding::new(ids, formats),
            pollfds,
            merge,
            lost_counted: 0,
            lost_counted_at: None,
            close_here: false,
        })
    }

    /// Start counting on every fd (each one: group-enable leaves members at 0, §7); a stop
    /// request ends it early (enabling thousands of tracepoints takes the kernel a while).
    pub fn enable(&self) -> Result<(), PerfEventError> {
        let total: usize = self.fds.iter().map(Vec::len).sum();
        self.fds.iter().flatten().enumerate().try_for_each(|(done, fd)| {
            crate::stop::check(|| format!("enabling the events ({done} of {total} done)"))
                .map_err(PerfEventError::Stopped)?;
            fd.enable()
        })
    }

    /// Close the events in this process when dropped, however long the kernel takes:
    /// the caller removes something they use right after (its uprobes, which the kernel
    /// refuses to remove while an event holds them).
    pub fn close_here(&mut self) {
        self.close_here = true;
    }

    pub fn disable(&self) -> Result<(), PerfEventError> {
        self.fds.iter().flatten().try_for_each(PerfEventFd::disable)
    }

    /// Install a kernel filter on every fd of `event`; the kernel's refusal is returned
    /// as is, so the caller can filter in user space instead.
    pub fn set_filter(&self, event: EventIndex, filter: &str) -> Result<(), PerfEventError> {
        self.fds
            .get(usize::from(event.0))
            .into_iter()
            .flatten()
            .try_for_each(|fd| fd.set_filter(filter))
    }

    /// The events as opened (cycles may have become cpu-clock).
    pub fn event_kind(&self, event: EventIndex) -> Option<EventKind> {
        self.events.get(usize::from(event.0)).map(|e| e.kind)
    }

    /// The target of each ring (the first one opened on its CPU, when several share it).
    pub fn targets(&self) -> impl Iterator<Item = Target> + '_ {
        self.rings.iter().map(|r| r.target)
    }

    pub fn ring_count(&self) -> usize {
        self.rings.len()
    }

    /// The pid whose samples `--exclude-self` drops.
    pub fn own_pid(&self) -> u32 {
        own_pid()
    }

    /// Per-ring counters.
    pub fn counters(&self) -> Vec<RingCounters> {
        self.rings
            .iter()
            .map(|r| RingCounters {
                ring: r.ring.stats(),
                ..r.counters
            })
            .collect()
    }

    /// What the rings counted beside their records: records that did not decode, and
    /// THROTTLE records (times the kernel stopped sampling an event for a tick).
    pub fn source_counts(&self) -> SourceCounts {
        SourceCounts {
            decode_errors: self.rings.iter().map(|r| r.counters.decode_errors).sum(),
            throttles: self.rings.iter().map(|r| r.counters.throttles).sum(),
            ..SourceCounts::default()
        }
    }

    /// Lost records over all rings (LOST + LOST_SAMPLES).
    /// Lost records so far, cheap enough to ask at every drain: the LOST records' count,
    /// and — once a second, or whenever `exact` (the end of a session) — the kernel's exact
    /// counters, whose last reading is kept in between.
    pub fn lost(&mut self, exact: bool) -> u64 {
        if exact
            || self
                .lost_counted_at
                .is_none_or(|t| t.elapsed() >= EXACT_LOST_EVERY)
        {
            self.lost_counted = self.lost_total();
            self.lost_counted_at = Some(Instant::now());
        }
        self.lost_reported().max(self.lost_counted)
    }

    /// Losses the LOST / LOST_SAMPLES records reported so far: free to ask, but late (see
    /// [`PerfEvents::lost_total`]).
    pub fn lost_reported(&self) -> u64 {
        self.rings
            .iter()
            .map(|r| r.counters.lost + r.counters.lost_samples)
            .sum()
    }

    /// Every loss, reported or not yet: one `read(2)` per event and target, and reading a
    /// counter of another CPU costs an IPI there — ask once a second, not per drain.
    pub fn lost_total(&self) -> u64 {
        let reported = self.lost_reported();
        // The kernel's per-event counters also hold losses no LOST record has reported
        // yet (it writes one only when the ring has room again).
        let counted: u64 = self
            .fds
            .iter()
            .flatten()
            .filter_map(PerfEventFd::lost_samples)
            .sum();
        reported.max(counted)
    }

    /// Sleep until some ring reaches its wake-up point, or `timeout`.
    pub fn poll(&mut self, timeout: Duration) -> Result<PollOutcome, PerfEventError> {
        let ms = i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX);
        // SAFETY: pollfds is a live array of `len` pollfd structs.
        let rc = unsafe { libc::poll(self.pollfds.as_mut_ptr(), self.pollfds.len() as libc::nfds_t, ms) };
        if rc < 0 {
            let err = std::io::Error::last_os_error();
            if err.kind() == std::io::ErrorKind::Interrupted {
                return Ok(PollOutcome {
                    ready: 0,
                    hung_up: 0,
                    all_hung_up: false,
                });
            }
            return Err(PerfEventError::Poll(err));
        }
        let (mut ready, mut hung_up) = (0, 0);
        for pollfd in &mut self.pollfds {
            if pollfd.revents & libc::POLLIN != 0 {
                ready += 1;
            }
            if pollfd.revents & libc::POLLHUP != 0 {
                hung_up += 1;
                // Its data stays readable by drain(); poll ignores negative fds.
                pollfd.fd = -1;
            }
            pollfd.revents = 0;
        }
        let all_hung_up = self.pollfds.iter().all(|p| p.fd < 0);
        Ok(PollOutcome {
            ready,
            hung_up,
            all_hung_up,
        })
    }

    /// Read every ring to its end, handing each record to `on_record` in ring order.
    /// Returns the number of records read.
    pub fn drain(&mut self, mut on_record: impl FnMut(RecordRef<'_>)) -> u64 {
        let decoding = &self.decoding;
        let mut total = 0;
        for (index, slot) in self.rings.iter_mut().enumerate() {
            let (target, counters) = (slot.target, &mut slot.counters);
            total += slot.ring.read(|bytes| match decoding.decode(bytes) {
                Ok((event, record)) => {
                    count(counters, &record);
                    on_record(RecordRef {
                        ring: index,
                        target,
                        event,
                        record,
                    });
                }
                Err(_) => counters.decode_errors += 1,
            });
        }
        total
    }

    /// Read every ring and release, in time order across rings, what the ordering rule
    /// allows (held records wait for the next call). Losses come as [`Ordered::Lost`].
    ///
    /// The rings are read in passes of at most [`ORDERED_PASS_BYTES`] each, with a
    /// release after every pass: what the merge holds (copies) stays a few passes' worth
    /// however large and full the rings are, not all of their pages at once. A ring is
    /// read at most its size per call, so a ring filling as fast as it is read does not
    /// keep the call from returning.
    pub fn drain_ordered(&mut self, mut on_item: impl FnMut(Ordered<'_>)) -> u64 {
        let decoding = &self.decoding;
        let merge = &mut self.merge;
        let mut total = 0;
        // Bytes each ring may still give this call; 0 once it is drained.
        let mut left: Vec<u64> = self
            .rings
            .iter()
            .map(|slot| (slot.ring.data_size() as u64).max(1))
            .collect();
        while left.iter().any(|l| *l > 0) {
            for (index, slot) in self.rings.iter_mut().enumerate() {
                if left[index] == 0 {
                    continue;
                }
                let clock = monotonic_ns().saturating_sub(DRAIN_MARGIN_NS);
                let counters = &mut slot.counters;
                let mut last_ns = 0;
                let pass = slot
                    .ring
                    .read_up_to(ORDERED_PASS_BYTES.min(left[index]), |bytes| {
                        // Samples, nearly every record, are held by their time alone:
                        // decoded once, when released (a malformed one is counted there).
                        if let Some(time) = decoding.sample_time(bytes) {
                            last_ns = time;
                            merge.push(index, time, bytes);
                            return;
                        }
                        match decoding.decode(bytes) {
                            Ok((_, record)) => {
                                count(counters, &record);
                                match record {
                                    Record::Lost { count, .. } => merge.push_lost(index, count),
                                    _ => {
                                        last_ns = record.time().unwrap_or(last_ns);
                                        merge.push(index, last_ns, bytes);
                                    }
                                }
                            }
                            Err(_) => counters.decode_errors += 1,
                        }
                    });
                total += pass.records;
                left[index] = left[index].saturating_sub(pass.bytes.max(1));
                if pass.drained {
                    merge.mark_drained(index, clock);
                    left[index] = 0;
                }
            }
            Self::release(&mut self.rings, decoding, merge, false, &mut on_item);
        }
        total
    }

    /// From now on the ordered drain hands samples of known events out as
    /// [`Ordered::Event`]s, read in place by their format's layout, instead of whole
    /// records: for a consumer that wants only their trace events (a tracing session
    /// without stacks to resolve). Other records still come as [`Ordered::Record`].
    pub fn deliver_samples_as_events(&mut self) {
        self.decoding.samples_as_events = true;
    }

    /// Release everything the ordered drain still holds (at the end of a session).
    pub fn flush_ordered(&mut self, on_item: impl FnMut(Ordered<'_>)) {
        Self::release(&mut self.rings, &self.decoding, &mut self.merge, true, on_item);
    }

    fn release(
        rings: &mut [RingSlot],
        decoding: &Decoding,
        merge: &mut OrderedMerge,
        everything: bool,
        mut on_item: impl FnMut(Ordered<'_>),
    ) {
        let mut emit = |item: Released<'_>| match item {
            Released::Lost(span) => on_item(Ordered::Lost(span)),
            Released::Record { ring, bytes, .. } => {
                if let Some(event) = decoding.trace_event(bytes) {
                    return on_item(Ordered::Event(event));
                }
                // Samples were held undecoded (by their time): a malformed one counts here.
                match decoding.decode(bytes) {
                    Ok((event, record)) => on_item(Ordered::Record(RecordRef {
                        ring,
                        target: rings[ring].target,
                        event,
                        record,
                    })),
                    Err(_) => rings[ring].counters.decode_errors += 1,
                }
            }
        };
        if everything {
            merge.flush(&mut emit)
        } else {
            merge.release(&mut emit)
        }
    }
}

impl Drop for PerfEvents {
    fn drop(&mut self) {
        // Stop the kernel writing before the rings go away; errors cannot be acted on here.
        let _ = self.disable();
        // Rings first (a mapping holds its event), then the fds: many tracepoints take the
        // kernel long to close, and are closed apart (closer.rs).
        self.rings.clear();
        let fds = std::mem::take(&mut self.fds).into_iter().flatten().collect();
        if self.close_here {
            drop(fds);
        } else {
            super::closer::close_all(fds);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send<T: Send>() {}

    #[test]
    fn the_reader_can_move_to_a_reader_thread() {
        assert_send::<PerfEvents>();
    }

    fn record(record_type: u32, words: &[u64]) -> Vec<u8> {
        let mut bytes = record_type.to_le_bytes().to_vec();
        bytes.extend_from_slice(&0u16.to_le_bytes());
        bytes.extend_from_slice(&((8 + words.len() * 8) as u16).to_le_bytes());
        words
            .iter()
            .for_each(|w| bytes.extend_from_slice(&w.to_le_bytes()));
        bytes
    }

    #[test]
    fn a_ring_shared_by_events_of_different_formats_decodes_each_by_its_identifier() {
        use perf_event_open_sys::bindings as b;
        let tracepoint = EventAttr::tracepoint(1).sample_format();
        let profile = EventAttr::cpu_profile(99).with_callchain().sample_format();
        let decoding = Decoding::new(
            [(100, EventIndex(0)), (200, EventIndex(1))].into_iter().collect(),
            vec![tracepoint, profile],
        );
        // Tracepoint: identifier, pid/tid, time, cpu, period, raw (size 4 + 4 bytes).
        let tp = record(
            b::PERF_RECORD_SAMPLE,
            &[100, 5 | (6 << 32), 1_000, 1, 1, 4 | (0xabcd_u64 << 32)],
        );
        // Profile: identifier, ip, pid/tid, time, cpu, period, callchain (nr 2).
        let user = super::super::record::CONTEXT_USER;
        let cpu = record(
            b::PERF_RECORD_SAMPLE,
            &[200, 0x400, 7 | (7 << 32), 2_000, 0, 10_101, 2, user, 0x400],
        );
        let (event, Record::Sample(s)) = decoding.decode(&tp).unwrap() else {
            panic!()
        };
        assert_eq!(
            (event, s.pid, s.time, s.raw),
            (
                Some(EventIndex(0)),
                Some(5),
                Some(1_000),
                &0xabcd_u32.to_le_bytes()[..]
            )
        );
        let (event, Record::Sample(s)) = decoding.decode(&cpu).unwrap() else {
            panic!()
        };
        assert_eq!(
            (event, s.ip, s.period),
            (Some(EventIndex(1)), Some(0x400), Some(10_101))
        );
        assert_eq!(s.callchain.user_ips().collect::<Vec<_>>(), [0x400]);
        // A LOST record of event 1 (trailer: pid/tid, time, cpu, identifier) is counted.
        let lost = record(b::PERF_RECORD_LOST, &[200, 9, 7 | (7 << 32), 3_000, 0, 200]);
        let (event, lost_record) = decoding.decode(&lost).unwrap();
        assert_eq!((event, lost_record.time()), (Some(EventIndex(1)), Some(3_000)));
        let mut counters = RingCounters::new(Target::Cpu(0));
        count(&mut counters, &lost_record);
        assert_eq!(counters.lost, 9);
        let bad = record(b::PERF_RECORD_SAMPLE, &[200, 1]);
        assert!(
            decoding.decode(&bad).is_err(),
            "a short sample is an error, not a panic"
        );
        // Read in place by their layouts, the samples are the trace events their whole
        // records make; the rest are left to the full decode.
        let mut decoding = decoding;
        assert!(decoding.trace_event(&tp).is_none(), "only when asked for");
        decoding.samples_as_events = true;
        for bytes in [&tp, &cpu] {
            let (event, sample) = decoding.decode(bytes).unwrap();
            let whole = RecordRef {
                ring: 0,
                target: Target::Cpu(0),
                event,
                record: sample,
            }
            .trace_event()
            .unwrap();
            assert_eq!(decoding.trace_event(bytes), Some(whole));
        }
        for other in [&lost, &bad] {
            assert!(decoding.trace_event(other).is_none());
        }
    }

    #[test]
    fn events_apart_get_rings_of_their_own() {
        let clock = EventAttr::new(
            EventKind::TaskClock,
            super::super::attr::Sampling::Period(1_000_000),
        );
        let dummy = EventAttr::new(
            EventKind::Software {
                config: perf_event_open_sys::bindings::PERF_COUNT_SW_DUMMY,
            },
            super::super::attr::Sampling::Period(1),
        )
        .with_comm_records();
        let events = [clock, dummy];
        let cpus = [Target::Cpu(0)];
        let open = |apart: fn(usize) -> bool| {
            PerfEvents::open_where(&events, &cpus, RingOptions { data_pages: 1 }, |_, _| true, apart)
        };
        let shared = match open(|_| false) {
            Ok(shared) => shared,
            // CPU-wide events need root (or a low perf_event_paranoid).
            Err(e) => return eprintln!("no CPU-wide events here: {e}"),
        };
        assert_eq!(shared.ring_count(), 1, "both events in CPU 0's ring");
        let apart = open(|event| event == 1).unwrap();
        assert_eq!(apart.ring_count(), 2, "the dummy in a ring of its own");
        let ids: Vec<EventIndex> = apart.decoding.ids.values().copied().collect();
        assert!(ids.contains(&EventIndex(0)) && ids.contains(&EventIndex(1)));
    }

    #[test]
    fn open_refuses_bad_pages_and_empty_lists() {
        let event = EventAttr::new(
            EventKind::TaskClock,
            super::super::attr::Sampling::Period(1_000_000),
        );
        let me = [Target::Thread(own_pid())];
        assert!(matches!(
            PerfEvents::open(std::slice::from_ref(&event), &me, RingOptions { data_pages: 3 }),
            Err(PerfEventError::PagesNotPowerOfTwo(3))
        ));
        assert!(matches!(
            PerfEvents::open(&[], &me, RingOptions { data_pages: 1 }),
            Err(PerfEventError::NoEvents)
        ));
        assert!(matches!(
            PerfEvents::open(&[event], &[], RingOptions { data_pages: 1 }),
            Err(PerfEventError::NoTargets)
        ));
    }
}
