//! A sample's callchain as the kernel writes it: u64 words, leaf first, with
//! `PERF_CONTEXT_*` marker words saying which part (kernel, user, guest) the frames after
//! them belong to. Borrowed from the record, read word by word (no copy, no alignment
//! needed); the markers are never returned as frames.

use perf_event_open_sys::bindings as b;

// The bindings type these as the arch's `perf_callchain_context`; perfscope reads u64 words.
#[allow(clippy::unnecessary_cast)]
pub const CONTEXT_KERNEL: u64 = b::PERF_CONTEXT_KERNEL as u64;
#[allow(clippy::unnecessary_cast)]
pub const CONTEXT_USER: u64 = b::PERF_CONTEXT_USER as u64;
#[allow(clippy::unnecessary_cast)]
const CONTEXT_HV: u64 = b::PERF_CONTEXT_HV as u64;
#[allow(clippy::unnecessary_cast)]
const CONTEXT_GUEST: u64 = b::PERF_CONTEXT_GUEST as u64;
#[allow(clippy::unnecessary_cast)]
const CONTEXT_GUEST_KERNEL: u64 = b::PERF_CONTEXT_GUEST_KERNEL as u64;
#[allow(clippy::unnecessary_cast)]
const CONTEXT_GUEST_USER: u64 = b::PERF_CONTEXT_GUEST_USER as u64;

/// Callchain entries at or above this value are context markers (`PERF_CONTEXT_MAX` = -4095).
const CONTEXT_MARKER_MIN: u64 = (-4095i64) as u64;

/// Which part of the stack a callchain frame belongs to, from the context markers.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FrameContext {
    /// Before any marker (the kernel always writes one first; kept for odd producers).
    Unknown,
    Kernel,
    User,
    Hypervisor,
    Guest,
    GuestKernel,
    GuestUser,
    /// A marker this decoder does not know (e.g. `PERF_CONTEXT_USER_DEFERRED`).
    Other,
}

impl FrameContext {
    fn of_marker(word: u64) -> FrameContext {
        match word {
            CONTEXT_KERNEL => FrameContext::Kernel,
            CONTEXT_USER => FrameContext::User,
            CONTEXT_HV => FrameContext::Hypervisor,
            CONTEXT_GUEST => FrameContext::Guest,
            CONTEXT_GUEST_KERNEL => FrameContext::GuestKernel,
            CONTEXT_GUEST_USER => FrameContext::GuestUser,
            _ => FrameContext::Other,
        }
    }
}

/// One callchain frame: an instruction address and the context it was found in.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    pub ip: u64,
    pub context: FrameContext,
}

/// A sample's callchain, borrowed from the record: `nr` u64 words, leaf first, with
/// `PERF_CONTEXT_*` markers in between (kernel part first, then user).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Callchain<'a> {
    bytes: &'a [u8],
}

impl<'a> Callchain<'a> {
    /// The chain's `nr * 8` bytes (after the `nr` word).
    pub fn from_bytes(bytes: &'a [u8]) -> Callchain<'a> {
        Callchain { bytes }
    }
}

impl<'a> Callchain<'a> {
    /// Every word as the kernel wrote it, markers included.
    pub fn words(&self) -> impl Iterator<Item = u64> + 'a {
        self.bytes.chunks_exact(8).map(le_u64)
    }

    /// The words as a slice when the record is 8-byte aligned (always true of records
    /// read from a ring: the ring and its scratch buffer are u64-aligned).
    pub fn as_words(&self) -> Option<&'a [u64]> {
        // SAFETY: every bit pattern is a valid u64; align_to only yields the aligned middle.
        let (head, words, tail) = unsafe { self.bytes.align_to::<u64>() };
        (head.is_empty() && tail.is_empty() && cfg!(target_endian = "little")).then_some(words)
    }

    /// Words in the chain, markers included.
    pub fn len_words(&self) -> usize {
        self.bytes.len() / 8
    }

    /// The frames, markers removed, each tagged with the context of the last marker.
    pub fn frames(&self) -> impl Iterator<Item = Frame> + 'a {
        let mut context = FrameContext::Unknown;
        self.words().filter_map(move |word| {
            if word >= CONTEXT_MARKER_MIN {
                context = FrameContext::of_marker(word);
                None
            } else {
                Some(Frame { ip: word, context })
            }
        })
    }

    /// Kernel frames, leaf first.
    pub fn kernel_ips(&self) -> impl Iterator<Item = u64> + 'a {
        self.frames()
            .filter(|f| f.context == FrameContext::Kernel)
            .map(|f| f.ip)
    }

    /// User frames, leaf first.
    pub fn user_ips(&self) -> impl Iterator<Item = u64> + 'a {
        self.frames()
            .filter(|f| f.context == FrameContext::User)
            .map(|f| f.ip)
    }

    /// No frames at all (markers alone count as empty).
    pub fn is_empty(&self) -> bool {
        self.frames().next().is_none()
    }
}

fn le_u64(bytes: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[..8]);
    u64::from_le_bytes(word)
}
