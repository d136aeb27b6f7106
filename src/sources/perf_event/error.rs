//! Errors of the perf_event source. Each message names what failed and what to do next.

use std::io;

/// Something the kernel (or the caller's options) refused while opening, mapping or
/// driving perf events.
#[derive(Debug, thiserror::Error)]
pub enum PerfEventError {
    /// `why` comes from [`super::refusal::explain`]: who asked, what, at which paranoid level.
    #[error("perf_event_open({event}) on {target}: permission denied: {why}")]
    PermissionDenied {
        event: String,
        target: String,
        why: String,
    },
    #[error(
        "perf_event_open({event}) on {target}: no such event (ENOENT): check the tracepoint exists under /sys/kernel/tracing/events (mount tracefs) or pick another event"
    )]
    NoSuchEvent { event: String, target: String },
    #[error(
        "perf_event_open({event}) on {target}: the kernel refused the attribute (EINVAL): {attr}; drop the option that set it (e.g. -g, --user-only, a too-high -F: see kernel.perf_event_max_sample_rate)"
    )]
    InvalidAttr {
        event: String,
        target: String,
        attr: String,
    },
    #[error(
        "perf_event_open({event}) on {target}: too many open files (EMFILE): every CPU × event needs one fd; raise the limit with `ulimit -n 65536` or open fewer CPUs (-C)"
    )]
    TooManyFiles { event: String, target: String },
    #[error("perf_event_open({event}) on {target}: the thread no longer exists (ESRCH): check -p/-t")]
    NoSuchThread { event: String, target: String },
    #[error("perf_event_open({event}) on {target}: {cause}")]
    Open {
        event: String,
        target: String,
        cause: io::Error,
    },
    #[error("perf event ioctl {what} failed: {cause}")]
    Ioctl { what: &'static str, cause: io::Error },
    #[error(
        "the kernel refused the filter {filter:?} ({cause}): check its syntax (ftrace filter: `field == 1 && comm ~ \"sh*\"`), or filter in user space"
    )]
    FilterRefused { filter: String, cause: io::Error },
    #[error(
        "ring buffer size must be a power of two of pages (1, 2, 4, 8, ...), got {0}: pass -m with a power of two"
    )]
    PagesNotPowerOfTwo(usize),
    #[error(
        "mmap of a {bytes}-byte perf ring failed ({cause}): lower -m, or raise kernel.perf_event_mlock_kb / `ulimit -l`"
    )]
    Mmap { bytes: usize, cause: io::Error },
    #[error("--watermark must be between 0 and 100 (% of the ring), got {0}")]
    BadWatermark(u32),
    #[error(
        "user stack copy of {0} bytes: the kernel takes a multiple of 8 up to 65528 (--call-graph dwarf,SIZE)"
    )]
    BadStackSize(u32),
    #[error("no such process: {pid} (/proc/{pid} is not there; it exited, or the pid is wrong)")]
    NoSuchProcess { pid: u32 },
    #[error("bad CPU list {text:?}: {why} (expected e.g. `0-3,5`)")]
    CpuList { text: String, why: String },
    #[error("bad id list {text:?}: {why} (expected e.g. `1234,1240`)")]
    IdList { text: String, why: String },
    #[error("cannot read {path}: {cause}")]
    Proc { path: String, cause: io::Error },
    #[error("no targets to open events on: give CPUs (-C) or threads (-p/-t) that exist")]
    NoTargets,
    #[error("no events to open")]
    NoEvents,
    /// A signal asked the process to stop while the events were opened or enabled (each
    /// tracepoint takes the kernel milliseconds: thousands of them, minutes).
    #[error("{0}")]
    Stopped(#[source] crate::stop::Stopped),
    #[error("poll on the perf rings failed: {0}")]
    Poll(io::Error),
}
